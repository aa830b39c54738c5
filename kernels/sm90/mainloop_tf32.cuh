// The TF32 mainloop, the second of the three roles (gemm.cuh): the stage
// layout of the ring, and what a consumer warpgroup does with a stage (the
// producer's side is producer.cuh, for every precision).
//
// A stage is one K-slice of TILE_K = 32 (a 128-byte swizzle row of FP32 values)
// of the block's TILE_M x TILE_N tile: A's TILE_M x TILE_K box, the wgmma's shared-memory
// operand, and TILE_N / 32 boxes of B, TILE_K x 32 each, which the consumers read
// into registers as B^T's fragments. So each consumer warpgroup computes the
// transposed product of 64 columns of the tile by its TILE_M rows: wgmma
// m64nBMk8, D = B^T A^T, with B^T's 64 x 8 fragment in registers and A^T,
// 8 x TILE_M, read by the tensor cores from A's K-major box (the chapter's steps
// take TILE_M = 256).
//
// Its shapes and switches, template parameters a step's file names:
// - Tile, Stages, Cluster (shapes.cuh): the block's TILE_M x TILE_N tile (TILE_K = 32),
//   the ring's stages, the blocks of a cluster that share A's slices;
// - Order: how a consumer orders a slice's loads, wgmma and waits (Overlap);
// - Fragments: B^T's fragments rounded to TF32 by cvt.rna, or as they are
//   (the tensor cores then keep each one's top 19 bits, as they do with the
//   operand they read from shared memory);
// - Unaligned (ring.cuh): the producer loads a slice by itself where rows are
//   off 16 bytes, or the host copies such operands onto 16 bytes first;
// - BBlocks: B's boxes one copy brings (producer.cuh).

#pragma once

#include "ring.cuh"

// How a consumer warpgroup orders a slice's loads, wgmma and waits (Consumer::multiply).
//   none: read the slice's fragments, issue its group, wait for it. The warpgroup's own loads never overlap its
//     wgmma, and its tensor work drains before every slice; only the other consumer's queued wgmma cover the gap.
//   next_slice: issue slice s, wait until only it is running (slice s - 1 done), give s - 1's stage back, and
//     read slice s + 1's fragments into the registers s - 1 read, while s runs.
enum class Overlap { none, next_slice };

// How B^T's fragments reach wgmma: rounded to nearest TF32 (cvt.rna), or as stored (the tensor cores read the top
// 19 bits of each).
enum class Fragments { rounded, as_stored };

template <class Tile, class Stages, class Cluster, Overlap Order, Fragments Rounding, Unaligned Rows, int BBlocks = 1>
struct Tf32Mainloop {
    using Element = float;
    static constexpr int TILE_M = Tile::TILE_M, TILE_N = Tile::TILE_N, TILE_K = Tile::TILE_K;
    static constexpr int STAGE_COUNT = Stages::STAGE_COUNT, CLUSTER_SIZE = Cluster::CLUSTER_SIZE;
    static constexpr int CONSUMERS = TILE_N / 64, THREADS = 128 * (1 + CONSUMERS);
    static constexpr int ACCUMULATORS = TILE_M / 2;   // a consumer thread's: its share of a TILE_M x 64 part
    static constexpr int BOX_COLUMNS = 32, BOXES_A_COPY = BBlocks;   // a box of B: 32 FP32 columns (128 bytes)
    static constexpr int A_BYTES = TILE_M * TILE_K * 4, B_BOX_BYTES = TILE_K * 32 * 4;
    static constexpr int STAGE_BYTES = A_BYTES + (TILE_N / 32) * B_BOX_BYTES;
    static constexpr bool OWN_LOADS = Rows == Unaligned::own_loads;
    static constexpr bool B_K_MAJOR = false;   // B as the study stores it, K x N
    // setmaxnreg moves registers between the warpgroups within what the block was launched with (the kernel's
    // cap, 65,536 / THREADS rounded down to 8, times THREADS): the producer's loops fit in 72 (its own loads
    // spill in fewer), and the consumers take the rest.
    static constexpr int PRODUCER_REGISTERS = 72, CONSUMER_REGISTERS = 216;   // gemm.cuh checks they fit
    static_assert((TILE_M == 64 || TILE_M == 128 || TILE_M == 256) && TILE_K == 32,
                  "wgmma m64nBMk8 over a 128-byte swizzle row of A: TILE_M = 64, 128 or 256, TILE_K = 32");
    static_assert(TILE_N % 64 == 0 && CONSUMERS >= 1 && CONSUMERS <= 2, "TILE_N: 64 columns a consumer warpgroup, 1 or 2");

