// Step 25: Hopper's way. The copy engine (TMA) brings the tiles into shared
// memory, a warpgroup multiplies them with wgmma, and the two work as a
// producer and consumers of a ring of shared-memory stages, each stage
// handed over on mbarriers.
//
// Sources: the PTX ISA (wgmma.mma_async .m64n256k8 .tf32 with A from
// registers; cp.async.bulk.tensor; mbarrier; setmaxnreg), the CUDA
// programming guide ("Using the Tensor Memory Accelerator"), and CUTLASS's
// SM90 documentation and its warp-specialized TMA mainloops, in particular
// the one with A from registers ("RS"), which is how CUTLASS multiplies TF32
// operands that are not K-major. The primitives are in sm90/hopper.cuh, the
// roles in sm90/ (kernels/README.md): this step composes the TF32 mainloop,
// a tile a block, and a direct store.
//
// What changes from step 24: everything that fed the tensor cores.
// - Loads: one thread asks the copy engine for a whole slice (a 256 x 32 box
//   of A, four 32 x 32 boxes of B, 48 KB) and the engine writes it, already
//   swizzled, while every other thread computes. No load instructions, no
//   address arithmetic, no registers staging the data.
// - Stages: STAGES slices in flight (4 x 48 KB of dynamic shared memory);
//   the producer waits for a stage to be empty, the consumers for it to be
//   full (an mbarrier each way).
// - Math: wgmma, a 64 x 256 x 8 product per instruction issued by a whole
//   warpgroup (step 24's mma.sync is 16 x 8 x 8 per warp), asynchronous:
//   issued, committed, waited for. Here a warpgroup reads a slice's
//   fragments, issues its four wgmma and waits for them; while it waits, the
//   other consumer warpgroup's wgmma run (step 27 overlaps its own too).
// - Roles: warpgroup 0 produces (and gives its registers back with
//   setmaxnreg), warpgroups 1 and 2 consume (and take them: 128 FP32
//   accumulators each).
//
// Why C^T = B^T A^T. wgmma reads a TF32 operand from shared memory only if it
// is K-major (its k run consecutively in memory). A's rows are (row-major A),
// B's are not: B is N-major. So the instruction's roles are swapped: its
// shared-memory operand is A (the tile's 256 rows of C are the instruction's
// N = 256), and its register operand is B^T (64 columns of C per consumer
// warpgroup are the instruction's M = 64), read from shared memory into the
// mma.sync-like fragment with ordinary loads. The accumulators then hold a
// tile of C transposed, which the stores undo.
//
// Rounding: B's fragments are rounded to TF32 (cvt.rna) as they are read;
// A goes to the tensor cores as it is in memory, and they read its top 19
// bits (truncation), an error the TF32 bound allows (matmulstudy/measure/verify.py).
//
// Bank conflicts of the fragment reads: the copy engine's 128-byte swizzle
// puts element (k, c) of a 32-column box of B at chunk (c / 4) XOR (k % 8) of
// row k. Lane (g, t) reads k = t (and t + 4); if wgmma's rows g = 0..7 were
// columns 0..7, lanes (g = 4, t = 0) and (g = 0, t = 1) would meet in one
// bank. The rows of the instruction are any permutation of the tile's
// columns, so they are taken as columns 0-3 and 16-19 (rows 0-7) and 4-7 and
// 20-23 (rows 8-15) of the warp's 32: the 32 lanes then hit 32 banks.
//
// Ragged sizes: where A and B's rows start on 16 bytes (K and N multiples of
// 4: the copy engine's rule for a tensor map), the engine fills whatever lies
// outside the matrices with zeros, and the stores skip what lies outside C.
// Elsewhere (K or N not a multiple of 4) the host passes no tensor maps and
// the producer warpgroup loads the slices itself, element by element with
// the same zeros, into the same swizzled layout, then fences (its stores are
// ordinary ones, which the tensor cores read) and arrives. Any M, N, K >= 1.
//
// Counters that show it (hardware.csv): HGMMA in the SASS main loop, no HMMA
// and no FFMA; 4 HGMMA per slice of 32. The tensor pipe's active share
// (ncu), more than twice step 24's.
//
// Parameters (-D defines from kernels/registry.yaml): BM (rows of C a block
// computes, the instruction's N: 256), BN (columns: 64 per consumer
// warpgroup), BK (32: one 128-byte swizzle row of A), STAGES.
// Needs sm_90a (wgmma, setmaxnreg): `needs: sm_90a` in the registry.

#include "../sm90/mainloop_tf32.cuh"
#include "../sm90/gemm.cuh"

using Tile = TileShape<BM, BN, BK>;
using Stages = StageCount<STAGES>;
using Cluster = ClusterShape<1>;
using Mainloop = Tf32Mainloop<Tile, Stages, Cluster,
                              Overlap::none, Fragments::rounded, Unaligned::own_loads>;
using Scheduler = OneTile<Tile, Cluster, 1>;
using Kernel = Gemm<Mainloop, Scheduler, DirectStore>;

extern "C" __global__ void __launch_bounds__(Kernel::THREADS, 1)
gpu_wgmma_tma(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
              float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
              const __grid_constant__ CUtensorMap map_b, Workspace* workspace)
{
    Kernel::run(M, N, K, A, B, C, &map_a, &map_b, nullptr, workspace);
}

// its shared memory and workspace, read by the host (gemm.cuh)
extern "C" __constant__ const LaunchFacts gpu_wgmma_tma_facts = Kernel::FACTS;
