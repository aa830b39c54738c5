// Step 38: step 37's persistent blocks, the partial last wave of tiles
// shared out among them as K-slices first (Stream-K's hybrid).
//
// Source: Osama, Merrill, Cecka, Garland and Owens, "Stream-K" (PPoPP
// 2023), section 5: the "data-parallel + one-tile Stream-K" hybrid (and the
// two-tile one where the partial wave is less than half full), which the
// FP32 chapter's steps 17 and 29 run (kernels/common/stream_k_shares.cuh);
// CUTLASS's SM90 stream-K tile scheduler. The cut tiles' pieces are added
// in C by the copy engine (cp.reduce.async.bulk.tensor, PTX ISA), in k order.
//
// The problem: a block computes whole 128 x 256 tiles, one block an SM, so
// the tiles come in waves of 132 on the H100: 4096^2 is 512 tiles, 3.88
// waves; the SMs that finish their third tile while no fourth is left (16
// of 132) idle for a whole tile's time, 3% of the launch. At 8192^2, 2,048
// tiles, 15.5 waves; at 1537 x 3001, 156 tiles, 1.18 waves: a second wave
// for 24 tiles.
//
// What changes: which block computes what part of which tile. Of the tiles
// in grouped order, the first ones, as many as the partial wave holds (with
// the last full wave too where the partial one is less than half full;
// every tile where they fit in less than one wave 7/8 full), are shared out
// as BK-deep K-slices: block number w (numbered as they start, by a counter
// in global memory) takes slices [w S / W, (w + 1) S / W) of the S slices,
// a contiguous range over one, two or three tiles. It computes its range
// first, tile piece by tile piece, walking backwards: the piece that holds
// a tile's slice 0 first, stored into C; then, where its range starts
// inside a tile, the piece that waits for the block before it. After its
// range each block takes whole tiles from step 37's queue, which starts
// after the shared tiles. At 4096 each block computes 0.88 of a tile's
// slices and then whole tiles: three each, if the blocks ran at one speed.
//
// The pieces of a cut tile meet in C. Each consumer warpgroup (64 rows of
// the tile) hands its rows on by itself: the piece with slice 0 stores its
// rows as step 37 does; a later piece's lead thread waits until the flag of
// those rows in global memory says the slices before its own are in C,
// then the copy engine adds its rows into C (tiles.cuh's send_quarter,
// `add`); a piece that does not end the tile waits until its stores and
// adds are written, and sets the flag to the slices now in C; the one that
// ends it sets the flag back to 0. So a result is the same bit for bit on
// every run on one GPU model (on one with another number of SMs, the cuts
// and so the last bits of the sums change), and nothing is left for the
// next launch: the block counter goes back to 0 with its last number, as
// step 37's tile counter does. A launch that does not finish leaves the
// context unusable (a trap or a fault is sticky), and a new context loads
// the module with both at 0. Every wait is bounded (10 s, then a trap:
// stream_k_shares.cuh).
//
// Counter that shows it: the SMs' balance (ncu, sm_balance: the mean SM's
// active cycles over the busiest's), higher.
//
// Ragged sizes: as step 37 (aligned copies where rows are off 16 bytes; C
// always has its tensor map, so every piece goes out through the copy
// engine). A tile's slice 0 holds its ragged k as before; the copy engine
// skips the elements of a box outside C in its adds as in its stores.
//
// Parameters: step 37's. Needs sm_90a.

#include "../common/persistent_bf16.cuh"    // step 37's kernel and its queue of whole tiles (QueuedTiles)
#include "../common/pad_copy.cuh"           // step 35's copies where rows are off 16 bytes
#include "../common/stream_k_shares.cuh"    // the split (whole_tiles, owner_of) and the bounded wait (wait_for)

#ifndef TICKET
#define TICKET 1
#endif

#if GROUP < 2
#error "GROUP (>= 2) comes from kernels/registry.yaml as a -D define"
#endif

__device__ unsigned block_ticket;                                      // blocks numbered so far; 0 between launches
__device__ unsigned long long piece_progress[MAX_BLOCKS * CONSUMERS];   // per cut tile (by the block owning its
                                                                       // slice 0) and consumer: slices in C; 0
                                                                       // between launches
