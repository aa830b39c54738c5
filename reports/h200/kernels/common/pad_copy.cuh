// pad_copy (the steps with `align_rows: pad_copy` in kernels/registry.yaml): a matrix
// copied into workspace whose rows start on 16 bytes, zeros in the rows and columns added, or the workspace's
// result copied back (matmulstudy/gpu/launch.py's Padding launches it, launch.cu alike). pad_copy moves 4-byte
// elements (FP32 operands, and every C); pad_copy_16, its twin of the same name with _16, moves the 2-byte
// BF16 operands, and pad_copy_8 FP8's bytes.

#pragma once

#include <cstdint>

// Four neighbouring elements stored at once: 16 bytes of float32, 8 of BF16's 16-bit values, 4 of FP8's bytes.
__device__ __forceinline__ void store4(float* out, const float (&v)[4])
{
    *reinterpret_cast<float4*>(out) = make_float4(v[0], v[1], v[2], v[3]);
}

__device__ __forceinline__ void store4(unsigned short* out, const unsigned short (&v)[4])
{
    *reinterpret_cast<uint2*>(out) = make_uint2(v[0] | unsigned(v[1]) << 16, v[2] | unsigned(v[3]) << 16);
}

__device__ __forceinline__ void store4(unsigned char* out, const unsigned char (&v)[4])
{
    *reinterpret_cast<unsigned*>(out) = v[0] | unsigned(v[1]) << 8 | unsigned(v[2]) << 16 | unsigned(v[3]) << 24;
}

// dst (rows x cols, row stride dst_ld) = src (src_rows x src_cols, row stride src_ld), zeros outside src.
// Launched as 256 threads a block, each writing 4 neighbouring elements of a row: grid.x covers cols in
// steps of 1024, grid.y rows (at most 65535 at once; each block walks on by gridDim.y). Bandwidth-bound:
// consecutive threads read and write consecutive addresses; a row of dst whose 4 elements start on their
// combined size is written 4 elements at a time.
template <typename T>
__device__ __forceinline__ void pad_rows(const T* __restrict__ src, int src_rows, int src_cols, int src_ld,
                                         T* __restrict__ dst, int rows, int cols, int dst_ld)
{
    const int c = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    if (c >= cols)
        return;
    for (int r = blockIdx.y; r < rows; r += gridDim.y) {
        T v[4];
        for (int i = 0; i < 4; ++i)
            v[i] = (r < src_rows && c + i < src_cols) ? src[(size_t)r * src_ld + c + i] : T(0);
        T* out = dst + (size_t)r * dst_ld + c;
        if (c + 4 <= cols && reinterpret_cast<uintptr_t>(out) % (4 * sizeof(T)) == 0) {
            store4(out, v);
        } else {
            for (int i = 0; i < 4 && c + i < cols; ++i)
                out[i] = v[i];
        }
    }
}

extern "C" __global__ void __launch_bounds__(256)
pad_copy(const float* __restrict__ src, int src_rows, int src_cols, int src_ld, float* __restrict__ dst, int rows,
         int cols, int dst_ld)
{
    pad_rows(src, src_rows, src_cols, src_ld, dst, rows, cols, dst_ld);
}

extern "C" __global__ void __launch_bounds__(256)
pad_copy_16(const unsigned short* __restrict__ src, int src_rows, int src_cols, int src_ld,
            unsigned short* __restrict__ dst, int rows, int cols, int dst_ld)
{
    pad_rows(src, src_rows, src_cols, src_ld, dst, rows, cols, dst_ld);
}

extern "C" __global__ void __launch_bounds__(256)
pad_copy_8(const unsigned char* __restrict__ src, int src_rows, int src_cols, int src_ld,
           unsigned char* __restrict__ dst, int rows, int cols, int dst_ld)
{
    pad_rows(src, src_rows, src_cols, src_ld, dst, rows, cols, dst_ld);
}
