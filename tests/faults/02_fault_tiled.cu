// Planted faults in the tiled kernel (step 4): defects of the k loop.
// See 01_fault_naive.cu for how the suite uses them.
//
// K_TAIL: the loop runs over whole tiles only, so when K is not a multiple
// of TILE the last K % TILE products of every element are dropped (the
// "tail pass" that public double-buffered kernels get wrong).
// MISSING_BARRIER: the barrier after the inner product is gone, so a fast
// warp can load the next tile over one that slower warps are still reading
// (a write-after-read race on shared memory). Whether the result changes
// depends on how the warps happen to be scheduled; racecheck sees the
// hazard either way.

#define K_TAIL 1
#define MISSING_BARRIER 2

#if !defined(TILE) || !defined(FAULT)
#error "TILE and FAULT come from tests/faults/faults.yaml as -D defines"
#endif

extern "C" __global__ void __launch_bounds__(TILE * TILE)
fault_tiled(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;

    float acc = 0.0f;
#if FAULT == K_TAIL
    for (int t = 0; t + TILE <= K; t += TILE) {
#else
    for (int t = 0; t < K; t += TILE) {
#endif
        As[ty][tx] = (row < M && t + tx < K) ? A[row * K + t + tx] : 0.0f;
        Bs[ty][tx] = (t + ty < K && col < N) ? B[(t + ty) * N + col] : 0.0f;
        __syncthreads();

        for (int k = 0; k < TILE; ++k)
            acc += As[ty][k] * Bs[k][tx];
#if FAULT != MISSING_BARRIER
        __syncthreads();
#endif
    }

    if (row < M && col < N)
        C[row * N + col] = acc;
}
