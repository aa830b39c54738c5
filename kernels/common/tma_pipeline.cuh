// The producer and consumer halves of the TMA + wgmma steps (19 and later; a
// change here rebuilds them all). Step 19's header explains the design; this
// file holds its mechanics, so that a later step shows as the one switch it
// turns (multiply_tile's Order and TmaStore).
//
// The ring of STAGES stages (ring.cuh), each one K-slice of the block's
// tile: A's BM x BK box (the wgmma's shared-memory operand) and BN / 32 boxes
// of B, BK x 32 each (read into registers as B^T's fragments).
//
// With CLUSTER = 2 (step 22) two blocks side by side along N, a cluster,
// compute tiles with the same rows: each asks the copy engine for half of
// A's box and has it written into both blocks' rings (multicast). A stage
// is then empty only when the consumers of both blocks are done with it:
// each consumer warp arrives on the empty barrier of both. A release that
// no producer will wait for (the last STAGES slices) is not made: so no
// block arrives on its partner's barriers after the partner may have ended.

#pragma once

#include "hopper.cuh"

#if !defined(BM) || !defined(BN) || !defined(BK) || !defined(STAGES)
#error "BM, BN, BK and STAGES come from kernels/registry.yaml as -D defines"
#endif
#ifndef ROUND_FRAGMENTS
#define ROUND_FRAGMENTS 1   // B^T's fragments rounded to TF32 by cvt.rna (steps 19 to 24); 0: as they are (step 25)
#endif

constexpr int CONSUMERS = BN / 64, THREADS = 128 * (1 + CONSUMERS);
static_assert(BLOCK_DIM_X == THREADS && BLOCK_DIM_Y == 1,
              "kernels/registry.yaml's block must be THREADS x 1: a producer and CONSUMERS consumer warpgroups");
constexpr int A_BYTES = BM * BK * 4, B_BOX_BYTES = BK * 32 * 4, STAGE_BYTES = A_BYTES + (BN / 32) * B_BOX_BYTES;
// setmaxnreg moves registers between the warpgroups within what the block was launched with (the kernel's
// cap, 65,536 / THREADS rounded down to 8, times THREADS): the producer's loops fit in 72 (its fallback loads
// spill in fewer), and the consumers take the rest.
constexpr int PRODUCER_REGISTERS = 72, CONSUMER_REGISTERS = 216;
static_assert(128 * PRODUCER_REGISTERS + 128 * CONSUMERS * CONSUMER_REGISTERS <= 65536 / THREADS / 8 * 8 * THREADS,
              "the warpgroups' registers after setmaxnreg must fit in the block's");
static_assert(BM == 256 && BK == 32, "wgmma m64n256k8 over a 128-byte swizzle row of A: BM = 256, BK = 32");
static_assert(BN % 64 == 0 && CONSUMERS >= 1 && CONSUMERS <= 2, "BN: 64 columns per consumer warpgroup, 1 or 2");

#include "ring.cuh"   // the ring of stages (Ring, the_ring, setup_ring) and tile_origin

// Byte offsets inside a stage, as the copy engine writes them (128-byte swizzle, see hopper.cuh).
__device__ __forceinline__ int a_offset(int m, int k)   // A(row0 + m, k0 + k): one box, rows of 32 k
{
    return m * 128 + (((k / 4) ^ (m % 8)) << 4) + (k % 4) * 4;
}

__device__ __forceinline__ int b_offset(int k, int n)   // B(k0 + k, col0 + n): boxes of 32 columns
{
    return A_BYTES + (n / 32) * B_BOX_BYTES + k * 128 + ((((n % 32) / 4) ^ (k % 8)) << 4) + (n % 4) * 4;
}

__device__ __forceinline__ int c_offset(int m, int n)   // C(row0 + m, col0 + n), step 20: boxes of 32 columns
{
    return (n / 32) * BM * 128 + m * 128 + ((((n % 32) / 4) ^ (m % 8)) << 4) + (n % 4) * 4;
}

__device__ __forceinline__ unsigned tf32_bits(float x)
{
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
}

// The copy engine can read A and B where their rows start on 16 bytes (matmulstudy/gpu/tma.py passes tensor maps
// on the same rule, and zeros elsewhere).
__device__ __forceinline__ bool maps_usable(int N, int K, const float* A, const float* B)
{
    return K % 4 == 0 && N % 4 == 0 && reinterpret_cast<uintptr_t>(A) % 16 == 0 &&
           reinterpret_cast<uintptr_t>(B) % 16 == 0;
}

#include "producer.cuh"   // produce_tile: the producer warpgroup, on the layout above

