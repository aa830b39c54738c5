// Step 37: the tensor cores in BF16, the Ampere way: mma.sync m16n8k16, the
// fragments read from shared memory by ldmatrix, the sums in FP32 registers.
//
// Source: the PTX ISA, "Warp-level matrix multiply-accumulate instructions"
// (mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 and its fragment
// layouts under "Matrix fragments for mma.m16n8k16 with floating point
// type"), and "ldmatrix" (.x4, and .trans for B); the CUTLASS
// documentation's GEMM hierarchy and its SM80 BF16 MMA atom
// (SM80_16x8x16_F32BF16BF16F32_TN) with the LDSM copy atoms.
//
// What changes from step 24 (TF32): the operands. A and B arrive as 16-bit
// BF16 values, rounded to nearest-even from the study's float32 inputs on
// the host (matmulstudy/precisions.py): half the bytes of TF32's, and an
// instruction that does twice the work, 16 x 8 x 16 multiply-adds. A
// product of two BF16 values is exact, so the check holds the sums alone
// (BF16's bound, matmulstudy/measure/verify.py) against the float64
// product of the rounded inputs, and the chapter is measured against
// cuBLAS BF16 (cublasGemmEx), never against FP32 or TF32.
//
// ldmatrix: where step 24 read each fragment element with a scalar LDS, a
// warp here loads four 8 x 8 matrices of 16-bit values in one instruction,
// each lane giving the address of one matrix row (16 bytes), each lane
// receiving the two neighbouring elements its fragment register holds. A is
// row-major in shared memory (m, k), as the A fragment wants it. B is
// row-major too (k, n: N contiguous, as the study stores it): .trans hands
// each lane the pair along k that the "col" B fragment wants, so B needs no
// transpose anywhere.
//
// The hierarchy (as step 24): a block of 8 warps computes a BM x BN = 128 x
// 128 tile of C, each warp a WM x WN = 64 x 32 part as 4 x 4 instruction
// tiles of 16 x 8: 16 mma.sync per k-step of 16, 64 FP32 accumulators a
// thread. K goes in slices of BK = 32; the next slice is loaded into
// registers while this one is multiplied, then one barrier, the store to
// shared memory, another barrier.
//
// Fragments (PTX ISA, m16n8k16 .bf16; g = lane / 4, t = lane % 4; each
// register two BF16, the lower k in the lower half):
//   A (16 x 16, row): a0 (g, 2t..2t+1), a1 (g + 8, 2t..), a2 (g, 2t + 8..), a3 (g + 8, 2t + 8..)
//   B (16 x 8, col):  b0 (2t..2t+1, g), b1 (2t + 8..2t + 9, g)
//   C (16 x 8):       c0, c1 (g, 2t and 2t + 1), c2, c3 (g + 8, 2t and 2t + 1)
// ldmatrix.x4: lane l gives the address of row l % 8 of matrix l / 8, and
// register j of lane (g, t) receives elements 2t and 2t + 1 of row g of
// matrix j (.trans: of column g). A's four matrices are rows 0-7 and 8-15
// at k 0-7, then the same at k 8-15: exactly a0..a3. B's are k 0-7 and
// 8-15 of columns n 0-7 (b0, b1 of one tile), then of n 8-15 (the next).
// Shared layout: rows padded by 8 elements (16 bytes) so that every row
// starts on 16 bytes, as ldmatrix needs, and the 8 rows a matrix reads fall
// in 8 different groups of 4 banks: As rows of 40 BF16 (80 bytes), Bs rows
// of 136 (272 bytes).
//
// Counters that show it (hardware.csv): HMMA in the SASS main loop (32 per
// slice of 32: 2 k-steps x 16 tiles, each twice step 24's work) and LDSM in
// place of step 24's LDS.
//
// Ragged sizes and alignment: a slice is loaded 8 elements (16 bytes) at a
// time where A's rows start on 16 bytes (K a multiple of 8, A on 16 bytes)
// and the 8 lie inside the matrix, else element by element with 0 past the
// edge (they add 0); likewise B with N. Every thread takes part in every
// load and barrier, and only elements inside C are stored. Any M, N, K >= 1;
// an odd number of K-slices is a loop count.
//
// Parameters (-D defines from kernels/registry.yaml): BM, BN, BK, WM, WN.
// Needs compute capability 8.0 (mma.sync with .bf16): `needs: sm_80` in the registry.

#include <cstdint>

#include "../common/mma_fragments.cuh"   // store_fragments: C's fragments stored, as step 24 stores them

#if !defined(BM) || !defined(BN) || !defined(BK) || !defined(WM) || !defined(WN)
#error "BM, BN, BK, WM and WN come from kernels/registry.yaml as -D defines"
#endif

typedef unsigned short bf16;   // the bits of one BF16 value, as the host stores them

constexpr int WARPS = (BM / WM) * (BN / WN), THREADS = 32 * WARPS;
static_assert(BLOCK_DIM_X == THREADS && BLOCK_DIM_Y == 1,
              "kernels/registry.yaml's block must be THREADS x 1: a warp per warp tile");
constexpr int MT = WM / 16, NT = WN / 8;   // instruction tiles per warp
constexpr int PAD = 8;                     // see "Shared layout" above
static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 16 == 0 && BK % 16 == 0,
              "the warp tile must divide into 16 x 16 pieces (ldmatrix.x4 of B takes two 8-wide tiles), BK into "
              "k-steps of 16");
