// Step 1: naive GPU kernel, one thread per element of C.
//
// Source: seed 000 ("Naive Implementation On GPUs"), seed 001 (a 2D grid of
// n/m + 1 blocks when n is not a multiple of the block side m), seed 004
// (MatrixMulKernel with its Row < m && Col < k guard).
//
// What changes from the CPU triple loop: the i and j loops become the grid.
// Thread (x, y) of block (bx, by) computes C(row, col) with
//   row = by * BLOCK_Y + y,  col = bx * BLOCK_X + x,
// so threadIdx.x runs along a row of C.  In one warp the B(k, col) loads are
// consecutive addresses (coalesced) and A(row, k) is one address (broadcast).
//
// Compute-to-memory ratio: every FMA (2 flop) reads A(row,k) and B(k,col)
// from global memory, 8 bytes: about 1/4 flop/byte (seed 000), so the kernel
// is bandwidth bound; on today's GPUs the L1/L2 caches absorb much of the
// re-reading that the 8800 GT paid for in DRAM traffic.
//
// Ragged sizes: the host launches ceil(N/BLOCK_X) x ceil(M/BLOCK_Y) blocks;
// threads past the edge of C return before touching memory.
//
// Parameters (from kernels/registry.yaml as -D defines): BLOCK_X, BLOCK_Y;
// ELEM is the element type, float or int (seed 003's int32 mode).

#if !defined(BLOCK_X) || !defined(BLOCK_Y) || !defined(ELEM)
#error "BLOCK_X, BLOCK_Y and ELEM come from kernels/registry.yaml as -D defines"
#endif

static_assert(BLOCK_DIM_X == BLOCK_X && BLOCK_DIM_Y == BLOCK_Y,
              "kernels/registry.yaml's block must be BLOCK_X x BLOCK_Y: a thread per element of C");

extern "C" __global__ void __launch_bounds__(BLOCK_X * BLOCK_Y)
gpu_naive(int M, int N, int K,
          const ELEM* __restrict__ A, const ELEM* __restrict__ B,
          ELEM* __restrict__ C)
{
    const int row = blockIdx.y * BLOCK_Y + threadIdx.y;
    const int col = blockIdx.x * BLOCK_X + threadIdx.x;
    if (row >= M || col >= N)
        return;

    ELEM acc = 0;
    for (int k = 0; k < K; ++k)
        acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
}
