// Step 6: loop unrolling: step 5 with its k loop unrolled.
//
// Source: seed 000, "Loop Unrolling": "Use the pragma to tell the compiler
// to unroll the loops. The nvcc will unroll the inner loops by default. But
// it will not unroll the outer loop unless told by the pragma."
//
// How the seed is read: the loops it names are step 5's k loop (the outer
// loop of the outer product, over the columns of the A tile) around the
// i loop (the inner one, already unrolled). With `#pragma unroll` on k the
// TILE_K loads of b are independent instructions that can all be in flight
// at once, the A tile's shared-memory addresses become constants, and the
// loop counter and branch disappear. The seed notes that unrolling can cost
// registers; the compiler's resource report of both steps shows whether it
// does here.
//
// What changes from step 5: `#pragma unroll 1` on the k loop becomes
// `#pragma unroll`; nothing else.
//
// Compute-to-memory ratio: as step 5, TILE_M*TILE_N / (2*(TILE_M + TILE_N))
// flop/byte, 6.4 for 16 x 64.
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

extern "C" __global__ void __launch_bounds__(TILE_N)
gpu_outer_unrolled(int M, int N, int K,
                   const float* __restrict__ A, const float* __restrict__ B,
                   float* __restrict__ C)
{
    __shared__ float As[TILE_K][TILE_M];   // As[k][i] = A(row0 + i, t + k)

    const int tid = threadIdx.x;
    const int row0 = blockIdx.y * TILE_M;
    const int col = blockIdx.x * TILE_N + tid;

    float c[TILE_M];
#pragma unroll
    for (int i = 0; i < TILE_M; ++i)
        c[i] = 0.0f;

    for (int t = 0; t < K; t += TILE_K) {
        for (int e = tid; e < TILE_M * TILE_K; e += TILE_N) {
            const int i = e / TILE_K, k = e % TILE_K;
            As[k][i] = (row0 + i < M && t + k < K) ? A[(row0 + i) * K + t + k] : 0.0f;
        }
        __syncthreads();

#pragma unroll
        for (int k = 0; k < TILE_K; ++k) {
            const float b = (t + k < K && col < N) ? B[(t + k) * N + col] : 0.0f;
#pragma unroll
            for (int i = 0; i < TILE_M; ++i)
                c[i] += As[k][i] * b;
        }
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < TILE_M; ++i)
        if (row0 + i < M && col < N)
            C[(row0 + i) * N + col] = c[i];
}
