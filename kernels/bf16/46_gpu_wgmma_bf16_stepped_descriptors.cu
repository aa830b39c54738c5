// Step 46: step 45 with the main loop's descriptors built once a tile from
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
// 64-bit descriptors. Up to step 45 the BF16 mainloop builds all eight from
// shared-memory addresses: the stage's, plus `rows * 128`, where `rows`
// comes from threadIdx and so is, to the compiler, a different value in
// each thread. It builds them in the vector registers and moves each one
// to the uniform registers (`R2UR`) that HGMMA reads, with NOPs between.
// Step 45's main loop is over a hundred SASS instructions a slice for its 4
// HGMMA (hardware.csv's loop_instructions): 8 consumer warps of those are
// most of what a block issues a slice, where cuBLAS BF16's kernel issues
// about half of our instructions in all (Nsight Compute at 4096).
//
// What changes: the mainloop's SteppedDescriptors (the code is
// mainloop_bf16.cuh's Consumer::descriptors, issue, slot and parity).
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
// The addresses, and so the result, are the same as step 45's.
//
// Counter that shows it: the main loop's SASS, a consumer warp's slice, less
// than half the instructions for its 4 HGMMA (loop_instructions); in Nsight
// Compute at 4096, the instructions executed about halved and the issue
// slots' busy share (issue_active_pct) with them, to cuBLAS BF16's level;
// the tensor pipe's share about the same. Fitted over K (devbench --fit-k),
// the main loop's time a launch comes within the noise of cuBLAS BF16's, so
// that what gap is left lies outside the main loop. The step's page gives
// the measured values.
//
// Ragged sizes: as step 45, and its result bit for bit (the same wgmma on
// the same shared memory in the same order).
//
// Parameters: step 45's. Needs sm_90a.

#include "../sm90/mainloop_bf16.cuh"
#include "../sm90/gemm.cuh"
#include "../common/pad_copy.cuh"   // pad_copy: the operands onto 16 bytes (align_rows in the registry)

using Tile = TileShape<BM, BN, BK>;
using Stages = StageCount<STAGES>;
using Mainloop = Bf16Mainloop<Tile, Stages, Descriptors::stepped, Unaligned::host_copies, B_BLOCKS>;
using Scheduler = QueuedTiles<Tile, ClusterShape<1>, GROUP, Takers::whole_rounds>;
using Kernel = Gemm<Mainloop, Scheduler, BufferStore, Producer::one_warp>;

extern "C" __global__ void __launch_bounds__(Kernel::THREADS, 1)
gpu_wgmma_bf16_stepped_descriptors(int M, int N, int K, const bf16* __restrict__ A, const bf16* __restrict__ B,
                                   float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                                   const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c,
                                   Workspace* workspace)
{
    Kernel::run(M, N, K, A, B, C, &map_a, &map_b, &map_c, workspace);
}

// its shared memory and workspace, read by the host (gemm.cuh)
extern "C" __constant__ const LaunchFacts gpu_wgmma_bf16_stepped_descriptors_facts = Kernel::FACTS;
