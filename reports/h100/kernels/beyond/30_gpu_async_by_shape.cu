// Step 30: a kernel chosen by shape. Step 29's kernel at most shapes; where
// every tile is shared out as K-slices over more than one wave, a second
// kernel whose main loop is one called function.
//
// Source: choosing among kernels by shape, as cuBLAS does (on the H100,
// cuBLAS SGEMM runs a 256 x 128 tile kernel at 4096 and a 64 x 64 one at
// 1537 x 3001 x 997: ncu's kernel names, 6fbf69a:notes/step28_fp32/step30_ncu.txt);
// the second kernel is step 29's (Stream-K's hybrid, Osama et al., PPoPP
// 2023) with its main loop and epilogue out of line.
//
// The problem: at 1537 x 3001 x 997 (156 tiles of 128 x 256, 1.18 waves on
// 132 SMs) step 29 shares out every tile as slices (the last full wave with
// the partial one), and runs at 87-88% of cuBLAS SGEMM. ptxas lays out each
// inlined copy of the main loop on its own: step 29's kernel holds two, the
// whole tiles' and the walk's (1,144 and 1,150 instructions per 1,024 FFMA),
// and which layout a source gets moves a kernel by about 2 points at a shape.
//
// What changes: the host launches one of two kernels of this file, by the
// registry's rule for the shape (`launches`: the first whose condition holds):
// - gpu_async_by_shape where tiles number between one and one and a half
//   waves (sms < tiles < 1.5 sms: step 29's split shares out every one).
//   Each piece of a tile, whole or cut, is one call of `piece`, a
//   __noinline__ function: the main loop, its copies addressed as step 28's
//   (the `lean` way), and the epilogue with the fix-up. The kernel holds one
//   main loop, laid out once (1,137 instructions per 1,024 FFMA, as step
//   28's). Its buffers are in shared memory at file scope, where a called
//   function reaches them. At 1537 x 3001 x 997 on the H100: 91.5% of cuBLAS
//   SGEMM, against step 29's 87.7% (ncu there: SM-active cycles 3.9% fewer,
//   FMA pipe busy 68.4% against 65.0%, 6fbf69a:notes/step28_fp32/step30_ncu.txt).
// - gpu_async_stream_k, step 29's kernel unchanged (included below; the same
//   SASS, instruction for instruction), at every other shape. Where whole
//   tiles run, they run inlined, as step 28's blocks: there the called piece
//   costs 1 to 4 points (2048: 95.4% against 99.0%); and with less than one
//   wave of tiles, each cut in many pieces, 8 points at 1024 (50.9% against
//   58.8%; 6fbf69a:notes/beyond_the_seeds.md).
// Both kernels are right at every shape: the GPU tests run each on every
// ragged shape, and the sanitizer each on its shapes. The rule only says
// which is faster where.
//
// Counter that shows it: main-loop instructions per FMA (SASS) of its own
// kernel, lower (the page's hardware table: Nsight Compute at 4096 measures
// step 29's kernel, which the rule launches there).
//
// Ragged sizes and alignment: as step 28; launches share no state, as step
// 15's (kernels/common/stream_k.cuh); results bit for bit the same on one
// GPU model, as step 29's.
//
// Parameters (-D defines from kernels/registry.yaml): as step 29 (its kernel
// is built with them, LEAN_COPIES 0); this file's kernel copies the lean way
// whatever LEAN_COPIES says.

#include "29_gpu_async_stream_k.cu"   // step 29's kernel (gpu_async_stream_k), its buffers, loop and Stream-K

__shared__ __align__(16) AsyncTiles pieces_tiles;   // the buffers of this file's kernel, reached from `piece`
__shared__ int pieces_number;                       // its block's ticket

// Slices [from, to) of the tile at (row0, col0), added into C: stored where it holds slice 0, else added once
// the pieces before it have summed `from` slices (progress `done`, nullptr for a whole tile, which stores).
__device__ __noinline__ void piece(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                   int M, int N, int K, int row0, int col0, int from, int to,
                                   unsigned long long* done, unsigned launch)
{
    const Place p(row0, col0);
    float acc[TM][TN] = {};
    multiply_slices<FmaOrder::serpentine, true>(acc, pieces_tiles, A, B, M, N, K, p, from, to);
    if (done == nullptr || from == 0) {
        store_tile(C, M, N, acc, p);
    } else {
        if (threadIdx.x == 0)
            wait_for(done, launch, from);
        __syncthreads();
        __threadfence();
        store_tile<true>(C, M, N, acc, p);
    }
    if (done != nullptr) {   // a cut tile: announce the slices now summed
        __threadfence();
        __syncthreads();
        if (threadIdx.x == 0)
            atomicExch(done, marked(launch, to));
    }
}

// Step 29's grid and split (tiles + sms blocks; the first sms share out slices), every piece through `piece`.
// Launched where every tile is shared out over more than a wave; right at any shape.
extern "C" __global__ void __launch_bounds__(THREADS, BLOCKS_PER_SM)
gpu_async_by_shape(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                   float* __restrict__ C, unsigned launch)
{
    const int tiles_n = (N + BN - 1) / BN, per_tile = (K + BK - 1) / BK;
    const long long tiles = (long long)((M + BM - 1) / BM) * tiles_n;
    const long long W = gridDim.x - tiles;             // the blocks that share out slices: one an SM
    const long long whole = whole_tiles(tiles, W, true);
    if (blockIdx.x >= W) {                             // one whole tile
        if (blockIdx.x - W >= whole)
            return;
        const Place p = tile_place(blockIdx.x - W, tiles_n);
        piece(A, B, C, M, N, K, p.row0, p.col0, 0, per_tile, nullptr, launch);
        return;
    }
    if (whole == tiles)                                // nothing shared out
        return;
    take_ticket(pieces_number, launch, W);   // block w takes slices [w * S / W, (w + 1) * S / W), walked backwards
    const long long S = (tiles - whole) * per_tile, number = pieces_number;
    const long long first = number * S / W;
    for (long long end = (number + 1) * S / W; end > first;) {   // as stream_k.cuh's multiply_range
        const long long tile = (end - 1) / per_tile, tile_first = tile * per_tile;
        const int from = max(first, tile_first) - tile_first, to = end - tile_first;
        const Place p = tile_place(whole + tile, tiles_n);
        const bool cut = from != 0 || to != per_tile;
        piece(A, B, C, M, N, K, p.row0, p.col0, from, to, cut ? &progress[owner_of(tile_first, S, W)] : nullptr,
              launch);
        end = tile_first + from;
    }
}
