// Step 42: step 41's persistent blocks, their tiles handed out one at a
// time, in the grouped order, to whichever block asks first.
//
// Source: dynamic tile scheduling through a global atomic counter (Osama et
// al., Stream-K, PPoPP 2023; CUTLASS's PersistentTileSchedulerSm90StreamK),
// and the TF32 chapter's step 33, whose scheduler this is (scheduler.cuh,
// QueuedTiles, here with clusters of one block).
//
// The problem: step 41 gives block b the tiles b, b + 132, b + 264, ... of
// the grouped order. Blocks do not run at one speed; over many tiles a fast
// one gets ahead of a slow one, the blocks running at one time no longer
// hold neighbouring tiles, and the slices of A and B one of them brings into
// L2 are gone before the others need them.
//
// What changes: which tiles a block computes. Block b starts on tile b; as
// it starts a tile, its thread 0 draws a ticket from a counter in global
// memory for the tile after it, and hands the number to the block's producer
// and consumers through two slots of shared memory, each with a pair of
// barriers. The counter goes back to 0 when the launch's last ticket is
// drawn. Nothing else changes.
//
// Counter that shows it: the tensor pipe's busy share (ncu), higher at 4096
// and 8192, where the DRAM bytes fall too. But at 2048 (one or two tiles a
// block) it was slower than step 41's fixed share; why was not measured (step
// 47 finds one cause). The step's page gives the measured values.
//
// Ragged sizes: as step 41. The result is step 41's bit for bit; a GPU test
// compares them, and launches it twice in a row at each shape.
//
// Parameters: step 41's. Needs sm_90a.

#include "../sm90/mainloop_bf16.cuh"
#include "../sm90/gemm.cuh"
#include "../common/pad_copy.cuh"   // pad_copy: the operands onto 16 bytes (align_rows in the registry)

using Tile = TileShape<BM, BN, BK>;
using Stages = StageCount<STAGES>;
using Mainloop = Bf16Mainloop<Tile, Stages, Descriptors::per_wgmma, Unaligned::host_copies>;
using Scheduler = QueuedTiles<Tile, ClusterShape<1>, GROUP>;
using Kernel = Gemm<Mainloop, Scheduler, BufferStore>;

extern "C" __global__ void __launch_bounds__(Kernel::THREADS, 1)
gpu_wgmma_bf16_queued(int M, int N, int K, const bf16* __restrict__ A, const bf16* __restrict__ B,
                      float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                      const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c,
                      Workspace* workspace)
{
    Kernel::run(M, N, K, A, B, C, &map_a, &map_b, &map_c, workspace);
}

// its shared memory and workspace, read by the host (gemm.cuh)
extern "C" __constant__ const LaunchFacts gpu_wgmma_bf16_queued_facts = Kernel::FACTS;
