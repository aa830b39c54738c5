// Step 44: step 43's kernel on the fewest blocks that take the tiles in as
// many rounds: every block computes as many tiles as the busiest.
//
// Source: pranjalssh's fast.cu (kernel 12, the H100 worklog "Outperforming
// cuBLAS on H100"), which launches its persistent kernel on 128 of the
// H100's 132 multiprocessors; wave quantization as NVIDIA's Matrix
// Multiplication Background guide names it (a grid's last, partial round of
// tiles). CUTLASS's persistent schedulers take the block count from the
// caller (KernelHardwareInfo::sm_count) for the same reason.
//
// The problem: at 4096 C has 512 tiles of 128 x 256. A block a
// multiprocessor (132) takes them in four rounds whatever it does: three
// whole rounds, then 116 tiles for 132 blocks, so the busiest blocks compute
// four tiles and 16 multiprocessors sit out the last round. Through the first
// three rounds all 132 load their slices at once; the main loop's time is set
// by those loads (with none after the ring's first fill, a tile takes about a
// tenth less time, 6fbf69a:notes/bf16.md), and the extra four blocks add to
// the traffic without taking a round off.
//
// What changes: the blocks that take tiles (the scheduler's WholeRounds; the
// grid stays a block an SM, and the others end at once): rounds =
// ceil(tiles / 132), blocks = ceil(tiles / rounds). At 4096 and 8192 that is
// 128 blocks of exactly 4 and 16 tiles; at 1537 x 3001 (156 tiles) 78 blocks
// of 2; at 2048 (128 tiles) 128, as before. Only QueuedTiles' count of the
// clusters that take tiles changes: it hands tiles to however many ask.
//
// Counters that show it: DRAM bytes read (ncu at 4096), lower, and L2's hit
// rate, higher; likely because 128 blocks walking the grouped order 16 tile
// rows at a time hold a patch of exactly 16 x 8 tiles, where 132 hold 4 tiles
// of a ninth column too (not measured tile by tile). The main loop's time a
// tile, fitted over K (devbench --fit-k), should move the same way. Not the
// tensor pipe's busy share: ncu averages it over all 132 multiprocessors, the
// four that sit the launch out included, and on the H200 it stayed level.
// The step's page gives the measured values.
//
// Ragged sizes: as step 43, and its result bit for bit (each element the
// same sum in the same order, whichever block computes its tile).
//
// Parameters: step 43's. Needs sm_90a.

#include "../sm90/mainloop_bf16.cuh"
#include "../sm90/gemm.cuh"
#include "../common/pad_copy.cuh"   // pad_copy: the operands onto 16 bytes (align_rows in the registry)

using Tile = TileShape<BM, BN, BK>;
using Stages = StageCount<STAGES>;
using Mainloop = Bf16Mainloop<Tile, Stages, Descriptors::per_wgmma, Unaligned::host_copies, B_BLOCKS>;
using Scheduler = QueuedTiles<Tile, ClusterShape<1>, GROUP, Takers::whole_rounds>;
using Kernel = Gemm<Mainloop, Scheduler, BufferStore>;

extern "C" __global__ void __launch_bounds__(Kernel::THREADS, 1)
gpu_wgmma_bf16_whole_waves(int M, int N, int K, const bf16* __restrict__ A, const bf16* __restrict__ B,
                           float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                           const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c,
                           Workspace* workspace)
{
    Kernel::run(M, N, K, A, B, C, &map_a, &map_b, &map_c, workspace);
}

// its shared memory and workspace, read by the host (gemm.cuh)
extern "C" __constant__ const LaunchFacts gpu_wgmma_bf16_whole_waves_facts = Kernel::FACTS;
