// Step 39: step 38's kernel on the fewest blocks that take the tiles in as
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
// by those loads (with none after the ring's first fill, a tile takes 36.3-
// 37.1 us instead of 40.4-42.1, 6fbf69a:notes/bf16.md), and the extra four blocks
// add to the traffic without taking a round off.
//
// What changes: only the grid (the registry's `grid: [whole_waves, 1]`,
// matmulstudy/study/variant.py): rounds = ceil(tiles / 132), blocks =
// ceil(tiles / rounds). At 4096 and 8192 that is 128 blocks of exactly 4
// and 16 tiles; at 1537 x 3001 (156 tiles) 78 blocks of 2; at 2048 (128
// tiles) 128, as before. The kernel is step 38's, instruction for
// instruction: QueuedTiles already hands tiles to however many blocks run.
//
// Counter that shows it: DRAM bytes read (ncu at 4096), lower: 148.7 ->
// 133.9 MB on GPU-3735863d (cuBLAS BF16: 150.9); likely because 128 blocks
// walking the grouped order 16 tile rows at a time hold a patch of exactly
// 16 x 8 tiles, where 132 hold 4 tiles of a ninth column too (not measured
// tile by tile). The tensor pipe's busy share rises 89.0 -> 89.8% (cuBLAS BF16:
// 90.3%), and the main loop's time a tile of 4096 k, fitted over K = 1024 to
// 8192 at M = N = 4096 (devbench --fit-k), falls 40.98 -> 40.40 us (cuBLAS
// BF16: 40.06). Measured with devbench against cuBLAS BF16 (H100,
// alternating rounds, 6fbf69a:notes/whole_waves/): on GPU-24c8e734 (three rounds, as
// a candidate of step 38) 97.5-98.5% at 4096 against step 38's 95.7-97.0%,
// 101.3-101.4% at 8192 against 99.95-100.0%, 196% at 1537x3001x997 against
// 189-190%; on GPU-3735863d (two rounds) 97.8-98.1% at 4096 against
// 96.2-96.5%, 101.4-101.6% at 8192 against 99.9-100.2%, 94.8-96.2% at
// 2048 against 94.5-95.3%.
//
// Ragged sizes: as step 38, and its result bit for bit (each element the
// same sum in the same order, whichever block computes its tile).
//
// Parameters: step 38's. Needs sm_90a.

#include "../common/persistent_bf16.cuh"   // step 38's kernel (B_BLOCKS reaches its producer)
#include "../common/pad_copy.cuh"          // step 35's copies where rows are off 16 bytes

#if GROUP < 2 || B_BLOCKS < 2
#error "GROUP (>= 2) and B_BLOCKS (>= 2) come from kernels/registry.yaml as -D defines"
#endif

extern "C" __global__ void __launch_bounds__(THREADS, 1)
gpu_wgmma_bf16_whole_waves(int M, int N, int K, const bf16* __restrict__ A, const bf16* __restrict__ B,
                           float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                           const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c)
{
    multiply_tiles<QueuedTiles, false>(M, N, K, A, B, C, &map_a, &map_b, &map_c);
}
