// Step 49: step 48 with tiles of 64 x 64, for the smallest problems (256 and
// 512).
//
// Source: tile and wave quantization (NVIDIA's Deep Learning Performance
// Guide, "Matrix Multiplication Background"); cuBLAS, whose BF16 kernels at
// 256 and 512 on an H200 take tiles narrower still (64 x 8 and 64 x 48, on
// 128 and 96 blocks: ncu's kernel names, docs/bf16.md); CUTLASS's SM90
// kernels, whose TileShape 64 x 64 x 64 takes one consumer warpgroup
// (wgmma m64n64k16).
//
// The problem: at 512 x 512, step 48's 64 x 128 tiles are 32, for 132 SMs,
// and at 256 they are 8: most of the GPU still has no tile, and each busy
// block runs its 8 or 4 slices one after another.
//
// What changes: the registry's defines only; the roles are step 48's.
// - BN = 64: wgmma m64n64k16 (32 FP32 accumulators a thread). At 512 x 512
//   that is 64 tiles; at 256, 16.
// - B_BLOCKS = 1: B's slice is one box of 64 columns.
// - STAGES = 8, as step 48's: a slice is 16 KB (twelve stages, timed on
//   another H200, were no faster: docs/bf16.md).
// The cost: a slice's 16 KB feed a third of the flops that step 47's 48 KB
// do, and from 1024 up the step is slower than step 48 (at 1024 by about a
// quarter). It is meant for 256 and 512.
//
// Counter that shows it: Nsight Compute at 512 x 512 x 512, the SMs' balance
// (sm_balance), higher than step 48's 32 busy SMs of 132 give. The step's
// page gives the measured values.
//
// Ragged sizes: as step 48.
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
gpu_wgmma_bf16_smaller_tiles(int M, int N, int K, const bf16* __restrict__ A, const bf16* __restrict__ B,
                             float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                             const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c,
                             Workspace* workspace)
{
    Kernel::run(M, N, K, A, B, C, &map_a, &map_b, &map_c, workspace);
}

// its shared memory and workspace, read by the host (gemm.cuh)
extern "C" __constant__ const LaunchFacts gpu_wgmma_bf16_smaller_tiles_facts = Kernel::FACTS;