// How a consumer warpgroup orders a slice's loads, wgmma and waits (Consumer::multiply).
enum class Overlap { none, next_slice };   // next_slice: one wgmma group in flight while the next slice is read

// A consumer warpgroup's lane: which of the tile's columns its fragment rows g and g + 8 are (step 19's
// "Bank conflicts"), and the tile's 64 x 256 transposed product it accumulates.
struct Consumer {
    int n_lo, n_hi, t, lane;

    __device__ Consumer(int warpgroup, int tid)
    {
        const int warp = tid / 32, g = tid % 32 / 4;
        lane = tid % 32;
        t = lane % 4;
        n_lo = 64 * (warpgroup - 1) + 32 * (warp / 2) + 8 * (warp % 2) + g % 4 + 16 * (g / 4);
        n_hi = n_lo + 4;
    }

    // B^T's fragments of slice number `count` of the ring, once its stage is full: rounded to TF32, or with
    // ROUND_FRAGMENTS 0 as they are (the tensor cores then keep each one's top 19 bits, as they do with the
    // operand they read from shared memory).
    __device__ __forceinline__ void fetch(const Ring& ring, int count, unsigned (&a)[BK / 8][4]) const
    {
        const unsigned char* tile = ring.stage(count);
        mbarrier_wait(&ring.full[count % STAGES], (count / STAGES) % 2);
#pragma unroll
        for (int kk = 0; kk < BK / 8; ++kk) {
            const int k = 8 * kk + t;
            a[kk][0] = fragment(*reinterpret_cast<const float*>(tile + b_offset(k, n_lo)));
            a[kk][1] = fragment(*reinterpret_cast<const float*>(tile + b_offset(k, n_hi)));
            a[kk][2] = fragment(*reinterpret_cast<const float*>(tile + b_offset(k + 4, n_lo)));
            a[kk][3] = fragment(*reinterpret_cast<const float*>(tile + b_offset(k + 4, n_hi)));
        }
    }

    __device__ __forceinline__ static unsigned fragment(float x)
    {
        return ROUND_FRAGMENTS ? tf32_bits(x) : __float_as_uint(x);
    }

