// Step 52: step 51 with tiles of 64 x 128, for the problems too small to
// fill the GPU with 128 x 256 tiles (256 to 1024), as step 48 in BF16.
//
// Source: tile and wave quantization (NVIDIA's Deep Learning Performance
// Guide, "Matrix Multiplication Background": a tile count below the SM
// count leaves SMs idle, smaller tiles fill them at the cost of more bytes
// read per flop); CUTLASS's SM90 warp-specialized kernels with TileShape
// 64 x 128 (one consumer warpgroup); cuBLASLt, which picks smaller tiles
// for smaller problems.
//
// The problem: at 1024 x 1024 step 51's 128 x 256 tiles are 32, for 132
// SMs: three quarters of the GPU has no tile.
//
// What changes: the registry's defines, and the pieces.
// - BM = 64, BN = 128: one consumer warpgroup, one piece a slice (wgmma
//   m64n128k32): its 64 FP32 sums and the part of all of them fit in its
//   registers. At 1024 x 1024 that is 128 tiles for 132 SMs.
// - STAGES = 8: a slice is 24 KB, half of step 51's, so eight stages hold
//   the same 192 KB.
// The cost, as in BF16: half the flops a byte read (flop per byte 85
// against 171), and one consumer warpgroup, whose tensor work stops while
// it waits for a slice's part and adds it. It is meant for 256 to 1024.
//
// Counter that shows it: Nsight Compute at 1024 x 1024 x 1024, the SMs'
// balance (sm_balance), from about a quarter to near 1. The step's page
// gives the measured values.
//
// Ragged sizes: step 50's (align_rows: pad_copy_8).
//
// Parameters: BM, BN, BK, STAGES, GROUP (registry). Needs sm_90a.

#include "../sm90/mainloop_fp8.cuh"
#include "../sm90/gemm.cuh"
#include "../common/pad_copy.cuh"   // pad_copy: the operands onto 16 bytes (align_rows in the registry)

using Tile = TileShape<BM, BN, BK>;
using Stages = StageCount<STAGES>;
using Mainloop = Fp8PromotedMainloop<Tile, Stages, 1>;   // one piece: the whole 64 x BN part
using Scheduler = QueuedTiles<Tile, ClusterShape<1>, GROUP, Takers::whole_rounds, Draw::when_needed>;
using Kernel = Gemm<Mainloop, Scheduler, BufferStore, Producer::one_warp>;

extern "C" __global__ void __launch_bounds__(Kernel::THREADS, 1)
gpu_wgmma_fp8_promoted_small_tiles(int M, int N, int K, const fp8_e4m3* __restrict__ A,
                                   const fp8_e4m3* __restrict__ B, float* __restrict__ C,
                                   const __grid_constant__ CUtensorMap map_a,
                                   const __grid_constant__ CUtensorMap map_b,
                                   const __grid_constant__ CUtensorMap map_c,
                                   Workspace* workspace)
{
    Kernel::run(M, N, K, A, B, C, &map_a, &map_b, &map_c, workspace);
}

// its shared memory and workspace, read by the host (gemm.cuh)
extern "C" __constant__ const LaunchFacts gpu_wgmma_fp8_promoted_small_tiles_facts = Kernel::FACTS;
