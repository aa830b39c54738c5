// Step 28: two blocks, one cluster, one copy of A. Blocks side by side along
// N compute tiles with the same 256 rows; each brings half of those rows'
// slice of A, and the copy engine writes it into both blocks' shared memory.
//
// Source: thread block clusters and TMA multicast, as the CUDA programming
// guide ("Thread Block Clusters", "Distributed Shared Memory") and the PTX
// ISA (cp.async.bulk.tensor .multicast::cluster, mapa, barrier.cluster)
// describe them, and as CUTLASS's SM90 kernels with cluster shape (2, 1) use
// them.
//
// What changes: the bytes a block asks of L2 per slice. Steps 25 to 27 move
// 48 KB a slice (A's 256 x 32: 32 KB, B's 32 x 128: 16 KB) for 256 x 128 x
// 32 multiply-adds; at the TF32 rate that is about 11 TB/s for 132 blocks,
// more than L2 sends (ncu: L2 near its peak throughput for step 25 at 4096,
// and the 8192 runs hit the power limit where cuBLAS does not). Two
// blocks that share A's rows ask for 16 + 16 KB each: two thirds of the
// traffic, for the same arithmetic. The price: the pair moves in step (a
// stage is refilled only when both blocks' consumers are done with it), and
// a cluster is placed as a whole.
//
// Counters that show it: the tensor pipe's active share (ncu), a little up.
// Predicted, and not among the study's counters: the bytes L2 sends per flop
// down by a third. At 8192, near the power cap, whether its samples throttled
// changed from one study to the next: the clock depends on what ran before.
// The L2 hit rate, first named here, moves by no more than between two
// studies. The step's page gives the measured values.
//
// Ragged sizes: as step 27; a cluster's second block may lie wholly right of
// C (N not a multiple of 2 x BN): it loads and multiplies zeros for its
// partner's sake and stores nothing (the copy engine clips). The grid's
// width is rounded up to whole clusters (the registry's `cluster`). Without
// tensor maps each block loads all of its slices itself, as in step 25, and
// the pair still hands stages over together. No block arrives on its
// partner's barriers after the partner may have ended (mainloop_tf32.cuh).
//
// Parameters: step 25's, and CLUSTER (2: the blocks of a cluster, along N).
// Needs sm_90a.

#include "../sm90/mainloop_tf32.cuh"
#include "../sm90/gemm.cuh"

using Tile = TileShape<BM, BN, BK>;
using Stages = StageCount<STAGES>;
using Cluster = ClusterShape<CLUSTER>;
using Mainloop = Tf32Mainloop<Tile, Stages, Cluster,
                              Overlap::next_slice, Fragments::rounded, Unaligned::own_loads>;
using Scheduler = OneTile<Tile, Cluster, 1>;
using Kernel = Gemm<Mainloop, Scheduler, RingStore>;

extern "C" __global__ void __cluster_dims__(Kernel::CLUSTER_SIZE, 1, 1) __launch_bounds__(Kernel::THREADS, 1)
gpu_wgmma_multicast(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                    float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                    const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c,
                    Workspace* workspace)
{
    Kernel::run(M, N, K, A, B, C, &map_a, &map_b, &map_c, workspace);
}

// its shared memory and workspace, read by the host (gemm.cuh)
extern "C" __constant__ const LaunchFacts gpu_wgmma_multicast_facts = Kernel::FACTS;
