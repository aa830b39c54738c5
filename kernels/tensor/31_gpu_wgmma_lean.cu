// Step 31: step 30 without rounding the fragments the consumers read from
// shared memory.
//
// Source: PTX ISA, wgmma with .tf32 operands: the tensor cores take a
// 32-bit float's TF32 part (sign, exponent and the top 10 mantissa bits);
// the shared-memory operand reaches them that way in every step since 19,
// as both operands do in CUTLASS's SM90 TF32 GEMMs, whose wgmma read them
// from shared memory as the copy engine brought them.
//
// What changes: one instruction per fragment element. Each consumer thread
// reads 16 elements of B^T a slice (BK = 32: four k8 groups of four) and,
// through step 30, rounds each with cvt.rna.tf32.f32 before the four
// wgmma of the slice; here it passes the bits as they are, so both operands
// are truncated, not one truncated and one rounded. Most of step 29's idle
// tensor cycles are the consumers' work between wgmma groups; these are 16 of
// its instructions a slice.
//
// Accuracy: TF32's bound (matmulstudy/precisions.py) allows truncated
// inputs (eps_in = 2^-9, and a truncation moves a product by less than
// 2^-10 per input); the margin rises, the precision is the same.
//
// Counter that shows it: the main loop's instructions per wgmma (SASS),
// lower (a loop of two slices: 321 -> 223 instructions); the time a point or
// two better at 4096, and the margin against TF32's bound larger. The step's
// page gives the measured values.
//
// Parameters: step 30's; the mainloop's RoundFragments false. Needs sm_90a.

#include "../sm90/mainloop_tf32.cuh"
#include "../sm90/gemm.cuh"
#include "../common/pad_copy.cuh"   // pad_copy: the operands onto 16 bytes (align_rows in the registry)

using Tile = TileShape<BM, BN, BK>;
using Stages = StageCount<STAGES>;
using Cluster = ClusterShape<CLUSTER>;
using Mainloop = Tf32Mainloop<Tile, Stages, Cluster,
                              Overlap::next_slice, Fragments::as_stored, Unaligned::host_copies>;
using Scheduler = OneTile<Tile, Cluster, GROUP>;
using Kernel = Gemm<Mainloop, Scheduler, RingStore>;

extern "C" __global__ void __cluster_dims__(Kernel::CLUSTER_SIZE, 1, 1) __launch_bounds__(Kernel::THREADS, 1)
gpu_wgmma_lean(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
               float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
               const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c,
               Workspace* workspace)
{
    Kernel::run(M, N, K, A, B, C, &map_a, &map_b, &map_c, workspace);
}

// its shared memory and workspace, read by the host (gemm.cuh)
extern "C" __constant__ const LaunchFacts gpu_wgmma_lean_facts = Kernel::FACTS;
