// The 16-byte load of the SIMT steps from gpu_vectorized on, with its fallback
// (included by their .cu files; a change here rebuilds them all).
//
// Four consecutive elements of a row-major matrix with `cols` columns from
// (row, col), col a multiple of 4, and 0 past its edges. A float4 load needs
// a 16-byte address: a row starts on 16 bytes only when cols % 4 == 0, and
// then a quad is wholly inside the matrix or wholly outside, so one LDG.128
// does it. Otherwise (K or N odd, say) the four elements are loaded one by
// one, each guarded. `cols % 4` is the same for every thread of a launch:
// the branch never diverges.

#pragma once

__device__ __forceinline__ float4 load_quad(const float* __restrict__ X, int rows, int cols, int row, int col)
{
    if (cols % 4 == 0) {
        if (row < rows && col < cols)
            return *reinterpret_cast<const float4*>(X + (size_t)row * cols + col);
        return make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
    float v[4];
#pragma unroll
    for (int q = 0; q < 4; ++q)
        v[q] = (row < rows && col + q < cols) ? X[(size_t)row * cols + col + q] : 0.0f;
    return make_float4(v[0], v[1], v[2], v[3]);
}
