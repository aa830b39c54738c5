// The pipelined main loop of the SIMT steps from gpu_fragment_pipeline on
// (included by their .cu files, the Stream-K ones through stream_k.cuh; a
// change here rebuilds them all): the block's tile, BM x BN, multiplied over
// a range of K-slices, with both buffers of double buffering (shared memory,
// the next slice prefetched into registers) and a third, the fragments.
//
// gpu_fragment_pipeline introduced it (its header says what changes);
// gpu_operand_reuse changes only the order of the FMAs (FmaOrder);
// gpu_stream_k calls it for ranges of slices that need not start at 0 or end
// at K; the steps after change its defines (BK) and the sharing out of the tiles.
//
// Parameters (-D defines from kernels/registry.yaml): BM, BN, BK (block
// tile), WM, WN (warp tile), TM, TN (thread tile, multiples of 4: pieces of
// 4 x 4, STEP_M rows and STEP_N columns apart).

#pragma once

#if !defined(BM) || !defined(BN) || !defined(BK) || !defined(WM) || !defined(WN) || !defined(TM) || !defined(TN)
#error "BM, BN, BK, WM, WN, TM and TN come from kernels/registry.yaml as -D defines"
#endif

#include "slice.cuh"   // a K-slice's global -> register -> shared path

constexpr int LANES_M = WM / TM, LANES_N = WN / TN;             // a warp's lanes over its tile
constexpr int STEP_M = WM / (TM / 4), STEP_N = WN / (TN / 4);   // distance between a thread's 4 x 4 pieces
constexpr int THREADS = (BM / WM) * (BN / WN) * 32;
static_assert(BLOCK_DIM_X == THREADS && BLOCK_DIM_Y == 1,
              "kernels/registry.yaml's block must be THREADS x 1: a warp per warp tile");
constexpr int BLOCKS_PER_SM = TM * TN <= 64 ? 2 : 1;            // accumulators + fragments within the 64 K registers
static_assert(LANES_M * LANES_N == 32, "a warp's lanes tile its WM x WN tile in TM x TN blocks: WM * WN == 32 * TM * TN");
static_assert(TM % 4 == 0 && TN % 4 == 0, "the thread tile is made of 4 x 4 pieces: TM and TN multiples of 4");
static_assert(BM % WM == 0 && BN % WN == 0, "the warp tile must divide the block tile: change WM, WN, BM or BN");
static_assert(BK % 2 == 0, "the fragments alternate by k: BK must be even");

struct Tiles {                          // the block's shared memory: two buffers of one slice each
    float a[2][BK][BM];                 // a[buf][k][i] = A(row0 + i, k0 + k)
    float b[2][BK][BN];                 // b[buf][k][j] = B(k0 + k, col0 + j)
};

// Where a thread works: the block's tile origin in C, and the thread's first
// row and column in that tile (its warp's corner plus its lane's).
struct Place {
    int row0, col0, m0, n0, tid;
    __device__ __forceinline__ Place(int row0_, int col0_) : row0(row0_), col0(col0_), tid(threadIdx.x)
    {
        const int warp = tid / 32, lane = tid % 32;
        m0 = warp / (BN / WN) * WM + lane / LANES_N * 4;
        n0 = warp % (BN / WN) * WN + lane % LANES_N * 4;
    }
    // the row and column of C of accumulator (i, j): acc[s*4 + r][u*4 + c] is row m0 + s*STEP_M + r
    __device__ __forceinline__ int row(int i) const { return row0 + m0 + i / 4 * STEP_M + i % 4; }
    __device__ __forceinline__ int col(int j) const { return col0 + n0 + j / 4 * STEP_N + j % 4; }
};

// Shared -> registers: a thread's fragments of row k of a slice, TM values
// of A and TN of B, as LDS.128 (from Tiles, or async_slices.cuh's AsyncTiles).
template <class Buffers>
__device__ __forceinline__ void load_fragments(float (&a)[TM], float (&b)[TN], const Buffers& s, int buf, int k,
                                               const Place& p)
{
#pragma unroll
    for (int u = 0; u < TM / 4; ++u)
        *reinterpret_cast<float4*>(&a[u * 4]) = *reinterpret_cast<const float4*>(&s.a[buf][k][p.m0 + u * STEP_M]);
#pragma unroll
    for (int u = 0; u < TN / 4; ++u)
        *reinterpret_cast<float4*>(&b[u * 4]) = *reinterpret_cast<const float4*>(&s.b[buf][k][p.n0 + u * STEP_N]);
}

// The order of a k's TM x TN FMAs. Every order gives the same sums (each
// accumulator still adds its k in order); only which registers consecutive
// FFMAs read differs (gpu_operand_reuse).
enum class FmaOrder { rows, serpentine };

template <FmaOrder order>
__device__ __forceinline__ void outer_product(float (&acc)[TM][TN], const float (&a)[TM], const float (&b)[TN])
{
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int jj = 0; jj < TN; ++jj) {
            const int j = (order == FmaOrder::serpentine && i % 2) ? TN - 1 - jj : jj;
            acc[i][j] += a[i] * b[j];
        }
}

