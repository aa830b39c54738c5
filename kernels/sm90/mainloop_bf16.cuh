// The BF16 operands of the shared-memory mainloop (mainloop_smem.cuh): BF16
// values, wgmma m64nBNk16, and B as the study stores it, row-major (K x N):
// its slice lies as TILE_N / 64 boxes of 64 k by 64 columns, MN-major, row k of
// box j at j * B_BOX_BYTES + k * 128 from the slice's start.

#pragma once

#include "mainloop_smem.cuh"

typedef unsigned short bf16;   // the bits of one BF16 value, as the host stores them

template <class Tile>
struct Bf16Operands {
    using Element = bf16;
    static constexpr int WGMMA_K = 16, BOX_COLUMNS = 64, B_BOX_BYTES = Tile::TILE_K * 64 * 2;
    static constexpr bool B_K_MAJOR = false;
    static constexpr int B_STEP = 128;   // a wgmma's 16 k of B: 16 rows of 128 bytes, in 16-byte units

    __device__ __forceinline__ static int b_offset(int k, int n)   // B(k0 + k, col0 + n), from the slice's start
    {
        return (n / 64) * B_BOX_BYTES + k * 128 + ((((n % 64) / 8) ^ (k % 8)) << 4) + (n % 8) * 2;
    }

    __device__ __forceinline__ static uint64_t b_descriptor(const unsigned char* slice)
    {
        return descriptor_sw128_mn(slice, B_BOX_BYTES);
    }

    // The copy engine can read A and B where their rows start on 16 bytes: K and N multiples of 8, A and B on
    // 16 bytes (matmulstudy/gpu/tma.py passes tensor maps on the same rule, and zeros elsewhere).
    __device__ __forceinline__ static bool maps_usable(int N, int K, const bf16* A, const bf16* B)
    {
        return K % 8 == 0 && N % 8 == 0 && reinterpret_cast<uintptr_t>(A) % 16 == 0 &&
               reinterpret_cast<uintptr_t>(B) % 16 == 0;
    }

    template <int N>
    __device__ __forceinline__ static void wgmma(float (&d)[N / 2], uint64_t a, uint64_t b)
    {
        wgmma_bf16<N>(d, a, b);
    }
};

template <class Tile, class Stages, Descriptors Made, Unaligned Rows, int BBlocks = 1>
using Bf16Mainloop = SmemMainloop<Bf16Operands<Tile>, Tile, Stages, Made, Rows, BBlocks>;