constexpr int A_CHUNKS = BM * BK / 8 / THREADS, B_CHUNKS = BK * BN / 8 / THREADS;   // 16-byte pieces a thread
static_assert(A_CHUNKS * THREADS * 8 == BM * BK && B_CHUNKS * THREADS * 8 == BK * BN,
              "each thread loads whole 8-element pieces of both slices");

// 8 elements of a row from `row` (a pointer to the row's first element), starting at column c of `cols`:
// one 16-byte load where `vector` (the row starts on 16 bytes) and all 8 lie inside, else one at a time,
// 0 past the end. A row outside the matrix (`inside` false) is all 0.
__device__ __forceinline__ uint4 load8(const bf16* row, int c, int cols, bool inside, bool vector)
{
    if (inside && vector && c + 8 <= cols)
        return *reinterpret_cast<const uint4*>(row + c);
    unsigned w[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
        const unsigned lo = inside && c + 2 * q < cols ? row[c + 2 * q] : 0;
        const unsigned hi = inside && c + 2 * q + 1 < cols ? row[c + 2 * q + 1] : 0;
        w[q] = lo | hi << 16;   // the lower column in the lower half, as in memory
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
}

__device__ __forceinline__ unsigned shared_address(const void* p)
{
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Four 8 x 8 matrices of 16-bit values, lane l giving the address of row l % 8 of matrix l / 8.
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const bf16* row)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(shared_address(row)));
}

// The same, each matrix transposed on the way: lane (g, t) receives column g, rows 2t and 2t + 1.
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], const bf16* row)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(shared_address(row)));
}

// D = A * B + D for one 16 x 8 x 16 tile: a warp-wide instruction.
__device__ __forceinline__ void mma_bf16(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
gpu_mma_bf16(int M, int N, int K, const bf16* __restrict__ A, const bf16* __restrict__ B, float* __restrict__ C)
{
    __shared__ __align__(16) bf16 As[BM][BK + PAD];   // As[i][k] = A(row0 + i, k0 + k)
    __shared__ __align__(16) bf16 Bs[BK][BN + PAD];   // Bs[k][j] = B(k0 + k, col0 + j)

    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int g = lane / 4, t = lane % 4;
    const int wm = warp / (BN / WN) * WM, wn = warp % (BN / WN) * WN;   // the warp's tile within the block's
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    // 16-byte loads only where every row starts on 16 bytes: decided once, outside the loop
    const bool a_vector = K % 8 == 0 && reinterpret_cast<uintptr_t>(A) % 16 == 0;
    const bool b_vector = N % 8 == 0 && reinterpret_cast<uintptr_t>(B) % 16 == 0;

    uint4 next_a[A_CHUNKS], next_b[B_CHUNKS];   // the next slice, in registers while this one is multiplied
    auto load = [&](int k0) {
#pragma unroll
        for (int q = 0; q < A_CHUNKS; ++q) {
            const int e = tid + q * THREADS, r = row0 + e / (BK / 8), c = k0 + e % (BK / 8) * 8;
            next_a[q] = load8(A + (size_t)min(r, M - 1) * K, c, K, r < M, a_vector);
        }
#pragma unroll
        for (int q = 0; q < B_CHUNKS; ++q) {
            const int e = tid + q * THREADS, k = k0 + e / (BN / 8), c = col0 + e % (BN / 8) * 8;
            next_b[q] = load8(B + (size_t)min(k, K - 1) * N, c, N, k < K, b_vector);
        }
    };
    auto store = [&]() {
#pragma unroll
        for (int q = 0; q < A_CHUNKS; ++q) {
            const int e = tid + q * THREADS;
            *reinterpret_cast<uint4*>(&As[e / (BK / 8)][e % (BK / 8) * 8]) = next_a[q];
        }
#pragma unroll
        for (int q = 0; q < B_CHUNKS; ++q) {
            const int e = tid + q * THREADS;
            *reinterpret_cast<uint4*>(&Bs[e / (BN / 8)][e % (BN / 8) * 8]) = next_b[q];
        }
    };

    // the row of a matrix this lane addresses for ldmatrix.x4 (l % 8), and which of the four (l / 8)
    const int lrow = lane % 8, lmat = lane / 8;

    float acc[MT][NT][4] = {};
    load(0);
    store();
    __syncthreads();
    for (int k0 = 0; k0 < K; k0 += BK) {
        const bool more = k0 + BK < K;
        if (more)
            load(k0 + BK);   // in flight while this slice is multiplied
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            unsigned a[MT][4], b[NT / 2][4];
#pragma unroll
            for (int i = 0; i < MT; ++i)   // matrices: rows 0-7, 8-15 at k 0-7, then at k 8-15
                ldmatrix_x4(a[i], &As[wm + i * 16 + lrow + 8 * (lmat % 2)][kk + 8 * (lmat / 2)]);
#pragma unroll
            for (int j = 0; j < NT / 2; ++j)   // matrices: k 0-7, 8-15 of columns 0-7, then of columns 8-15
                ldmatrix_x4_trans(b[j], &Bs[kk + lrow + 8 * (lmat % 2)][wn + j * 16 + 8 * (lmat / 2)]);
#pragma unroll
            for (int i = 0; i < MT; ++i)
#pragma unroll
                for (int j = 0; j < NT; ++j)
                    mma_bf16(acc[i][j], a[i], b[j / 2][2 * (j % 2)], b[j / 2][2 * (j % 2) + 1]);
        }
        if (more) {
            __syncthreads();   // every warp is done reading this slice
            store();
            __syncthreads();   // the next slice is in place
        }
    }

    store_fragments(C, acc, M, N, row0 + wm, col0 + wn, g, t);
}
