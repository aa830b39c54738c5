// Stream-K's machinery (the SIMT Stream-K steps; a change here rebuilds
// them): the blocks' ticket numbers, the walk over a block's range of
// K-slices with the fix-up of the tiles it cuts, and the ways of sharing out
// the slices: plain Stream-K's, and the paper's two hybrids (whole_tiles).
// gpu_stream_k's header explains them; gpu_hybrid_stream_k's says why a
// hybrid; gpu_async_stream_k's why its whole tiles are blocks of their own,
// after the shared slices. What the blocks of a launch share in global memory
// (the ticket, progress[]) and how it is marked: stream_k_marks.cuh.

#pragma once

#include "pipeline.cuh"   // the pipelined main loop (multiply_slices) and the epilogue (store_tile)
#include "stream_k_marks.cuh"   // the launch's marks: ticket, progress[], wait_for, owner_of, whole_tiles

// The place of tile `tile` of C, in row-major order over tiles_n tiles a row.
__device__ __forceinline__ Place tile_place(long long tile, int tiles_n)
{
    return Place(tile / tiles_n * BM, tile % tiles_n * BN);
}

// Slices [first, end) of a region of tiles that starts at tile `tile0` (in
// row-major order over tiles_n tiles a row) and whose S slices are shared
// out to W blocks, block w taking [w * S / W, (w + 1) * S / W). Walked
// backwards: the piece this block owns the slice 0 of comes first, the one
// it must wait for last. A piece holding slice 0 is stored into C; a later
// piece waits until progress[owner] equals its first slice, adds, and moves
// progress on. A block owns slice 0 of at most one cut tile a launch (any
// later tile that starts in its range ends in it too: it goes whole), so its
// place in progress[] serves one tile a launch.
// `vector`: the epilogue's 16-byte accesses where C's rows allow them (pipeline.cuh's store_tile).
// Buffers: pipeline.cuh's Tiles, or async_slices.cuh's AsyncTiles.
template <class Buffers, bool vector = false>
__device__ __forceinline__ void multiply_range(Buffers& s, const float* __restrict__ A, const float* __restrict__ B,
                                               float* __restrict__ C, int M, int N, int K, long long tile0,
                                               long long first, long long end, long long S, long long W,
                                               unsigned launch)
{
    const int tiles_n = (N + BN - 1) / BN, per_tile = (K + BK - 1) / BK;
    while (end > first) {
        const long long tile = (end - 1) / per_tile, tile_first = tile * per_tile;
        const int from = max(first, tile_first) - tile_first, to = end - tile_first;   // slices of this tile
        const Place p = tile_place(tile0 + tile, tiles_n);
        float acc[TM][TN] = {};
        multiply_slices<FmaOrder::serpentine>(acc, s, A, B, M, N, K, p, from, to);

        if (from == 0 && to == per_tile) {          // the whole tile
            store_tile<false, vector>(C, M, N, acc, p);
        } else {                                     // a piece: in k order, through C
            unsigned long long* const done = &progress[owner_of(tile_first, S, W)];
            if (from == 0) {
                store_tile<false, vector>(C, M, N, acc, p);
            } else {
                if (threadIdx.x == 0)
                    wait_for(done, launch, from);
                __syncthreads();
                __threadfence();
                store_tile<true, vector>(C, M, N, acc, p);
            }
            __threadfence();   // this piece's C before the progress that announces it
            __syncthreads();
            if (threadIdx.x == 0)
                atomicExch(done, marked(launch, to));
        }
        end = tile_first + from;
    }
}

// Plain Stream-K's decomposition, for block `number` of W: slices [w * S / W, (w + 1) * S / W) of all S, in tile
// order; but tiles that fit in one wave at least 7/8 full go whole, tile w to block w (cutting every tile
// in pieces would cost more than the idle eighth). When the tiles fill whole waves, the ranges are whole
// tiles anyway.
template <class Buffers>
__device__ __forceinline__ void stream_k(Buffers& s, const float* __restrict__ A, const float* __restrict__ B,
                                         float* __restrict__ C, int M, int N, int K, long long number, long long W,
                                         unsigned launch)
{
    const long long tiles = (long long)((M + BM - 1) / BM) * ((N + BN - 1) / BN), per_tile = (K + BK - 1) / BK;
    const bool one_wave = tiles < W && tiles * 8 >= W * 7;
    const long long S = (one_wave ? W : tiles) * per_tile;   // one wave: as if W tiles, the last ones empty
    multiply_range(s, A, B, C, M, N, K, 0, number * S / W, min((number + 1) * S / W, tiles * per_tile), S, W,
                   launch);
}

// The two-tile hybrid's decomposition (the paper's two-tile Stream-K + data-parallel hybrid), for block `number` of W:
// whole tiles wave by wave in row-major order, tile i * W + w to block w, while at least two waves remain;
// the last full wave and the partial one (W + tiles % W tiles) shared out as slices (whole_tiles).
template <class Buffers>
__device__ __forceinline__ void hybrid_stream_k(Buffers& s, const float* __restrict__ A, const float* __restrict__ B,
                                                float* __restrict__ C, int M, int N, int K, long long number,
                                                long long W, unsigned launch)
{
    const long long tiles = (long long)((M + BM - 1) / BM) * ((N + BN - 1) / BN), per_tile = (K + BK - 1) / BK;
    const long long whole = whole_tiles(tiles, W, false);
    const long long S = (tiles - whole) * per_tile;                           // the rest, shared out as slices
    for (long long tile = number;; tile += W) {   // whole tiles wave by wave, in row-major order; then the rest
        const bool shared = tile >= whole;         // (one call site: ptxas then fits it in 128 registers)
        multiply_range(s, A, B, C, M, N, K, shared ? whole : tile, shared ? number * S / W : 0,
                       shared ? (number + 1) * S / W : per_tile, shared ? S : per_tile, shared ? W : 1, launch);
        if (shared)
            break;
    }
}
