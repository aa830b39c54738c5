// Step 41: step 40's persistent blocks, walking the tiles in groups of
// GROUP tile rows (rasterisation).
//
// Source: CUTLASS's threadblock swizzle (GemmIdentityThreadblockSwizzle and
// the SM90 tile scheduler's raster order and swizzle size), Triton's
// matmul tutorial ("L2 cache optimizations": grouped ordering), and the TF32
// chapter's step 29, whose order this is (scheduler.cuh's grouped_origin).
//
// The problem: step 40's block b takes tiles b, b + 132, ... in row order.
// The 132 tiles running at one time are then about four whole tile rows of
// C: 512 rows of A and every column of B. At 8192, B is 128 MB, more than
// the 50 MB of L2, so each tile row reads all of B again from DRAM.
//
// What changes: the order of the tiles, nothing else. Tile number i lies in
// a group of GROUP = 16 tile rows, walked down a column of 16 tiles before
// moving one tile right: the 132 tiles running at one time cover a patch of
// C 16 tiles high (2,048 rows) and about 8 wide (2,048 columns), whose
// slices of A and B (at 8192, 32 MB each) L2 holds while they are read
// again.
//
// Counter that shows it: DRAM bytes read (ncu), lower, most at 8192, where
// the tensor pipe's busy share rises with it; at 4096 (the study's Nsight
// Compute size) both move less. GROUP 8 came within the noise of 16. The
// step's page gives the measured values.
//
// Ragged sizes: as step 40; the last group may be shorter than GROUP rows.
// The result is step 40's bit for bit (each element the same sums in the
// same order, whichever block computes it).
//
// Parameters: step 40's, and GROUP (tile rows a group). Needs sm_90a.

#include "../sm90/mainloop_bf16.cuh"
#include "../sm90/gemm.cuh"
#include "../common/pad_copy.cuh"   // pad_copy: the operands onto 16 bytes (align_rows in the registry)

using Tile = TileShape<BM, BN, BK>;
using Stages = StageCount<STAGES>;
using Mainloop = Bf16Mainloop<Tile, Stages, Descriptors::per_wgmma, Unaligned::host_copies>;
using Scheduler = StridedTiles<Tile, ClusterShape<1>, GROUP>;
using Kernel = Gemm<Mainloop, Scheduler, BufferStore>;

extern "C" __global__ void __launch_bounds__(Kernel::THREADS, 1)
gpu_wgmma_bf16_grouped(int M, int N, int K, const bf16* __restrict__ A, const bf16* __restrict__ B,
                       float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                       const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c,
                       Workspace* workspace)
{
    Kernel::run(M, N, K, A, B, C, &map_a, &map_b, &map_c, workspace);
}

// its shared memory and workspace, read by the host (gemm.cuh)
extern "C" __constant__ const LaunchFacts gpu_wgmma_bf16_grouped_facts = Kernel::FACTS;
