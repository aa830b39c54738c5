#include "../../../kernels/common/async_slices.cuh"
#include "y_stream_k.cuh"

extern "C" __global__ void __launch_bounds__(THREADS, BLOCKS_PER_SM)
gpu_async_stream_k(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                   float* __restrict__ C, unsigned launch)
{
    __shared__ __align__(16) AsyncTiles s;
    __shared__ int number;
    const int tiles_n = (N + BN - 1) / BN;
    const long long tiles = (long long)((M + BM - 1) / BM) * tiles_n;
    const long long W = gridDim.x - tiles;                 // the blocks that share out the rest: one an SM
    const long long whole = whole_tiles(tiles, W, true);
    if (blockIdx.x >= W) {                                 // a whole tile, as step 28
        if (blockIdx.x - W >= whole)
            return;
        const Place p = tile_place(blockIdx.x - W, tiles_n);
        float acc[TM][TN] = {};
        multiply_slices<FmaOrder::serpentine>(acc, s, A, B, M, N, K, p, 0, (K + BK - 1) / BK);
        store_tile(C, M, N, acc, p);
        return;
    }
    if (whole == tiles)
        return;
    take_ticket(number, launch, W);
    const long long per_tile = (K + BK - 1) / BK;
    const long long S = (tiles - whole) * per_tile;
    multiply_range(s, A, B, C, M, N, K, whole, number * S / W, (number + 1) * S / W, S, W, launch);
}
