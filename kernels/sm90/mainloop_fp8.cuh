// The FP8 operands of the shared-memory mainloop (mainloop_smem.cuh): e4m3
// bytes, wgmma m64nBNk32, and B stored N x K (K-major), the one layout in
// which FP8's wgmma reads B (and cuBLASLt's FP8 GEMM takes it: "TN"). B's
// slice is then laid out as A's is: one box of TILE_N rows of 128 bytes (TILE_K =
// 128 k), so both descriptors are K-major ones, and stepping along K is
// stepping both start addresses by 32 bytes a wgmma.
//
// Its sums: the tensor cores' alone (Fp8Mainloop): each wgmma adds its 32
// products to the accumulator 13 bits below the largest exponent among them,
// cut toward zero (matmulstudy/precisions.py's fp8_fast row; docs/fp8.md
// measures it); or each slice's four wgmma summed so from zero, then added
// into FP32 sums on the CUDA cores (Fp8PromotedMainloop, the fp8 row).

#pragma once

#include "mainloop_smem.cuh"

typedef unsigned char fp8_e4m3;   // the bits of one e4m3 value, as the host stores them

template <class Tile>
struct Fp8Operands {
    using Element = fp8_e4m3;
    static constexpr int WGMMA_K = 32, BOX_COLUMNS = Tile::TILE_N, B_BOX_BYTES = Tile::TILE_N * 128;
    static constexpr bool B_K_MAJOR = true;
    static constexpr int B_STEP = 2;   // a wgmma's 32 k of B: 32 bytes along its rows, in 16-byte units

    __device__ __forceinline__ static int b_offset(int k, int n)   // B(k0 + k, col0 + n): row n, byte k
    {
        return n * 128 + (((k / 16) ^ (n % 8)) << 4) + k % 16;
    }

    __device__ __forceinline__ static uint64_t b_descriptor(const unsigned char* slice)
    {
        return descriptor_sw128(slice);
    }

    // The copy engine can read A (M x K) and B (N x K) where their rows start on 16 bytes: K a multiple of 16,
    // A and B on 16 bytes (matmulstudy/gpu/tma.py's rule with b_transposed).
    __device__ __forceinline__ static bool maps_usable(int, int K, const fp8_e4m3* A, const fp8_e4m3* B)
    {
        return K % 16 == 0 && reinterpret_cast<uintptr_t>(A) % 16 == 0 && reinterpret_cast<uintptr_t>(B) % 16 == 0;
    }

    template <int N, bool Accumulate = true>
    __device__ __forceinline__ static void wgmma(float (&d)[N / 2], uint64_t a, uint64_t b)
    {
        wgmma_e4m3<N, Accumulate>(d, a, b);
    }
};

template <class Tile, class Stages, Descriptors Made, Unaligned Rows, int BBlocks = 1>
using Fp8Mainloop = SmemMainloop<Fp8Operands<Tile>, Tile, Stages, Made, Rows, BBlocks>;

// The same, each slice's sums promoted to FP32 (DeepGEMM's way), the slice multiplied in Pieces pieces of its
// columns (mainloop_smem.cuh's multiply_promoted).
template <class Tile, class Stages, int Pieces>
using Fp8PromotedMainloop =
    SmemMainloop<Fp8Operands<Tile>, Tile, Stages, Descriptors::stepped, Unaligned::host_copies, 1, Promoted<Pieces>>;
