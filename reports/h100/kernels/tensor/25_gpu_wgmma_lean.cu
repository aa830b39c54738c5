// Step 25: step 24 without rounding the fragments the consumers read from
// shared memory.
//
// Source: PTX ISA, wgmma with .tf32 operands: the tensor cores take a
// 32-bit float's TF32 part (sign, exponent and the top 10 mantissa bits);
// the shared-memory operand reaches them that way in every step since 19,
// as both operands do in CUTLASS's SM90 TF32 GEMMs, whose wgmma read them
// from shared memory as the copy engine brought them.
//
// What changes: one instruction per fragment element. Each consumer thread
// reads 16 elements of B^T a slice (BK = 32: four k8 groups of four) and,
// through step 24, rounds each with cvt.rna.tf32.f32 before the four
// wgmma of the slice; here it passes the bits as they are, so both operands
// are truncated, not one truncated and one rounded. Issue 24 puts about 60%
// of step 23's idle tensor cycles in the consumers' work between wgmma
// groups; these are 16 of its instructions a slice.
//
// Accuracy: TF32's bound (matmulstudy/precisions.py) allows truncated
// inputs (eps_in = 2^-9, and a truncation moves a product by less than
// 2^-10 per input); the margin rises, the precision is the same.
//
// Counter that shows it: the main loop's instructions per wgmma (SASS),
// lower: 40.1 -> 27.9 (321 -> 223 a loop of two slices). Measured on the
// H100 (6fbf69a:notes/tensor_cores.md, two rounds against step 24 in one run):
// +1.1 to +1.8% at 4096, 92.7-93.3% of cuBLAS TF32; 93.6-93.7% at 8192;
// 95.8-96.2% at 2048; the margin against TF32's bound 0.15 -> 0.24-0.27.
//
// Parameters: step 24's, and ROUND_FRAGMENTS = 0. Needs sm_90a.

#include "../common/tma_pipeline.cuh"   // step 22's kernel; the fragments as they are (ROUND_FRAGMENTS 0)
#include "../common/pad_copy.cuh"       // step 24's copies where rows are off 16 bytes

#if CLUSTER != 2 || GROUP < 2 || ROUND_FRAGMENTS != 0
#error "CLUSTER (2), GROUP (>= 2) and ROUND_FRAGMENTS (0) come from kernels/registry.yaml as -D defines"
#endif

extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS, 1)
gpu_wgmma_lean(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
               float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
               const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c)
{
    multiply_tile<Overlap::next_slice, true>(M, N, K, A, B, C, &map_a, &map_b, &map_c);   // step 24's
}
