// pad_copy (step 24 and later, `align_rows: pad_copy` in kernels/registry.yaml): a matrix copied into
// workspace whose rows start on 16 bytes, zeros in the rows and columns added, or the workspace's result
// copied back (matmulstudy/gpu/launch.py's Padding launches it, launch.cu alike).

#pragma once

#include <cstdint>

// dst (rows x cols, row stride dst_ld) = src (src_rows x src_cols, row stride src_ld), zeros outside src.
// Launched as 256 threads a block, each writing 4 neighbouring elements of a row: grid.x covers cols in
// steps of 1024, grid.y rows (at most 65535 at once; each block walks on by gridDim.y). Bandwidth-bound:
// consecutive threads read and write consecutive addresses; a row of dst that starts on 16 bytes is written
// 16 bytes at a time.
extern "C" __global__ void __launch_bounds__(256)
pad_copy(const float* __restrict__ src, int src_rows, int src_cols, int src_ld, float* __restrict__ dst, int rows,
         int cols, int dst_ld)
{
    const int c = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    if (c >= cols)
        return;
    for (int r = blockIdx.y; r < rows; r += gridDim.y) {
        float v[4];
        for (int i = 0; i < 4; ++i)
            v[i] = (r < src_rows && c + i < src_cols) ? src[(size_t)r * src_ld + c + i] : 0.0f;
        float* out = dst + (size_t)r * dst_ld + c;
        if (c + 4 <= cols && reinterpret_cast<uintptr_t>(out) % 16 == 0) {
            *reinterpret_cast<float4*>(out) = make_float4(v[0], v[1], v[2], v[3]);
        } else {
            for (int i = 0; i < 4 && c + i < cols; ++i)
                out[i] = v[i];
        }
    }
}
