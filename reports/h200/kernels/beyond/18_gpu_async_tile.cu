// Step 18: a 128 x 256 tile, 16 x 8 per thread, its slices copied by
// cp.async straight into shared memory, the ragged slice first.
//
// Source: salykova's sgemm.cu (its 128 x 256 x 8 kernel: 8 warps, a 16 x 8
// thread tile, 4-byte cp.async for every load, the edge masks computed once,
// the ragged K slice done first, two buffers), measured in the study's
// harness level with cuBLAS SGEMM at 4096 and 8192
// (6fbf69a:notes/beyond_the_seeds.md); the asynchronous copies are the CUDA C++
// Programming Guide's ("Asynchronous Data Copies", cp.async, sm_80).
//
// The problem: step 17 is a few points short of cuBLAS SGEMM at 4096, with 1,273 SASS
// instructions in its main loop for every 1,024 FFMA. The extra ones: the
// next slice's loads into registers and their stores into shared memory
// (8 scalar STS of A transposed, 2-way conflicted), a second path for rows
// that do not start on 16 bytes, bounds checks kept in the loop, and one
// LDS.128 per 16 FFMA from its 8 x 8 thread tile.
//
// What changes: three things at once, as the source has them (the notes
// measure each version on the way, and what else the loop needed: its shape
// decides how ptxas lays out the registers).
// - The tile: 128 x 256 per block, 8 warps of 64 x 64, 16 x 8 per thread
//   (128 accumulators, one block an SM): one LDS.128 per 21 FFMA.
// - The copies (kernels/common/async_slices.cuh): each element of a slice
//   goes from global to shared memory by a 4-byte cp.async, with no
//   register in between, no STS and no alignment case (any row start is
//   4-byte aligned). Whether a copy lies inside M and N is worked out once,
//   before the loop; one outside is not made (its place feeds only rows or
//   columns of C that are never stored), and past K it writes zeros.
// - The ragged slice first: K = (slices - 1) * 8 + first, so slice 0 holds
//   the first `first` k and every later slice is whole: the loop tests no k.
//   Each element is still a sum over k in order (zeros added in between).
// - The copies addressed as the source addresses them (XOR_BUFFERS and
//   LEAN_COPIES 1 in the registry): each copy's offset kept in a register,
//   B's copies two columns 128 apart, the buffers flipped by an XOR, and
//   after the last slice the copies made of zero bytes, so no predicate in
//   the loop changes with the slice. 1,137 instructions per 1,024 FFMA, against 1,149 without (the
//   study's first version of this step: 2 points slower at 4096 and 8192).
//
// Counter that shows it: main-loop instructions per FMA (SASS), lower.
//
// Ragged sizes and alignment: any M, N, K >= 1, any row start.
//
// Parameters (-D defines from kernels/registry.yaml): BM, BN, BK (block
// tile), WM, WN (warp tile), TM, TN (thread tile), as pipeline.cuh's;
// XOR_BUFFERS and LEAN_COPIES, as async_slices.cuh's.

#include "../common/async_slices.cuh"   // the copies and the main loop (multiply_slices); store_tile

extern "C" __global__ void __launch_bounds__(THREADS, BLOCKS_PER_SM)
gpu_async_tile(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C)
{
    __shared__ __align__(16) AsyncTiles s;
    const Place p(blockIdx.y * BM, blockIdx.x * BN);
    float acc[TM][TN] = {};
    multiply_slices<FmaOrder::serpentine>(acc, s, A, B, M, N, K, p, 0, (K + BK - 1) / BK);
    store_tile(C, M, N, acc, p);
}
