// Step 48: step 47 with tiles of 64 x 128, for the problems too small to
// fill the GPU with 128 x 256 tiles (256 to 1024).
//
// Source: tile and wave quantization (NVIDIA's Deep Learning Performance
// Guide, "Matrix Multiplication Background": a tile count below the SM
// count leaves SMs idle, smaller tiles fill them at the cost of more bytes
// read per flop); CUTLASS's SM90 warp-specialized kernels, whose TileShape
// 64 x 128 x 64 takes one consumer warpgroup (wgmma m64n128k16); cuBLAS,
// which picks smaller tiles for smaller problems.
//
// The problem: at 1024 x 1024, step 47's 128 x 256 tiles are 32, for 132
// SMs: three quarters of the GPU has no tile, and the 32 that do each run
// 16 slices one after another, about half as fast as cuBLAS BF16 (at 512
// and 256, with 8 tiles and 2, about the same share).
//
// What changes: the registry's defines only; the roles are step 47's.
// - BM = 64, BN = 128: one consumer warpgroup, whose wgmma is m64n128k16
//   (64 FP32 accumulators a thread; mainloop_bf16.cuh takes BN = 64, 128 or
//   256). At 1024 x 1024 that is 128 tiles for 132 SMs.
// - STAGES = 8: a slice is 24 KB, half of step 47's, so eight stages hold
//   the same 192 KB and reach as far ahead in bytes (with four, the 64 x
//   128 tile was about a tenth slower at 1024: docs/bf16.md, "small
//   problems").
// - B_BLOCKS = 2: B's slice is two boxes of 64 columns, one copy.
// The cost: a slice's 24 KB feed half the flops that step 47's 48 KB do
// (flop per byte 43 against 85), and L2 cannot feed 132 SMs that many bytes
// (docs/bf16.md, "feed"): from 2048 up the step is slower than step 47, by
// a fifth to a third. It is meant for 256 to 1024; a step that picks the
// tile by shape is to take the rest.
//
// Counter that shows it: Nsight Compute at 1024 x 1024 x 1024, the SMs'
// balance (sm_balance: the mean SM's active cycles over the busiest's),
// from about a quarter (32 busy SMs of 132) to near 1. Not the tensor
// pipe's busy share, which Nsight Compute takes over the cycles an SM is
// active: step 47's 32 busy SMs multiply for more of theirs, and it falls.
// The step's page gives the measured values.
//
// Ragged sizes: as step 47 (a partial tile's rows and columns are the copy
// engine's zeros; C's edges clipped by the store).
//
// Parameters: BM, BN, BK, STAGES, GROUP, B_BLOCKS (registry). Needs sm_90a.

#include "../sm90/mainloop_bf16.cuh"
#include "../sm90/gemm.cuh"
#include "../common/pad_copy.cuh"   // pad_copy: the operands onto 16 bytes (align_rows in the registry)

using Tile = TileShape<BM, BN, BK>;
using Stages = StageCount<STAGES>;
using Mainloop = Bf16Mainloop<Tile, Stages, Descriptors::stepped, Unaligned::host_copies, B_BLOCKS>;
using Scheduler = QueuedTiles<Tile, ClusterShape<1>, GROUP, Takers::whole_rounds, Draw::when_needed>;
using Kernel = Gemm<Mainloop, Scheduler, BufferStore, Producer::one_warp>;

extern "C" __global__ void __launch_bounds__(Kernel::THREADS, 1)
gpu_wgmma_bf16_small_tiles(int M, int N, int K, const bf16* __restrict__ A, const bf16* __restrict__ B,
                           float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                           const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c,
                           Workspace* workspace)
{
    Kernel::run(M, N, K, A, B, C, &map_a, &map_b, &map_c, workspace);
}

// its shared memory and workspace, read by the host (gemm.cuh)
extern "C" __constant__ const LaunchFacts gpu_wgmma_bf16_small_tiles_facts = Kernel::FACTS;
