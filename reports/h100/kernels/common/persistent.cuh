// A persistent grid for the TMA + wgmma steps (26 and later): one cluster per pair of multiprocessors, each
// computing tile after tile, on step 25's producer and consumers (tma_pipeline.cuh). Step 26's header says
// why; this file holds the mechanics: which tiles a cluster takes (steps 26 and 27 differ only there), and
// C's way out through a buffer of its own.
//
// What changes when a block computes many tiles instead of one:
// - The ring's count runs on from tile to tile, on both sides, so a stage's phase is still (count / STAGES)
//   % 2; the producer goes on into the next tile's slices as soon as a stage is free, while the consumers
//   are still on this tile or storing it.
// - C can no longer go out through the ring (step 20), which by then holds the next tile's slices. Each
//   consumer warpgroup has a buffer of its own after the ring: two boxes of C of 64 rows by 32 columns
//   (16 KB; the ring's four stages leave 35 KB of the 227 KB), filled and sent four times a tile, a quarter
//   of its rows each time. Its copies are waited for only before the buffer is written again.
// - The blocks of a cluster write into each other's shared memory (A's halves, the ring's releases, step
//   27's tile numbers) until their last tile, whose end neither knows of the other. So every thread of both
//   ends with a cluster barrier, and the consumers release every slice: no arrival can find its block gone.
// - The grid is the GPU's multiprocessors, rounded down to whole clusters (the registry's `grid`, and
//   matmulstudy/gpu/launch.py cuts it to the clusters that can run at once). No block waits for another
//   cluster: the result does not depend on how many clusters run at once, only the time does.

#pragma once

#include <climits>

#include "tma_pipeline.cuh"
#include "tiles.cuh"   // which tiles a cluster takes (StridedTiles: step 26, QueuedTiles: step 27), C's buffers

static_assert(BM % C_ROWS == 0 && BN == 64 * CONSUMERS, "C goes out in quarters of rows, 64 columns a consumer");
static_assert(PRODUCER_WARPS == 4, "every producer warp walks the tiles here: step 42's one producer warp is BF16's "
              "(persistent_bf16.cuh); in TF32 it gained nothing (6fbf69a:notes/bf16.md, step 42)");

// One consumer warpgroup's 256 x 64 part of the tile at (row0, col0), out through its buffer (tiles.cuh's
// send_quarter) in four quarters of 64 rows: in quarter q, each thread's 32 values of those rows.
__device__ __forceinline__ void store_through_buffer(const Consumer& me, const float (&d)[128], int warpgroup,
                                                     const CUtensorMap* map_c, int row0, int col0, int tid)
{
    const int first_column = 64 * (warpgroup - 1);   // of the tile: this warpgroup's columns start here
    const bool lead = tid % 128 == 0;
#pragma unroll
    for (int q = 0; q < BM / C_ROWS; ++q)
        send_quarter(warpgroup, map_c, row0 + C_ROWS * q, col0 + first_column, lead, [&](unsigned char* out) {
#pragma unroll
            for (int i = 0; i < C_ROWS / 8; ++i)
#pragma unroll
                for (int h = 0; h < 4; ++h) {
                    const int m = 8 * i + 2 * me.t + h % 2, n = (h < 2 ? me.n_lo : me.n_hi) - first_column;
                    *reinterpret_cast<float*>(out + c_buffer_offset(m, n)) = d[4 * (C_ROWS / 8 * q + i) + h];
                }
        });
}

// The persistent kernel's body (steps 26 and 27): as multiply_tile, for each tile `Tiles` hands the cluster.
template <Overlap Order, class Tiles>
__device__ __forceinline__ void multiply_tiles(int M, int N, int K, const float* __restrict__ A,
                                               const float* __restrict__ B, float* __restrict__ C,
                                               const CUtensorMap* map_a, const CUtensorMap* map_b,
                                               const CUtensorMap* map_c)
{
    if (threadIdx.x == 0)
        Tiles::init();
    setup_ring(true);   // and the cluster's first barrier
    const int warpgroup = threadIdx.x / 128;
    int count = 0;   // slices through the ring so far, over every tile of the block
    if (warpgroup == 0) {   // the producer
        registers_release<PRODUCER_REGISTERS>();
        if (!maps_usable(N, K, A, B))
            __trap();   // launched without step 24's copies (align_rows in the registry): no loads of its own
        const unsigned rank = CLUSTER == 1 ? 0 : cluster_rank();
        Tiles tiles(M, N, rank == 0 && threadIdx.x == 0);
        for (int i = tiles.next(); i >= 0; i = tiles.next()) {
            const int2 origin = tiles.origin(i);
            produce_tile<false>(the_ring(), count, origin.x, origin.y, M, N, K, A, B, map_a, map_b, true,
                                threadIdx.x, rank);
        }
    } else {
        registers_claim<CONSUMER_REGISTERS>();
        const Consumer me(warpgroup, threadIdx.x % 128);
        const bool tma_store = store_map_usable(N, C);
        Tiles tiles(M, N, false);
        for (int i = tiles.next(); i >= 0; i = tiles.next()) {
            float d[128];
            me.multiply<Order>(the_ring(), count, K, INT_MAX, d);   // every slice released (see above)
            const int2 origin = tiles.origin(i);
            if (tma_store)
                store_through_buffer(me, d, warpgroup, map_c, origin.x, origin.y, threadIdx.x);
            else
                me.store(d, C, M, N, origin.x, origin.y);
        }
        if (threadIdx.x % 128 == 0)
            tma_store_wait_read();   // the buffer is read out before the block's shared memory goes
    }
    cluster_sync();   // neither block ends while the other may still write into it
}
