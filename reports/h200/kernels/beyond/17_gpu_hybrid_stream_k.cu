// Step 17: Stream-K only for the last waves: whole tiles, wave by wave in
// row-major order, before them.
//
// Source: Osama, Merrill, Cecka, Garland and Owens, "Stream-K" (PPoPP
// 2023), section 5, the "data-parallel + two-tile Stream-K" hybrid, and
// CUTLASS's stream-K scheduler, which does the same (whole-tile waves, then
// the remainder shared out); Stream-K's machinery is step 15's.
//
// What changes from step 16: which block computes what
// (kernels/common/stream_k.cuh, hybrid_stream_k). Step 16 (15's
// decomposition) gives each block a contiguous run of slices in tile
// order: at 8192^3 (4096 tiles, 264 blocks) block w works through tiles
// 15.5 w ... 15.5 w + 15.5, so the 264 tiles in flight at any moment lie
// all over C, and every one needs its own 128-row panel of A and 128-column
// panel of B. Here the tiles go whole, tile i * W + w to block w, while at
// least two waves remain: the W tiles in flight are then W consecutive
// tiles of C's rows, sharing their A panels and reading B's panels in the
// same order, as a plain grid does. Only the last full wave and the partial
// one (W + tiles % W tiles) are shared out as slices, which keeps what
// Stream-K was for: no SM idle at the end. Tiles that fill whole waves go
// whole, and one wave follows step 15's 7/8 rule.
//
// Counters that show it (ncu, hardware.csv): the L2 hit rate rises back to
// the plain grid's (step 14's) while the SMs' balance stays Stream-K's
// (sm_balance near 1); at 1537 x 3001 x 997 (312 tiles, 264 blocks: one
// wave and 48 tiles) nothing changes, every tile is still shared out.
//
// Ragged sizes and alignment: as step 13. Launches share no state, as step
// 15's.
//
// Parameters (-D defines from kernels/registry.yaml): as step 13.
#include "../common/stream_k.cuh"   // tickets, the range walk, the fix-up and the hybrid (take_ticket, hybrid_stream_k)

extern "C" __global__ void __launch_bounds__(THREADS, BLOCKS_PER_SM)
gpu_hybrid_stream_k(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                    float* __restrict__ C, unsigned launch)
{
    __shared__ __align__(16) Tiles s;
    __shared__ int number;
    const long long W = take_ticket(number, launch);

    hybrid_stream_k(s, A, B, C, M, N, K, number, W, launch);
}
