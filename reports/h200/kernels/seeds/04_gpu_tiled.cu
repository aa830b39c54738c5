// Step 4: shared-memory tiling without bank conflicts (the seed's layout fix).
//
// Source: seed 000, "Avoiding Shared Memory Bank Conflict" (its third tiled
// listing: B_tile(threadIdx.y, threadIdx.x) <= B_gpu(i, j), then
// B_tile(k, threadIdx.x) in the inner product); seed 003 (MM_MUl_Optimized,
// 16x16 thread blocks) and seed 004 (TiledMatrixMulKernel: ds_A[ty][tx],
// ds_B[ty][tx]) are this same kernel.
//
// How the seed's loose indexing is read: the block computes the TILE x TILE
// tile of C at (blockIdx.y, blockIdx.x); for each K-tile t it loads
//   As[ty][tx] = A(row, t + tx)     Bs[ty][tx] = B(t + ty, col)
// and accumulates acc += As[ty][k] * Bs[k][tx].
//
// What changes from step 3: B is stored in shared memory as it lies in
// global memory (Bs[ty][tx], no transpose), so the inner loop reads
// Bs[k][tx]: consecutive threads read consecutive words, one per bank.
// Global loads stay coalesced (threadIdx.x runs along rows of A and B).
// In the inner loop As[ty][k] is one word for a half-warp (a broadcast).
//
// Compute-to-memory ratio: a TILE x TILE tile pair (2 * TILE^2 words) feeds
// 2 * TILE^3 flop: TILE/4 flop/byte (seed 000's "B/4"), 4 for TILE = 16,
// against 1/4 for step 1.
//
// Ragged sizes: elements past the edge of A or B are loaded as 0, so they
// add nothing; every thread takes part in the loads and barriers, and only
// threads inside C store.
//
// Parameters (-D defines from kernels/registry.yaml): TILE; ELEM, the
// element type, float or int (seed 003's int32 mode).

#if !defined(TILE) || !defined(ELEM)
#error "TILE and ELEM come from kernels/registry.yaml as -D defines"
#endif

static_assert(BLOCK_DIM_X == TILE && BLOCK_DIM_Y == TILE,
              "kernels/registry.yaml's block must be TILE x TILE: a thread per element of the tile");

extern "C" __global__ void __launch_bounds__(TILE * TILE)
gpu_tiled(int M, int N, int K,
          const ELEM* __restrict__ A, const ELEM* __restrict__ B,
          ELEM* __restrict__ C)
{
    __shared__ ELEM As[TILE][TILE];
    __shared__ ELEM Bs[TILE][TILE];

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;

    ELEM acc = 0;
    for (int t = 0; t < K; t += TILE) {
        As[ty][tx] = (row < M && t + tx < K) ? A[row * K + t + tx] : 0;
        Bs[ty][tx] = (t + ty < K && col < N) ? B[(t + ty) * N + col] : 0;
        __syncthreads();

        for (int k = 0; k < TILE; ++k)
            acc += As[ty][k] * Bs[k][tx];
        __syncthreads();  // the next loads must not overwrite a tile in use
    }

    if (row < M && col < N)
        C[row * N + col] = acc;
}
