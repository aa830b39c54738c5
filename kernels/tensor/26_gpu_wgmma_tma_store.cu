// Step 26: step 25, with the finished tile stored through shared memory by
// the copy engine.
//
// Source: the PTX ISA (cp.async.bulk.tensor from shared to global memory,
// bulk groups; fence.proxy.async) and CUTLASS's SM90 TMA epilogue, which
// stages the accumulators in shared memory and stores them with TMA.
//
// What changes: the epilogue. Step 25 stores each accumulator with
// its own 4-byte store: a warp's store instruction covers 4 rows of C and,
// in each, two runs of 16 bytes (the fragment rows are permuted for the
// loads' banks): 8 sectors half used, so 1,024 store instructions a block
// cost about 8,000 cycles of the load/store unit, none of them overlapped
// (one block a multiprocessor, and its tensor cores wait). Here each thread
// writes its accumulators into the ring, now idle, in the layout a TMA load
// of C would leave (boxes of 32 columns, 128-byte swizzle: at most two lanes
// a bank), and one thread hands the copy engine four 256 x 32 boxes, which
// it writes in whole lines and clips to C.
//
// Counters that show it: the global-store instructions (ncu) gone where C's
// rows start on 16 bytes (the copy engine's writes are not instructions);
// the main loop is step 25's.
//
// Ragged sizes: the engine writes only what lies inside C. Where C's rows do
// not start on 16 bytes (N not a multiple of 4) there is no map of C: the
// host passes zeros and the consumers store as step 25 does. Loads, rounding
// and roles: as step 25. Parameters: step 25's. Needs sm_90a.

#include "../sm90/mainloop_tf32.cuh"
#include "../sm90/gemm.cuh"

using Tile = TileShape<BM, BN, BK>;
using Stages = StageCount<STAGES>;
using Cluster = ClusterShape<1>;
using Mainloop = Tf32Mainloop<Tile, Stages, Cluster,
                              Overlap::none, Fragments::rounded, Unaligned::own_loads>;
using Scheduler = OneTile<Tile, Cluster, 1>;
using Kernel = Gemm<Mainloop, Scheduler, RingStore>;

extern "C" __global__ void __launch_bounds__(Kernel::THREADS, 1)
gpu_wgmma_tma_store(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                    float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                    const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c,
                    Workspace* workspace)
{
    Kernel::run(M, N, K, A, B, C, &map_a, &map_b, &map_c, workspace);
}

// its shared memory and workspace, read by the host (gemm.cuh)
extern "C" __constant__ const LaunchFacts gpu_wgmma_tma_store_facts = Kernel::FACTS;
