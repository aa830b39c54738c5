// Step 44: step 43 with each tile's ticket drawn when the block needs the
// tile, not a tile ahead.
//
// Source: persistent threads that fetch work from a global pool with an
// atomic when they run out of it (Aila and Laine, "Understanding the
// Efficiency of Ray Traversal on GPUs", HPG 2009); CUTLASS's grouped and
// persistent kernels, whose blocks query the scheduler for the next tile as
// they finish one (docs: grouped_scheduler.md).
//
// The problem: step 27's queue (tiles.cuh, QueuedTiles) hands out tiles
// in the order the blocks draw tickets from a counter in global memory.
// Up to step 43 the drawer, thread 0 of the producer, draws the ticket for
// a block's next tile as the block starts a tile, meaning to hide the
// atomic's trip to L2 behind a whole tile. Two things came of it:
// - ptxas makes the atomicAdd a warp-aggregated one, whose result a SHFL
//   waits for at once, and thread 0 makes every copy of the producer
//   (step 42). So each tile's first copy waited for the atomic: at 2048,
//   one tile a block, the queued steps take 0.8 us more than step 36's
//   fixed share at every K (devbench, M = N = 2048, K = 64 to 2048).
// - The tickets' order is the order in which blocks started their tiles.
//   Which multiprocessor computes which tile is what the queue decides, and
//   it matters: at 4096 on one H100 the fixed share by block number took
//   184.8 us, the queue 181.6, and shares by the multiprocessor's number
//   (%smid) 191 to 207 (the same DRAM bytes in each, Nsight Compute;
//   6fbf69a:notes/late_draw/).
//
// What changes: DRAW_LATE = 1 (the registry's defines; the code is
// tiles.cuh's QueuedTiles::next). The drawer draws a ticket where it
// publishes the tile, as the producer has issued the last copy of the tile
// before: the atomic's wait is then behind the ring's four stages of loads
// that the consumers have still to multiply, and the tickets come in the
// order in which the blocks got through their tiles' loads. One ticket a
// tile as before; the tiles, and so the result, are the same as step 43's.
//
// Counter that shows it: Nsight Compute's tensor pipe idle cycles per tile
// and SM balance (hardware.csv). Measured in alternating rounds against
// step 43 and cuBLAS BF16 (devbench, four placements, every result
// verified; H100 GPU-d7ec9ec1 and GPU-0dfd0723, four rounds each,
// 6fbf69a:notes/late_draw/runs/): % of cuBLAS BF16 at 4096 99.7-100.4 and
// 99.3-100.1 against step 43's 98.8-99.2 and 98.0-98.8; at 2048 97.4-98.2
// and 96.9-97.3 against 95.4-96.0 and 94.5-95.4; at 8192 the same as step
// 43 (102.0-102.7).
//
// Ragged sizes: as step 43.
//
// Parameters: step 43's, and DRAW_LATE = 1. Needs sm_90a.

#include "../common/persistent_bf16.cuh"   // step 38's kernel; tiles.cuh reads DRAW_LATE
#include "../common/pad_copy.cuh"          // step 35's copies where rows are off 16 bytes

#if GROUP < 2 || B_BLOCKS < 2 || PRODUCER_WARPS != 1 || STEPPED_DESCRIPTORS != 1 || DRAW_LATE != 1
#error "GROUP (>= 2), B_BLOCKS (>= 2), PRODUCER_WARPS (1), STEPPED_DESCRIPTORS (1), DRAW_LATE (1) come from kernels/registry.yaml"
#endif

extern "C" __global__ void __launch_bounds__(THREADS, 1)
gpu_wgmma_bf16_drawn_late(int M, int N, int K, const bf16* __restrict__ A, const bf16* __restrict__ B,
                          float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                          const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c)
{
    multiply_tiles<QueuedTiles, false>(M, N, K, A, B, C, &map_a, &map_b, &map_c);
}
