// Step 24: step 23's kernel at every shape, its operands first copied where
// their rows do not start on 16 bytes.
//
// Source: the copy engine's rule (CUDA driver API, cuTensorMapEncodeTiled:
// the global address aligned to 16 bytes, every row stride a multiple of 16
// bytes), and padding to an aligned leading dimension, the usual answer to
// an alignment requirement: CUTLASS's kernels take each operand's alignment
// as a parameter (kAlignmentA, kAlignmentB) and fall back to 4-byte loads for
// alignment 1, as cuBLAS does at 4096x4096x4095 (ncu: an sm80 `..._align1`
// kernel).
//
// The problem: with K or N not a multiple of 4, no tensor map describes A or
// B, and steps 19 to 23 load those slices with their own threads, 4 bytes at
// a time: 17% of cuBLAS TF32 at 4096x4096x4095 on the H100 (step 23),
// slower than the FP32 steps.
//
// What changes: nothing in the multiplication. Before it, where K or N is not
// a multiple of 4, pad_copy copies A into a workspace of M rows of K4 =
// ceil(K / 4) * 4 columns and B into one of K4 rows of N4 columns, zeros in
// the columns and rows added; step 23's kernel then multiplies the (M, N4, K4)
// problem, every row on 16 bytes, through the copy engine, into a workspace C
// of N4 columns, which pad_copy copies back to C's N columns. The added zeros
// change no sum (x * 0 adds exactly 0). The copies are part of the timed
// launch; the workspace is allocated once per shape (matmulstudy/gpu/launch.py,
// and matmulstudy/gpu/launch.cu for the sanitizer: the same sequence). At
// shapes whose rows already start on 16 bytes, step 24 is step 23.
//
// Counter that shows it: each kernel's time and DRAM bytes at a shape whose
// K or N is odd (ncu); at the aligned shapes Nsight Compute sees step 23's
// kernel. Measured on the H100 (6fbf69a:notes/tensor_cores.md, devbench): at
// 4096x4096x4095 the copies of A and B take 42.7 and 42.2 us (67 MB read
// each), the multiplication 374 us; the launch 295 TFLOP/s, 210% of cuBLAS
// TF32 there (step 23: 17%). At 1537x3001x997: 97.7 TFLOP/s, 140% (step 23:
// 22%), a third of it copies, C's copy back (16.9 us) the largest.
//
// Parameters: step 23's. Needs sm_90a.

#include "../common/tma_pipeline.cuh"   // step 22's kernel; tile_origin() walks GROUP tile rows at a time
#include "../common/pad_copy.cuh"       // pad_copy: the operands onto 16 bytes (align_rows in the registry)

#if CLUSTER != 2 || GROUP < 2
#error "CLUSTER (2) and GROUP (>= 2) come from kernels/registry.yaml as -D defines"
#endif

extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS, 1)
gpu_wgmma_aligned(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                  float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                  const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c)
{
    multiply_tile<Overlap::next_slice, true>(M, N, K, A, B, C, &map_a, &map_b, &map_c);   // step 23's
}
