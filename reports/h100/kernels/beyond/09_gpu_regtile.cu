// Step 9: 2D register blocking: each thread computes a TM x TN tile of C
// from registers, the block a BM x BN tile, K in slices of BK.
//
// Source: Volkov and Demmel, "Benchmarking GPUs to tune dense linear
// algebra" (SC 2008): few threads, many outputs each, operands in
// registers; the CUTLASS documentation's GEMM hierarchy (efficient_gemm.md:
// thread block tile, thread tile); siboehm's "How to optimize a CUDA matmul
// kernel" (kernel 5, 2D blocktiling).
//
// What changes from the seeds' steps: both operands are tiled in shared
// memory (As: BM x BK of A, Bs: BK x BN of B), and each thread owns a
// TM x TN block of C, not a row or a column of it. Per k it reads TM values
// of A and TN of B into registers and does the outer product, TM * TN FMAs:
// each value read from shared memory feeds TN (or TM) FMAs instead of one.
// The seeds' steps 5 to 8 kept one operand in registers and streamed the
// other; here both come from shared memory and the reuse is square.
//
// The loop: load the A and B slices (every thread BM*BK/THREADS and
// BK*BN/THREADS elements, consecutive threads along a row: coalesced), one
// barrier, BK outer products, one barrier (the next slice must not
// overwrite one still being read). Loads are scalar (LDG.32) here; step 10
// makes them 16 bytes wide.
//
// Compute-to-memory ratio: per slice (BM + BN) * BK words from global memory
// for 2 * BM * BN * BK flop: BM*BN / (2*(BM + BN)) flop/byte, 32 for
// 128 x 128, against step 7's 6.4.
// Counters that show it (SASS main loop, hardware.csv): FFMA per LDS rises
// from step 7's 4 to TM*TN / (TM + TN) = 4 with scalar LDS here (8 x 8: 64
// FFMA for 16 LDS), the register count to about 128, and the flop per
// global byte from 6.4 to 32; step 10 then quarters the LDS.
//
// Ragged sizes: elements of A or B past the matrix load as 0 (they add
// nothing), every thread takes part in loads and barriers, and only elements
// inside C are stored. Any M, N, K >= 1; an odd number of K-slices is just
// a loop count.
//
// Parameters (-D defines from kernels/registry.yaml): BM, BN, BK (the block
// tile), TM, TN (the thread tile). The block is (BN/TN) x (BM/TM) threads.

#if !defined(BM) || !defined(BN) || !defined(BK) || !defined(TM) || !defined(TN)
#error "BM, BN, BK, TM and TN come from kernels/registry.yaml as -D defines"
#endif

constexpr int THREADS = (BM / TM) * (BN / TN);
static_assert(BLOCK_DIM_X == BN / TN && BLOCK_DIM_Y == BM / TM,
              "kernels/registry.yaml's block must be (BN / TN) x (BM / TM): a thread per TM x TN tile");
static_assert(BM % TM == 0 && BN % TN == 0, "the thread tile must divide the block tile: change TM, TN, BM or BN");
static_assert(BM * BK % THREADS == 0 && BK * BN % THREADS == 0,
              "the A and B slices must split evenly over the threads: change BK or the tiles");

// (THREADS, 2): at most 65536 / (2 * THREADS) registers a thread, so that two blocks fit on an SM
extern "C" __global__ void __launch_bounds__(THREADS, 2)
gpu_regtile(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C)
{
    __shared__ float As[BM][BK];   // As[i][k] = A(row0 + i, k0 + k)
    __shared__ float Bs[BK][BN];   // Bs[k][j] = B(k0 + k, col0 + j)

    const int tx = threadIdx.x, ty = threadIdx.y;   // thread (tx, ty) owns rows ty*TM.. and columns tx*TN..
    const int tid = ty * (BN / TN) + tx;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    float acc[TM][TN] = {};
    float a[TM], b[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int e = tid; e < BM * BK; e += THREADS) {   // element e of the A slice: row e / BK, column e % BK
            const int i = e / BK, k = e % BK;
            As[i][k] = (row0 + i < M && k0 + k < K) ? A[(row0 + i) * K + k0 + k] : 0.0f;
        }
#pragma unroll
        for (int e = tid; e < BK * BN; e += THREADS) {   // element e of the B slice: row e / BN, column e % BN
            const int k = e / BN, j = e % BN;
            Bs[k][j] = (k0 + k < K && col0 + j < N) ? B[(k0 + k) * N + col0 + j] : 0.0f;
        }
        __syncthreads();

#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int i = 0; i < TM; ++i)
                a[i] = As[ty * TM + i][k];
#pragma unroll
            for (int j = 0; j < TN; ++j)
                b[j] = Bs[k][tx * TN + j];
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
