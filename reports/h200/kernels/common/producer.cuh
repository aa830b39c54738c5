// The producer warpgroup of the TMA + wgmma steps, both chapters (TF32: 19
// and later, tma_pipeline.cuh; BF16: 33 and later, wgmma_bf16.cuh): every
// K-slice of a tile into the ring. A change here rebuilds them all.
//
// Before it is included: the ring (ring.cuh) and the including pipeline's
// stage layout: A_BYTES, B_BOX_BYTES, STAGE_BYTES, and a_offset(m, k),
// b_offset(k, n), where the copy engine puts A(row0 + m, k0 + k) and
// B(k0 + k, col0 + n) in a stage. A's box is BM x BK (BM / CLUSTER rows with
// clusters); B's slice comes as BN / (128 / sizeof(T)) boxes, each one
// 128-byte swizzle row of elements wide.

#pragma once

#ifndef B_BLOCKS
#define B_BLOCKS 1   // B's boxes one copy brings (step 38: a slice's BN / 64, through a 3-D map: gpu/tma.py)
#endif

// Every K-slice of the tile at (row0, col0) into the ring, from slice number `count` of the ring on, by the
// producer warpgroup (tid 0..127). With tensor maps one thread asks the copy engine for each slice (zeros
// outside the matrices); without, all 128 threads load it element by element, with the same zeros, into the
// same swizzled layout, fence (the tensor cores read what ordinary stores wrote) and arrive. OwnLoads false
// (steps 26 and later, 35 and later: their operands always have maps, the host's aligned copies) leaves that
// second way out. With CLUSTER = 2 (TF32 step 22 and later) the cluster's blocks compute tiles side by side
// along N with the same rows: each asks for half of A's box and has it written into every block's ring
// (multicast). With B_BLOCKS > 1 (BF16 step 38) one copy brings B_BLOCKS of B's boxes side by side, through the
// host's 3-D map, where N is whole boxes wide (else the host's map is 2-D and each box is a copy, as before).
// T: the elements of A and B as the kernels read them (float, or BF16's 16-bit values).
template <bool OwnLoads = true, typename T>
__device__ __forceinline__ void produce_tile(const Ring& ring, int& count, int row0, int col0, int M, int N, int K,
                                             const T* __restrict__ A, const T* __restrict__ B,
                                             const CUtensorMap* map_a, const CUtensorMap* map_b, bool tma, int tid,
                                             unsigned rank = 0)
{
    constexpr int BOX_COLUMNS = 128 / sizeof(T);   // a box of B: one 128-byte swizzle row of elements wide
    static_assert(BN % (BOX_COLUMNS * B_BLOCKS) == 0, "B_BLOCKS boxes a copy must divide a slice's boxes of B");
    for (int k0 = 0; k0 < K; k0 += BK, ++count) {
        const int s = count % STAGES;
        unsigned char* tile = ring.stage(count);
        if (tma) {
            if (tid == 0) {
                mbarrier_wait(&ring.empty[s], (count / STAGES + 1) % 2);
                mbarrier_arrive_expect_bytes(&ring.full[s], STAGE_BYTES);
                if (CLUSTER == 1)
                    tma_load_2d(tile, map_a, k0, row0, &ring.full[s]);
                else   // this block's share of A's rows, into every block of the cluster
                    tma_load_2d_multicast(tile + rank * (A_BYTES / CLUSTER), map_a, k0, row0 + rank * (BM / CLUSTER),
                                          &ring.full[s], (1u << CLUSTER) - 1);
                if (B_BLOCKS > 1 && N % BOX_COLUMNS == 0)   // B_BLOCKS boxes a copy (the host's 3-D map: same rule)
                    for (int j = 0; j < BN / BOX_COLUMNS; j += B_BLOCKS)
                        tma_load_3d(tile + A_BYTES + j * B_BOX_BYTES, map_b, 0, k0, col0 / BOX_COLUMNS + j,
                                    &ring.full[s]);
                else
                    for (int j = 0; j < BN / BOX_COLUMNS; ++j)
                        tma_load_2d(tile + A_BYTES + j * B_BOX_BYTES, map_b, col0 + BOX_COLUMNS * j, k0,
                                    &ring.full[s]);
            }
            continue;
        }
        if (!OwnLoads)
            continue;
        mbarrier_wait(&ring.empty[s], (count / STAGES + 1) % 2);
#pragma unroll 4
        for (int e = tid; e < BM * BK; e += 128) {
            const int m = e / BK, k = e % BK;
            const T v = row0 + m < M && k0 + k < K ? A[(size_t)(row0 + m) * K + k0 + k] : T(0);
            *reinterpret_cast<T*>(tile + a_offset(m, k)) = v;
        }
#pragma unroll 4
        for (int e = tid; e < BK * BN; e += 128) {
            const int k = e / BN, n = e % BN;
            const T v = k0 + k < K && col0 + n < N ? B[(size_t)(k0 + k) * N + col0 + n] : T(0);
            *reinterpret_cast<T*>(tile + b_offset(k, n)) = v;
        }
        fence_proxy_async();
        mbarrier_arrive(&ring.full[s]);
    }
}
