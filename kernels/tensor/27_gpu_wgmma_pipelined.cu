// Step 27: step 26's consumer loop software-pipelined: while a slice's
// wgmma run, the warpgroup gives the stage before back, reads the next
// slice's fragments, and issues the next group before the running one ends.
//
// Source: the PTX ISA (wgmma.wait_group N: wait until at most N committed
// groups are pending; wgmma.fence and the rules for register operands) and
// CUTLASS's SM90 mainloops, which keep one k-block of wgmma in flight and,
// with A from registers, copy the next k-block's fragments meanwhile.
//
// What changes: the order of a consumer warpgroup's work per slice. Steps 25
// and 24: wait for the stage, read the fragments (16 shared loads, 16
// conversions to TF32), issue four wgmma, wait for them (wait_group 0). The
// loads' latency and the drain of each group leave the warpgroup's tensor
// work idle; only the other consumer warpgroup's queued wgmma cover it.
// Here: issue slice s; wait until only it is running (wait_group 1: slice
// s - 1 done); give s - 1's stage back; read slice s + 1's fragments into
// the registers slice s - 1 read. Slice s is still running when s + 1 is
// issued. Register operands make this delicate: a register an issued wgmma
// reads must not be written before it finishes. This order writes only the
// set whose group has finished; ptxas, which serialises wgmma (its warning
// C7513) when it cannot prove such a thing, accepts it. The two sets take 16
// more registers, which the consumers have after setmaxnreg.
//
// Counters that show it: the barrier stall (ncu; a warp waiting for its
// wgmma group counts there) down to about a third, on both GPUs; in the SASS
// main loop the fragments' LDS sit after HGMMA and a WARPGROUP.DEPBAR that
// waits for "at most 1". Predicted, and not measured: the tensor pipe's
// active share up. It stayed where it was, and the step is no faster: the
// other consumer warpgroup's queued wgmma had already covered this one's
// drain. The wait moved; the time did not.
//
// Ragged sizes, rounding, roles, the store: as step 26. Parameters: step
// 25's. Needs sm_90a.

#include "../sm90/mainloop_tf32.cuh"
#include "../sm90/gemm.cuh"

using Tile = TileShape<BM, BN, BK>;
using Stages = StageCount<STAGES>;
using Cluster = ClusterShape<1>;
using Mainloop = Tf32Mainloop<Tile, Stages, Cluster,
                              Overlap::next_slice, Fragments::rounded, Unaligned::own_loads>;
using Scheduler = OneTile<Tile, Cluster, 1>;
using Kernel = Gemm<Mainloop, Scheduler, RingStore>;

extern "C" __global__ void __launch_bounds__(Kernel::THREADS, 1)
gpu_wgmma_pipelined(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                    float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                    const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c,
                    Workspace* workspace)
{
    Kernel::run(M, N, K, A, B, C, &map_a, &map_b, &map_c, workspace);
}

// its shared memory and workspace, read by the host (gemm.cuh)
extern "C" __constant__ const LaunchFacts gpu_wgmma_pipelined_facts = Kernel::FACTS;
