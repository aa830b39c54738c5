// Step 2: shared-memory tiling, TILE x TILE tiles.
//
// Source: seed 000 ("Increasing Computation-to-Memory Ratio by Tiling", in the
// form its later sections arrive at: coalesced loads, no bank conflicts),
// seed 003 (MM_MUl_Optimized, 16x16 thread blocks), seed 004
// (TiledMatrixMulKernel: ds_A[ty][tx], ds_B[ty][tx]).
//
// What changes from step 1: a block of TILE x TILE threads computes a
// TILE x TILE tile of C.  It walks along K one tile at a time: every thread
// loads one element of the A tile and one of the B tile into shared memory,
// the block synchronises, and each thread accumulates TILE products from
// shared memory.  Each element fetched from global memory is now used TILE
// times instead of once.
//
// Access patterns: threadIdx.x indexes columns, so each warp reads a row
// segment of A and of B (coalesced) and writes As[ty][tx], Bs[ty][tx]
// (consecutive words: no bank conflicts).  In the inner loop As[ty][k] is one
// word for a half-warp (broadcast) and Bs[k][tx] is TILE consecutive words.
//
// Compute-to-memory ratio: 2 * TILE flop per 2 * TILE words loaded per
// thread and tile pair: about TILE/4 flop/byte (seed 000's "B/4"), 4 for 16.
//
// Ragged sizes: elements past the edge of A or B are loaded as 0, so they
// add nothing; every thread takes part in the loads and barriers, and only
// threads inside C store.
//
// Parameters (from kernels/registry.yaml as -D defines): TILE.

#ifndef TILE
#error "TILE comes from kernels/registry.yaml as a -D define"
#endif

extern "C" __global__ void __launch_bounds__(TILE * TILE)
gpu_tiled(int M, int N, int K,
          const float* __restrict__ A, const float* __restrict__ B,
          float* __restrict__ C)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;

    float acc = 0.0f;
    for (int t = 0; t < K; t += TILE) {
        As[ty][tx] = (row < M && t + tx < K) ? A[row * K + t + tx] : 0.0f;
        Bs[ty][tx] = (t + ty < K && col < N) ? B[(t + ty) * N + col] : 0.0f;
        __syncthreads();

        for (int k = 0; k < TILE; ++k)
            acc += As[ty][k] * Bs[k][tx];
        __syncthreads();  // the next loads must not overwrite a tile in use
    }

    if (row < M && col < N)
        C[row * N + col] = acc;
}
