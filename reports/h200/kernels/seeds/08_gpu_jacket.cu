// Step 8: Jacket SGEMM: several outputs per thread, non-square sub-matrices,
// the streamed operand in registers, the reused one in shared memory.
//
// Source: seed 002 (Chris McClanahan, "Yet Another Matrix Multiplication
// Case Study": Jacket 1.4 SGEMM, "each thread produces 2 rows of c",
// Jacket 1.5, 3 rows; "non-square block sizes (bx > by)"; "a, c in
// registers | b in shared memory"; its listing: per k, A0_reg, A1_reg,
// A2_reg fetched into registers, then for j < BLOCK_SIZE_Y:
// bb_reg = bb[k][j]; c0[j] += A0_reg * bb_reg; c1[j] += ...; c2[j] += ...,
// with bb rows padded to BLOCK_SIZE_Y + 1). Its heuristics, Volkov's
// "use registers": fewer threads, more work and more registers per thread.
//
// How it is read for row-major storage. Jacket (MATLAB) is column-major:
// there a thread's "row of c" is strided in memory and consecutive threads
// fetch consecutive elements of A (coalesced). Row-major C = A B is the
// column-major product C^T = B^T A^T, so the port swaps the operands' roles
// and keeps the structure: the seed's "a" (streamed into registers) is read
// from B, its "b" tile (in shared memory, padded) is a tile of A, and its
// "rows of c" are columns of our C. Thread t of a block of BX threads
// owns ROWS columns of C, col_q = bx*(ROWS*BX) + q*BX + t (q < ROWS), over
// the BY rows of the block's tile: ROWS sub-matrices of BY x BX per block,
// BX > BY. Per k it loads ROWS values b_q = B(k, col_q) (coalesced), and for
// each of the BY rows reads one A-tile value a_i (a broadcast) for ROWS
// FMAs: c[q][i] += a_i * b_q.
//
// What changes from step 7: each shared-memory read now feeds ROWS FMAs
// instead of one, each thread keeps ROWS * BY accumulators, and the tile is
// wider (ROWS * BX columns), so B is re-read from L2 fewer times per flop.
//
// Compute-to-memory ratio: per K-tile BY*TILE_K + TILE_K*ROWS*BX words for
// 2*BY*ROWS*BX*TILE_K flop: BY*ROWS*BX / (2*(BY + ROWS*BX)) flop/byte;
// 13.7 for the H100-tuned BY = 32, ROWS = 3, BX = 64 (reports/h100/tuning.csv).
//
// Ragged sizes: A elements past the edge load as 0, b past the edge is 0,
// only columns and rows inside C are stored.
//
// Parameters (-D defines from kernels/registry.yaml): BX (threads), BY
// (rows of the tile), ROWS (outputs per thread: 2 as Jacket 1.4, 3 as
// Jacket 1.5), TILE_K, PAD (words added to each row of the A tile; the
// seed's + 1).

#if !defined(BX) || !defined(BY) || !defined(ROWS) || !defined(TILE_K) || !defined(PAD)
#error "BX, BY, ROWS, TILE_K and PAD come from kernels/registry.yaml as -D defines"
#endif

static_assert(BLOCK_DIM_X == BX && BLOCK_DIM_Y == 1,
              "kernels/registry.yaml's block must be BX x 1: a thread owns ROWS columns of the tile");

extern "C" __global__ void __launch_bounds__(BX)
gpu_jacket(int M, int N, int K,
           const float* __restrict__ A, const float* __restrict__ B,
           float* __restrict__ C)
{
    __shared__ float As[TILE_K][BY + PAD];   // As[k][i] = A(row0 + i, t + k)

    const int tid = threadIdx.x;
    const int row0 = blockIdx.y * BY;
    const int col0 = blockIdx.x * (ROWS * BX) + tid;   // col_q = col0 + q * BX

    float c[ROWS][BY];
#pragma unroll
    for (int q = 0; q < ROWS; ++q)
#pragma unroll
        for (int i = 0; i < BY; ++i)
            c[q][i] = 0.0f;

    for (int t = 0; t < K; t += TILE_K) {
        for (int e = tid; e < BY * TILE_K; e += BX) {
            const int i = e / TILE_K, k = e % TILE_K;
            As[k][i] = (row0 + i < M && t + k < K) ? A[(row0 + i) * K + t + k] : 0.0f;
        }
        __syncthreads();

#pragma unroll
        for (int k = 0; k < TILE_K; ++k) {
            float b[ROWS];
#pragma unroll
            for (int q = 0; q < ROWS; ++q)
                b[q] = (t + k < K && col0 + q * BX < N) ? B[(t + k) * N + col0 + q * BX] : 0.0f;
#pragma unroll
            for (int i = 0; i < BY; ++i) {
                const float a = As[k][i];
#pragma unroll
                for (int q = 0; q < ROWS; ++q)
                    c[q][i] += a * b[q];
            }
        }
        __syncthreads();
    }

#pragma unroll
    for (int q = 0; q < ROWS; ++q)
#pragma unroll
        for (int i = 0; i < BY; ++i)
            if (row0 + i < M && col0 + q * BX < N)
                C[(row0 + i) * N + col0 + q * BX] = c[q][i];
}
