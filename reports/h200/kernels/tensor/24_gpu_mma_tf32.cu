// Step 24: the tensor cores, the Ampere way: mma.sync m16n8k8 in TF32, the
// operands from shared-memory tiles, the sums in FP32 registers.
//
// Source: the PTX ISA, "Warp-level matrix multiply-accumulate instructions"
// (mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32, and the fragment
// layouts of A, B and C for .tf32 under "Matrix fragments for mma.m16n8k8");
// cvt.rna.tf32.f32 for the rounding; the CUTLASS documentation's GEMM
// hierarchy (block tile, warp tile, instruction tile) and its SM80 TF32 MMA
// atom (SM80_16x8x8_F32TF32TF32F32_TN).
//
// What changes: the arithmetic. The FP32 chapter multiplied on the FMA pipe,
// one FFMA per multiply-add per thread. Here a warp hands a 16 x 8 x 8
// product (1,024 multiply-adds) to the tensor cores in one instruction, with
// A and B in TF32: 10 explicit mantissa bits instead of FP32's 23. That is
// another precision, so this chapter is verified with TF32's bound and
// measured against cuBLAS TF32, never against cuBLAS FP32.
//
// Rounding: each element of A and B is rounded to TF32 (cvt.rna: to nearest,
// ties away from zero) as it is written to shared memory, once; the tensor
// cores read the top 19 bits of the register. Sums are FP32.
//
// The hierarchy: a block of 8 warps computes a BM x BN = 128 x 128 tile of
// C, each warp a WM x WN = 64 x 32 part of it, as 4 x 4 instruction tiles of
// 16 x 8: 16 mma.sync per k-step of 8, 64 FP32 accumulators a thread.
// K goes in slices of BK = 32. The next slice is loaded into registers
// (16-byte loads where rows are aligned, the fallback of step 10 elsewhere)
// while this one is multiplied, as step 12 does; then one barrier, the
// store to shared memory, another barrier.
//
// Fragments (PTX ISA, m16n8k8 .tf32; g = lane / 4, t = lane % 4):
//   A (16 x 8, row): a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4)
//   B (8 x 8, col):  b0 (t, g), b1 (t + 4, g)
//   C (16 x 8):      c0, c1 (g, 2t and 2t + 1), c2, c3 (g + 8, 2t and 2t + 1)
// Shared layout, chosen so that a warp's fragment reads hit 32 different
// banks: A row-major with rows of BK + 4 floats (lane (g, t) reads bank
// 4g + t), B row-major with rows of BN + 8 (bank 8t + g). Reads are scalar
// LDS here, and the loads go through registers; cp.async and a swizzled
// layout are for a later step.
//
// Counters that show it (hardware.csv): HMMA in the SASS main loop (64 per
// slice of 32: 4 k-steps x 16 tiles) and no FFMA there. (ncu's tensor-pipe
// utilisation is not among the study's ncu metrics yet.)
//
// Ragged sizes: elements of A or B past the matrix load as 0 (they add 0),
// every thread takes part in every load and barrier, and only elements
// inside C are stored. Any M, N, K >= 1; an odd number of K-slices is a
// loop count.
//
// Parameters (-D defines from kernels/registry.yaml): BM, BN, BK, WM, WN.
// Needs compute capability 8.0 (mma.sync with .tf32): `needs: sm_80` in the registry.

#include "../common/slice.cuh"   // the slice's loads into registers, as steps 12 to 17 make them
#include "../common/mma_fragments.cuh"   // store_fragments: C's fragments stored, as step 37 stores them

#if !defined(BM) || !defined(BN) || !defined(BK) || !defined(WM) || !defined(WN)
#error "BM, BN, BK, WM and WN come from kernels/registry.yaml as -D defines"
#endif

constexpr int WARPS = (BM / WM) * (BN / WN), THREADS = 32 * WARPS;
static_assert(BLOCK_DIM_X == THREADS && BLOCK_DIM_Y == 1,
              "kernels/registry.yaml's block must be THREADS x 1: a warp per warp tile");
