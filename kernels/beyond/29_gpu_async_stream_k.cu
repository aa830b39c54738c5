// Step 29: step 28's tile and main loop under step 17's hybrid Stream-K.
//
// Source: Osama, Merrill, Cecka, Garland and Owens, "Stream-K" (PPoPP
// 2023), section 5, the data-parallel + Stream-K hybrid, as step 17 (its
// machinery in kernels/common/stream_k.cuh); the main loop is step 28's.
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
// tiles go wave by wave while at least two waves remain, and the last full
// wave and the partial one are shared out as K-slices, the pieces of a cut
// tile added in k order through C. Step 28's main loop takes a range of
// slices (kernels/common/async_slices.cuh, multiply_slices): slice 0 is the
// ragged one, so a range that starts past it has no k to test either.
//
// Counter that shows it: the SMs' balance (ncu, sm_balance: the mean SM's
// active cycles over the busiest's), higher.
//
// Ragged sizes and alignment: as step 28; launches share no state, as step
// 15's (kernels/common/stream_k.cuh). The result is bit for bit the same on
// every run on one GPU model; on a GPU with another number of SMs the pieces,
// and so the last bits of the sums, change.
//
// Parameters (-D defines from kernels/registry.yaml): as step 28.

#include "../common/async_slices.cuh"   // step 28's buffers and main loop (AsyncTiles, multiply_slices)
#include "../common/stream_k.cuh"       // tickets, the range walk, the fix-up and the hybrid (take_ticket, hybrid_stream_k)

extern "C" __global__ void __launch_bounds__(THREADS, BLOCKS_PER_SM)
gpu_async_stream_k(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                   float* __restrict__ C, unsigned launch)
{
    __shared__ __align__(16) AsyncTiles s;
    __shared__ int number;
    const long long W = take_ticket(number, launch);

    hybrid_stream_k(s, A, B, C, M, N, K, number, W, launch);
}
