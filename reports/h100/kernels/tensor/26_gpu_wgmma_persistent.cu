// Step 26: step 25's producer and consumers in a persistent grid: a cluster
// per pair of multiprocessors, walking its share of the tiles, the producer
// running on into the next tile while the consumers store this one.
//
// Source: the persistent, warp-specialised kernels of CUTLASS's SM90 GEMMs
// (KernelTmaWarpSpecializedCooperative with its persistent tile scheduler;
// the epilogue's own shared memory, stored by TMA), and pranjalssh's fast.cu
// worklog for the H100 (a persistent kernel past cuBLAS in BF16).
//
// The problem: through step 25 a block computes one tile and ends. Every
// tile then pays, with the tensor cores idle, for its block's start (the
// cluster barrier, the first slices' trip from DRAM while the ring fills)
// and for its end (the consumers write C into the drained ring and wait for
// the copy engine). Issue 24 counts about 40% of step 23's idle tensor
// cycles as this fixed cost per tile, at 4096 four tiles a multiprocessor.
//
// What changes: which tiles a block computes, and C's way out
// (kernels/common/persistent.cuh). The grid is the multiprocessors rounded
// down to whole clusters (132 blocks on an H100 or H200); cluster c takes
// tiles c, c + 66, c + 132, ... of step 23's grouped order. The ring's count
// runs on across tiles, so the producer fills the next tile's first stages
// while the consumers finish this tile and store it; the consumers store
// through a 16 KB buffer each, after the ring, a quarter of their rows at a
// time, and wait for the copy engine only before they write that buffer
// again. Nothing else in the main loop changes.
//
// Counter that shows it: the tensor pipe's busy share (ncu), higher: 85.6 ->
// 90.2% at 4096 on the H100 (6fbf69a:notes/tensor_cores.md). Measured there with
// devbench, two rounds against step 25: 95.1-95.5% of cuBLAS TF32 at 4096
// (step 25: 92.1-92.6%), 97.5-98.7% at 2048. At 8192 it gains nothing
// (93.5%, step 25 93.6-93.8%): its clusters drift apart over 15.5 tiles each,
// those running at one time no longer hold neighbouring tiles, and DRAM
// reads rise from 2.50 to 2.93 GB. Step 27 mends that.
//
// Ragged sizes: as step 25 (the copy engine zero-fills and clips every box;
// a cluster's second block may lie wholly right of C, as in steps 22-25). A
// cluster with no tile (more clusters than tiles) meets its partner once at
// the start and ends. The result is the same bit for bit as step 25's: each
// element is the same sum in the same order, whichever block computes it.
//
// Parameters: step 25's; the grid is the registry's. Needs sm_90a.

#include "../common/persistent.cuh"   // step 25's producer and consumers, tile after tile
#include "../common/pad_copy.cuh"     // step 24's copies where rows are off 16 bytes

#if CLUSTER != 2 || GROUP < 2 || ROUND_FRAGMENTS != 0
#error "CLUSTER (2), GROUP (>= 2) and ROUND_FRAGMENTS (0) come from kernels/registry.yaml as -D defines"
#endif

extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS, 1)
gpu_wgmma_persistent(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                     float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                     const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c)
{
    multiply_tiles<Overlap::next_slice, StridedTiles>(M, N, K, A, B, C, &map_a, &map_b, &map_c);
}
