// Step 5: computation optimisation, the outer product. A tile in shared
// memory, B and C in registers, so each FMA has one shared-memory operand.
//
// Source: seed 000, "Computation Optimization": "perform outer product
// instead of inner product ... matrix A is stored in shared memory, but
// matrix B and C are stored in registers"; its example: a 16 x 16 A tile,
// a 16 x 64 C tile, 64 threads a block, each thread holding one element of
// B and one column of the C tile.
//
// How the seed is read: thread t of the block owns column col = bx*64 + t
// of a TILE_M x TILE_N tile of C, as TILE_M accumulators c[i] in registers.
// For each K-tile the block stages the TILE_M x TILE_K tile of A in shared
// memory; then for each k, every thread loads its one b = B(t0 + k, col)
// into a register (coalesced: consecutive threads, consecutive columns) and
// updates its column: c[i] += A_tile(i, k) * b for i < TILE_M. All threads
// read the same A_tile(i, k) (a broadcast). The A tile is stored k-major
// (As[k][i]) so the TILE_M values one k needs are contiguous.
//
// What changes from step 4: step 4's inner product needs two shared-memory
// operands per FMA (As and Bs), and the 8800 GT could take only one from
// shared memory per instruction. Here each FMA reads one value of the A
// tile; b and c never leave registers. On sm_90 every shared-memory operand
// is a separate LDS, so the gain shows as more FFMA per LDS.
//
// The k loop carries `#pragma unroll 1`: the seed's compiler "will not
// unroll the outer loop unless told by the pragma", and today's nvcc would
// unroll this one on its own; step 6 is that pragma.
//
// Compute-to-memory ratio: a K-tile moves TILE_M*TILE_K + TILE_K*TILE_N
// words from global memory for 2*TILE_M*TILE_N*TILE_K flop:
// TILE_M*TILE_N / (2*(TILE_M + TILE_N)) flop/byte, 6.4 for 16 x 64.
//
// Ragged sizes: A elements past the edge load as 0, b past the edge is 0,
// only columns and rows inside C are stored.
//
// Parameters (-D defines from kernels/registry.yaml): TILE_M, TILE_N (the
// threads of the block), TILE_K.

#if !defined(TILE_M) || !defined(TILE_N) || !defined(TILE_K)
#error "TILE_M, TILE_N and TILE_K come from kernels/registry.yaml as -D defines"
#endif

static_assert(BLOCK_DIM_X == TILE_N && BLOCK_DIM_Y == 1,
              "kernels/registry.yaml's block must be TILE_N x 1: a thread per column of the tile");

extern "C" __global__ void __launch_bounds__(TILE_N)
gpu_outer(int M, int N, int K,
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
        // the block loads the A tile; consecutive threads take consecutive k
        for (int e = tid; e < TILE_M * TILE_K; e += TILE_N) {
            const int i = e / TILE_K, k = e % TILE_K;
            As[k][i] = (row0 + i < M && t + k < K) ? A[(row0 + i) * K + t + k] : 0.0f;
        }
        __syncthreads();

#pragma unroll 1
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
