// The C fragments of mma.sync's m16n8 tiles, stored: what the mma.sync steps
// of both tensor-core chapters share, the accumulator layout being the same for both.
//
// PTX ISA, "Matrix fragments for mma.m16n8k8" and "... m16n8k16" (FP32 C):
// lane (g, t) = (lane / 4, lane % 4) holds c0, c1 at row g, columns 2t and
// 2t + 1, and c2, c3 at row g + 8, the same columns. A warp's MT x NT tiles
// lie at rows r0 + 16 i, columns c0 + 8 j of C; only elements inside C
// (M x N, row-major) are stored, so any M and N are taken.

#pragma once

template <int MT, int NT>
__device__ __forceinline__ void store_fragments(float* __restrict__ C, const float (&acc)[MT][NT][4], int M, int N,
                                                int r0, int c0, int g, int t)
{
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {   // h = 0: row g, c0 and c1; h = 1: row g + 8, c2 and c3
                const int r = r0 + i * 16 + g + 8 * h, c = c0 + j * 8 + 2 * t;
                if (r < M && c < N)
                    C[(size_t)r * N + c] = acc[i][j][2 * h];
                if (r < M && c + 1 < N)
                    C[(size_t)r * N + c + 1] = acc[i][j][2 * h + 1];
            }
}
