// Step 33: step 32's persistent clusters, their tiles handed out one at a
// time, in order, to whichever cluster asks first.
//
// Source: dynamic tile scheduling through a global atomic counter, as
// Stream-K's and CUTLASS's persistent schedulers take work units from a
// counter in global memory (Osama et al., PPoPP 2023; CUTLASS's
// PersistentTileSchedulerSm90StreamK), and Blackwell's cluster launch
// control (CUTLASS 3.8 and later) does in hardware: a block asks for its next
// tile when it is ready for it.
//
// The problem: step 32 gives cluster c the tiles c, c + 66, c + 132, ... of
// the grouped order. Clusters do not run at one speed, and at 8192 (15.5
// tiles a cluster) a fast one gets several tiles ahead of a slow one: the
// clusters running at one time no longer hold neighbouring tiles, the slices
// of A and B one of them brings into L2 are gone before the others need them,
// and the GPU reads more from DRAM than step 31 does (ncu,
// 6fbf69a:notes/tensor_cores.md). A grid of one tile a block never drifts:
// the hardware starts the next block in order on the first multiprocessor
// that frees.
//
// What changes: which tiles a cluster computes (kernels/sm90/scheduler.cuh,
// QueuedTiles). Cluster c starts on tile c; as it starts a tile, one of its
// threads draws a ticket from a counter in global memory for the tile after
// it, and hands the number to both blocks' producer and consumers through two
// slots of shared memory, each with a pair of barriers. The counter goes back
// to 0 when the launch's last ticket is drawn. Nothing else changes.
//
// Counter that shows it: DRAM bytes read (ncu), lower at 8192, back to a
// grid of one tile a block's. At 4096 (the study's Nsight Compute size, four
// tiles a cluster) the bytes do not move and the tensor pipe's busy share
// does, higher. The step's page gives the measured values.
//
// Ragged sizes: as step 32. The result is bit for bit step 31's (each element
// the same sum in the same order, whichever cluster computes it); a GPU test
// compares them, and launches it twice in a row at each shape.
//
// Parameters: step 32's. Needs sm_90a.

#include "../sm90/mainloop_tf32.cuh"
#include "../sm90/gemm.cuh"
#include "../common/pad_copy.cuh"   // pad_copy: the operands onto 16 bytes (align_rows in the registry)

using Tile = TileShape<BM, BN, BK>;
using Stages = StageCount<STAGES>;
using Cluster = ClusterShape<CLUSTER>;
using Mainloop = Tf32Mainloop<Tile, Stages, Cluster,
                              Overlap::next_slice, Fragments::as_stored, Unaligned::host_copies>;
using Scheduler = QueuedTiles<Tile, Cluster, GROUP>;
using Kernel = Gemm<Mainloop, Scheduler, BufferStore>;

extern "C" __global__ void __cluster_dims__(Kernel::CLUSTER_SIZE, 1, 1) __launch_bounds__(Kernel::THREADS, 1)
gpu_wgmma_queued(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                 float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                 const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c,
                 Workspace* workspace)
{
    Kernel::run(M, N, K, A, B, C, &map_a, &map_b, &map_c, workspace);
}

// its shared memory and workspace, read by the host (gemm.cuh)
extern "C" __constant__ const LaunchFacts gpu_wgmma_queued_facts = Kernel::FACTS;
