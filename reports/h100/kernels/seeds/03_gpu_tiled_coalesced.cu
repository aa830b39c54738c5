// Step 3: coalesced global loads (the seed's fix), with the shared-memory
// read pattern that now conflicts on banks.
//
// Source: seed 000, "Global Memory Coalescing" (its second tiled listing:
// B_tile(threadIdx.x, threadIdx.y) <= B_gpu(i, j), "Global Mem Coalesced",
// then B_tile(threadIdx.x, k) in the inner product, "Shared Mem Bank
// conflict"). The seed's other remedy, transposing B on the CPU first, is
// the same access pattern bought with an extra pass over B.
//
// How the seed's loose indexing is read: thread (tx, ty) now loads
// B(t + ty, col0 + tx), so consecutive threads read consecutive columns of
// a row (coalesced), and stores it transposed, at Bs[tx][ty]. The inner
// product reads Bs[tx][k]: for a fixed k, consecutive threads read words
// TILE apart. With TILE = 16 and 32 four-byte banks, the 16 different
// words a warp asks for fall in 2 banks: an 8-way bank conflict on every
// shared-memory read of B (and on the store).
//
// What changes from step 2: the global loads of B are coalesced; the price
// is the bank conflicts that step 4 removes.
//
// Compute-to-memory ratio: TILE/4 flop/byte, as in step 2.
//
// Ragged sizes: elements past the edge of A or B are loaded as 0; every
// thread takes part in the loads and barriers, only threads inside C store.
//
// Parameters (-D defines from kernels/registry.yaml): TILE; ELEM, the
// element type, float or int (seed 003's int32 mode).

#if !defined(TILE) || !defined(ELEM)
#error "TILE and ELEM come from kernels/registry.yaml as -D defines"
#endif

static_assert(BLOCK_DIM_X == TILE && BLOCK_DIM_Y == TILE,
              "kernels/registry.yaml's block must be TILE x TILE: a thread per element of the tile");

extern "C" __global__ void __launch_bounds__(TILE * TILE)
gpu_tiled_coalesced(int M, int N, int K,
                    const ELEM* __restrict__ A, const ELEM* __restrict__ B,
                    ELEM* __restrict__ C)
{
    __shared__ ELEM As[TILE][TILE];
    __shared__ ELEM Bs[TILE][TILE];   // Bs[c][k] = B(t + k, col0 + c): B transposed

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;

    ELEM acc = 0;
    for (int t = 0; t < K; t += TILE) {
        As[ty][tx] = (row < M && t + tx < K) ? A[row * K + t + tx] : 0;
        Bs[tx][ty] = (t + ty < K && col < N) ? B[(t + ty) * N + col] : 0;   // coalesced read
        __syncthreads();

        for (int k = 0; k < TILE; ++k)
            acc += As[ty][k] * Bs[tx][k];   // words TILE apart across tx: bank conflicts
        __syncthreads();
    }

    if (row < M && col < N)
        C[row * N + col] = acc;
}
