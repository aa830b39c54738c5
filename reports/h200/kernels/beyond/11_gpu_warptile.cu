// Step 11: warp tiling: each warp owns a WM x WN tile of the block's tile,
// and its lanes are laid out so that a warp's shared-memory reads are
// conflict-free broadcasts.
//
// Source: the CUTLASS documentation's GEMM hierarchy (efficient_gemm.md:
// "warp tile", and the SIMT thread layout of its warp-level GEMM, each
// thread's tile split into 4 x 4 pieces WM/2 and WN/2 apart); siboehm's
// "How to optimize a CUDA matmul kernel" (kernel 10, warptiling).
//
// What changes from step 10: only which elements of the block's tile a
// thread owns. In step 10 a thread's TM x TN block was contiguous, so for
// one k a warp's 32 threads read B at 16 different 32-byte strided places
// (tx * TN): two threads of each quarter-warp on one bank. Here the 32
// lanes of a warp form a LANES_M x LANES_N = (WM/8) x (WN/8) grid over the
// warp's tile, and each thread's 8 x 8 is four 4 x 4 pieces, WM/2 rows and
// WN/2 columns apart. For one k a warp then reads, per LDS.128, LANES_M
// consecutive float4 of A (one per lane row, the others broadcast) and
// LANES_N consecutive float4 of B: contiguous, no bank read twice. The
// warps of a block tile it BM/WM x BN/WN. Loads, arithmetic and its order
// are step 10's.
//
// Compute-to-memory ratio: as step 9, 32 flop per global byte for 128 x 128.
// Counters that show it (ncu, hardware.csv): shared-memory bank conflicts
// per shared load fall to about 0; the instruction mix is step 10's.
//
// Ragged sizes and alignment: as step 10 (the same loads). Any M, N, K >= 1.
//
// Parameters (-D defines from kernels/registry.yaml): BM, BN, BK (block
// tile), WM, WN (warp tile); the thread tile is 8 x 8, so WM * WN = 32 * 64
// and the block has (BM/WM) * (BN/WN) warps.

#if !defined(BM) || !defined(BN) || !defined(BK) || !defined(WM) || !defined(WN)
#error "BM, BN, BK, WM and WN come from kernels/registry.yaml as -D defines"
#endif

#include "../common/load_quad.cuh"   // 16-byte loads where rows are aligned, guarded scalar ones elsewhere

constexpr int TM = 8, TN = 8;                 // a thread's tile: 2 x 2 pieces of 4 x 4
constexpr int LANES_M = WM / 8, LANES_N = WN / 8;
constexpr int THREADS = (BM / WM) * (BN / WN) * 32;
static_assert(BLOCK_DIM_X == THREADS && BLOCK_DIM_Y == 1,
              "kernels/registry.yaml's block must be THREADS x 1: a warp per warp tile");
static_assert(LANES_M * LANES_N == 32, "a warp's lanes tile its WM x WN tile in 8 x 8 blocks: WM * WN must be 2048");
static_assert(BM % WM == 0 && BN % WN == 0, "the warp tile must divide the block tile: change WM, WN, BM or BN");
static_assert(BK % 4 == 0 && BN % 4 == 0, "BK and BN must be multiples of 4 (float4 accesses)");
static_assert(BM * BK / 4 % THREADS == 0 && BK * BN / 4 % THREADS == 0,
              "the A and B slices must split into float4s evenly over the threads: change BK or the tiles");

extern "C" __global__ void __launch_bounds__(THREADS, 2)
gpu_warptile(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C)
{
    __shared__ __align__(16) float As[BK][BM];   // transposed: As[k][i] = A(row0 + i, k0 + k)
    __shared__ __align__(16) float Bs[BK][BN];   // Bs[k][j] = B(k0 + k, col0 + j)

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    // the warp's tile in the block's, and the lane's first row and column in the warp's
    const int wm0 = warp / (BN / WN) * WM, wn0 = warp % (BN / WN) * WN;
    const int lm = lane / LANES_N * 4, ln = lane % LANES_N * 4;

    float acc[TM][TN] = {};   // acc[s*4 + i][t*4 + j]: row wm0 + s*WM/2 + lm + i, column wn0 + t*WN/2 + ln + j
    float a[TM], b[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int e = tid; e < BM * BK / 4; e += THREADS) {
            const int i = e / (BK / 4), k = e % (BK / 4) * 4;
            const float4 v = load_quad(A, M, K, row0 + i, k0 + k);
            As[k + 0][i] = v.x;
            As[k + 1][i] = v.y;
            As[k + 2][i] = v.z;
            As[k + 3][i] = v.w;
        }
#pragma unroll
        for (int e = tid; e < BK * BN / 4; e += THREADS) {
            const int k = e / (BN / 4), j = e % (BN / 4) * 4;
            *reinterpret_cast<float4*>(&Bs[k][j]) = load_quad(B, K, N, k0 + k, col0 + j);
        }
        __syncthreads();

#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int s = 0; s < 2; ++s) {
                *reinterpret_cast<float4*>(&a[s * 4]) = *reinterpret_cast<const float4*>(&As[k][wm0 + s * WM / 2 + lm]);
                *reinterpret_cast<float4*>(&b[s * 4]) = *reinterpret_cast<const float4*>(&Bs[k][wn0 + s * WN / 2 + ln]);
            }
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
            const int r = row0 + wm0 + i / 4 * (WM / 2) + lm + i % 4;
            const int c = col0 + wn0 + j / 4 * (WN / 2) + ln + j % 4;
            if (r < M && c < N)
                C[r * N + c] = acc[i][j];
        }
}
