// Stream-K's machinery (the SIMT Stream-K steps; a change here rebuilds
// them): the blocks' ticket numbers, the walk over a block's range of
// K-slices with the fix-up of the tiles it cuts, and the ways of sharing out
// the slices: plain Stream-K's, and the paper's two hybrids (whole_tiles).
// gpu_stream_k's header explains them; gpu_hybrid_stream_k's says why a
// hybrid; gpu_async_stream_k's why its whole tiles are blocks of their own,
// after the shared slices.
//
// Launches that share no state. The blocks of a launch meet through two
// places in global memory: the ticket that numbers them, and progress[], how
// far each cut tile's sum has got in C. Each value there is marked with the
// number of the launch that wrote it (the kernels' last parameter, counted
// by the host: matmulstudy/gpu/launch.py, `launch_number` in the registry),
// and a launch reads only values with its own mark. So nothing needs resetting
// at the end of a launch, and whatever an earlier launch left behind, finished
// or not, is ignored by the next: the first block of a launch to see another
// launch's mark on the ticket sets it to (this launch, 0). Two launches of
// one module in flight at once, on two streams, would still take each other's
// tickets: the study launches one at a time, and a block that finds itself
// numbered past the blocks that take tickets stops the launch.
//
// Every wait is bounded: a block that has waited WAIT_LIMIT_NS (10 s, far
// longer than any cut tile takes here, under compute-sanitizer too) for the
// pieces before its own stops the launch, so a broken hand-over fails instead
// of hanging the GPU. Stopping is __trap(): the launch ends with CUDA's "an
// illegal instruction was encountered", which the study records as the
// variant's failed run. From this header, that error means one of the two: a
// block numbered past the blocks that take tickets, or a wait of 10 s. (A
// printf saying which costs the main loops registers: ptxas spilled in the
// kernels gpu_deep_slices and gpu_hybrid_stream_k.)
//
// The pieces of a cut tile are added in a fixed order, so a result is the same
// bit for bit on every run on one GPU model; on a GPU with another number of
// SMs the grid, the pieces and so the last bits of the sums change.

#pragma once

#include "pipeline.cuh"   // the pipelined main loop (multiply_slices) and the epilogue (store_tile)

constexpr int MAX_BLOCKS = 4096;                        // progress[] has a place per block
constexpr unsigned long long WAIT_LIMIT_NS = 10000000000ull;
__device__ unsigned long long ticket;                   // (launch << 32) | blocks numbered in that launch
__device__ unsigned long long progress[MAX_BLOCKS];     // per cut tile (by the block owning its slice 0):
                                                        // (launch << 32) | slices summed into C

__device__ __forceinline__ unsigned long long marked(unsigned launch, unsigned value)
{
    return (unsigned long long)launch << 32 | value;
}

// The launch's end (see above), out of line: with the __trap() inlined into take_ticket, ptxas spilled 192
// bytes in gpu_hybrid_stream_k's main loop, which then ran measurably slower.
__device__ __noinline__ void stop() { __trap(); }

// One more on a counter of this launch's; its value before, marked. A counter another launch left is first set
// to (launch, 0) by whichever block finds it (a compare-and-swap from the value it saw: a later block's swap
// finds the counter moved on and changes nothing). The ticket below; a split-K tile's count of its pieces.
__device__ __forceinline__ unsigned long long count_in(unsigned long long* counter, unsigned launch)
{
    const unsigned long long seen = atomicAdd(counter, 0ull);
    if (seen >> 32 != launch)
        atomicCAS(counter, seen, marked(launch, 0));
    return atomicAdd(counter, 1ull);
}

// This block's number, 0 ... W-1, among the W blocks of the launch that take
// one (all of them, but for gpu_async_stream_k's), in the order they start: a block
// only ever waits for one numbered before it, which is running already.
__device__ __forceinline__ void take_ticket(int& number, unsigned launch, long long W)
{
    if (W > MAX_BLOCKS)
        stop();   // more blocks than progress[] has places: the launch fails, not the result
    if (threadIdx.x == 0) {
        const unsigned long long mine = count_in(&ticket, launch);
        if (mine >> 32 != launch || (mine & 0xFFFFFFFFu) >= W)
            stop();   // numbered past W: another launch of this module is taking tickets
        number = int(mine & 0xFFFFFFFFu);
    }
    __syncthreads();
}

// The same for every block of the grid (the pipelined Stream-K steps); returns the grid's size, W.
__device__ __forceinline__ long long take_ticket(int& number, unsigned launch)
{
    const long long W = (long long)gridDim.x * gridDim.y;
    take_ticket(number, launch, W);
    return W;
}

// Thread 0: wait until the pieces of the tile before this one have summed `from` slices into C.
__device__ __forceinline__ void wait_for(const unsigned long long* done, unsigned launch, int from)
{
    const unsigned long long want = marked(launch, from);
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    while (atomicAdd(const_cast<unsigned long long*>(done), 0ull) != want) {
        __nanosleep(64);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (now - start > WAIT_LIMIT_NS)
            stop();   // waited 10 s
    }
}

// The block whose range holds slice x: the largest w with w * S / W <= x.
__device__ __forceinline__ int owner_of(long long x, long long S, long long W) { return ((x + 1) * W + S - 1) / S - 1; }

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

// How many tiles go whole, wave by wave, before the rest is shared out as slices (Stream-K's hybrids, for
// `tiles` tiles on W blocks). Tiles that fill whole waves all go whole, and so does one wave at least 7/8
// full (gpu_stream_k's rule: cutting every tile in pieces would cost more than the idle eighth). Otherwise
// the paper's two hybrids: "two-tile Stream-K + data-parallel" (gpu_hybrid_stream_k's) shares out the last
// full wave with the partial one, so each block gets one to two tiles' slices; "data-parallel + one-tile
// Stream-K" shares out the partial wave alone, each block less than a tile's. gpu_async_stream_k takes the
// second where the partial wave is at least half full: a tile is then cut in at most three pieces, whose
// hand-over through C is short (cut in more, it was slower at 1537 x 3001 x 997).
__device__ __forceinline__ long long whole_tiles(long long tiles, long long W, bool one_tile)
{
    const long long waves = tiles / W, rest = tiles % W;
    return rest == 0 ? tiles                                           // whole waves only
         : waves == 0 ? (rest * 8 >= W * 7 ? tiles : 0)               // one wave: the 7/8 rule
         : one_tile && rest * 2 >= W ? waves * W                      // the partial wave alone
         : (waves - 1) * W;                                           // the last full wave and the partial one
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
