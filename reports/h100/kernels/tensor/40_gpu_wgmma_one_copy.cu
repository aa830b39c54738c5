// Step 40: step 27's kernel, each slice of B brought into the ring by one
// copy instead of four: the BF16 chapter's step 38, in TF32.
//
// Source: CUTLASS's SM90 TMA copies (cute/atom/copy_traits_sm90_tma.hpp:
// make_tma_copy folds a tile's swizzle-wide blocks into one box of a tensor
// map of up to five dimensions); the PTX ISA (cp.async.bulk.tensor.3d); the
// BF16 chapter's step 38, whose producer and host maps these are.
//
// The problem: a box of the 128-byte swizzle is at most 128 bytes wide, 32
// FP32 columns, so step 27's producer asks the copy engine for five boxes a
// slice: this block's half of A's 256 x 32 (multicast into both blocks of
// the cluster) and B's four blocks of 32 k by 32 columns. In the BF16
// chapter, B in one copy took the main loop's time a tile down and the
// tensor pipe's busy share up (step 38's header).
//
// What changes: B's tensor map is 3-D, (a block's 32 columns, K rows, N / 32
// blocks), and one box is the slice's four blocks side by side, laid in
// shared memory as the four 2-D boxes were (the registry's box [BK, 32,
// B_BLOCKS], read by matmulstudy/gpu/tma.py and producer.cuh). Two copies a
// slice instead of five. Where N is not a multiple of 32 the host's map is
// 2-D and the producer makes four copies, as step 27 did.
//
// Counter that shows it: UTMALDG in the producer's loop, 5 -> 2 a slice
// (SASS), and the tensor pipe's busy share (ncu at 4096, GPU-3735863d):
// 91.9 -> 92.2%. Measured with devbench against cuBLAS TF32
// (on H100s, alternating rounds; 6fbf69a:notes/whole_waves/ and
// 6fbf69a:notes/bf16_timeline/): 98.9-99.3% at 4096 against step 27's 97.9-98.1%
// (GPU-dca975f1, as a candidate), 98.9-99.0% against 98.3-98.5%
// (GPU-24c8e734, as a candidate), 98.7-98.9% against 98.2-98.3%
// (GPU-3735863d); at 8192 96.9-97.3% against 96.6-97.2% on the three.
// Where N is not whole 32-column blocks (1537x3001x997) it runs step 27's
// copies and time.
//
// Ragged sizes: as step 27; its result bit for bit (the same bytes land in
// the same places).
//
// Parameters: step 27's, and B_BLOCKS = BN / 32. Needs sm_90a.

#include "../common/persistent.cuh"   // step 27's kernel (B_BLOCKS reaches its producer)
#include "../common/pad_copy.cuh"     // step 24's copies where rows are off 16 bytes

#if CLUSTER != 2 || GROUP < 2 || ROUND_FRAGMENTS != 0 || B_BLOCKS < 2
#error "CLUSTER (2), GROUP (>= 2), ROUND_FRAGMENTS (0) and B_BLOCKS (>= 2) come from kernels/registry.yaml as -D defines"
#endif

extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS, 1)
gpu_wgmma_one_copy(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                   float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                   const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c)
{
    multiply_tiles<Overlap::next_slice, QueuedTiles>(M, N, K, A, B, C, &map_a, &map_b, &map_c);
}
