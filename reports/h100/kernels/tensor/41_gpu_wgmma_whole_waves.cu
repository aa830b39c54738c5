// Step 41: step 40's kernel on the fewest clusters that take the tiles in as
// many rounds: the BF16 chapter's step 39, in TF32.
//
// Source: pranjalssh's fast.cu (kernel 12, run on 128 of the H100's 132
// multiprocessors); wave quantization (NVIDIA's Matrix Multiplication
// Background guide); the BF16 chapter's step 39, whose grid rule this is.
//
// The problem: at 4096 C has 512 tiles of 256 x 128, 256 pairs of them for
// clusters of two blocks. 66 clusters (a block a multiprocessor) take them
// in four rounds, the last with 58 pairs: the busiest clusters compute four
// pairs, and 8 clusters (16 multiprocessors) sit out the last round while
// all 132 load their slices through the first three.
//
// What changes: only the grid (`grid: [whole_waves, 1]`,
// matmulstudy/study/variant.py, in whole clusters): rounds = ceil(pairs /
// 66), clusters = ceil(pairs / rounds). At 4096 and 8192, 64 clusters (128
// blocks) of exactly 4 and 16 pairs; at 1537 x 3001 (84 pairs) 42 clusters of
// 2. The kernel is step 40's, instruction for instruction.
//
// Counter that shows it: DRAM bytes read (ncu at 4096), lower: 297.8 ->
// 268.5 MB on GPU-3735863d (cuBLAS TF32: 293.7); the tensor pipe's busy
// share 92.2 -> 92.6%, and the main loop's time at M = N = 4096, fitted over
// K (devbench --fit-k), 82.44 -> 81.78 us a launch per 1024 k. Measured with
// devbench against cuBLAS TF32 (on H100s, alternating rounds,
// 6fbf69a:notes/whole_waves/): on GPU-24c8e734 (three rounds, as a candidate of step
// 27 with B in one copy) 99.6-99.7% at 4096 against 98.9-99.0%, 98.5-98.8%
// at 8192 against 97.2-97.3%, 152-153% at 1537x3001x997 against 143-144%; on
// GPU-3735863d (two rounds) 99.6% at 4096 against 98.7-98.9%, 98.6% at 8192
// against 97.1-97.3%.
//
// Ragged sizes: as step 40, and its result bit for bit.
//
// Parameters: step 40's. Needs sm_90a.

#include "../common/persistent.cuh"   // step 40's kernel (B_BLOCKS reaches its producer)
#include "../common/pad_copy.cuh"     // step 24's copies where rows are off 16 bytes

#if CLUSTER != 2 || GROUP < 2 || ROUND_FRAGMENTS != 0 || B_BLOCKS < 2
#error "CLUSTER (2), GROUP (>= 2), ROUND_FRAGMENTS (0) and B_BLOCKS (>= 2) come from kernels/registry.yaml as -D defines"
#endif

extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS, 1)
gpu_wgmma_whole_waves(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                      float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                      const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c)
{
    multiply_tiles<Overlap::next_slice, QueuedTiles>(M, N, K, A, B, C, &map_a, &map_b, &map_c);
}
