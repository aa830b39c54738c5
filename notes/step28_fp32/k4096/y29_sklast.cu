// Dev (issue 25, 4096): step 29's kernel with the blocks that share out slices dispatched after the whole
// tiles (the classic "data-parallel + one-tile Stream-K" order) rather than before them.
#include "../../../kernels/common/async_slices.cuh"
#include "../../../kernels/common/stream_k.cuh"

extern "C" __global__ void __launch_bounds__(THREADS, BLOCKS_PER_SM)
gpu_async_stream_k(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                   float* __restrict__ C, unsigned launch)
{
    __shared__ __align__(16) AsyncTiles s;
    __shared__ int number;
    const int tiles_n = (N + BN - 1) / BN;
    const long long tiles = (long long)((M + BM - 1) / BM) * tiles_n;
    const long long W = gridDim.x - tiles;
    const long long whole = whole_tiles(tiles, W, true);
    if (blockIdx.x < tiles) {                          // whole tiles first
        if (blockIdx.x >= whole)
            return;
        const Place p = tile_place(blockIdx.x, tiles_n);
        float acc[TM][TN] = {};
        multiply_slices<FmaOrder::serpentine>(acc, s, A, B, M, N, K, p, 0, (K + BK - 1) / BK);
        store_tile(C, M, N, acc, p);
        return;
    }
    if (whole == tiles)
        return;
    take_ticket(number, launch, W);
    const long long S = (tiles - whole) * ((K + BK - 1) / BK);
    multiply_range(s, A, B, C, M, N, K, whole, number * S / W, (number + 1) * S / W, S, W, launch);
}
