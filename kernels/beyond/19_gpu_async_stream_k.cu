// Step 19: step 18's tile and main loop under Stream-K's hybrids.
//
// Source: Osama, Merrill, Cecka, Garland and Owens, "Stream-K" (PPoPP
// 2023), section 5, its two data-parallel + Stream-K hybrids (step 17 runs
// one; the machinery in kernels/common/stream_k.cuh); the main loop is step
// 18's.
//
// The problem: step 18 runs one 128 x 256 tile per block and one block per
// SM, so its tiles come in waves of 132 on the H100, and a partial last wave
// leaves SMs idle: 4096^2 is 512 tiles, 3.88 waves rounded up to 4;
// 8192^2 is 2,048 tiles, 15.5 waves; 1537 x 3001 is 156 tiles, 1.18 waves
// rounded up to 2, where step 18 falls far behind step 17 against cuBLAS
// SGEMM.
//
// What changes: which block computes what, as from step 16 to 17. The
// partial wave, with the last full one where the partial wave is less than
// half full, is shared out as K-slices among one block an SM, the pieces
// of a cut tile added in k order through C (stream_k.cuh, whole_tiles: the
// paper's two hybrids); the other tiles go whole, as step 18's. Step 18's
// main loop takes a range of slices (kernels/common/async_slices.cuh,
// multiply_slices): slice 0 is the ragged one, so a range that starts past
// it has no k to test either.
//
// The grid is C's tiles plus one block an SM (registry: grid [tiles + sms,
// 1]). Blocks 0 to sms - 1 share out the slices; each later block computes
// one whole tile, or nothing where the tiles go whole. So the shared slices
// start first, on every SM at once, and the whole tiles follow as step 18's
// blocks do, each SM taking the next as it frees; and the whole tiles run
// step 18's source, with no loop over tiles and none of the walk's state
// live in it. Before (a grid of one block an SM: whole tiles wave by wave in a
// loop, then the walk), the two loops were laid out as 1,153 and 1,150
// instructions per 1,024 FFMA, and this step ran about two points slower at
// 4096 and 8192 than with its whole tiles as blocks of their own after the
// slices; with them before the slices, in between
// (6fbf69a:notes/beyond_the_seeds.md).
// Its buffers are flipped by an XOR, as step 18's (XOR_BUFFERS 1), and
// its copies are addressed as step 18's first version did (LEAN_COPIES 0):
// with step 18's offsets in registers this kernel ran about 2 points
// slower at 4096 and 8192 (246 registers, no spill).
//
// Counter that shows it: the SMs' balance (ncu, sm_balance: the mean SM's
// active cycles over the busiest's), higher.
//
// Ragged sizes and alignment: as step 18; launches share no state, as step
// 15's (kernels/common/stream_k.cuh). The result is bit for bit the same on
// every run on one GPU model; on a GPU with another number of SMs the pieces,
// and so the last bits of the sums, change.
//
// Parameters (-D defines from kernels/registry.yaml): as step 18; XOR_BUFFERS 1, LEAN_COPIES 0.

#include "../common/async_slices.cuh"   // step 18's buffers and main loop (AsyncTiles, multiply_slices)
#include "../common/stream_k.cuh"       // tickets, the range walk with its fix-up, the split (take_ticket, multiply_range, whole_tiles, tile_place)

// The kernel's work, its epilogue's accesses chosen: scalar here, 16 bytes wide in step 21 (`vector`).
template <bool vector>
__device__ __forceinline__ void async_stream_k(int M, int N, int K, const float* __restrict__ A,
                                               const float* __restrict__ B, float* __restrict__ C, unsigned launch)
{
    __shared__ __align__(16) AsyncTiles s;
    __shared__ int number;
    const int tiles_n = (N + BN - 1) / BN;
    const long long tiles = (long long)((M + BM - 1) / BM) * tiles_n;
    const long long W = gridDim.x - tiles;             // the blocks that share out slices: one an SM
    const long long whole = whole_tiles(tiles, W, true);
    if (blockIdx.x >= W) {                             // one whole tile, as step 18's blocks
        if (blockIdx.x - W >= whole)
            return;
        const Place p = tile_place(blockIdx.x - W, tiles_n);
        float acc[TM][TN] = {};
        multiply_slices<FmaOrder::serpentine>(acc, s, A, B, M, N, K, p, 0, (K + BK - 1) / BK);
        store_tile<false, vector>(C, M, N, acc, p);
        return;
    }
    if (whole == tiles)                                // nothing shared out
        return;
    take_ticket(number, launch, W);   // the rest, shared out as slices: block w takes [w * S / W, (w + 1) * S / W)
    const long long S = (tiles - whole) * ((K + BK - 1) / BK);
    multiply_range<AsyncTiles, vector>(s, A, B, C, M, N, K, whole, number * S / W, (number + 1) * S / W, S, W,
                                       launch);
}

extern "C" __global__ void __launch_bounds__(THREADS, BLOCKS_PER_SM)
gpu_async_stream_k(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                   float* __restrict__ C, unsigned launch)
{
    async_stream_k<false>(M, N, K, A, B, C, launch);
}
