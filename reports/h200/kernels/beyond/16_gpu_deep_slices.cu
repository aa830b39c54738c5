// Step 16: deeper K-slices, BK 8 -> 16, the next slice prefetched in two
// pieces: half the barriers and half the per-slice bookkeeping per FMA.
//
// Source: the CUTLASS documentation (efficient_gemm.md: the threadblock
// tile's K extent, and the pipelined mainloop that spreads a k-tile's
// global loads and shared stores over the warp-level iterations of the
// tile before it); this study's tuning sweep (the registry's search space
// for the new steps has BK in {8, 16}, and the H100 chose 16).
//
// What changes from step 15: BK only (kernels/registry.yaml), the kernel is
// step 15's. A slice is the unit of everything that is not arithmetic: one
// barrier, the buffer switch, the loop test, the address arithmetic and the
// edge predicates of the next slice's loads. At BK = 8 a thread pays that
// once per 512 FFMAs, at BK = 16 once per 1024. What makes BK = 16 possible
// at 128 registers is in pipeline.cuh: the next slice travels in pieces of
// 8 k-rows, each loaded into registers at k = 1 (or 9) and stored into the
// free buffer at k = 7 (or 15), so a thread holds the same two float4s in
// flight as at BK = 8 (step 12 with a 16-deep slice in one piece spilled:
// 6fbf69a:notes/beyond_the_seeds.md). Shared memory doubles to 32 KiB a block (two
// buffers of 16 x (128 + 128) floats); two blocks still fit an SM.
//
// Counters that show it: in the SASS main loop, BAR per FFMA halves and
// the FFMA share of the loop's instructions rises (hardware.csv: bar, fma,
// loop_instructions); from ncu, the barrier stall per issued instruction
// falls and the FMA pipe is busier.
//
// Ragged sizes and alignment: as step 13; slices past K are zeros, so K = 1
// or K = 17 is one or two slices of which most k-rows are 0.
//
// Parameters (-D defines from kernels/registry.yaml): as step 13.

#include "../common/stream_k.cuh"   // tickets, the range walk and its fix-up, the sharing out (take_ticket, stream_k)

extern "C" __global__ void __launch_bounds__(THREADS, BLOCKS_PER_SM)
gpu_deep_slices(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                float* __restrict__ C, unsigned launch)
{
    __shared__ __align__(16) Tiles s;
    __shared__ int number;
    const long long W = take_ticket(number, launch);

    stream_k(s, A, B, C, M, N, K, number, W, launch);
}
