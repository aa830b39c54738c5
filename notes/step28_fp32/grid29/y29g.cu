#include "../../../kernels/common/async_slices.cuh"
#include "../../../kernels/common/stream_k.cuh"

__shared__ AsyncTiles tiles_s;
__shared__ int ticket_number;

__device__ __noinline__ void shared_slices(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                           int M, int N, int K, long long tiles, long long whole, long long W, unsigned launch)
{
    take_ticket(ticket_number, launch, W);
    const long long S = (tiles - whole) * ((K + BK - 1) / BK);
    const long long number = ticket_number;
    multiply_range(tiles_s, A, B, C, M, N, K, whole, number * S / W, (number + 1) * S / W, S, W, launch);
}

extern "C" __global__ void __launch_bounds__(THREADS, BLOCKS_PER_SM)
gpu_async_stream_k(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                   float* __restrict__ C, unsigned launch)
{
    const int tiles_n = (N + BN - 1) / BN;
    const long long tiles = (long long)((M + BM - 1) / BM) * tiles_n;
    const long long W = gridDim.x - tiles;
    const long long whole = whole_tiles(tiles, W, true);
    if (blockIdx.x >= W) {
        if (blockIdx.x - W >= whole)
            return;
        const Place p = tile_place(blockIdx.x - W, tiles_n);
        float acc[TM][TN] = {};
        multiply_slices<FmaOrder::serpentine>(acc, tiles_s, A, B, M, N, K, p, 0, (K + BK - 1) / BK);
        store_tile(C, M, N, acc, p);
        return;
    }
    if (whole < tiles)
        shared_slices(A, B, C, M, N, K, tiles, whole, W, launch);
}
