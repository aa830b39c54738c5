// Dev: step 29 with ONE copy of the main loop: a __noinline__ piece (loop + epilogue with the fix-up),
// called by the whole tiles and by the walk alike, so ptxas lays the loop out once.
#include "../../../kernels/common/async_slices.cuh"
#include "../../../kernels/common/stream_k.cuh"

__shared__ __align__(16) AsyncTiles tiles_s;
__shared__ int ticket_number;

// slices [from, to) of the tile at p; a cut piece (done != nullptr) goes through C in k order
__device__ __noinline__ void piece(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                   int M, int N, int K, int row0, int col0, int from, int to,
                                   unsigned long long* done, unsigned launch)
{
    const Place p(row0, col0);
    float acc[TM][TN] = {};
    multiply_slices<FmaOrder::serpentine>(acc, tiles_s, A, B, M, N, K, p, from, to);
    if (done == nullptr || from == 0) {
        store_tile(C, M, N, acc, p);
    } else {
        if (threadIdx.x == 0)
            wait_for(done, launch, from);
        __syncthreads();
        __threadfence();
        store_tile<true>(C, M, N, acc, p);
    }
    if (done != nullptr) {
        __threadfence();
        __syncthreads();
        if (threadIdx.x == 0)
            atomicExch(done, marked(launch, to));
    }
}

extern "C" __global__ void __launch_bounds__(THREADS, BLOCKS_PER_SM)
gpu_async_stream_k(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                   float* __restrict__ C, unsigned launch)
{
    const int tiles_n = (N + BN - 1) / BN, per_tile = (K + BK - 1) / BK;
    const long long tiles = (long long)((M + BM - 1) / BM) * tiles_n;
    const long long W = gridDim.x - tiles;
    const long long whole = whole_tiles(tiles, W, true);
    if (blockIdx.x >= W) {
        if (blockIdx.x - W >= whole)
            return;
        const Place p = tile_place(blockIdx.x - W, tiles_n);
        piece(A, B, C, M, N, K, p.row0, p.col0, 0, per_tile, nullptr, launch);
        return;
    }
    if (whole == tiles)
        return;
    take_ticket(ticket_number, launch, W);
    const long long S = (tiles - whole) * per_tile, number = ticket_number;
    const long long first = number * S / W;
    long long end = (number + 1) * S / W;
    while (end > first) {
        const long long tile = (end - 1) / per_tile, tile_first = tile * per_tile;
        const int from = max(first, tile_first) - tile_first, to = end - tile_first;
        const Place p = tile_place(whole + tile, tiles_n);
        const bool cut = !(from == 0 && to == per_tile);
        piece(A, B, C, M, N, K, p.row0, p.col0, from, to, cut ? &progress[owner_of(tile_first, S, W)] : nullptr,
              launch);
        end = tile_first + from;
    }
}
