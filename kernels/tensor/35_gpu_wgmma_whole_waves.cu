// Step 35: step 34's kernel on the fewest clusters that take the tiles in as
// many rounds: the BF16 chapter's step 44, in TF32.
//
// Source: pranjalssh's fast.cu (kernel 12, run on 128 of the H100's 132
// multiprocessors); wave quantization (NVIDIA's Matrix Multiplication
// Background guide); the BF16 chapter's step 44, whose grid rule this is.
//
// The problem: at 4096 C has 512 tiles of 256 x 128, 256 pairs of them for
// clusters of two blocks. 66 clusters (a block a multiprocessor) take them
// in four rounds, the last with 58 pairs: the busiest clusters compute four
// pairs, and 8 clusters (16 multiprocessors) sit out the last round while
// all 132 load their slices through the first three.
//
// What changes: the clusters that take tiles (the scheduler's WholeRounds;
// the grid stays a block an SM, and the others end at once): rounds =
// ceil(pairs / 66), clusters = ceil(pairs / rounds). At 4096 and 8192, 64
// clusters (128 blocks) of exactly 4 and 16 pairs; at 1537 x 3001 (84 pairs)
// 42 clusters of 2. Only QueuedTiles' count of the clusters that take tiles
// changes.
//
// Counter that shows it: DRAM bytes read (ncu at 4096), lower, and the main
// loop's time a launch fitted over K (devbench --fit-k), a little lower. The
// tensor pipe's busy share moves by less than it does between two studies of
// one GPU: not the counter. The step's page gives the measured values.
//
// Ragged sizes: as step 34, and its result bit for bit.
//
// Parameters: step 34's. Needs sm_90a.

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
gpu_wgmma_whole_waves(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                      float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                      const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c,
                      Workspace* workspace)
{
    Kernel::run(M, N, K, A, B, C, &map_a, &map_b, &map_c, workspace);
}

// its shared memory and workspace, read by the host (gemm.cuh)
extern "C" __constant__ const LaunchFacts gpu_wgmma_whole_waves_facts = Kernel::FACTS;
