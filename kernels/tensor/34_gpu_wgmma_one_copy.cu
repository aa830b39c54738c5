// Step 34: step 33's kernel, each slice of B brought into the ring by one
// copy instead of four: the BF16 chapter's step 43, in TF32.
//
// Source: CUTLASS's SM90 TMA copies (cute/atom/copy_traits_sm90_tma.hpp:
// make_tma_copy folds a tile's swizzle-wide blocks into one box of a tensor
// map of up to five dimensions); the PTX ISA (cp.async.bulk.tensor.3d); the
// BF16 chapter's step 43, whose producer and host maps these are.
//
// The problem: a box of the 128-byte swizzle is at most 128 bytes wide, 32
// FP32 columns, so step 33's producer asks the copy engine for five boxes a
// slice: this block's half of A's 256 x 32 (multicast into both blocks of
// the cluster) and B's four blocks of 32 k by 32 columns. In the BF16
// chapter, B in one copy took the main loop's time a tile down and the
// tensor pipe's busy share up (step 43's header).
//
// What changes: B's tensor map is 3-D, (a block's 32 columns, K rows, N / 32
// blocks), and one box is the slice's four blocks side by side, laid in
// shared memory as the four 2-D boxes were (the registry's box [BK, 32,
// B_BLOCKS], read by matmulstudy/gpu/tma.py and sm90/producer.cuh). Two copies a
// slice instead of five. Where N is not a multiple of 32 the host's map is
// 2-D and the producer makes four copies, as step 33 did.
//
// Counter that shows it: UTMALDG in the producer's loop, 5 -> 2 a slice
// (SASS), and the tensor pipe's busy share (ncu at 4096) a little higher; at
// 4096 about a point faster against cuBLAS TF32 in alternating rounds, at
// 8192 within the noise. The step's page gives the measured values.
// Where N is not whole 32-column blocks (1537x3001x997) it runs step 33's
// copies and time.
//
// Ragged sizes: as step 33; its result bit for bit (the same bytes land in
// the same places).
//
// Parameters: step 33's, and B_BLOCKS = BN / 32. Needs sm_90a.

#include "../sm90/mainloop_tf32.cuh"
#include "../sm90/gemm.cuh"
#include "../common/pad_copy.cuh"   // pad_copy: the operands onto 16 bytes (align_rows in the registry)

using Tile = TileShape<BM, BN, BK>;
using Stages = StageCount<STAGES>;
using Cluster = ClusterShape<CLUSTER>;
using Mainloop = Tf32Mainloop<Tile, Stages, Cluster,
                              Overlap::next_slice, Fragments::as_stored, Unaligned::host_copies, B_BLOCKS>;
using Scheduler = QueuedTiles<Tile, Cluster, GROUP>;
using Kernel = Gemm<Mainloop, Scheduler, BufferStore>;

extern "C" __global__ void __cluster_dims__(Kernel::CLUSTER_SIZE, 1, 1) __launch_bounds__(Kernel::THREADS, 1)
gpu_wgmma_one_copy(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                   float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                   const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c,
                   Workspace* workspace)
{
    Kernel::run(M, N, K, A, B, C, &map_a, &map_b, &map_c, workspace);
}

// its shared memory and workspace, read by the host (gemm.cuh)
extern "C" __constant__ const LaunchFacts gpu_wgmma_one_copy_facts = Kernel::FACTS;