    // Byte offsets inside a stage, as the copy engine writes them (128-byte swizzle, hopper.cuh).
    __device__ __forceinline__ static int a_offset(int m, int k)   // A(row0 + m, k0 + k): one box, rows of 32 k
    {
        return m * 128 + (((k / 4) ^ (m % 8)) << 4) + (k % 4) * 4;
    }

    __device__ __forceinline__ static int b_offset(int k, int n)   // B(k0 + k, col0 + n): boxes of 32 columns
    {
        return A_BYTES + (n / 32) * B_BOX_BYTES + k * 128 + ((((n % 32) / 4) ^ (k % 8)) << 4) + (n % 4) * 4;
    }

    // The copy engine can read A and B where their rows start on 16 bytes (matmulstudy/gpu/tma.py passes tensor
    // maps on the same rule, and zeros elsewhere).
    __device__ __forceinline__ static bool maps_usable(int N, int K, const float* A, const float* B)
    {
        return K % 4 == 0 && N % 4 == 0 && reinterpret_cast<uintptr_t>(A) % 16 == 0 &&
               reinterpret_cast<uintptr_t>(B) % 16 == 0;
    }

    // A consumer warpgroup's lane: which of the tile's columns its fragment rows g and g + 8 are, and the tile's
    // 64 x TILE_M transposed product it accumulates: d[4i + h] is C(row0 + 8i + 2t + h % 2, col0 + n_lo or n_hi).
    // The columns are spread so that a warp's fragment loads from B's swizzled boxes meet no bank twice.
    struct Consumer {
        int n_lo, n_hi, t, lane, first;   // first: the warpgroup's first column of the tile

        __device__ Consumer(int warpgroup, int tid)
        {
            const int warp = tid / 32, g = tid % 32 / 4;
            lane = tid % 32;
            t = lane % 4;
            first = 64 * (warpgroup - 1);
            n_lo = first + 32 * (warp / 2) + 8 * (warp % 2) + g % 4 + 16 * (g / 4);
            n_hi = n_lo + 4;
        }

        __device__ __forceinline__ static unsigned fragment(float x)
        {
            if (Rounding == Fragments::as_stored)
                return __float_as_uint(x);
            unsigned r;
            asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
            return r;
        }

        // B^T's fragments of slice number `count` of the ring, once its stage is full.
        __device__ __forceinline__ void fetch(const Ring<Tf32Mainloop>& ring, int count,
                                              unsigned (&a)[TILE_K / 8][4]) const
        {
            const unsigned char* tile = ring.stage(count);
            mbarrier_wait(&ring.full[count % STAGE_COUNT], (count / STAGE_COUNT) % 2);
#pragma unroll
            for (int kk = 0; kk < TILE_K / 8; ++kk) {
                const int k = 8 * kk + t;
                a[kk][0] = fragment(*reinterpret_cast<const float*>(tile + b_offset(k, n_lo)));
                a[kk][1] = fragment(*reinterpret_cast<const float*>(tile + b_offset(k, n_hi)));
                a[kk][2] = fragment(*reinterpret_cast<const float*>(tile + b_offset(k + 4, n_lo)));
                a[kk][3] = fragment(*reinterpret_cast<const float*>(tile + b_offset(k + 4, n_hi)));
            }
        }

        // A slice's four wgmma on the fragments `now`, committed as one group.
        __device__ __forceinline__ void issue(const Ring<Tf32Mainloop>& ring, int count, float (&d)[ACCUMULATORS],
                                              const unsigned (&now)[TILE_K / 8][4]) const
        {
            const unsigned char* tile = ring.stage(count);
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < TILE_K / 8; ++kk)
                wgmma_tf32<TILE_M>(d, now[kk], descriptor_sw128(tile + kk * 32));
            wgmma_commit();
        }

