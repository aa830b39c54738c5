// Stream-K's machinery (steps 15 to 17; a change here rebuilds them): the
// blocks' ticket numbers, the walk over a block's range of K-slices with the
// fix-up of the tiles it cuts, and step 15's sharing out of the slices.
// Step 15's header explains them; step 17 shares out differently.

#pragma once

#include "pipeline.cuh"   // the pipelined main loop (multiply_slices) and the epilogue (store_tile)

constexpr int MAX_BLOCKS = 4096;                  // progress[] has a place per block
__device__ unsigned int ticket = 0, retired = 0;  // blocks started and finished in this launch
__device__ unsigned int progress[MAX_BLOCKS];     // per cut tile (by the block owning its slice 0): slices in C

// This block's number, 0 ... W-1, in the order the blocks start: a block
// only ever waits for one numbered before it, which is running already.
__device__ __forceinline__ long long take_ticket(int& number)
{
    const long long W = (long long)gridDim.x * gridDim.y;
    if (W > MAX_BLOCKS)
        __trap();   // a grid larger than progress[]: the launch fails, not the result
    if (threadIdx.x == 0)
        number = atomicAdd(&ticket, 1);
    __syncthreads();
    return W;
}

// The last block out resets the tickets for the next launch.
__device__ __forceinline__ void retire(long long W)
{
    if (threadIdx.x == 0 && atomicAdd(&retired, 1) == W - 1) {
        atomicExch(&ticket, 0);
        atomicExch(&retired, 0);
    }
}

// The block whose range holds slice x: the largest w with w * S / W <= x.
__device__ __forceinline__ int owner_of(long long x, long long S, long long W) { return ((x + 1) * W + S - 1) / S - 1; }

// Slices [first, end) of a region of tiles that starts at tile `tile0` (in
// row-major order over tiles_n tiles a row) and whose S slices are shared
// out to W blocks, block w taking [w * S / W, (w + 1) * S / W). Walked
// backwards: the piece this block owns the slice 0 of comes first, the one
// it must wait for last. A piece holding slice 0 is stored into C; a later
// piece waits until progress[owner] equals its first slice, adds, and moves
// progress on (to 0 when the tile is done, ready for the next launch).
__device__ __forceinline__ void multiply_range(Tiles& s, const float* __restrict__ A, const float* __restrict__ B,
                                               float* __restrict__ C, int M, int N, int K, long long tile0,
                                               long long first, long long end, long long S, long long W)
{
    const int tiles_n = (N + BN - 1) / BN, per_tile = (K + BK - 1) / BK;
    while (end > first) {
        const long long tile = (end - 1) / per_tile, tile_first = tile * per_tile;
        const int from = max(first, tile_first) - tile_first, to = end - tile_first;   // slices of this tile
        const Place p((tile0 + tile) / tiles_n * BM, (tile0 + tile) % tiles_n * BN);
        float acc[TM][TN] = {};
        multiply_slices<FmaOrder::serpentine>(acc, s, A, B, M, N, K, p, from, to);

        if (from == 0 && to == per_tile) {          // the whole tile
            store_tile(C, M, N, acc, p);
        } else {                                     // a piece: in k order, through C
            unsigned int* const done = &progress[owner_of(tile_first, S, W)];
            if (from == 0) {
                store_tile(C, M, N, acc, p);
            } else {
                if (threadIdx.x == 0)
                    while (atomicAdd(done, 0) != (unsigned)from)
                        __nanosleep(64);
                __syncthreads();
                __threadfence();
                store_tile<true>(C, M, N, acc, p);
            }
            __threadfence();   // this piece's C before the progress that announces it
            __syncthreads();
            if (threadIdx.x == 0)
                atomicExch(done, to == per_tile ? 0 : to);
        }
        end = tile_first + from;
    }
}

// Step 15's decomposition, for block `number` of W: slices [w * S / W, (w + 1) * S / W) of all S, in tile
// order; but tiles that fit in one wave at least 7/8 full go whole, tile w to block w (cutting every tile
// in pieces would cost more than the idle eighth). When the tiles fill whole waves, the ranges are whole
// tiles anyway.
__device__ __forceinline__ void stream_k(Tiles& s, const float* __restrict__ A, const float* __restrict__ B,
                                         float* __restrict__ C, int M, int N, int K, long long number, long long W)
{
    const long long tiles = (long long)((M + BM - 1) / BM) * ((N + BN - 1) / BN), per_tile = (K + BK - 1) / BK;
    const bool one_wave = tiles < W && tiles * 8 >= W * 7;
    const long long S = (one_wave ? W : tiles) * per_tile;   // one wave: as if W tiles, the last ones empty
    multiply_range(s, A, B, C, M, N, K, 0, number * S / W, min((number + 1) * S / W, tiles * per_tile), S, W);
}
