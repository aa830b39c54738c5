// Step 20: step 19's pipeline, with each consumer warpgroup reading the next
// slice's fragments while its own wgmma run.
//
// Source: software pipelining of the register-sourced operand, as CUTLASS's
// SM90 mainloop with A from registers does it (the copy of the next k-block
// from shared memory to registers issued between a k-block's wgmma and the
// wait for them); the PTX ISA's rules for wgmma's register operands
// (wgmma.fence; no write to a register an issued wgmma still reads).
//
// What changes: the order of three things in the consumer's loop. Step 19:
// wait for the stage, read the fragments, issue the wgmma, wait for them.
// The fragment reads (16 shared loads and 16 conversions to TF32, then
// their latency) and the drain of each group leave the warpgroup's tensor
// work idle, and only the other consumer warpgroup covers it. Here: issue
// slice s's wgmma, then wait for slice s + 1's stage and read its
// fragments into a second set of registers, then wait for the wgmma. The
// loads run under the warpgroup's own wgmma. ptxas checks the hazard: had
// the loads written registers an issued wgmma reads, it would serialise
// the wgmma (its warning C7513); it does not here, and the second set of
// 16 registers fits in the consumers' budget after setmaxnreg.
//
// Counters that show it: the tensor pipe's active share (ncu) up; the SASS
// main loop's LDS sit between HGMMA and the WARPGROUP.DEPBAR that waits for
// them.
//
// Ragged sizes, rounding, the roles: as step 19 (its header, and
// tma_pipeline.cuh). Parameters: step 19's. Needs sm_90a.

#include "tma_pipeline.cuh"   // step 19's ring, producer and consumers

extern "C" __global__ void __launch_bounds__(THREADS, 1)
gpu_wgmma_prefetch(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                   float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                   const __grid_constant__ CUtensorMap map_b)
{
    multiply_tile<true>(M, N, K, A, B, C, &map_a, &map_b);   // step 19's roles (tma_pipeline.cuh), prefetching
}
