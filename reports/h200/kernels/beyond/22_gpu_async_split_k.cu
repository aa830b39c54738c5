// Step 22: split-K on small tiles, the pieces summed by the last to finish.
//
// Source: split-K as cuBLAS runs it for small problems (on an H200, cuBLAS
// SGEMM at 512 x 512 x 512 launches a 64 x 64 tile kernel on 256 blocks,
// four K-ranges a tile, then a second kernel that sums them; at 256 a
// 32 x 32 one, the same way: ncu's kernel names, docs/fp32.md); CUTLASS's
// parallel split-K (GemmSplitKParallel: partial tiles in a workspace, summed
// after); the CUDA samples' threadFenceReduction (the last block to arrive,
// counted by an atomic after a __threadfence, sums what the others wrote).
//
// The problem: at 512 x 512 x 512 the chapter's fast steps have 8 tiles of
// 128 x 256 for 132 SMs. Step 21 shares their K-slices out by Stream-K: a
// block gets a few slices of a tile, and the pieces of a tile are added into
// C one after another, each waiting for the one before: a chain of some
// sixteen pieces a tile, a few round trips to L2 each. It takes several
// times cuBLAS's time there, and the chapter's best step at 256 and 512 is
// step 4.
//
// What changes:
// - The tile: 64 x 64 (4 x 8 per thread, 128 threads, two blocks an SM),
//   step 18's main loop on slices of BK = 16 k (with 8, a block waits for
//   its copies twice as often, over half as many FMAs), and step 21's
//   16-byte epilogue. A problem of 512 has 64 tiles.
// - The split: where C's tiles leave free some of the RESIDENT blocks an SM
//   holds, each tile's K-slices are cut into `splits` equal ranges, a block
//   each: splits = min(SPLITS, RESIDENT * sms / tiles), at least 1 (the
//   registry's grid, tiles x splits blocks; the kernel reads splits back
//   from the grid). With one split a block computes its tile and stores it,
//   as step 18's.
// - The sum: each piece writes its partial tile into a workspace in global
//   memory (coalesced, 16 bytes a thread a store), fences, and counts itself
//   in on its tile's counter. The one that counts last sums the tile's
//   partials in split order, 0 first, and stores C. No piece waits for
//   another, where Stream-K's fix-up chains them; and the order of the sum
//   does not depend on which piece is last, so the result is the same bit
//   for bit at every launch.
//
// Counter that shows it: at 512 (Nsight Compute), the SMs' issue slots busy
// (issue_active_pct) and their balance (sm_balance), both higher than step
// 21's, whose blocks mostly wait for the piece before theirs. The step's page
// gives the measured values. It is meant for 256 to 512: at 1024, 256 tiles
// fill the GPU without a split, and step 23's larger tile is faster.
//
// Ragged sizes and alignment: as step 18 (any M, N, K >= 1, any row start;
// the epilogue 16 bytes wide where C's rows allow it). A K-range may be empty
// (more splits than K-slices): its partial is zeros. Launches share no state:
// each counter is marked with the launch's number (kernels/common/stream_k.cuh
// says how), and a counter another launch left behind, finished or not, is
// started again by the first piece to find it.
//
// Parameters (-D defines from kernels/registry.yaml): as step 18's; SPLITS,
// the most K-ranges a tile is cut into; RESIDENT, the blocks an SM holds at
// once, which the grid fills (the registry's only).

#include "../common/async_slices.cuh"   // step 18's buffers and main loop (AsyncTiles, multiply_slices)
#include "../common/stream_k.cuh"       // launch-marked counters (count_in, marked), stop(), tile_place

#ifndef SPLITS
#error "SPLITS comes from kernels/registry.yaml as a -D define"
#endif

// The workspace: a place for each piece's partial tile, and a counter for each tile. The grid gives more than
// one split only where the pieces fit in the RESIDENT blocks an SM holds (264 pieces on an H100 or H200), so
// MAX_PIECES is more than any GPU here needs.
constexpr int MAX_PIECES = 512;
constexpr int PARTIAL_FLOAT4 = BM * BN / 4;   // one partial tile, in float4
__device__ float4 partials[MAX_PIECES * PARTIAL_FLOAT4];
__device__ unsigned long long arrivals[MAX_PIECES];   // per tile: (launch << 32) | its pieces counted so far

// A thread's accumulators in the workspace: its e-th group of 4 (acc[i][4u ... 4u + 3], e = i * TN / 4 + u) at
// [e * THREADS + tid] of the piece's place, so that a warp's stores and loads are 512 contiguous bytes.
__device__ __forceinline__ void store_partial(float4* place, const float (&acc)[TM][TN])
{
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int u = 0; u < TN / 4; ++u)
            __stcg(place + (i * (TN / 4) + u) * THREADS + threadIdx.x,
                   make_float4(acc[i][4 * u], acc[i][4 * u + 1], acc[i][4 * u + 2], acc[i][4 * u + 3]));
}

__device__ __forceinline__ void add_partial(float (&sum)[TM][TN], const float4* place)
{
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int u = 0; u < TN / 4; ++u) {
            const float4 v = __ldcg(place + (i * (TN / 4) + u) * THREADS + threadIdx.x);
            sum[i][4 * u] += v.x;
            sum[i][4 * u + 1] += v.y;
            sum[i][4 * u + 2] += v.z;
            sum[i][4 * u + 3] += v.w;
        }
}

// The kernel's work (step 23's kernel runs it too, on its own tile): the block's piece of its tile, then the sum
// where it counts last.
__device__ __forceinline__ void split_k(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                                        float* __restrict__ C, unsigned launch)
{
    __shared__ __align__(16) AsyncTiles s;
    __shared__ bool last;
    const int tiles_n = (N + BN - 1) / BN, tiles = (M + BM - 1) / BM * tiles_n;
    const int splits = gridDim.x / tiles, tile = blockIdx.x / splits, split = blockIdx.x % splits;
    const int slices = (K + BK - 1) / BK, from = split * slices / splits, to = (split + 1) * slices / splits;
    const Place p = tile_place(tile, tiles_n);
    float acc[TM][TN] = {};
    if (from < to)
        multiply_slices<FmaOrder::serpentine>(acc, s, A, B, M, N, K, p, from, to);
    if (splits == 1) {   // the whole tile
        store_tile<false, true>(C, M, N, acc, p);
        return;
    }
    if (tiles * splits > MAX_PIECES)
        stop();   // more pieces than the workspace holds: the launch fails, not the result
    store_partial(partials + (size_t)blockIdx.x * PARTIAL_FLOAT4, acc);
    __threadfence();   // this piece's partial before its count
    __syncthreads();
    if (threadIdx.x == 0) {
        last = count_in(&arrivals[tile], launch) == marked(launch, splits - 1);   // the last of the pieces
        __threadfence();   // the others' partials, counted before, are read after the count
    }
    __syncthreads();
    if (!last)
        return;
    float sum[TM][TN] = {};
    for (int q = 0; q < splits; ++q)   // in split order, whichever piece sums
        add_partial(sum, partials + (size_t)(tile * splits + q) * PARTIAL_FLOAT4);
    store_tile<false, true>(C, M, N, sum, p);
}

extern "C" __global__ void __launch_bounds__(THREADS, BLOCKS_PER_SM)
gpu_async_split_k(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                  float* __restrict__ C, unsigned launch)
{
    split_k(M, N, K, A, B, C, launch);
}
