// Step 23: step 22 on tiles of 128 x 64, for the problems of about 1024.
//
// Source: tile and wave quantization (NVIDIA's Deep Learning Performance
// Guide, "Matrix Multiplication Background"); cuBLAS, which picks the tile by
// shape (on an H200, cuBLAS SGEMM at 1024 x 1024 x 1024 runs a 128 x 64 tile
// kernel on 128 blocks, 8 x 8 per thread: ncu's kernel names, docs/fp32.md);
// the BF16 chapter's step 48, the same technique on the tensor cores.
//
// The problem: at 1024 x 1024 step 22's 64 x 64 tiles are 256, two blocks on
// nearly every SM, so it cuts no tile: each block runs all 64 of its slices,
// each slice's 16 k-rows of a 4 x 8 thread tile, 3 LDS.128 for 32 FFMA. That
// is about nine tenths of cuBLAS SGEMM's speed there.
//
// What changes: the registry's defines only; the kernel is step 22's.
// - BM = 128 (WM = 64, TM = 8): 8 x 8 per thread, 4 LDS.128 for 64 FFMA,
//   and a tile's slice feeds 21 flop per byte read instead of 16. At 1024 x
//   1024 that is 128 tiles, each cut in two K-ranges (RESIDENT 2: two blocks
//   an SM), 256 blocks.
// - SPLITS = 4: at 512 its 32 tiles are cut in four, 128 blocks.
// The cost: fewer tiles at 256 and 512, where step 22 is faster.
//
// Counter that shows it: FFMA per LDS in the main loop (SASS), higher (a
// thread's k issues 64 FFMA for 4 LDS.128 instead of 32 for 3), and at 1024
// (Nsight Compute) the FMA pipe's busy share, higher. The step's page gives
// the measured values, and its time at 1024.
//
// Ragged sizes and alignment: as step 22.
//
// Parameters (-D defines from kernels/registry.yaml): as step 22.

#include "22_gpu_async_split_k.cu"   // step 22's kernel and its work (split_k)

extern "C" __global__ void __launch_bounds__(THREADS, BLOCKS_PER_SM)
gpu_async_tall_tiles(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                     float* __restrict__ C, unsigned launch)
{
    split_k(M, N, K, A, B, C, launch);
}
