// The producer warpgroup's part of the mainloop, for every precision: each
// K-slice of a tile into the ring, as Mainloop lays a stage out
// (Mainloop::A_BYTES, B_BOX_BYTES, STAGE_BYTES, a_offset(m, k), b_offset(k, n):
// where the copy engine puts A(row0 + m, k0 + k) and B(k0 + k, col0 + n)).
// The tile, stages and cluster are the mainloop's (Mainloop::TILE_M, ..., STAGE_COUNT,
// CLUSTER_SIZE). A's box is TILE_M x TILE_K (TILE_M / CLUSTER_SIZE rows a block in a cluster); B's slice
// comes as TILE_N / Mainloop::BOX_COLUMNS boxes, each one 128-byte swizzle row
// of elements wide (TILE_K x BOX_COLUMNS of B stored K x N; of B stored N x K,
// Mainloop::B_K_MAJOR, BOX_COLUMNS x TILE_K).

#pragma once

#include "ring.cuh"

// Every K-slice of the tile at (row0, col0) into the ring, from slice number `count` of the ring on, by the
// producer warpgroup (tid 0..127).
// - With tensor maps (`tma`) one thread asks the copy engine for each slice (zeros outside the matrices).
// - Without, where Mainloop::OWN_LOADS, all 128 threads load it element by element, with the same zeros, into
//   the same swizzled layout, fence (the tensor cores read what ordinary stores wrote) and arrive. A mainloop
//   without OWN_LOADS is launched only on operands that have maps (the host's aligned copies, `align_rows`).
// - With CLUSTER_SIZE > 1 the cluster's blocks compute tiles side by side along N with the same rows: each asks
//   for its share of A's box and has it written into every block's ring (multicast), `rank` its place.
// - With Mainloop::BOXES_A_COPY > 1 one copy brings that many of B's boxes side by side, through the host's 3-D
//   map, where N is whole boxes wide (else the host's map is 2-D and each box is a copy).
template <class Mainloop>
__device__ __forceinline__ void produce_tile(const Ring<Mainloop>& ring, int& count, int row0, int col0, int M,
                                             int N, int K, const typename Mainloop::Element* __restrict__ A,
                                             const typename Mainloop::Element* __restrict__ B,
                                             const CUtensorMap* map_a, const CUtensorMap* map_b, bool tma, int tid,
                                             unsigned rank)
{
    using T = typename Mainloop::Element;
    constexpr int TILE_M = Mainloop::TILE_M, TILE_N = Mainloop::TILE_N, TILE_K = Mainloop::TILE_K;
    constexpr int STAGE_COUNT = Mainloop::STAGE_COUNT, CLUSTER_SIZE = Mainloop::CLUSTER_SIZE;
    constexpr int BOX_COLUMNS = Mainloop::BOX_COLUMNS, BOXES = Mainloop::BOXES_A_COPY;
    static_assert(TILE_N % (BOX_COLUMNS * BOXES) == 0, "the boxes a copy brings must divide a slice's boxes of B");
    for (int k0 = 0; k0 < K; k0 += TILE_K, ++count) {
        const int s = count % STAGE_COUNT;
        unsigned char* tile = ring.stage(count);
        if (tma) {
            if (tid == 0) {
                mbarrier_wait(&ring.empty[s], (count / STAGE_COUNT + 1) % 2);
                mbarrier_arrive_expect_bytes(&ring.full[s], Mainloop::STAGE_BYTES);
                if (CLUSTER_SIZE == 1)
                    tma_load_2d(tile, map_a, k0, row0, &ring.full[s]);
                else   // this block's share of A's rows, into every block of the cluster
                    tma_load_2d_multicast(tile + rank * (Mainloop::A_BYTES / CLUSTER_SIZE), map_a, k0,
                                          row0 + rank * (TILE_M / CLUSTER_SIZE), &ring.full[s], (1u << CLUSTER_SIZE) - 1);
                if (BOXES > 1 && N % BOX_COLUMNS == 0)   // several boxes a copy (the host's 3-D map: same rule)
                    for (int j = 0; j < TILE_N / BOX_COLUMNS; j += BOXES)
                        tma_load_3d(tile + Mainloop::A_BYTES + j * Mainloop::B_BOX_BYTES, map_b, 0, k0,
                                    col0 / BOX_COLUMNS + j, &ring.full[s]);
                else
                    for (int j = 0; j < TILE_N / BOX_COLUMNS; ++j)   // a K-major B's box: x is its k, y its n
                        tma_load_2d(tile + Mainloop::A_BYTES + j * Mainloop::B_BOX_BYTES, map_b,
                                    Mainloop::B_K_MAJOR ? k0 : col0 + BOX_COLUMNS * j,
                                    Mainloop::B_K_MAJOR ? col0 + BOX_COLUMNS * j : k0, &ring.full[s]);
            }
            continue;
        }
        if (!Mainloop::OWN_LOADS)
            continue;
        mbarrier_wait(&ring.empty[s], (count / STAGE_COUNT + 1) % 2);
#pragma unroll 4
        for (int e = tid; e < TILE_M * TILE_K; e += 128) {
            const int m = e / TILE_K, k = e % TILE_K;
            const T v = row0 + m < M && k0 + k < K ? A[(size_t)(row0 + m) * K + k0 + k] : T(0);
            *reinterpret_cast<T*>(tile + Mainloop::a_offset(m, k)) = v;
        }
#pragma unroll 4
        for (int e = tid; e < TILE_K * TILE_N; e += 128) {
            const int k = e / TILE_N, n = e % TILE_N;
            const T v = k0 + k < K && col0 + n < N ? B[(size_t)(k0 + k) * N + col0 + n] : T(0);
            *reinterpret_cast<T*>(tile + Mainloop::b_offset(k, n)) = v;
        }
        fence_proxy_async();
        mbarrier_arrive(&ring.full[s]);
    }
}
