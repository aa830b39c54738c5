// Step 53: step 52 with tiles of 64 x 64, for the smallest problems (256 and
// 512), as step 49 in BF16.
//
// Source: tile and wave quantization (NVIDIA's Deep Learning Performance
// Guide, "Matrix Multiplication Background"); CUTLASS's SM90 kernels with
// TileShape 64 x 64 (one consumer warpgroup, wgmma m64n64); cuBLASLt, whose
// FP8 kernel at 1024 takes 128 x 64 tiles (ncu's kernel name, docs/fp8.md).
//
// The problem: at 512 x 512, step 52's 64 x 128 tiles are 32, for 132 SMs,
// and at 256 they are 8: most of the GPU still has no tile.
//
// What changes: the registry's defines only; the roles are step 52's.
// - BN = 64: one piece a slice, wgmma m64n64k32 (32 FP32 sums a thread and
//   the part of all of them). At 512 x 512 that is 64 tiles; at 256, 16.
// - STAGES = 8, as step 52's: a slice is 16 KB.
// The cost: 64 flop a byte read, against step 52's 85 and step 51's 171;
// from 1024 up the step is slower than step 52. It is meant for 256 and 512.
//
// Counter that shows it: Nsight Compute at 512 x 512 x 512, the SMs' balance
// (sm_balance), higher than step 52's 32 busy SMs of 132 give. The step's
// page gives the measured values.
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
gpu_wgmma_fp8_promoted_smaller_tiles(int M, int N, int K, const fp8_e4m3* __restrict__ A,
                                     const fp8_e4m3* __restrict__ B, float* __restrict__ C,
                                     const __grid_constant__ CUtensorMap map_a,
                                     const __grid_constant__ CUtensorMap map_b,
                                     const __grid_constant__ CUtensorMap map_c,
                                     Workspace* workspace)
{
    Kernel::run(M, N, K, A, B, C, &map_a, &map_b, &map_c, workspace);
}

// its shared memory and workspace, read by the host (gemm.cuh)
extern "C" __constant__ const LaunchFacts gpu_wgmma_fp8_promoted_smaller_tiles_facts = Kernel::FACTS;
