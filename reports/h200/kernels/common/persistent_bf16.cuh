// A persistent grid for the BF16 wgmma steps (34 and later): step 33's
// producer and consumers (wgmma_bf16.cuh), computing tile after tile, on the
// TF32 chapter's tile schedulers and C buffers (tiles.cuh). Step 34's header
// says why; persistent.cuh's header says what changes when a block computes
// many tiles instead of one, which holds here but for clusters (the BF16
// steps have none: each block is a cluster of one).

#pragma once

#include "wgmma_bf16.cuh"
#include "tiles.cuh"   // which tiles a block takes (StridedTiles, QueuedTiles), C's buffers

static_assert(BN % 64 == 0 && C_ROWS == 64, "C goes out in quarters of 64 columns of a consumer's 64 rows");

// One consumer warpgroup's 64 x 256 part of the tile at (row0, col0), out through its buffer (send_quarter)
// in four quarters of 64 columns: in quarter q, d[4i + h] for i = 8q .. 8q + 7, each neighbouring pair
// (h = 0, 1 and 2, 3: columns n and n + 1 of one 16-byte chunk) written as one 8-byte store.
__device__ __forceinline__ void store_through_buffer(const Consumer& me, const float (&d)[128], int warpgroup,
                                                     const CUtensorMap* map_c, int row0, int col0, bool lead)
{
#pragma unroll
    for (int q = 0; q < BN / 64; ++q)
        send_quarter(warpgroup, map_c, row0 + me.rows, col0 + 64 * q, lead, [&](unsigned char* out) {
#pragma unroll
            for (int i = 8 * q; i < 8 * q + 8; ++i)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const int m = 16 * me.w + me.g + 8 * h, n = 8 * (i - 8 * q) + 2 * me.t;
                    *reinterpret_cast<float2*>(out + c_buffer_offset(m, n)) =
                        make_float2(d[4 * i + 2 * h], d[4 * i + 2 * h + 1]);
                }
        });
}

// The persistent kernel's body (step 34 and later): as multiply_tile, for each tile `Tiles` hands the block (a
// cluster of one). Where C's rows are off 16 bytes the consumers store it by themselves; where A's or B's are,
// the producer loads them by itself (step 34, OwnLoads), or, from step 35 on, never sees such rows: the host
// copies them onto 16 bytes first (`align_rows` in the registry), and a launch without those copies traps.
template <class Tiles, bool OwnLoads = true>
__device__ __forceinline__ void multiply_tiles(int M, int N, int K, const bf16* __restrict__ A,
                                               const bf16* __restrict__ B, float* __restrict__ C,
                                               const CUtensorMap* map_a, const CUtensorMap* map_b,
                                               const CUtensorMap* map_c)
{
    static_assert(PRODUCER_WARPS == 4 || !OwnLoads, "a producer making loads of its own needs its 128 threads");
    if (threadIdx.x == 0)
        Tiles::init();
    setup_ring(maps_usable(N, K, A, B));
    const int warpgroup = threadIdx.x / 128;
    int count = 0;   // slices through the ring so far, over every tile of the block
    if (warpgroup == 0) {   // the producer
        registers_release<PRODUCER_REGISTERS>();
        if (PRODUCER_WARPS < 4 && threadIdx.x >= 32 * PRODUCER_WARPS)
            return;   // step 42: warps with no loads to make leave, not waiting on the tile slot (tiles.cuh)
        if (!OwnLoads && !maps_usable(N, K, A, B))
            __trap();   // launched without the aligned copies: no loads of its own
        Tiles tiles(M, N, threadIdx.x == 0);   // thread 0 draws the tiles (QueuedTiles)
        for (int i = tiles.next(); i >= 0; i = tiles.next()) {
            const int2 origin = tiles.origin(i);
            produce_tile<OwnLoads>(the_ring(), count, origin.x, origin.y, M, N, K, A, B, map_a, map_b,
                                   maps_usable(N, K, A, B), threadIdx.x);
        }
    } else {
        registers_claim<CONSUMER_REGISTERS>();
        const Consumer me(warpgroup, threadIdx.x % 128);
        const bool tma_store = store_map_usable(N, C), lead = threadIdx.x % 128 == 0;
        Tiles tiles(M, N, false);
        for (int i = tiles.next(); i >= 0; i = tiles.next()) {
            float d[128];
            me.multiply(the_ring(), count, K, d);
            const int2 origin = tiles.origin(i);
            if (tma_store)
                store_through_buffer(me, d, warpgroup, map_c, origin.x, origin.y, lead);
            else
                me.store(d, C, M, N, origin.x, origin.y);
        }
        if (lead)
            tma_store_wait_read();   // the buffer is read out before the block's shared memory goes
    }
}
