// Step 39: step 38's producer and consumers in a persistent grid: a block
// per multiprocessor, walking its share of the tiles, the producer running
// on into the next tile while the consumers store this one through a
// buffer of their own, by the copy engine.
//
// Sources: the persistent, warp-specialised kernels of CUTLASS's SM90 GEMMs
// (KernelTmaWarpSpecializedCooperative with its persistent tile scheduler;
// the TMA epilogue through its own shared memory), and pranjalssh's fast.cu
// worklog for the H100 (a persistent BF16 kernel past cuBLAS). The TF32
// chapter's step 32 is the same change; its pieces are reused as they are
// (StridedTiles, and BufferStore: C's buffers and their sends).
//
// The problem: through step 38 a block computes one 128 x 256 tile and
// ends. Every tile then pays, with the tensor cores idle, for its block's
// start (the barriers, the first slices' trip from DRAM while the ring
// fills) and for its end (128 KB of C written from registers, 8 bytes a
// thread at a time, while nothing else runs on the multiprocessor). At
// 4096 that is 512 tiles on 132 multiprocessors: about four starts and ends
// each, against a main loop of 64 slices a tile.
//
// What changes: which tiles a block computes, and C's way out
// (kernels/sm90/: StridedTiles, BufferStore). The grid is the multiprocessors
// (132 blocks on an H100 or H200); block b takes tiles b, b + 132,
// b + 264, ... in row order. The ring's count runs on across tiles, so the
// producer fills the next tile's first stages while the consumers finish
// this tile and store it; each consumer stores its 64 x 256 part through a
// 16 KB buffer after the ring, 64 columns at a time (two boxes of 64 x 32),
// and waits for the copy engine only before it writes the buffer again. The
// main loop is step 38's.
//
// Counter that shows it: the tensor pipe's busy share (ncu), higher at 4096,
// and its idle cycles per tile (an SM's idle cycles over its tiles), lower;
// the global-store instructions gone (the copy engine's stores are not the
// threads' instructions). At 8192 it loses: 132 blocks in row order hold about
// four tile rows at a time, and B (128 MB) does not stay in the 50 MB of L2,
// so each tile row reads it again from DRAM (ncu). Step 41 mends that. The
// step's page gives the measured values.
//
// Ragged sizes: as step 38 (the copy engine zero-fills and clips every box;
// where rows are off 16 bytes the producer loads by itself, and where C's
// rows are, the consumers store by themselves). A block with no tile (more
// blocks than tiles) ends at once. The result is step 38's bit for bit:
// each element is the same sums in the same order, whichever block
// computes it.
//
// Parameters: step 38's; the grid is the registry's. Needs sm_90a.

#include "../sm90/mainloop_bf16.cuh"
#include "../sm90/gemm.cuh"

using Tile = TileShape<BM, BN, BK>;
using Stages = StageCount<STAGES>;
using Mainloop = Bf16Mainloop<Tile, Stages, Descriptors::per_wgmma, Unaligned::own_loads>;
using Scheduler = StridedTiles<Tile, ClusterShape<1>, 1>;
using Kernel = Gemm<Mainloop, Scheduler, BufferStore>;

extern "C" __global__ void __launch_bounds__(Kernel::THREADS, 1)
gpu_wgmma_bf16_persistent(int M, int N, int K, const bf16* __restrict__ A, const bf16* __restrict__ B,
                          float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                          const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c,
                          Workspace* workspace)
{
    Kernel::run(M, N, K, A, B, C, &map_a, &map_b, &map_c, workspace);
}

// its shared memory and workspace, read by the host (gemm.cuh)
extern "C" __constant__ const LaunchFacts gpu_wgmma_bf16_persistent_facts = Kernel::FACTS;
