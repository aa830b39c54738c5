// Step 21: step 20 with its epilogue's accesses 16 bytes wide.
//
// Source: 128-bit global accesses for C, as CUTLASS's epilogues make them
// (an access of kElementsPerAccess elements, AlignedArray) and siboehm's
// SGEMM kernel 6 ("vectorize SMEM and GMEM accesses", C written as float4);
// step 19's kernel, with step 20's rule for the shapes where every tile is
// shared out.
//
// The problem: the epilogue stored each of a thread's 16 x 8 results as a
// 4-byte STG, and a piece of a cut tile (Stream-K's fix-up, step 15) read a
// row of C only after it had written the row before: 16 round trips to L2
// in a row, for each piece. Stamped block by block at 4096
// (6fbf69a:notes/step28_fp32/k4096/timeline.py: each block's start and end by
// %globaltimer), step 19's blocks that share out the partial wave ended
// later than their share of a tile's work would say; every SM then ran three
// whole tiles, so the last of them set the end, and a whole tile at 4096 took
// about as long as 4096 of K of a tile at 8192: a fixed cost a tile, the
// epilogue's.
//
// What changes: store_tile's `vector` way (kernels/common/pipeline.cuh),
// where C's rows start on 16 bytes (N a multiple of 4, C on 16 bytes): each
// group of 4 neighbouring columns of a thread's tile is one STG.128 (and
// one LDG.128 for a piece added into C), and a piece reads 4 rows before it
// writes them, 4 round trips a thread instead of 16. A group lies inside C
// or outside it whole, as its first column is a multiple of 4; where N is
// not a multiple of 4 the epilogue is step 20's. Nothing else: the main
// loop, the shares and the rule are step 20's. This file holds step 20's
// two kernels and one more, gpu_async_epilogue, step 19's kernel with the
// wide epilogue (its body is step 19's async_stream_k, vector true); the
// rule launches it wherever step 20 launches step 19's.
//
// Counter that shows it: global-store instructions executed (ncu), lower. In
// time it gains a point or two at 2048 to 8192 and most at 1024, where 32
// tiles are shared out among 132 blocks and nearly every block adds a piece
// into C (6fbf69a:notes/step28_fp32/k4096/step31_h100.txt). The step's
// page gives the measured values.
//
// Ragged sizes and alignment: as step 18; where N is not a multiple of 4
// (rows of C off 16 bytes) the scalar epilogue, checked element by element
// at every shape. Launches share no state, as step 15's; results bit for
// bit the same on one GPU model, as step 19's (the same sums, stored wider).
//
// Parameters (-D defines from kernels/registry.yaml): as step 20.

#include "20_gpu_async_by_shape.cu"   // step 20's kernels, and step 19's work (async_stream_k)

extern "C" __global__ void __launch_bounds__(THREADS, BLOCKS_PER_SM)
gpu_async_epilogue(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                   float* __restrict__ C, unsigned launch)
{
    async_stream_k<true>(M, N, K, A, B, C, launch);
}
