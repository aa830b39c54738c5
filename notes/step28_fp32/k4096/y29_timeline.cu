// Dev (issue 25, 4096): step 29's kernel with each block's start and end stamped (%globaltimer, thread 0)
// with its SM and its kind, into stamps[]: where the 4096 launch's time goes, block by block.
#include "../../../kernels/common/async_slices.cuh"
#include "../../../kernels/common/stream_k.cuh"

__device__ unsigned long long stamps[4 * 4096];   // per block: start ns, end ns, SM, kind (0 whole tile, 1 shared)

__device__ __forceinline__ unsigned long long now_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __noinline__ void stamp(unsigned long long start, int kind)
{
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    unsigned long long* s = &stamps[4 * blockIdx.x];
    s[0] = start; s[1] = now_ns(); s[2] = sm; s[3] = kind;
}

extern "C" __global__ void __launch_bounds__(THREADS, BLOCKS_PER_SM)
gpu_async_stream_k(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                   float* __restrict__ C, unsigned launch)
{
    __shared__ __align__(16) AsyncTiles s;
    __shared__ int number;
    const unsigned long long start = now_ns();
    const int tiles_n = (N + BN - 1) / BN;
    const long long tiles = (long long)((M + BM - 1) / BM) * tiles_n;
    const long long W = gridDim.x - tiles;
    const long long whole = whole_tiles(tiles, W, true);
    if (blockIdx.x >= W) {
        if (blockIdx.x - W >= whole)
            return;
        const Place p = tile_place(blockIdx.x - W, tiles_n);
        float acc[TM][TN] = {};
        multiply_slices<FmaOrder::serpentine>(acc, s, A, B, M, N, K, p, 0, (K + BK - 1) / BK);
        store_tile(C, M, N, acc, p);
        __syncthreads();
        if (threadIdx.x == 0)
            stamp(start, 0);
        return;
    }
    if (whole == tiles)
        return;
    take_ticket(number, launch, W);
    const long long S = (tiles - whole) * ((K + BK - 1) / BK);
    multiply_range(s, A, B, C, M, N, K, whole, number * S / W, (number + 1) * S / W, S, W, launch);
    __syncthreads();
    if (threadIdx.x == 0)
        stamp(start, 1);
}
