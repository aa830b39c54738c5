// Step 13: the fragments double-buffered in registers: while the FMAs of
// k run, the LDS.128 of k + 1 are already in flight, across the slice
// boundary too. The loop itself is in pipeline.cuh, which steps 14 and 15
// share; this file is its plainest use.
//
// Source: the CUTLASS documentation (efficient_gemm.md, "software
// pipelining": double buffering of the warp-level fragments in registers,
// next to the shared-memory double buffer of step 12); Yinghan Li's SGEMM
// (the last k of a slice stores the prefetched slice, waits at the barrier
// and loads the next slice's first fragments before its own FMAs);
// salykova's sgemm.cu (the same pipeline).
//
// What changes from step 12: a and b, the fragments a thread multiplies
// for one k, become a[2][TM] and b[2][TN]. In step 12 each k began with its
// LDS.128 and its FMAs had to wait for them (about 30 cycles on Hopper),
// and each slice began behind a barrier with nothing loaded. Here k
// multiplies fragment k % 2 while fragment (k + 1) % 2 is loaded; at the
// last k of a slice the thread first stores the prefetched slice into the
// other buffer, waits at the slice's one barrier, and loads the next
// slice's k = 0 before the last FMAs of this one. The barrier's place
// moves; its count stays one per slice.
//
// Why the barrier is still enough: the buffer written at the last k of
// slice t was last read at k = BK - 2 of slice t - 1 (its last fragments,
// then in registers), before slice t - 1's barrier.
//
// Counters that show it (ncu, hardware.csv): the warps' stalls waiting on
// shared loads (short scoreboard, per issued instruction) fall, and the
// issue slots and the FMA pipe are busier. The SASS main loop is much the
// same as step 12's (ptxas already hoists a k's loads within a slice): the
// gain is at the slice boundary.
//
// Ragged sizes and alignment: as step 10 (the same loads, slice.cuh). Any
// M, N, K >= 1; the last slice needs no tail pass (no next slice: no store,
// no barrier, no fragment load).
//
// Parameters (-D defines from kernels/registry.yaml): BM, BN, BK (block
// tile), WM, WN (warp tile), TM, TN (thread tile, multiples of 4: pieces of
// 4 x 4, WM / (TM/4) rows and WN / (TN/4) columns apart).

#include "../common/pipeline.cuh"   // the pipelined main loop (multiply_slices) and the epilogue (store_tile)

extern "C" __global__ void __launch_bounds__(THREADS, BLOCKS_PER_SM)
gpu_fragment_pipeline(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                      float* __restrict__ C)
{
    __shared__ __align__(16) Tiles s;
    const Place p(blockIdx.y * BM, blockIdx.x * BN);
    float acc[TM][TN] = {};
    multiply_slices<FmaOrder::rows>(acc, s, A, B, M, N, K, p, 0, (K + BK - 1) / BK);
    store_tile(C, M, N, acc, p);
}
