// Step 7: prefetching: the next A tile is loaded while the current one is
// used (double buffering).
//
// Source: seed 000, "Prefetching": two A tile buffers (A_tile0, A_tile1);
// "fetch one tile of matrix A_gpu to pointer0; for each tile: prefetch one
// tile of matrix A_gpu to pointer1, accumulate C using pointer0, __sync(),
// swap pointer0 and pointer1".
//
// How the seed is read: step 6, with As doubled. At the top of each K-tile
// every thread issues the global loads of its share of the *next* A tile
// into registers, then runs the outer product on the current buffer, then
// writes the prefetched values into the other buffer, and one barrier ends
// the iteration. The loads' latency is covered by a K-tile of arithmetic
// instead of a barrier wait, and one of step 6's two barriers per tile goes.
// (One barrier is enough: a buffer is written one iteration after the
// barrier that ends its last read.)
//
// What changes from step 6: the A tile is double-buffered and loaded one
// tile ahead; the arithmetic is the same.
//
// Compute-to-memory ratio: as step 5, TILE_M*TILE_N / (2*(TILE_M + TILE_N))
// flop/byte, 6.4 for 16 x 64; prefetching hides latency, it moves no fewer
// bytes.
//
// Ragged sizes: as step 5.
//
// Parameters (-D defines from kernels/registry.yaml): TILE_M, TILE_N (the
// threads of the block), TILE_K.

#if !defined(TILE_M) || !defined(TILE_N) || !defined(TILE_K)
#error "TILE_M, TILE_N and TILE_K come from kernels/registry.yaml as -D defines"
#endif

static_assert(BLOCK_DIM_X == TILE_N && BLOCK_DIM_Y == 1,
              "kernels/registry.yaml's block must be TILE_N x 1: a thread per column of the tile");

#define PER_THREAD (TILE_M * TILE_K / TILE_N)   // A-tile elements each thread moves
static_assert(TILE_M * TILE_K % TILE_N == 0, "the A tile must split evenly over the TILE_N threads");

extern "C" __global__ void __launch_bounds__(TILE_N)
gpu_outer_prefetch(int M, int N, int K,
                   const float* __restrict__ A, const float* __restrict__ B,
                   float* __restrict__ C)
{
    __shared__ float As[2][TILE_K][TILE_M];   // As[buf][k][i] = A(row0 + i, t + k)

    const int tid = threadIdx.x;
    const int row0 = blockIdx.y * TILE_M;
    const int col = blockIdx.x * TILE_N + tid;

    // element e = tid + p * TILE_N of the tile: row i = e / TILE_K, column k = e % TILE_K
    auto load_a = [&](int t, float (&regs)[PER_THREAD]) {
#pragma unroll
        for (int p = 0; p < PER_THREAD; ++p) {
            const int e = tid + p * TILE_N, i = e / TILE_K, k = e % TILE_K;
            regs[p] = (row0 + i < M && t + k < K) ? A[(row0 + i) * K + t + k] : 0.0f;
        }
    };
    auto store_a = [&](int buf, const float (&regs)[PER_THREAD]) {
#pragma unroll
        for (int p = 0; p < PER_THREAD; ++p) {
            const int e = tid + p * TILE_N;
            As[buf][e % TILE_K][e / TILE_K] = regs[p];
        }
    };

    float c[TILE_M];
#pragma unroll
    for (int i = 0; i < TILE_M; ++i)
        c[i] = 0.0f;

    float next[PER_THREAD];
    load_a(0, next);
    store_a(0, next);
    __syncthreads();

    int buf = 0;
    for (int t = 0; t < K; t += TILE_K, buf ^= 1) {
        const bool more = t + TILE_K < K;   // the same for every thread of the block
        if (more)
            load_a(t + TILE_K, next);        // in flight during the arithmetic below

#pragma unroll
        for (int k = 0; k < TILE_K; ++k) {
            const float b = (t + k < K && col < N) ? B[(t + k) * N + col] : 0.0f;
#pragma unroll
            for (int i = 0; i < TILE_M; ++i)
                c[i] += As[buf][k][i] * b;
        }

        if (more)
            store_a(buf ^ 1, next);
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < TILE_M; ++i)
        if (row0 + i < M && col < N)
            C[(row0 + i) * N + col] = c[i];
}