        // Slice `count` is done with: its stage may be refilled. In a cluster, on every block's barrier, and only
        // where a producer will wait for it: `end` is the ring's count after the block's last slice (a block of
        // one tile: that tile's slices; a persistent block, whose cluster meets at its end, releases every one).
        __device__ __forceinline__ void release(const Ring<Tf32Mainloop>& ring, int count, int end) const
        {
            if (lane != 0)
                return;
            if (CLUSTER_SIZE == 1)
                mbarrier_arrive(&ring.empty[count % STAGE_COUNT]);
            else if (count + STAGE_COUNT < end)
                for (unsigned r = 0; r < CLUSTER_SIZE; ++r)
                    mbarrier_arrive_cluster(&ring.empty[count % STAGE_COUNT], r);
        }

        // Every K-slice of one tile, from slice number `count` of the ring on, in Order. With next_slice the
        // fragment sets swap each slice; the loop is unrolled by two so that they keep compile-time names (an
        // array indexed at run time would go to local memory).
        __device__ __forceinline__ void multiply(const Ring<Tf32Mainloop>& ring, int& count, int K, int end,
                                                 float (&d)[ACCUMULATORS]) const
        {
#pragma unroll
            for (int i = 0; i < ACCUMULATORS; ++i)
                d[i] = 0.0f;
            const int slices = (K + TILE_K - 1) / TILE_K;
            unsigned even[TILE_K / 8][4], odd[TILE_K / 8][4];
            if (Order == Overlap::none) {
                for (int s = 0; s < slices; ++s, ++count) {
                    fetch(ring, count, even);
                    issue(ring, count, d, even);
                    wgmma_wait<0>();
                    release(ring, count, end);
                }
                return;
            }
            auto slice = [&](int s, const unsigned (&now)[TILE_K / 8][4], unsigned (&next)[TILE_K / 8][4]) {
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

        // --- what the epilogue (epilogue.cuh) asks of the accumulators ---

        // Its TILE_M x 64 part of the tile at (row0, col0) into C, each value on its own; nothing outside C.
        __device__ __forceinline__ void store(const float (&d)[ACCUMULATORS], float* __restrict__ C, int M, int N, int row0,
                                              int col0) const
        {
#pragma unroll
            for (int i = 0; i < TILE_M / 8; ++i)
#pragma unroll
                for (int h = 0; h < 4; ++h) {
                    const int r = row0 + 8 * i + 2 * t + h % 2, c = col0 + (h < 2 ? n_lo : n_hi);
                    if (r < M && c < N)
                        C[(size_t)r * N + c] = d[4 * i + h];
                }
        }

        // Every value of its part at offset(m, n) from `out`, (m, n) its place in the tile.
        template <class Offset>
        __device__ __forceinline__ void write_tile(const float (&d)[ACCUMULATORS], unsigned char* out, Offset offset) const
        {
#pragma unroll
            for (int i = 0; i < TILE_M / 8; ++i)
#pragma unroll
                for (int h = 0; h < 4; ++h) {
                    const int m = 8 * i + 2 * t + h % 2, n = h < 2 ? n_lo : n_hi;
                    *reinterpret_cast<float*>(out + offset(m, n)) = d[4 * i + h];
                }
        }

        // Its part in quarters of 64 x 64 (TILE_M / 64 of them: four of 256 rows): quarter q's place in the tile,
        // and its values at offset(m, n) from `out`, (m, n) their place in the quarter.
        static constexpr int QUARTERS = TILE_M / 64;

        __device__ __forceinline__ int2 quarter_origin(int q) const { return make_int2(64 * q, first); }

        template <class Offset>
        __device__ __forceinline__ void write_quarter(int q, const float (&d)[ACCUMULATORS], unsigned char* out,
                                                      Offset offset) const
        {
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int h = 0; h < 4; ++h) {
                    const int m = 8 * i + 2 * t + h % 2, n = (h < 2 ? n_lo : n_hi) - first;
                    *reinterpret_cast<float*>(out + offset(m, n)) = d[4 * (8 * q + i) + h];
                }
        }
    };
};
