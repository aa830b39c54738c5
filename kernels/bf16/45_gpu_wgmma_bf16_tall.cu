// Step 45: a taller tile, 192 x 256, on three consumer warpgroups and no
// producer warpgroup: one consumer thread makes the copies.
//
// Source: CUTLASS SM90's kernel that is not warp-specialised (KernelTma,
// cutlass/gemm/kernel/sm90_gemm_tma.hpp with the mainloop of
// collective/sm90_mma_tma_gmma_ss.hpp: every warpgroup multiplies, and one
// thread issues the TMA copies a ring of stages ahead; a tile a block there,
// persistent here); the bytes a product of a tile, (BM + BN) / (BM x BN), as
// in every tiled GEMM since the seeds (step 9's flop a byte).
//
// The problem: the copy engine fills one SM's shared memory at a bounded
// rate (tools/feed.py: bytes a clock an SM while every SM asks). A 128 x
// 256 tile brings 48 KB a K-slice of 64 for 128 x 256 x 64 products; at the
// tensor cores' dense BF16 rate that is 48 bytes a clock, more than the
// copy engine delivers, so step 44's main loop waits for its stages, not
// for its tensor cores. A taller tile needs fewer bytes for the same work.
// With a producer warpgroup, three consumers make a block of 512 threads,
// and ptxas then gives each thread 128 registers: fewer than a wgmma with
// 128 accumulators needs (ptxas asks for 154).
//
// What changes: the body (sm90/gemm_inline.cuh instead of gemm.cuh). The
// block is three consumer warpgroups (384 threads, 168 registers each, no
// setmaxnreg), each 64 rows of a 192 x 256 tile; thread 0 also keeps a
// cursor over the block's tiles and asks for each slice STAGES ahead, as
// its warp gives a stage back. A stage is 56 KB (A's 192 x 64, B's 64 x
// 256): three of them and the three consumers' C buffers fill the block's
// shared memory. The tiles come from step 44's queue: thread 0, its drawer,
// draws each tile's ticket as its cursor reaches the tile and publishes the
// number for the block's warps (the scheduler's lead()).
//
// Counter that shows it: the bytes the copy engine brings into each SM a
// product, 7/9 of step 44's (48 KB for 128 x 256 x 64, 56 KB for 192 x 256
// x 64); in Nsight Compute at 4096, L2's bytes read lower and the tensor
// pipe's busy share higher. The step's page gives the measured values.
//
// Ragged sizes: as step 44 (the copy engine zero-fills what lies outside A
// and B and clips C's boxes; the host copies operands whose rows are off 16
// bytes). M need not be a multiple of 192: the last tile row is partly
// zeros.
//
// Parameters: BM = 192, STAGES = 3 (the shared memory's limit), the rest
// step 44's. Needs sm_90a.

#include "../sm90/mainloop_bf16.cuh"
#include "../sm90/gemm_inline.cuh"
#include "../common/pad_copy.cuh"   // pad_copy: the operands onto 16 bytes (align_rows in the registry)

using Mainloop = Bf16Mainloop<true, false, B_BLOCKS>;
using Scheduler = QueuedTiles<GROUP, true, Draw::when_needed>;

extern "C" __global__ void __launch_bounds__(128 * Mainloop::CONSUMERS, 1)
gpu_wgmma_bf16_tall(int M, int N, int K, const bf16* __restrict__ A, const bf16* __restrict__ B,
                    float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                    const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c)
{
    gemm_inline<Mainloop, Scheduler, BufferStore>(M, N, K, A, B, C, &map_a, &map_b, &map_c);
}
