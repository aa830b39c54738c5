// Step 50: step 47's persistent kernel in FP8: e4m3 operands, wgmma
// m64n256k32, the sums in the tensor cores alone.
//
// Source: the PTX ISA's wgmma.mma_async with .e4m3 operands (Hopper's FP8
// tensor cores); NVIDIA's FP8 formats (Micikevicius et al., "FP8 Formats for
// Deep Learning", 2022); CUTLASS's SM90 FP8 GEMMs and DeepGEMM, which feed
// both operands K-major through TMA, as here.
//
// The problem: FP8's tensor cores multiply twice as fast as BF16's (the
// H100's dense peak, 1,979 TFLOP/s at 1,830 MHz, against 989), from half the
// bytes. Step 47's roles reach about cuBLAS's BF16 speed; what do the same
// roles reach in FP8?
//
// What changes: the mainloop's operands only (mainloop_fp8.cuh), the
// scheduler and the epilogue are step 47's.
// - A and B are e4m3 bytes, rounded on the host (matmulstudy/precisions.py's
//   fp8_fast row). B is stored N x K: FP8's wgmma reads both operands
//   K-major, with no transposed form, so B's slice is a box of BN rows of 128
//   bytes, laid out as A's is, and both descriptors step 32 bytes a wgmma.
// - A slice is BK = 128 k (one 128-byte swizzle row of bytes): the same 48 KB
//   a stage as step 47's BK = 64 of BF16, and the same four wgmma a slice,
//   each k32 instead of k16: twice the flops a stage, a stage's bytes the same.
// - The sums: each wgmma adds its 32 products to the accumulator 13 bits
//   below the largest exponent, cut toward zero; nothing promotes them to
//   FP32 here. Its reference is therefore cuBLASLt's FP8 GEMM with
//   CUBLASLT_MATMUL_DESC_FAST_ACCUM, which sums the same way, and its bound
//   grows with K as those sums' errors do.
//
// Counter that shows it: the flop per byte of global memory (2 BM BN / (BM
// + BN): twice step 47's), and Nsight Compute's tensor pipe's busy share:
// with twice the work a stage, the producer's copies and the epilogue weigh
// twice as much against the main loop as in BF16. The step's page gives the
// measured values.
//
// Ragged sizes: rows of K bytes start on 16 bytes only where K is a multiple
// of 16; elsewhere the host copies A and B into zero-padded workspace first
// (align_rows: pad_copy_8, B into N x Kp), C out of it where N is not a
// multiple of 4.
//
// Parameters: BM, BN, BK, STAGES, GROUP (registry). Needs sm_90a.

#include "../sm90/mainloop_fp8.cuh"
#include "../sm90/gemm.cuh"
#include "../common/pad_copy.cuh"   // pad_copy: the operands onto 16 bytes (align_rows in the registry)

using Tile = TileShape<BM, BN, BK>;
using Stages = StageCount<STAGES>;
using Mainloop = Fp8Mainloop<Tile, Stages, Descriptors::stepped, Unaligned::host_copies>;
using Scheduler = QueuedTiles<Tile, ClusterShape<1>, GROUP, Takers::whole_rounds, Draw::when_needed>;
using Kernel = Gemm<Mainloop, Scheduler, BufferStore, Producer::one_warp>;

extern "C" __global__ void __launch_bounds__(Kernel::THREADS, 1)
gpu_wgmma_fp8(int M, int N, int K, const fp8_e4m3* __restrict__ A, const fp8_e4m3* __restrict__ B,
              float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
              const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c,
              Workspace* workspace)
{
    Kernel::run(M, N, K, A, B, C, &map_a, &map_b, &map_c, workspace);
}

// its shared memory and workspace, read by the host (gemm.cuh)
extern "C" __constant__ const LaunchFacts gpu_wgmma_fp8_facts = Kernel::FACTS;
