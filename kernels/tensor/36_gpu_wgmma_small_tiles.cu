// Step 36: step 35's roles on tiles of 128 x 64, one block a cluster, for the
// problems too small to fill the GPU with 256 x 128 tiles (256 to 1024): the
// BF16 chapter's step 48, in TF32.
//
// Source: tile and wave quantization (NVIDIA's Deep Learning Performance
// Guide, "Matrix Multiplication Background"); cuBLAS, which picks smaller
// tiles for smaller problems (on an H200, cuBLAS TF32 at 1024 x 1024 x 1024
// runs a wgmma kernel of 64 x 128 x 32 tiles, one consumer warpgroup, on 128
// blocks: ncu's kernel names, docs/tf32.md); the BF16 chapter's step 48.
//
// The problem: at 1024 x 1024, step 35's 256 x 128 tiles are 32, in 16
// clusters of two, for 132 SMs: three quarters of the GPU has no tile, and
// each busy block runs 32 slices one after another. At 512 and 256, with 8
// tiles and 2, about the same share of cuBLAS TF32's speed: under two thirds.
//
// What changes: the registry's defines only; the roles are step 35's.
// - BM = 128, BN = 64: one consumer warpgroup, whose wgmma is m64n128k8 (the
//   TF32 mainloop's wgmma N is the tile's rows: BM = 64, 128 or 256). At
//   1024 x 1024 that is 128 tiles.
// - CLUSTER = 1: a block a cluster. Two blocks side by side share A's slice
//   (step 28's multicast), which halves what each reads of A; with fewer
//   tiles than SMs the pair waits for the slower of its two blocks, and pairs
//   must form inside one GPU processing cluster. On an H200 the tile was a
//   few points faster alone, at each of 256, 512 and 1024 (docs/tf32.md).
// - STAGES = 8: a slice is 24 KB, half of step 35's 48 KB, so eight stages
//   reach as far ahead in bytes as step 35's four.
// - B_BLOCKS = 2: B's slice is two boxes of 32 columns, one copy.
// The cost: from 2048 up the step is slower than step 35, by about two fifths
// (a slice's 24 KB feed half the flops that step 35's 48 KB do, and L2 cannot
// feed 132 SMs that many bytes). It is meant for 256 to 1024.
//
// Counter that shows it: Nsight Compute at 1024 x 1024 x 1024, the SMs'
// balance (sm_balance: the mean SM's active cycles over the busiest's), from
// about a quarter (32 busy SMs of 132) to near 1. The step's page gives the
// measured values.
//
// Ragged sizes: as step 35 (a partial tile's rows and columns are the copy
// engine's zeros; C's edges clipped by the store).
//
// Parameters: BM, BN, BK, STAGES, CLUSTER, GROUP, B_BLOCKS (registry). Needs sm_90a.

#include "../sm90/mainloop_tf32.cuh"
#include "../sm90/gemm.cuh"
#include "../common/pad_copy.cuh"   // pad_copy: the operands onto 16 bytes (align_rows in the registry)

using Tile = TileShape<BM, BN, BK>;
using Stages = StageCount<STAGES>;
using Cluster = ClusterShape<CLUSTER>;
using Mainloop = Tf32Mainloop<Tile, Stages, Cluster,
                              Overlap::next_slice, Fragments::as_stored, Unaligned::host_copies, B_BLOCKS>;
using Scheduler = QueuedTiles<Tile, Cluster, GROUP, Takers::whole_rounds>;
using Kernel = Gemm<Mainloop, Scheduler, BufferStore>;

extern "C" __global__ void __cluster_dims__(Kernel::CLUSTER_SIZE, 1, 1) __launch_bounds__(Kernel::THREADS, 1)
gpu_wgmma_small_tiles(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                      float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                      const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c,
                      Workspace* workspace)
{
    Kernel::run(M, N, K, A, B, C, &map_a, &map_b, &map_c, workspace);
}

// its shared memory and workspace, read by the host (gemm.cuh)
extern "C" __constant__ const LaunchFacts gpu_wgmma_small_tiles_facts = Kernel::FACTS;
