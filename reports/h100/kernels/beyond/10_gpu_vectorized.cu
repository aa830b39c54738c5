// Step 10: 16-byte global loads (LDG.128), and A stored transposed in
// shared memory so that both operands are read 16 bytes at a time (LDS.128).
//
// Source: siboehm's "How to optimize a CUDA matmul kernel" (kernel 6,
// vectorized memory access); the CUTLASS documentation (efficient_gemm.md:
// "128-bit accesses", the transposed A tile of its SIMT GEMMs); the CUDA
// C++ Best Practices Guide on coalescing and vector types.
//
// What changes from step 9: each thread moves its share of a slice as
// float4 (one LDG.128 instead of four LDG.32), and the A slice is stored
// transposed, As[k][i], so that a thread's TM values of A for one k are
// consecutive words: read as TM/4 LDS.128, like its TN values of B. The
// arithmetic is step 9's, in the same order.
//
// Alignment: a float4 load needs a 16-byte address. A row of A starts on 16
// bytes only when K is a multiple of 4 (and a row of B when N is); the
// slices start at multiples of 4 columns. So the vector path is taken when
// K % 4 == 0 (for A) and N % 4 == 0 (for B), the same for every thread of
// the launch (no divergence), and a quad of a slice is then either wholly
// inside the matrix or wholly outside. Otherwise, and for any quad that
// straddles an edge, the four elements are loaded one by one, each
// predicated; past the edge they are 0.
//
// Compute-to-memory ratio: as step 9, BM*BN / (2*(BM + BN)) flop per byte,
// 32 for 128 x 128: fewer, wider instructions move the same bytes.
// Counters that show it (SASS main loop): the global loads of a slice drop
// from step 9's (BM + BN) * BK / THREADS LDG to a quarter as many LDG.128
// (8 -> 2 for 128 x 128 x 8), and every shared read of the inner loop is an
// LDS.128.
//
// Ragged sizes: as step 9, with the scalar fallback above. Any M, N, K >= 1.
//
// Parameters (-D defines from kernels/registry.yaml): BM, BN, BK, TM, TN as
// in step 9; TM, TN, BK and BN multiples of 4.

#if !defined(BM) || !defined(BN) || !defined(BK) || !defined(TM) || !defined(TN)
#error "BM, BN, BK, TM and TN come from kernels/registry.yaml as -D defines"
#endif

#include "../common/load_quad.cuh"   // 16-byte loads where rows are aligned, guarded scalar ones elsewhere

constexpr int THREADS = (BM / TM) * (BN / TN);
static_assert(BLOCK_DIM_X == BN / TN && BLOCK_DIM_Y == BM / TM,
              "kernels/registry.yaml's block must be (BN / TN) x (BM / TM): a thread per TM x TN tile");
static_assert(BM % TM == 0 && BN % TN == 0, "the thread tile must divide the block tile: change TM, TN, BM or BN");
static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0 && BN % 4 == 0,
              "TM, TN, BK and BN must be multiples of 4 (float4 accesses)");
static_assert(BM * BK / 4 % THREADS == 0 && BK * BN / 4 % THREADS == 0,
              "the A and B slices must split into float4s evenly over the threads: change BK or the tiles");

extern "C" __global__ void __launch_bounds__(THREADS, 2)
gpu_vectorized(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
               float* __restrict__ C)
{
    __shared__ __align__(16) float As[BK][BM];   // transposed: As[k][i] = A(row0 + i, k0 + k)
    __shared__ __align__(16) float Bs[BK][BN];   // Bs[k][j] = B(k0 + k, col0 + j)

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int tid = ty * (BN / TN) + tx;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    float acc[TM][TN] = {};
    float a[TM], b[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int e = tid; e < BM * BK / 4; e += THREADS) {   // quad e of the A slice: row e / (BK/4)
            const int i = e / (BK / 4), k = e % (BK / 4) * 4;
            const float4 v = load_quad(A, M, K, row0 + i, k0 + k);
            As[k + 0][i] = v.x;
            As[k + 1][i] = v.y;
            As[k + 2][i] = v.z;
            As[k + 3][i] = v.w;
        }
#pragma unroll
        for (int e = tid; e < BK * BN / 4; e += THREADS) {   // quad e of the B slice: row e / (BN/4)
            const int k = e / (BN / 4), j = e % (BN / 4) * 4;
            *reinterpret_cast<float4*>(&Bs[k][j]) = load_quad(B, K, N, k0 + k, col0 + j);
        }
        __syncthreads();

#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int i = 0; i < TM; i += 4)
                *reinterpret_cast<float4*>(&a[i]) = *reinterpret_cast<const float4*>(&As[k][ty * TM + i]);
#pragma unroll
            for (int j = 0; j < TN; j += 4)
                *reinterpret_cast<float4*>(&b[j]) = *reinterpret_cast<const float4*>(&Bs[k][tx * TN + j]);
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j)
                    acc[i][j] += a[i] * b[j];
        }
        __syncthreads();   // the next slice must not overwrite one still being read
    }

#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int r = row0 + ty * TM + i, c = col0 + tx * TN + j;
            if (r < M && c < N)
                C[r * N + c] = acc[i][j];
        }
}