    // A slice's four wgmma on the fragments `now`, committed as one group.
    __device__ __forceinline__ void issue(const Ring& ring, int count, float (&d)[128],
                                          const unsigned (&now)[BK / 8][4]) const
    {
        const unsigned char* tile = ring.stage(count);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 8; ++kk)
            wgmma_m64n256k8_tf32(d, now[kk], descriptor_sw128(tile + kk * 32));
        wgmma_commit();
    }

    // Slice `count` is done with: its stage may be refilled. In a cluster, on both blocks' barriers, and only
    // where a producer will wait for it: `end` is the ring's count after the block's last slice (the tile's
    // slices for a block of one tile; step 26's blocks, which meet at the end, release every slice).
    __device__ __forceinline__ void release(const Ring& ring, int count, int end) const
    {
        if (lane != 0)
            return;
        if (CLUSTER == 1)
            mbarrier_arrive(&ring.empty[count % STAGES]);
        else if (count + STAGES < end)
            for (unsigned r = 0; r < CLUSTER; ++r)
                mbarrier_arrive_cluster(&ring.empty[count % STAGES], r);
    }

    // Every K-slice of one tile, from slice number `count` of the ring on (`end`: release's), in one of two
    // orders (the steps differ only here).
    //   Overlap::none (steps 19 and 20): read the slice's fragments, issue its group, wait for it. The
    //     warpgroup's own loads never overlap its wgmma, and its tensor work drains before every slice;
    //     only the other consumer warpgroup's queued wgmma cover the gap.
    //   Overlap::next_slice (step 21): issue slice s, wait until only it is running (slice s - 1 done), give
    //     s - 1's stage back, and read slice s + 1's fragments into the registers s - 1 read, while s runs.
    //     The fragment sets swap each slice; the loop is unrolled by two so that they keep compile-time
    //     names (an array indexed at run time would go to local memory).
    template <Overlap Order>
    __device__ __forceinline__ void multiply(const Ring& ring, int& count, int K, int end, float (&d)[128]) const
    {
#pragma unroll
        for (int i = 0; i < 128; ++i)
            d[i] = 0.0f;
        const int slices = (K + BK - 1) / BK;
        unsigned even[BK / 8][4], odd[BK / 8][4];
        if (Order == Overlap::none) {
            for (int s = 0; s < slices; ++s, ++count) {
                fetch(ring, count, even);
                issue(ring, count, d, even);
                wgmma_wait<0>();
                release(ring, count, end);
            }
            return;
        }
        auto slice = [&](int s, const unsigned (&now)[BK / 8][4], unsigned (&next)[BK / 8][4]) {
            issue(ring, count, d, now);
            wgmma_wait<1>();
            if (s > 0)
                release(ring, count - 1, end);
            if (s + 1 < slices)
                fetch(ring, count + 1, next);
            ++count;
        };
        fetch(ring, count, even);
        for (int s = 0; s < slices; s += 2) {
            slice(s, even, odd);
            if (s + 1 < slices)
                slice(s + 1, odd, even);
        }
        wgmma_wait<0>();
        release(ring, count - 1, end);
    }

    // Step 20: the tile through shared memory, and out by the copy engine. Both consumer warpgroups first
    // finish their wgmma (the ring is then idle: every slice has been consumed); each thread writes its
    // accumulators where a TMA load of C's boxes (BM x 32, 128-byte swizzle) would have put them, fences
    // (the copy engine reads what ordinary stores wrote), and after a second meeting one thread sends the
    // BN / 32 boxes, clipped to C, and waits until the engine has read them.
    __device__ __forceinline__ void store_by_tma(const float (&d)[128], const Ring& ring, const CUtensorMap* map_c,
                                                 int row0, int col0, int tid) const
    {
        named_barrier(1, 128 * CONSUMERS);
        unsigned char* out = ring.stages;
#pragma unroll
        for (int i = 0; i < BM / 8; ++i)
#pragma unroll
            for (int h = 0; h < 4; ++h) {
                const int m = 8 * i + 2 * t + h % 2, n = h < 2 ? n_lo : n_hi;
                *reinterpret_cast<float*>(out + c_offset(m, n)) = d[4 * i + h];
            }
        fence_proxy_async();
        named_barrier(1, 128 * CONSUMERS);
        if (tid == 128) {
            for (int j = 0; j < BN / 32; ++j)
                tma_store_2d(map_c, col0 + 32 * j, row0, out + j * BM * 128);
            tma_store_commit_and_wait();
        }
    }

    // d[4i + h] is D(row g or g + 8, column 8i + 2t + h % 2) = C(row0 + 8i + 2t + h % 2, col0 + n_lo or n_hi).
    __device__ __forceinline__ void store(const float (&d)[128], float* __restrict__ C, int M, int N, int row0,
                                          int col0) const
    {
#pragma unroll
        for (int i = 0; i < BM / 8; ++i)
#pragma unroll
            for (int h = 0; h < 4; ++h) {
                const int r = row0 + 8 * i + 2 * t + h % 2, c = col0 + (h < 2 ? n_lo : n_hi);
                if (r < M && c < N)
                    C[(size_t)r * N + c] = d[4 * i + h];
            }
    }
};

// One block, one tile (steps 19 to 23; the tile at tile_origin()): warpgroup 0 produces, the others consume
// and store (steps 20 and later: by the copy engine, where C's rows start on 16 bytes). Each role's values are
// computed after its setmaxnreg.
template <Overlap Order, bool TmaStore = false>
__device__ __forceinline__ void multiply_tile(int M, int N, int K, const float* __restrict__ A,
                                              const float* __restrict__ B, float* __restrict__ C,
                                              const CUtensorMap* map_a, const CUtensorMap* map_b,
                                              const CUtensorMap* map_c = nullptr)
{
    static_assert(!TmaStore || BM * BN * 4 <= STAGES * STAGE_BYTES, "the tile must fit in the ring to be stored");
    setup_ring(maps_usable(N, K, A, B));
    const int warpgroup = threadIdx.x / 128;
    int count = 0;   // slices through the ring so far
    if (warpgroup == 0) {   // the producer
        registers_release<PRODUCER_REGISTERS>();
        const int2 origin = tile_origin();
        produce_tile(the_ring(), count, origin.x, origin.y, M, N, K, A, B, map_a, map_b,
                     maps_usable(N, K, A, B), threadIdx.x, CLUSTER == 1 ? 0 : cluster_rank());
        return;
    }
    registers_claim<CONSUMER_REGISTERS>();   // a consumer: 64 columns of the tile by its 256 rows
    const Consumer me(warpgroup, threadIdx.x % 128);
    float d[128];
    me.multiply<Order>(the_ring(), count, K, (K + BK - 1) / BK, d);
    const int2 origin = tile_origin();
    if (TmaStore && store_map_usable(N, C))
        me.store_by_tma(d, the_ring(), map_c, origin.x, origin.y, threadIdx.x);
    else
        me.store(d, C, M, N, origin.x, origin.y);
}
