// Step 45: step 44 with one producer warp: the producer warpgroup's other
// three warps leave as soon as they have given back their registers.
//
// Source: pranjalssh's fast.cu (kernel 12, the H100 worklog "Outperforming
// cuBLAS on H100"): of its producer warpgroup only thread 0 enters the loop
// that loads the slices; the other 127 threads fall through to the kernel's
// end. CUTLASS's warp-specialised kernels likewise give the mainloop's
// loads to one warp of the producer warpgroup (ProducerWarpRole::Mainloop);
// its warps with no role run no loop.
//
// The problem: from step 42 on, every warp of the block reads each tile's
// number from the tile slot (scheduler.cuh's QueuedTiles), the producer's four
// warps too, though only thread 0 of warp 0 asks the copy engine for
// anything. Warps 1 to 3 of the producer so wait on the slot's barrier for
// a whole tile at a time: a cluster-scope acquire, each round of the wait an
// L1 invalidation (`CCTL.IVALL`), a large share of all warp samples in
// Nsight Compute's warp sampling at 4096. They issue instructions on the
// multiprocessor's schedulers beside the consumers' wgmma, fences and
// epilogue stores, and do nothing else.
//
// What changes: gemm's ProducerWarps = 1 (the step's call). Warps 1 to 3
// of warpgroup 0 return after `setmaxnreg.dec` (which the whole warpgroup
// must execute), and the slot's empty barrier counts one producer warp
// and the consumers' eight.
//
// Counter that shows it: the instructions the block issues (Nsight Compute
// at 4096), fewer, and the issue slots' busy share (issue_active_pct),
// lower; the tensor pipe's share stays. A small step: its time is within the
// noise of the step before at the study's shapes, and the same change in TF32
// gained nothing. The step's page gives the measured values.
//
// Ragged sizes: as step 44, and its result bit for bit (only who waits on
// the slot changes, not which block computes which tile in what order).
//
// Parameters: step 44's. Needs sm_90a.

#include "../sm90/mainloop_bf16.cuh"
#include "../sm90/gemm.cuh"
#include "../common/pad_copy.cuh"   // pad_copy: the operands onto 16 bytes (align_rows in the registry)

using Tile = TileShape<BM, BN, BK>;
using Stages = StageCount<STAGES>;
using Mainloop = Bf16Mainloop<Tile, Stages, Descriptors::per_wgmma, Unaligned::host_copies, B_BLOCKS>;
using Scheduler = QueuedTiles<Tile, ClusterShape<1>, GROUP, Takers::whole_rounds>;
using Kernel = Gemm<Mainloop, Scheduler, BufferStore, Producer::one_warp>;

extern "C" __global__ void __launch_bounds__(Kernel::THREADS, 1)
gpu_wgmma_bf16_one_producer(int M, int N, int K, const bf16* __restrict__ A, const bf16* __restrict__ B,
                            float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                            const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c,
                            Workspace* workspace)
{
    Kernel::run(M, N, K, A, B, C, &map_a, &map_b, &map_c, workspace);
}

// its shared memory and workspace, read by the host (gemm.cuh)
extern "C" __constant__ const LaunchFacts gpu_wgmma_bf16_one_producer_facts = Kernel::FACTS;
