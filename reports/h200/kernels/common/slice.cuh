// One K-slice of A and B on its way from global to shared memory, through
// registers (the SIMT steps from double buffering on; a change here rebuilds them).
//
// A thread loads its float4s of slice k0 (quad e of A: row e / (BK/4) of the
// block's rows; of B: row e / (BN/4) of the slice) into registers with
// load(), and writes them to shared memory with store(): A transposed
// (As[k][i]), so that the math reads both operands along k with LDS.128, B
// as it is. Splitting the two is what lets a step put arithmetic between
// them (double buffering): the loads are in flight meanwhile.

#pragma once

#include "load_quad.cuh"   // 16-byte loads where rows are aligned, guarded scalar ones elsewhere

// Template parameters are the block tile's rows, columns and depth (BM, BN,
// BK of the kernels, renamed: those are macros there) and its threads.
template <int Rows, int Cols, int Depth, int Threads>
struct Slice {
    static constexpr int A_QUADS = Rows * Depth / 4 / Threads, B_QUADS = Depth * Cols / 4 / Threads;
    static_assert(Depth % 4 == 0 && Cols % 4 == 0, "BK and BN must be multiples of 4 (float4 accesses)");
    static_assert(Rows * Depth / 4 % Threads == 0 && Depth * Cols / 4 % Threads == 0,
                  "the A and B slices must split into float4s evenly over the threads: change BK or the tiles");

    float4 a[A_QUADS], b[B_QUADS];

    // Global -> registers: 0 past the matrices' edges.
    __device__ __forceinline__ void load(const float* __restrict__ A, const float* __restrict__ B,
                                         int M, int N, int K, int row0, int col0, int k0, int tid)
    {
#pragma unroll
        for (int q = 0; q < A_QUADS; ++q) {
            const int e = tid + q * Threads;
            a[q] = load_quad(A, M, K, row0 + e / (Depth / 4), k0 + e % (Depth / 4) * 4);
        }
#pragma unroll
        for (int q = 0; q < B_QUADS; ++q) {
            const int e = tid + q * Threads;
            b[q] = load_quad(B, K, N, k0 + e / (Cols / 4), col0 + e % (Cols / 4) * 4);
        }
    }

    // Registers -> shared memory: A transposed, B as it is.
    __device__ __forceinline__ void store(float (&As)[Depth][Rows], float (&Bs)[Depth][Cols], int tid) const
    {
#pragma unroll
        for (int q = 0; q < A_QUADS; ++q) {
            const int e = tid + q * Threads, i = e / (Depth / 4), k = e % (Depth / 4) * 4;
            As[k + 0][i] = a[q].x;
            As[k + 1][i] = a[q].y;
            As[k + 2][i] = a[q].z;
            As[k + 3][i] = a[q].w;
        }
#pragma unroll
        for (int q = 0; q < B_QUADS; ++q) {
            const int e = tid + q * Threads;
            *reinterpret_cast<float4*>(&Bs[e / (Cols / 4)][e % (Cols / 4) * 4]) = b[q];
        }
    }
};
