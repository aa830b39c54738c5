// Step 15: Stream-K: a persistent grid, one block per resident slot, that
// shares out the work as K-slices of tiles, not as whole tiles, so that
// every SM gets the same number of slices whatever the shape.
//
// Source: Osama, Merrill, Cecka, Garland and Owens, "Stream-K: Work-centric
// Parallel Decomposition for Dense Matrix-Matrix Multiplication on the GPU"
// (PPoPP 2023), and its implementation in CUTLASS (the GemmUniversal
// "stream-K" mode and its fix-up of partial tiles); the CUB documentation
// (single-pass scan: blocks numbered by an atomic ticket in the order they
// start, so that a block only ever waits for one that is already running).
//
// What changes from step 14: which block computes what. Steps 9 to 14 give
// each block one BM x BN tile: 1537 x 3001 is 13 x 24 = 312 tiles for the
// H100's 264 resident blocks (132 SMs x 2), so a second wave of 48 tiles
// runs with 216 of the 264 slots idle: the time of two tiles for 1.18
// tiles of work per slot (4096 x 4096: 1024 tiles, 3.88 waves, rounded up to
// 4). Here the grid is the resident blocks (registry: grid [sms * 2, 1]),
// and the W blocks number themselves 0 ... W-1 in the order they start.
// Block w takes slices [w * S / W, (w + 1) * S / W) of the S = tiles x
// slices-per-tile BK-deep slices, in tile order: each block the same
// number. A tile is thus cut in a few pieces along K, each a contiguous
// range of slices, summed by pipeline.cuh's loop (step 14's, whose first
// slice need not be 0). When the tiles fill whole waves, or fit in one
// wave at least 7/8 full, they go whole instead (tile w + i * W to block
// w): cutting every tile would cost more than it gives. (The paper's
// hybrid, whole waves first and only the last ones shared out, is step 17.)
//
// The pieces of a cut tile are added in a fixed order, so that a result is
// the same bit for bit on every run on one GPU model (an atomicAdd fix-up
// would not be; a GPU with another number of SMs cuts other pieces): the
// piece that holds slice 0 is stored into C, and the piece that starts at
// slice s waits until progress[owner] == s (the slices already summed into
// C), adds its sums to C, and sets progress[owner] to its end. A block
// walks its range backwards, so that the piece it owns the slice 0 of comes
// first and the one it must wait for comes last; it waits only for blocks
// numbered before it, which have started: no deadlock, whatever the grid and
// the occupancy.
//
// Every element is still a sum over k in order, in at most a few partial
// sums added in k order: the error bound of every other step holds.
//
// Counters that show it (ncu, hardware.csv): the SMs' active cycles are
// evened out (sm_balance, the mean SM's active cycles over the busiest's,
// rises towards 1), and the time at 1537 x 3001 x 997 falls by up to the
// 2 / 1.18 of the waves above; the main loop's instruction mix is step 14's.
//
// Ragged sizes and alignment: as step 13, and more blocks than slices
// (1 x 1 x 1) leave blocks with nothing to do. Launches share no state: the
// ticket and progress[] are marked with the launch's number, its last
// parameter, which the host counts (stream_k.cuh says how; a planted leftover
// of another launch is ignored, and a GPU test shows it).
//
// Parameters (-D defines from kernels/registry.yaml): as step 13.

#include "../common/stream_k.cuh"   // tickets, the range walk and its fix-up, the sharing out (take_ticket, stream_k)

extern "C" __global__ void __launch_bounds__(THREADS, BLOCKS_PER_SM)
gpu_stream_k(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
             unsigned launch)
{
    __shared__ __align__(16) Tiles s;
    __shared__ int number;
    const long long W = take_ticket(number, launch);

    stream_k(s, A, B, C, M, N, K, number, W, launch);
}
