// Step 29: step 28's tile and main loop under Stream-K's hybrids.
//
// Source: Osama, Merrill, Cecka, Garland and Owens, "Stream-K" (PPoPP
// 2023), section 5, its two data-parallel + Stream-K hybrids (step 17 runs
// one; the machinery in kernels/common/stream_k.cuh); the main loop is step
// 28's.
//
// The problem: step 28 runs one 128 x 256 tile per block and one block per
// SM, so its tiles come in waves of 132 on the H100, and a partial last wave
// leaves SMs idle: 4096^2 is 512 tiles, 3.88 waves rounded up to 4;
// 8192^2 is 2,048 tiles, 15.5 waves; 1537 x 3001 is 156 tiles, 1.18 waves
// rounded up to 2, where step 28 falls to 63% of cuBLAS SGEMM against step
// 17's 87%.
//
// What changes: which block computes what, as from step 16 to 17. The grid
// is the GPU's resident blocks, one an SM (registry: grid [sms, 1]); whole
// tiles go wave by wave, and the partial wave, with the last full one where
// the partial wave is less than half full, is shared out as K-slices, the
// pieces of a cut tile added in k order through C (stream_k.cuh, whole_tiles:
// the paper's two hybrids). Step 28's main loop takes a range of slices
// (kernels/common/async_slices.cuh, multiply_slices): slice 0 is the ragged
// one, so a range that starts past it has no k to test either.
//
// Two call sites of the main loop: the whole tiles get one of their own,
// with the range [0, all slices), as step 28's, and the shared slices go
// through step 17's walk (stream_k.cuh, multiply_range). ptxas lays out the
// two loops differently: the whole tiles' as step 28's (104 of its 1,024
// FFMAs on a register-bank conflict, step 28: 103), the walk's with 164. The
// first version of this step ran both through the walk, as step 17 does
// (one call site, 170 conflicts in its one loop): 94.7-94.9% of cuBLAS SGEMM
// at 4096 and 90.6-90.9% at 2048 on the H100, against 96.2-96.6% and
// 94.2-94.8% this way (notes/beyond_the_seeds.md). How ptxas schedules it
// hangs on details of the source: with per_tile an int, passed as the whole
// tiles' end, the same loops (as counted) ran at 94.4-94.5% and 93.1-93.2%.
// Its buffers are flipped by an XOR, as step 28's (XOR_BUFFERS 1: 1,153
// and 1,150 instructions per 1,024 FFMA in the two loops, against 1,169 and
// 1,166 with buf * size; 101.4% of cuBLAS SGEMM at 8192 on the H100, against
// 98.7%), and its copies are addressed as step 28's first version did
// (LEAN_COPIES 0): with step 28's offsets kept in registers, ptxas spills
// 148 bytes in this kernel, which holds the walk's state as well.
//
// Counter that shows it: the SMs' balance (ncu, sm_balance: the mean SM's
// active cycles over the busiest's), higher.
//
// Ragged sizes and alignment: as step 28; launches share no state, as step
// 15's (kernels/common/stream_k.cuh). The result is bit for bit the same on
// every run on one GPU model; on a GPU with another number of SMs the pieces,
// and so the last bits of the sums, change.
//
// Parameters (-D defines from kernels/registry.yaml): as step 28; XOR_BUFFERS 1, LEAN_COPIES 0.

#include "../common/async_slices.cuh"   // step 28's buffers and main loop (AsyncTiles, multiply_slices)
#include "../common/stream_k.cuh"       // tickets, the range walk with its fix-up, the split (take_ticket, multiply_range, whole_tiles, tile_place)

extern "C" __global__ void __launch_bounds__(THREADS, BLOCKS_PER_SM)
gpu_async_stream_k(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                   float* __restrict__ C, unsigned launch)
{
    __shared__ __align__(16) AsyncTiles s;
    __shared__ int number;
    const long long W = take_ticket(number, launch);
    const int tiles_n = (N + BN - 1) / BN;
    const long long per_tile = (K + BK - 1) / BK;   // as a long long, and not passed below (see above)
    const long long tiles = (long long)((M + BM - 1) / BM) * tiles_n;
    const long long whole = whole_tiles(tiles, W, true);

    for (long long tile = number; tile < whole; tile += W) {   // whole tiles, wave by wave, in row-major order
        const Place p = tile_place(tile, tiles_n);
        float acc[TM][TN] = {};
        multiply_slices<FmaOrder::serpentine>(acc, s, A, B, M, N, K, p, 0, (K + BK - 1) / BK);
        store_tile(C, M, N, acc, p);
    }
    if (whole < tiles) {   // the rest, shared out as slices: block w takes [w * S / W, (w + 1) * S / W)
        const long long S = (tiles - whole) * per_tile;
        multiply_range(s, A, B, C, M, N, K, whole, number * S / W, (number + 1) * S / W, S, W, launch);
    }
}
