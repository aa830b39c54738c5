// Step 45: step 44's body on every multiprocessor, the tiles of the last,
// partial round cut along K and shared out among all the blocks.
//
// Source: Stream-K (Osama, Merrill, Cecka, Garland and Owens, "Stream-K:
// Work-centric Parallel Decomposition for Dense Matrix-Matrix Multiplication
// on the GPU", PPoPP 2023), its "data-parallel + one-tile Stream-K" hybrid;
// CUTLASS's SM90 stream-K tile scheduler. The SIMT chapter taught it first
// (steps 15, 17 and 19: kernels/common/stream_k.cuh).
//
// The problem: step 41's whole rounds leave multiprocessors idle. At 8192,
// 2048 tiles of 128 x 256 on an H100's or H200's 132 SMs are 15.5 rounds;
// step 41 takes 16 rounds on 128 blocks, and 4 SMs do nothing all launch.
// At 4096, 512 tiles: 4 rounds on 128 blocks, the same 4 idle. A whole
// tile for every SM in the last round would leave half of them idle
// instead.
//
// What changes: the scheduler, StreamKTiles (scheduler.cuh), and a way out
// for the pieces (store_piece, epilogue.cuh). Every block takes whole tiles
// in rounds while whole rounds remain; the last partial round's tiles are
// cut along K, their K-slices shared out evenly, about half a tile a block
// at 8192. The producer loads a piece's slices only (producer.cuh's k_from
// and k_to); the consumers multiply them as a tile. The pieces of a cut tile
// meet in C in the order of K: the piece holding slice 0 stores, each later
// one waits for the marks of the ones before (progress[], marked with the
// launch's number: kernels/common/stream_k_marks.cuh), adds what C holds
// and stores. So a result is the same bit for bit from launch to launch,
// and nothing a launch leaves behind, finished or not, changes the next.
// A block walks its range backwards: the piece whose slice 0 it holds comes
// first, the one it waits for last, so a wait finds its piece done.
//
// Counter that shows it: the SM balance (Nsight Compute: the mean SM's
// active cycles over the busiest's) rises toward 1, and the clock inside
// the launch (devbench's CLOCK_TRACE) says what the power cap takes back
// of the four SMs' share: 132 busy SMs draw more than 128. The step's page gives the
// measured values.
//
// Ragged sizes: as step 44 (the host's aligned copies where rows are off
// 16 bytes); any K, a piece of one slice included.
//
// Parameters: step 44's, the grid every SM, and MIN_PIECE, the fewest
// K-slices a block's share of the cut tiles should hold (scheduler.cuh says
// why; 1024 cut into two pieces a tile rather than four); the kernel takes
// the launch's number after its maps (`launch_number` in the registry).
// Needs sm_90a.

#include "../sm90/mainloop_bf16.cuh"
#include "../sm90/gemm.cuh"
#include "../common/pad_copy.cuh"   // pad_copy: the operands onto 16 bytes (align_rows in the registry)

using Mainloop = Bf16Mainloop<true, false, B_BLOCKS>;
using Scheduler = StreamKTiles<GROUP, MIN_PIECE>;

extern "C" __global__ void __launch_bounds__(Mainloop::THREADS, 1)
gpu_wgmma_bf16_stream_k(int M, int N, int K, const bf16* __restrict__ A, const bf16* __restrict__ B,
                        float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                        const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c,
                        unsigned launch)
{
    stream_k_start(launch);
    gemm<Mainloop, Scheduler, BufferStore, 1>(M, N, K, A, B, C, &map_a, &map_b, &map_c);
}
