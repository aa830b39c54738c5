// Step 38: BF16 the Hopper way. The copy engine (TMA) brings each K-slice
// of A and B into a ring of shared-memory stages, and wgmma multiplies them
// there: both operands are read by the tensor cores from shared memory, and
// nothing but the accumulators passes through registers.
//
// Sources: the PTX ISA ("wgmma.mma_async" m64n256k16 .bf16 with both
// operands from descriptors, imm-trans-b; "Matrix Descriptor Format", its
// leading and stride byte offsets for MN-major swizzled layouts and the
// canonical layouts table), the CUDA programming guide ("Using the Tensor
// Memory Accelerator"), and CUTLASS's SM90 warp-specialized TMA mainloop
// for 16-bit operands ("SS": both from shared memory), which takes a
// row-major B as an MN-major operand. The TF32 chapter's ring, mbarriers and
// roles (sm90/: the ring, the producer, the scheduler, the epilogues) are the TF32 steps'.
//
// What changes from step 37 (mma.sync + ldmatrix): everything that feeds
// the tensor cores, as step 25 did for TF32.
// - Loads: one thread asks the copy engine for a whole slice (a 128 x 64
//   box of A, four 64 x 64 boxes of B: 48 KB) while every other thread
//   computes; no load instructions, no ldmatrix, no registers staging it.
// - Stages: STAGES = 4 slices in flight (192 KB of dynamic shared memory),
//   handed over on mbarriers (full: the bytes have landed; empty: every
//   consumer warp is done with it).
// - Math: one wgmma is a 64 x 256 x 16 product issued by a warpgroup of 128
//   threads (step 37's mma.sync: 16 x 8 x 16 per warp), asynchronous:
//   issued, committed, waited for. A consumer issues a slice's four wgmma,
//   then waits for the previous slice's and gives its stage back: one group
//   in flight behind the one being issued.
// - Roles: warpgroup 0 produces (and gives its registers back with
//   setmaxnreg), warpgroups 1 and 2 consume (and take them: 128 FP32
//   accumulators each), 64 rows of the 128 x 256 tile each.
//
// Why no transpose, and not TF32's swapped roles. wgmma reads a TF32
// operand from shared memory only K-major, so the TF32 chapter computes
// C^T = B^T A^T with B^T from registers (step 25). A 16-bit operand may be
// MN-major: the instruction's last immediate (B transposed) says B's N is
// contiguous, as it is in the study's row-major B. The copy engine writes
// B's slice as boxes of 64 columns (128 bytes) by 64 k, swizzled; the
// descriptor's leading byte offset steps from one box of 64 columns to the
// next, its stride byte offset from one group of 8 k to the next
// (descriptor_sw128_mn in hopper.cuh). A is K-major, as step 25's.
//
// Ragged sizes: where A and B's rows start on 16 bytes (K and N multiples
// of 8, the copy engine's rule for BF16), the engine fills what lies
// outside the matrices with zeros (an odd number of slices, K = 1: the
// last slice is partly zeros, which add nothing) and the stores skip what
// lies outside C. Elsewhere (K or N not a multiple of 8) the host passes no
// tensor maps and the producer warpgroup loads the slices itself, element
// by element with the same zeros, into the same swizzled layout, then
// fences (its stores are ordinary ones, which the tensor cores read) and
// arrives. C is written 8 bytes at a time where its rows start on 8 bytes.
// Any M, N, K >= 1.
//
// Counter that shows it (hardware.csv): the tensor pipe's active share
// (ncu), about three times step 37's at 4096 (6fbf69a:notes/bf16.md);
// HGMMA.64x256x16.F32.BF16 with .tnspB in the SASS main loop, no HMMA, no
// LDSM. The step's page gives the measured values.
//
// Parameters (-D defines from kernels/registry.yaml): BM (rows of C a
// block computes: 64 per consumer warpgroup), BN (columns: 256, the
// instruction's N), BK (64: one 128-byte swizzle row of A), STAGES.
// Needs sm_90a (wgmma, setmaxnreg): `needs: sm_90a` in the registry.

#include "../sm90/mainloop_bf16.cuh"
#include "../sm90/gemm.cuh"

using Tile = TileShape<BM, BN, BK>;
using Stages = StageCount<STAGES>;
using Mainloop = Bf16Mainloop<Tile, Stages, Descriptors::per_wgmma, Unaligned::own_loads>;
using Scheduler = OneTile<Tile, ClusterShape<1>, 1>;
using Kernel = Gemm<Mainloop, Scheduler, DirectStore>;

extern "C" __global__ void __launch_bounds__(Kernel::THREADS, 1)
gpu_wgmma_bf16(int M, int N, int K, const bf16* __restrict__ A, const bf16* __restrict__ B,
               float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
               const __grid_constant__ CUtensorMap map_b, Workspace* workspace)
{
    Kernel::run(M, N, K, A, B, C, &map_a, &map_b, nullptr, workspace);
}

// its shared memory and workspace, read by the host (gemm.cuh)
extern "C" __constant__ const LaunchFacts gpu_wgmma_bf16_facts = Kernel::FACTS;