__shared__ int block_number;

// The tiles of the grid that are shared out as slices: the first of the grouped order.
__device__ __forceinline__ int shared_tiles(int M, int N)
{
    const int tiles = TileGrid(M, N).total();
    return tiles - int(whole_tiles(tiles, gridDim.x, true));
}

// What a block computes (persistent_bf16.cuh's multiply_tiles asks it): first its range of the shared slices,
// piece by piece, then step 37's queue of whole tiles, numbered after the shared ones.
struct StreamKTiles : QueuedTiles {
    long long S, W, first, end;   // the shared slices, the blocks, and what is left of this block's range
    int per_tile;                 // K-slices a tile
    int from, to, owner;          // the piece last handed: its slices of the tile, and whose flag it hands on by

    __device__ StreamKTiles(int M, int N, int K, bool draws)
        : QueuedTiles(M, N, K, draws, shared_tiles(M, N)), W(gridDim.x), per_tile((K + BK - 1) / BK), from(0),
          to(0), owner(0)
    {
        S = (long long)skip * per_tile;
        first = block_number * S / W;
        end = (block_number + 1) * S / W;
    }

    // Thread 0, before the block's first barrier: step 37's slot barriers, and the block's number.
    __device__ static void init()
    {
        QueuedTiles::init();
        if (gridDim.x > MAX_BLOCKS)
            stop();   // more blocks than piece_progress has places for
#if TICKET
        block_number = int(atomicAdd(&block_ticket, 1u));
        if (block_number == int(gridDim.x) - 1)
            atomicExch(&block_ticket, 0u);   // the launch's last number: every block has its own
#else
        block_number = blockIdx.x;
#endif
    }

    // The next piece's tile in the grouped order (the last one of the range left, its slices [from, to)),
    // then whole tiles from the queue; -1 when none is left.
    __device__ int next()
    {
        if (end > first) {
            const long long tile = (end - 1) / per_tile, tile_first = tile * per_tile;
            from = int(max(first, tile_first) - tile_first);
            to = int(end - tile_first);
            owner = owner_of(tile_first, S, W);
            end = tile_first + from;
            return int(tile);
        }
        from = 0;
        to = per_tile;
        const int i = QueuedTiles::next();
        return i < 0 ? -1 : i + skip;
    }

    __device__ int2 origin(int tile) const { return grouped_origin(tile, rows, columns); }
    __device__ int2 k_range(int K) const { return make_int2(from * BK, min(K, to * BK)); }

    // This consumer warpgroup's flag for the piece's tile.
    __device__ unsigned long long* flag(int warpgroup) const
    {
        return &piece_progress[owner * CONSUMERS + warpgroup - 1];
    }

    // A piece after the tile's first: its lead thread waits until the pieces before it are in C, and the
    // warpgroup meets it there; true: add what C holds (Consumer::add_from), then store the sum.
    __device__ bool waits_for_earlier_pieces(int warpgroup, bool lead) const
    {
        if (from == 0)
            return false;
        if (lead) {
            wait_for(flag(warpgroup), 0, from);
            __threadfence();
        }
        named_barrier(1 + warpgroup, 128);
        return true;
    }

    // A piece of a cut tile, once sent: one that does not end the tile waits until its rows are written into
    // C, then says how many slices are in C; the last sets the flag back to 0.
    __device__ void announce_piece(int warpgroup, bool lead) const
    {
        if (!lead || (from == 0 && to == per_tile))
            return;
        if (to < per_tile) {
            tma_store_wait_written();
            __threadfence();
        }
        atomicExch(flag(warpgroup), to < per_tile ? (unsigned long long)to : 0ull);
    }
};

extern "C" __global__ void __launch_bounds__(THREADS, 1)
gpu_wgmma_bf16_stream_k(int M, int N, int K, const bf16* __restrict__ A, const bf16* __restrict__ B,
                        float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                        const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c)
{
    multiply_tiles<StreamKTiles, false>(M, N, K, A, B, C, &map_a, &map_b, &map_c);
}
