// Step 43: step 42 with the main loop's descriptors built once a tile from
// values the whole warp shares, and stepped by constants.
//
// Source: CUTLASS's cute (GmmaDescriptor and DescriptorIterator in
// cute/arch/mma_sm90_desc.hpp and cute/atom/mma_traits_sm90_gmma.hpp): a
// wgmma operand's shared-memory descriptor is made once, and the k-steps
// and stages move it by adding an offset to its address field. CUTLASS's
// canonical_warp_group_idx makes the warpgroup's number warp-uniform with
// __shfl_sync, so that what is computed from it can live in the uniform
// registers.
//
// The problem: each slice a consumer warp issues 4 HGMMA, each with two
// 64-bit descriptors. Up to step 42 wgmma_bf16.cuh builds all eight from
// shared-memory addresses: the stage's, plus `rows * 128`, where `rows`
// comes from threadIdx and so is, to the compiler, a different value in
// each thread. It builds them in the vector registers and moves each one
// to the uniform registers (`R2UR`) that HGMMA reads, with NOPs between.
// Step 42's main loop is 104 SASS instructions a slice for its 4 HGMMA
// (hardware.csv's loop_instructions): 8 consumer warps x 104 is most of
// the some 980 instructions a block issues a slice, where cuBLAS BF16's
// kernel issues about half of our instructions in all (Nsight Compute,
// 17.6 against 32.2 million at 4096; 6fbf69a:notes/bf16.md).
//
// What changes: STEPPED_DESCRIPTORS = 1 (the registry's defines; the code
// is wgmma_bf16.cuh's Consumer::descriptors, issue, slot and parity).
// - Once a tile, each consumer warp builds two descriptors: its rows of A
//   and B's slice in stage 0, from the warpgroup number of lane 0
//   (shuffled, so the compiler knows the warp shares it). A slice's eight
//   are these plus constants: the stage (STAGE_BYTES / 16 in the address
//   field, which counts 16 bytes), 2 for each 16 k of A (32 bytes along
//   its 128-byte rows), 128 for each 16 k of B (16 rows of 128 bytes).
// - An empty asm statement keeps the two as built: without it ptxas builds
//   B's again each slice, 10 instructions, to free uniform registers.
// - The ring's stage and parity come from the slice count as unsigned:
//   as an int, % and / by STAGES also round negative values toward zero.
// The addresses, and so the result, are the same as step 42's.
//
// Counter that shows it: the main loop's SASS, a consumer warp's slice,
// 104 -> 45 instructions for its 4 HGMMA (instructions_per_hgmma 26 ->
// 11.25). Nsight Compute at 4096 (one launch each, H100
// GPU-ab47d3dc): 32.2 -> 16.6 million instructions executed, fewer than
// cuBLAS BF16's 17.6; the issue slots' busy share 21.7 -> 11.3%
// (issue_active_pct; cuBLAS 11.9%); the tensor pipe 89.4 -> 89.7%.
// In alternating rounds against cuBLAS BF16 on that GPU (devbench, three
// rounds, 6fbf69a:notes/stepped_descriptors/): 97.4-98.4% at 4096 against step
// 42's 96.8-98.0%, 101.6-101.7% at 8192 against 100.9-101.0%, 95.3-95.8%
// at 2048 against 94.5-95.4%. In five runs of such rounds on that GPU,
// as the change took its form, it was above step 42 in every round, by
// 0.3 to 1.9 points at 4096 (the descriptors stepped but built each
// slice, 75 instructions: 97.9-99.3% against 97.3-98.0%). Fitted over K
// at M = N = 4096 (devbench --fit-k, GPU-08e32bcf), its main loop takes
// 39.84 us per 1024 k a launch, step 42's 40.31, cuBLAS BF16's 39.80: the
// gap left at 4096 is outside the main loop (the rest of a launch 21.72
// us against cuBLAS's 20.62).
//
// Ragged sizes: as step 42, and its result bit for bit (the same wgmma on
// the same shared memory in the same order).
//
// Parameters: step 42's, and STEPPED_DESCRIPTORS = 1. Needs sm_90a.

#include "../common/persistent_bf16.cuh"   // step 38's kernel; wgmma_bf16.cuh reads STEPPED_DESCRIPTORS
#include "../common/pad_copy.cuh"          // step 35's copies where rows are off 16 bytes

#if GROUP < 2 || B_BLOCKS < 2 || PRODUCER_WARPS != 1 || STEPPED_DESCRIPTORS != 1
#error "GROUP (>= 2), B_BLOCKS (>= 2), PRODUCER_WARPS (1), STEPPED_DESCRIPTORS (1) come from kernels/registry.yaml"
#endif

extern "C" __global__ void __launch_bounds__(THREADS, 1)
gpu_wgmma_bf16_stepped_descriptors(int M, int N, int K, const bf16* __restrict__ A, const bf16* __restrict__ B,
                                   float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                                   const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c)
{
    multiply_tiles<QueuedTiles, false>(M, N, K, A, B, C, &map_a, &map_b, &map_c);
}