// acc += the block tile's product over K-slices [first, last). Slice t
// covers k = t * BK ... t * BK + BK - 1 (0 past K). One barrier per slice,
// and one on entry: a previous call's last fragments may still be being
// read from the buffer this one fills first.
//
// The next slice travels in pieces of PIECE k-rows (one piece when BK is
// PIECE): piece q is loaded at k = q * PIECE + 1 and stored at
// k = q * PIECE + PIECE - 1, so a deeper slice needs no more registers in
// flight. The other buffer may be written at any k of slice t: its last
// reads were before the barrier that ended slice t - 1.
constexpr int PIECE = 8;
static_assert(BK % PIECE == 0, "the next slice is prefetched in pieces of 8 k-rows: BK must be a multiple of 8");

template <FmaOrder order>
__device__ __forceinline__ void multiply_slices(float (&acc)[TM][TN], Tiles& s, const float* __restrict__ A,
                                                const float* __restrict__ B, int M, int N, int K, const Place& p,
                                                int first, int last)
{
    using Rows = float[PIECE][BM];
    using Cols = float[PIECE][BN];
    float a[2][TM], b[2][TN];
    Slice<BM, BN, PIECE, THREADS> next;   // a thread's share of a piece of the next slice, between load and store
    __syncthreads();
#pragma unroll
    for (int q = 0; q < BK / PIECE; ++q) {
        next.load(A, B, M, N, K, p.row0, p.col0, first * BK + q * PIECE, p.tid);
        next.store(*reinterpret_cast<Rows*>(&s.a[0][q * PIECE]), *reinterpret_cast<Cols*>(&s.b[0][q * PIECE]), p.tid);
    }
    __syncthreads();
    load_fragments(a[0], b[0], s, 0, 0, p);

    for (int t = first, buf = 0; t < last; ++t, buf ^= 1) {
        const bool more = t + 1 < last;
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const int q = k / PIECE;
            if (k % PIECE == 1 && more)   // a piece of slice t + 1 is in flight while slice t is multiplied (from
                                          // k = 1, not 0: then ptxas fits the loop in 128 registers without a spill)
                next.load(A, B, M, N, K, p.row0, p.col0, (t + 1) * BK + q * PIECE, p.tid);
            if (k % PIECE == PIECE - 1 && more)
                next.store(*reinterpret_cast<Rows*>(&s.a[1 - buf][q * PIECE]),
                           *reinterpret_cast<Cols*>(&s.b[1 - buf][q * PIECE]), p.tid);
            if (k < BK - 1) {   // the next k's fragments, from this slice
                load_fragments(a[(k + 1) % 2], b[(k + 1) % 2], s, buf, k + 1, p);
            } else if (more) {  // the next slice's first, after one barrier
                __syncthreads();
                load_fragments(a[0], b[0], s, 1 - buf, 0, p);
            }
            outer_product<order>(acc, a[k % 2], b[k % 2]);
        }
    }
}

// C = acc on the block's tile, inside the matrix; with `add`, C += acc
// (C read from L2: another block wrote it, Stream-K). The reads of a row of
// the thread's tile are all issued before its writes: one L2 round trip a
// row, not one an element (ptxas keeps a read after an earlier write to C
// in order, not knowing that they never overlap).
//
// With `vector` (gpu_async_epilogue), where C's rows start on 16 bytes (N a multiple
// of 4, C itself on 16 bytes), each of the thread's groups of 4 neighbouring
// columns is one 16-byte access (STG.128, LDG.128: a quarter of the
// instructions), and a tile added into C reads 4 rows before it writes
// them: 4 round trips to L2 a thread instead of TM. A group lies inside C
// or outside it whole (its first column is a multiple of 4). Elsewhere, the
// scalar way below.
template <bool add = false, bool vector = false>
__device__ __forceinline__ void store_tile(float* __restrict__ C, int M, int N, const float (&acc)[TM][TN],
                                           const Place& p)
{
    if (vector && N % 4 == 0 && reinterpret_cast<size_t>(C) % 16 == 0) {
        static_assert(TM % 4 == 0 && TN % 4 == 0, "the thread's tile is made of 4 x 4 groups");
#pragma unroll
        for (int i0 = 0; i0 < TM; i0 += 4) {
            float4 c[4][TN / 4];
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int u = 0; u < TN / 4; ++u) {
                    const int row = p.row(i0 + i), col = p.col(u * 4);
                    c[i][u] = add && row < M && col < N
                            ? __ldcg(reinterpret_cast<const float4*>(C + (size_t)row * N + col))
                            : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                }
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int u = 0; u < TN / 4; ++u) {
                    const int row = p.row(i0 + i), col = p.col(u * 4);
                    const float* a = &acc[i0 + i][u * 4];
                    if (row < M && col < N)
                        *reinterpret_cast<float4*>(C + (size_t)row * N + col) =
                            make_float4(c[i][u].x + a[0], c[i][u].y + a[1], c[i][u].z + a[2], c[i][u].w + a[3]);
                }
        }
        return;
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        float c[TN];
#pragma unroll
        for (int j = 0; j < TN; ++j)
            c[j] = add && p.row(i) < M && p.col(j) < N ? __ldcg(C + (size_t)p.row(i) * N + p.col(j)) : 0.0f;
#pragma unroll
        for (int j = 0; j < TN; ++j)
            if (p.row(i) < M && p.col(j) < N)
                C[(size_t)p.row(i) * N + p.col(j)] = c[j] + acc[i][j];
    }
}
