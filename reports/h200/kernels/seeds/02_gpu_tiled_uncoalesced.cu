// Step 2: shared-memory tiling, B tile loaded the seed's first way
// (neighbouring threads read addresses a row apart: not coalesced).
//
// Source: seed 000, "Increasing Computation-to-Memory Ratio by Tiling"
// (its first tiled listing: B_tile(threadIdx.x, threadIdx.y) <= B_gpu(j, i)
// with j = tileIdx * blockDim.x + threadIdx.x, marked "Global Mem Not
// coalesced").
//
// How the seed's loose indexing is read: j, the row of B, follows
// threadIdx.x, so thread (tx, ty) loads B(t + tx, col0 + ty) and stores it
// at Bs[tx][ty]. The tile in shared memory is the same as in step 4
// (Bs[k][c] = B(t + k, col0 + c)) and so is the inner product; only the
// loading pattern differs: the 16 threads of a half-warp with consecutive tx
// read 16 different rows of B, N floats apart, so each load instruction
// touches 16 separate 32-byte sectors instead of two.
//
// What changes from step 1: a block of TILE x TILE threads computes a
// TILE x TILE tile of C, walking along K one tile at a time; each element
// loaded from global memory is used TILE times (from shared memory).
//
// Compute-to-memory ratio: TILE/4 flop/byte (seed 000's "B/4"), 4 for 16.
//
// Ragged sizes: elements past the edge of A or B are loaded as 0; every
// thread takes part in the loads and barriers, only threads inside C store.
//
// Where public kernels go wrong: a tutorial's tiled kernel often takes M, N
// and K to be multiples of its tile, and gives wrong results otherwise
// (CNugteren's myGEMM: "it doesn't support all use-cases",
// https://github.com/CNugteren/myGEMM/issues/2).
// From this step on every step takes any shape, and the GPU tests run shapes
// no tile divides (1x1x1, 17x33x65, 513x257x129).
//
// Parameters (-D defines from kernels/registry.yaml): TILE; ELEM, the
// element type, float or int (seed 003's int32 mode).

#if !defined(TILE) || !defined(ELEM)
#error "TILE and ELEM come from kernels/registry.yaml as -D defines"
#endif

static_assert(BLOCK_DIM_X == TILE && BLOCK_DIM_Y == TILE,
              "kernels/registry.yaml's block must be TILE x TILE: a thread per element of the tile");

extern "C" __global__ void __launch_bounds__(TILE * TILE)
gpu_tiled_uncoalesced(int M, int N, int K,
                      const ELEM* __restrict__ A, const ELEM* __restrict__ B,
                      ELEM* __restrict__ C)
{
    __shared__ ELEM As[TILE][TILE];
    __shared__ ELEM Bs[TILE][TILE];

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;
    const int col_t = blockIdx.x * TILE + ty;   // the column this thread *loads*

    ELEM acc = 0;
    for (int t = 0; t < K; t += TILE) {
        As[ty][tx] = (row < M && t + tx < K) ? A[row * K + t + tx] : 0;
        // neighbouring tx: rows t + tx of B, N elements apart (not coalesced)
        Bs[tx][ty] = (t + tx < K && col_t < N) ? B[(t + tx) * N + col_t] : 0;
        __syncthreads();

        for (int k = 0; k < TILE; ++k)
            acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }

    if (row < M && col < N)
        C[row * N + col] = acc;
}
