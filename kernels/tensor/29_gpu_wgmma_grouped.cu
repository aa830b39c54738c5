// Step 29: the same kernel as step 28, its tiles handed out in groups of
// rows. Nothing in a block changes; which tile each block computes does.
//
// Source: rasterising the grid for L2 locality, as CUTLASS's threadblock
// swizzle functors and its SM90 tile scheduler (raster order, swizzle size)
// do, and as Triton's matrix-multiplication tutorial ("L2 cache
// optimizations": grouped ordering) explains.
//
// What changes: the bytes read from DRAM. The blocks running at one time
// (132 on an H100, 66 clusters) move down K together, so a K-slice of A or
// B that one of them brings into L2 is there for the others that need it;
// every distinct row of A and column of B the running blocks cover is read
// from DRAM about once per wave. In launch order (steps 25 to 28) a wave is
// a band of whole tile rows: at 8192, two of them, so 512 rows of A and all
// 8192 columns of B, 272 MB a wave. Walking down GROUP = 8 tile rows before
// moving right, a wave is 8 tile rows by about 16 tile columns: 2048 rows of
// A and 2112 columns of B, 133 MB. At 4096 the saving is smaller (a wave is
// four tile rows of 32 tiles: 80 MB; grouped, 66 MB).
//
// Counter that shows it: DRAM bytes read (ncu), lower, at 4096 and more so at
// 8192, to about cuBLAS TF32's; the tensor pipe's share stays. At 8192, near
// the power cap, it was the first step of its chapter with no throttled
// sample in the studies. The step's page gives the measured values.
//
// Ragged sizes: as step 28 (OneTile's origin is a permutation of the grid's
// tiles, a cluster's blocks kept side by side; the last group may have fewer
// than GROUP rows).
//
// Parameters: step 28's, and GROUP (tile rows per group). Needs sm_90a.

#include "../sm90/mainloop_tf32.cuh"
#include "../sm90/gemm.cuh"

using Tile = TileShape<BM, BN, BK>;
using Stages = StageCount<STAGES>;
using Cluster = ClusterShape<CLUSTER>;
using Mainloop = Tf32Mainloop<Tile, Stages, Cluster,
                              Overlap::next_slice, Fragments::rounded, Unaligned::own_loads>;
using Scheduler = OneTile<Tile, Cluster, GROUP>;
using Kernel = Gemm<Mainloop, Scheduler, RingStore>;

extern "C" __global__ void __cluster_dims__(Kernel::CLUSTER_SIZE, 1, 1) __launch_bounds__(Kernel::THREADS, 1)
gpu_wgmma_grouped(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                  float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                  const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c,
                  Workspace* workspace)
{
    Kernel::run(M, N, K, A, B, C, &map_a, &map_b, &map_c, workspace);
}

// its shared memory and workspace, read by the host (gemm.cuh)
extern "C" __constant__ const LaunchFacts gpu_wgmma_grouped_facts = Kernel::FACTS;
