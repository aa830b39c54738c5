// Step 38: step 37's kernel, each slice of B brought into the ring by one
// copy instead of four.
//
// Source: CUTLASS's SM90 TMA copies (cute/atom/copy_traits_sm90_tma.hpp:
// make_tma_copy makes the box as large as the shared-memory layout allows,
// folding a tile's swizzle-wide blocks into one box of a tensor map of up
// to five dimensions, so its mainloops ask for each operand's stage with
// one instruction); the PTX ISA (cp.async.bulk.tensor.3d) and the driver's
// cuTensorMapEncodeTiled (rank 3).
//
// The problem: a box of the 128-byte swizzle is at most 128 bytes wide, so
// step 37's producer asks the copy engine for five boxes a slice: A's
// 128 x 64 and B's four of 64 k by 64 columns, one per 128-byte block of
// its 256 columns. With no loads at all (the stages left as first filled:
// a wrong product, timed only) the main loop takes 36.3-37.1 us a tile at
// 4096 on the H100, with them 40.4-42.1 (seven H100s): the loads slow the
// tensor cores by about a tenth, while the consumers hardly wait for a
// stage (about 1,000 cycles a tile beyond the waits' own cost). Splitting
// A's box in two or four made the main loop slower still (6fbf69a:notes/bf16.md).
//
// What changes: B's tensor map is 3-D, (a block's 64 columns, K rows, N / 64
// blocks; the blocks 128 bytes apart in global memory), and one box of it
// is the slice's four blocks side by side: the copy engine lays them one
// after another in shared memory, each as step 37's 2-D box would, so the
// stage's layout and everything that reads it stay as they are. Two copies
// a slice instead of five (`B_BLOCKS` in producer.cuh; the registry's box
// [BK, 64, B_BLOCKS] makes the host's map: matmulstudy/gpu/tma.py).
//
// Counter that shows it: UTMALDG in the producer's loop, 5 -> 2 a slice
// (SASS), and the tensor pipe's busy share (ncu at 4096, one launch each on
// GPU-06fd217d): 88.5 -> 89.1% (cuBLAS BF16: 90.6%), L2 hits 80.4 -> 82.6%.
// What it buys depends on the GPU. Measured with devbench against cuBLAS
// BF16 on six H100s (alternating rounds; the table in
// 6fbf69a:notes/bf16.md): 0.4-1.9 points at 4096 on five of them, e.g. 97.1-98.3%
// against step 37's 95.7-97.0% on GPU-7f7914b1 (four runs), where the main
// loop's time a tile of 4096 k, fitted over K = 1024 to 8192 at M = N =
// 4096, goes 40.4 -> 40.1 us and the rest of a tile 5.7 -> 5.4 us; nothing
// on GPU-06fd217d (41.5 us both). Never slower at the study's shapes;
// cuBLAS BF16's main loop is still 1.7-2.7% faster than step 38's.
//
// Ragged sizes: as step 37. Where N is not a multiple of 64, the last block
// would run into the next row, so the host's map is step 37's 2-D one and
// the producer makes four copies (the same rule on both sides). The result
// is step 37's bit for bit: the same bytes land in the same places.
//
// Parameters: step 37's, and B_BLOCKS = BN / 64. Needs sm_90a.

#include "../common/persistent_bf16.cuh"   // step 37's kernel (B_BLOCKS reaches its producer)
#include "../common/pad_copy.cuh"          // step 35's copies where rows are off 16 bytes

#if GROUP < 2 || B_BLOCKS < 2
#error "GROUP (>= 2) and B_BLOCKS (>= 2) come from kernels/registry.yaml as -D defines"
#endif

extern "C" __global__ void __launch_bounds__(THREADS, 1)
gpu_wgmma_bf16_one_copy(int M, int N, int K, const bf16* __restrict__ A, const bf16* __restrict__ B,
                        float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                        const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c)
{
    multiply_tiles<QueuedTiles, false>(M, N, K, A, B, C, &map_a, &map_b, &map_c);
}
