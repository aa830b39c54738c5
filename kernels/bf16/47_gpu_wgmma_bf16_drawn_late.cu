// Step 47: step 46 with each tile's ticket drawn when the block needs the
// tile, not a tile ahead.
//
// Source: persistent threads that fetch work from a global pool with an
// atomic when they run out of it (Aila and Laine, "Understanding the
// Efficiency of Ray Traversal on GPUs", HPG 2009); CUTLASS's grouped and
// persistent kernels, whose blocks query the scheduler for the next tile as
// they finish one (docs: grouped_scheduler.md).
//
// The problem: step 33's queue (scheduler.cuh, QueuedTiles) hands out tiles
// in the order the blocks draw tickets from a counter in global memory.
// Up to step 46 the drawer, thread 0 of the producer, draws the ticket for
// a block's next tile as the block starts a tile, meaning to hide the
// atomic's trip to L2 behind a whole tile. Two things came of it:
// - ptxas makes the atomicAdd a warp-aggregated one, whose result a SHFL
//   waits for at once, and thread 0 makes every copy of the producer
//   (step 45). So each tile's first copy waited for the atomic: at 2048,
//   one tile a block, the queued steps took longer than step 41's fixed
//   share at every K (devbench, M = N = 2048, K = 64 to 2048).
// - The tickets' order is the order in which blocks started their tiles.
//   Which multiprocessor computes which tile is what the queue decides, and
//   it matters: at 4096 the queue beat the fixed share by block number, and
//   shares by the multiprocessor's number (%smid) were slower than both,
//   with the same DRAM bytes in each (Nsight Compute;
//   6fbf69a:notes/late_draw/).
//
// What changes: the scheduler's Draw::when_needed (the code is
// scheduler.cuh's QueuedTiles::next). The drawer draws a ticket where it
// publishes the tile, as the producer has issued the last copy of the tile
// before: the atomic's wait is then behind the ring's four stages of loads
// that the consumers have still to multiply, and the tickets come in the
// order in which the blocks got through their tiles' loads. One ticket a
// tile as before; the tiles, and so the result, are the same as step 46's.
//
// Counter that shows it: Nsight Compute's tensor-pipe idle cycles per tile
// (hardware.csv), fewer, with the tensor pipe's busy share a little higher;
// not the SM balance, which stays. Its time gains most where a block has one
// tile or two (2048); at 8192 it is within the noise of the step before. The
// step's page gives the measured values.
//
// Ragged sizes: as step 46.
//
// Parameters: step 46's. Needs sm_90a.

#include "../sm90/mainloop_bf16.cuh"
#include "../sm90/gemm.cuh"
#include "../common/pad_copy.cuh"   // pad_copy: the operands onto 16 bytes (align_rows in the registry)

using Tile = TileShape<BM, BN, BK>;
using Stages = StageCount<STAGES>;
using Mainloop = Bf16Mainloop<Tile, Stages, Descriptors::stepped, Unaligned::host_copies, B_BLOCKS>;
using Scheduler = QueuedTiles<Tile, ClusterShape<1>, GROUP, Takers::whole_rounds, Draw::when_needed>;
using Kernel = Gemm<Mainloop, Scheduler, BufferStore, Producer::one_warp>;

extern "C" __global__ void __launch_bounds__(Kernel::THREADS, 1)
gpu_wgmma_bf16_drawn_late(int M, int N, int K, const bf16* __restrict__ A, const bf16* __restrict__ B,
                          float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                          const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c,
                          Workspace* workspace)
{
    Kernel::run(M, N, K, A, B, C, &map_a, &map_b, &map_c, workspace);
}

// its shared memory and workspace, read by the host (gemm.cuh)
extern "C" __constant__ const LaunchFacts gpu_wgmma_bf16_drawn_late_facts = Kernel::FACTS;
