// Step 32: step 31's producer and consumers in a persistent grid: a cluster
// per pair of multiprocessors, walking its share of the tiles, the producer
// running on into the next tile while the consumers store this one.
//
// Source: the persistent, warp-specialised kernels of CUTLASS's SM90 GEMMs
// (KernelTmaWarpSpecializedCooperative with its persistent tile scheduler;
// the epilogue's own shared memory, stored by TMA), and pranjalssh's fast.cu
// worklog for the H100 (a persistent kernel past cuBLAS in BF16).
//
// The problem: through step 31 a block computes one tile and ends. Every
// tile then pays, with the tensor cores idle, for its block's start (the
// cluster barrier, the first slices' trip from DRAM while the ring fills)
// and for its end (the consumers write C into the drained ring and wait for
// the copy engine). A large share of step 29's idle tensor cycles is this
// fixed cost per tile, at 4096 four tiles a multiprocessor.
//
// What changes: which tiles a block computes, and C's way out
// (StridedTiles and BufferStore, kernels/sm90/). The grid is the multiprocessors rounded
// down to whole clusters (132 blocks on an H100 or H200); cluster c takes
// tiles c, c + 66, c + 132, ... of step 29's grouped order. The ring's count
// runs on across tiles, so the producer fills the next tile's first stages
// while the consumers finish this tile and store it; the consumers store
// through a 16 KB buffer each, after the ring, a quarter of their rows at a
// time, and wait for the copy engine only before they write that buffer
// again. Nothing else in the main loop changes.
//
// Counter that shows it: the tensor pipe's busy share (ncu), higher at 4096
// (6fbf69a:notes/tensor_cores.md), and the time with it. At 8192 it
// gains nothing: its clusters drift apart over 15.5 tiles each, those running
// at one time no longer hold neighbouring tiles, and DRAM reads rise. Step 33
// mends that. The step's page gives the measured values.
//
// Ragged sizes: as step 31 (the copy engine zero-fills and clips every box;
// a cluster's second block may lie wholly right of C, as in steps 28-31). A
// cluster with no tile (more clusters than tiles) meets its partner once at
// the start and ends. The result is the same bit for bit as step 31's: each
// element is the same sum in the same order, whichever block computes it.
//
// Parameters: step 31's; the grid is the registry's. Needs sm_90a.

#include "../sm90/mainloop_tf32.cuh"
#include "../sm90/gemm.cuh"
#include "../common/pad_copy.cuh"   // pad_copy: the operands onto 16 bytes (align_rows in the registry)

using Tile = TileShape<BM, BN, BK>;
using Stages = StageCount<STAGES>;
using Cluster = ClusterShape<CLUSTER>;
using Mainloop = Tf32Mainloop<Tile, Stages, Cluster,
                              Overlap::next_slice, Fragments::as_stored, Unaligned::host_copies>;
using Scheduler = StridedTiles<Tile, Cluster, GROUP>;
using Kernel = Gemm<Mainloop, Scheduler, BufferStore>;

extern "C" __global__ void __cluster_dims__(Kernel::CLUSTER_SIZE, 1, 1) __launch_bounds__(Kernel::THREADS, 1)
gpu_wgmma_persistent(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                     float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                     const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c,
                     Workspace* workspace)
{
    Kernel::run(M, N, K, A, B, C, &map_a, &map_b, &map_c, workspace);
}

// its shared memory and workspace, read by the host (gemm.cuh)
extern "C" __constant__ const LaunchFacts gpu_wgmma_persistent_facts = Kernel::FACTS;
