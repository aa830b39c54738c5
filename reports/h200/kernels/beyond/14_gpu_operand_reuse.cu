// Step 14: the FMAs of a k in serpentine order, so that consecutive FFMAs
// share a source register and read it from the operand reuse cache instead
// of the register file.
//
// Source: Scott Gray's maxas SGEMM notes (github.com/NervanaSystems/maxas,
// wiki "SGEMM": register banks, the operand reuse flags, and an FFMA order
// that keeps one operand in the reuse cache); Jia, Maggioni, Staiger and
// Scarpazza, "Dissecting the NVIDIA Volta GPU Architecture via
// Microbenchmarking" (2018: two 64-bit register banks, the reuse cache,
// and the stalls of an FFMA whose three sources share a bank).
//
// What changes from step 13: only the order of the TM x TN FMAs of one k
// (pipeline.cuh, FmaOrder::serpentine). In step 13 row i runs j = 0 ... TN-1
// and row i + 1 starts again at j = 0: at each row change both sources are
// new. Here odd rows run backwards, so b[TN-1] (then b[0]) is used by two
// consecutive FFMAs across every row change as well. ptxas marks a source
// that the next instruction reads again with .reuse, and the SM then reads
// it from a small cache beside the ALU: fewer register-file reads, fewer
// bank conflicts between an FFMA's three sources, fewer cycles in which an
// FFMA cannot be dispatched. The sums are the same, bit for bit: every
// accumulator still adds its k in order.
//
// Counters that show it: in the SASS main loop, the operands flagged .reuse
// per FFMA (hardware.csv: reuse_per_ffma); from ncu, the dispatch stalls
// per issued instruction fall and the issue slots and the FMA pipe are
// busier.
//
// Ragged sizes and alignment: as step 13. Any M, N, K >= 1.
//
// Parameters (-D defines from kernels/registry.yaml): as step 13.

#include "../common/pipeline.cuh"   // the pipelined main loop (multiply_slices) and the epilogue (store_tile)

extern "C" __global__ void __launch_bounds__(THREADS, BLOCKS_PER_SM)
gpu_operand_reuse(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                  float* __restrict__ C)
{
    __shared__ __align__(16) Tiles s;
    const Place p(blockIdx.y * BM, blockIdx.x * BN);
    float acc[TM][TN] = {};
    multiply_slices<FmaOrder::serpentine>(acc, s, A, B, M, N, K, p, 0, (K + BK - 1) / BK);
    store_tile(C, M, N, acc, p);
}
