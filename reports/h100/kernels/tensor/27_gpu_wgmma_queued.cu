// Step 27: step 26's persistent clusters, their tiles handed out one at a
// time, in order, to whichever cluster asks first.
//
// Source: dynamic tile scheduling through a global atomic counter, as
// Stream-K's and CUTLASS's persistent schedulers take work units from a
// counter in global memory (Osama et al., PPoPP 2023; CUTLASS's
// PersistentTileSchedulerSm90StreamK), and Blackwell's cluster launch
// control (CUTLASS 3.8 and later) does in hardware: a block asks for its next
// tile when it is ready for it.
//
// The problem: step 26 gives cluster c the tiles c, c + 66, c + 132, ... of
// the grouped order. Clusters do not run at one speed, and at 8192 (15.5
// tiles a cluster) a fast one gets several tiles ahead of a slow one: the
// clusters running at one time no longer hold neighbouring tiles, the slices
// of A and B one of them brings into L2 are gone before the others need them,
// and the GPU reads more from DRAM (ncu on the H100, 6fbf69a:notes/tensor_cores.md:
// 2.93 GB against step 25's 2.50). A grid of one tile a block never drifts:
// the hardware starts the next block in order on the first multiprocessor
// that frees.
//
// What changes: which tiles a cluster computes (kernels/common/persistent.cuh,
// QueuedTiles). Cluster c starts on tile c; as it starts a tile, one of its
// threads draws a ticket from a counter in global memory for the tile after
// it, and hands the number to both blocks' producer and consumers through two
// slots of shared memory, each with a pair of barriers. The counter goes back
// to 0 when the launch's last ticket is drawn. Nothing else changes.
//
// Counter that shows it: DRAM bytes read (ncu), lower, at 8192: 2.93 -> 2.46
// GB on the H100 (step 25: 2.50). At 4096 (the study's Nsight Compute size,
// four tiles a cluster) the bytes do not move (0.298 GB) and the tensor pipe's
// busy share does, higher: 90.2 -> 91.6% (at 8192: 92.9 -> 94.1%). Measured
// there with devbench, two rounds against steps 25 and 26: 97.5% of cuBLAS
// TF32 at 4096 (both rounds), 96.8-96.9% at 8192, 96.0-98.1% at 2048,
// 222-224% at 4096x4096x4095.
//
// Ragged sizes: as step 26. The result is bit for bit step 25's (each element
// the same sum in the same order, whichever cluster computes it); a GPU test
// compares them, and launches it twice in a row at each shape.
//
// Parameters: step 26's. Needs sm_90a.

#include "../common/persistent.cuh"   // step 26's kernel; QueuedTiles hands the tiles out
#include "../common/pad_copy.cuh"     // step 24's copies where rows are off 16 bytes

#if CLUSTER != 2 || GROUP < 2 || ROUND_FRAGMENTS != 0
#error "CLUSTER (2), GROUP (>= 2) and ROUND_FRAGMENTS (0) come from kernels/registry.yaml as -D defines"
#endif

extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS, 1)
gpu_wgmma_queued(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                 float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                 const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c)
{
    multiply_tiles<Overlap::next_slice, QueuedTiles>(M, N, K, A, B, C, &map_a, &map_b, &map_c);
}
