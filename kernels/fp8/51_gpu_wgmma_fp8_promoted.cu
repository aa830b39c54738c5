// Step 51: step 50's kernel with its sums promoted to FP32 after every slice:
// the tensor cores sum 128 products (four wgmma k32) from zero, the CUDA cores
// add that part into FP32 sums.
//
// Source: DeepGEMM (DeepSeek, 2025) and the DeepSeek-V3 technical report
// (2024, section 3.3, "Increasing Accumulation Precision"): Hopper's FP8
// tensor cores keep about 14 bits of a sum, so the partial sums of each 128
// of K (four wgmma) are moved to FP32 registers on the CUDA cores; CUTLASS's
// SM90 FP8 GEMMs do the same where fast accumulation is off (their "mma
// promotion interval").
//
// The problem: step 50's sums are the tensor cores' alone, and their error
// grows with K, cut toward zero each wgmma (matmulstudy/precisions.py's
// fp8_fast row): at K = 8192, 16 units of 2^-13 r in rms, 160 at the
// largest. cuBLASLt without CUBLASLT_MATMUL_DESC_FAST_ACCUM promotes too,
// and is the reference of this chapter.
//
// What changes: the mainloop's sums only (mainloop_smem.cuh's
// multiply_promoted); the operands, the scheduler and the epilogue are step
// 50's. A consumer thread holds its 128 FP32 sums of a 64 x 256 part and
// the tensor cores' part of half of it (64 registers; a part of all of it
// would need 256 with the sums): each slice goes in two halves of 128
// columns (wgmma m64n128k32), each summed from zero, waited for and added.
// While one consumer warpgroup waits and adds, only the other's wgmma can
// run.
//
// Counter that shows it: the error, in the results (the margin under the
// fp8 row's bound, which does not grow with K, beside cuBLASLt's); and the
// tensor pipe's busy share, which the waits and adds cost against step 50
// (the step's page and docs/fp8.md give the measured values).
//
// Ragged sizes: step 50's (align_rows: pad_copy_8).
//
// Parameters: BM, BN, BK, STAGES, GROUP (registry). Needs sm_90a.

#include "../sm90/mainloop_fp8.cuh"
#include "../sm90/gemm.cuh"
#include "../common/pad_copy.cuh"   // pad_copy: the operands onto 16 bytes (align_rows in the registry)

using Tile = TileShape<BM, BN, BK>;
using Stages = StageCount<STAGES>;
using Mainloop = Fp8PromotedMainloop<Tile, Stages, BN / 128>;   // pieces of 128 columns: two halves of BN = 256
using Scheduler = QueuedTiles<Tile, ClusterShape<1>, GROUP, Takers::whole_rounds, Draw::when_needed>;
using Kernel = Gemm<Mainloop, Scheduler, BufferStore, Producer::one_warp>;

extern "C" __global__ void __launch_bounds__(Kernel::THREADS, 1)
gpu_wgmma_fp8_promoted(int M, int N, int K, const fp8_e4m3* __restrict__ A, const fp8_e4m3* __restrict__ B,
                       float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                       const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c,
                       Workspace* workspace)
{
    Kernel::run(M, N, K, A, B, C, &map_a, &map_b, &map_c, workspace);
}

// its shared memory and workspace, read by the host (gemm.cuh)
extern "C" __constant__ const LaunchFacts gpu_wgmma_fp8_promoted_facts = Kernel::FACTS;