constexpr int MT = WM / 16, NT = WN / 8;           // instruction tiles per warp
constexpr int APAD = 4, BPAD = 8;                  // see "Shared layout" above
static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 8 == 0 && BK % 8 == 0,
              "the warp tile must divide the block tile into 16 x 8 instruction tiles, BK into k-steps of 8");
using Next = Slice<BM, BN, BK, THREADS>;   // its load(); the store here is this step's own (rounded, A as it is)

__device__ __forceinline__ float to_tf32(float x)
{
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return __uint_as_float(r);
}

// D = A * B + D for one 16 x 8 x 8 tile: a warp-wide instruction.
__device__ __forceinline__ void mma_tf32(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2])
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
gpu_mma_tf32(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C)
{
    __shared__ __align__(16) float As[BM][BK + APAD];   // As[i][k] = tf32(A(row0 + i, k0 + k))
    __shared__ __align__(16) float Bs[BK][BN + BPAD];   // Bs[k][j] = tf32(B(k0 + k, col0 + j))

    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int g = lane / 4, t = lane % 4;
    const int wm = warp / (BN / WN) * WM, wn = warp % (BN / WN) * WN;   // the warp's tile within the block's
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    Next next;
    auto load = [&](int k0) { next.load(A, B, M, N, K, row0, col0, k0, tid); };
    auto store = [&]() {   // rounded to TF32 once, here; A row-major, not transposed as Slice::store does
#pragma unroll
        for (int q = 0; q < Next::A_QUADS; ++q) {
            const int e = tid + q * THREADS;
            const float4 v = next.a[q];
            *reinterpret_cast<float4*>(&As[e / (BK / 4)][e % (BK / 4) * 4]) =
                make_float4(to_tf32(v.x), to_tf32(v.y), to_tf32(v.z), to_tf32(v.w));
        }
#pragma unroll
        for (int q = 0; q < Next::B_QUADS; ++q) {
            const int e = tid + q * THREADS;
            const float4 v = next.b[q];
            *reinterpret_cast<float4*>(&Bs[e / (BN / 4)][e % (BN / 4) * 4]) =
                make_float4(to_tf32(v.x), to_tf32(v.y), to_tf32(v.z), to_tf32(v.w));
        }
    };

    float acc[MT][NT][4] = {};
    load(0);
    store();
    __syncthreads();
    for (int k0 = 0; k0 < K; k0 += BK) {
        const bool more = k0 + BK < K;
        if (more)
            load(k0 + BK);   // in flight while this slice is multiplied
#pragma unroll
        for (int kk = 0; kk < BK; kk += 8) {
            unsigned a[MT][4], b[NT][2];
#pragma unroll
            for (int i = 0; i < MT; ++i) {
                const int r = wm + i * 16 + g;
                a[i][0] = __float_as_uint(As[r][kk + t]);
                a[i][1] = __float_as_uint(As[r + 8][kk + t]);
                a[i][2] = __float_as_uint(As[r][kk + t + 4]);
                a[i][3] = __float_as_uint(As[r + 8][kk + t + 4]);
            }
#pragma unroll
            for (int j = 0; j < NT; ++j) {
                const int c = wn + j * 8 + g;
                b[j][0] = __float_as_uint(Bs[kk + t][c]);
                b[j][1] = __float_as_uint(Bs[kk + t + 4][c]);
            }
#pragma unroll
            for (int i = 0; i < MT; ++i)
#pragma unroll
                for (int j = 0; j < NT; ++j)
                    mma_tf32(acc[i][j], a[i], b[j]);
        }
        if (more) {
            __syncthreads();   // every warp is done reading this slice
            store();
            __syncthreads();   // the next slice is in place
        }
    }

    store_fragments(C, acc, M, N, row0 + wm, col0 + wn, g, t);
}
