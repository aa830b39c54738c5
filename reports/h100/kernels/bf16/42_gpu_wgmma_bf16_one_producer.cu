// Step 42: step 39 with one producer warp: the producer warpgroup's other
// three warps leave as soon as they have given back their registers.
//
// Source: pranjalssh's fast.cu (kernel 12, the H100 worklog "Outperforming
// cuBLAS on H100"): of its producer warpgroup only thread 0 enters the loop
// that loads the slices; the other 127 threads fall through to the kernel's
// end. CUTLASS's warp-specialised kernels likewise give the mainloop's
// loads to one warp of the producer warpgroup (ProducerWarpRole::Mainloop);
// its warps with no role run no loop.
//
// The problem: from step 37 on, every warp of the block reads each tile's
// number from the tile slot (tiles.cuh's QueuedTiles), the producer's four
// warps too, though only thread 0 of warp 0 asks the copy engine for
// anything. Warps 1 to 3 of the producer so wait on the slot's barrier for
// a whole tile at a time: a cluster-scope acquire, each round of the wait an
// L1 invalidation (`CCTL.IVALL`), 23% of all warp samples at 4096 on step
// 37 (Nsight Compute's warp sampling, 6fbf69a:notes/bf16.md). They issue
// instructions on the multiprocessor's schedulers beside the consumers'
// wgmma, fences and epilogue stores, and do nothing else.
//
// What changes: PRODUCER_WARPS = 1 (the registry's defines). Warps 1 to 3
// of warpgroup 0 return after `setmaxnreg.dec` (which the whole warpgroup
// must execute), and the slot's empty barrier counts one producer warp
// and the consumers' eight. The kernel body is step 39's call.
//
// Counter that shows it: the instructions the block issues (Nsight Compute
// at 4096, one launch each, GPU-6016188a): 33.3 -> 32.2 million executed,
// the issue slots' busy share 22.4 -> 21.7% (issue_active_pct; in the H100
// study of commit f0dd791, GPU-edf9bb36, 22.43 -> 21.68%); the tensor
// pipe's share is the same (89.7 -> 89.6%). A small step: in alternating
// rounds against cuBLAS BF16 (on H100s, devbench, 6fbf69a:notes/one_producer/)
// 97.7-98.4% at 4096 against step 39's 97.3-98.4% (three rounds), 101.2-
// 101.3% at 8192 against 101.1-101.2%, 95.5-96.3% at 2048 against 95.5-
// 96.2%; on GPU-7337c3d9, as a candidate, 98.7-99.3% at 4096 against
// 98.2-98.5%, and fitted over K the rest of a launch 21.04 -> 20.38 us.
// The same change in TF32 (step 41 with PRODUCER_WARPS = 1) gained nothing:
// 99.1-99.4% against 99.3-99.4% at 4096.
//
// Ragged sizes: as step 39, and its result bit for bit (only who waits on
// the slot changes, not which block computes which tile in what order).
//
// Parameters: step 39's, and PRODUCER_WARPS = 1. Needs sm_90a.

#include "../common/persistent_bf16.cuh"   // step 38's kernel; tiles.cuh reads PRODUCER_WARPS
#include "../common/pad_copy.cuh"          // step 35's copies where rows are off 16 bytes

#if GROUP < 2 || B_BLOCKS < 2 || PRODUCER_WARPS != 1
#error "GROUP (>= 2), B_BLOCKS (>= 2) and PRODUCER_WARPS (1) come from kernels/registry.yaml as -D defines"
#endif

extern "C" __global__ void __launch_bounds__(THREADS, 1)
gpu_wgmma_bf16_one_producer(int M, int N, int K, const bf16* __restrict__ A, const bf16* __restrict__ B,
                            float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                            const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c)
{
    multiply_tiles<QueuedTiles, false>(M, N, K, A, B, C, &map_a, &map_b, &map_c);
}
