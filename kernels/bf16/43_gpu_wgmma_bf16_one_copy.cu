// Step 43: step 42's kernel, each slice of B brought into the ring by one
// copy instead of four.
//
// Source: CUTLASS's SM90 TMA copies (cute/atom/copy_traits_sm90_tma.hpp:
// make_tma_copy makes the box as large as the shared-memory layout allows,
// folding a tile's swizzle-wide blocks into one box of a tensor map of up
// to five dimensions, so its mainloops ask for each operand's stage with
// one instruction); the PTX ISA (cp.async.bulk.tensor.3d) and the driver's
// cuTensorMapEncodeTiled (rank 3).
//
// The problem: a box of the 128-byte swizzle is at most 128 bytes wide, so
// step 42's producer asks the copy engine for five boxes a slice: A's
// 128 x 64 and B's four of 64 k by 64 columns, one per 128-byte block of
// its 256 columns. With no loads at all (the stages left as first filled:
// a wrong product, timed only) the main loop was about a tenth faster: the
// loads slow the tensor cores, while the consumers hardly wait for a stage.
// Splitting A's box in two or four made the main loop slower still
// (6fbf69a:notes/bf16.md).
//
// What changes: B's tensor map is 3-D, (a block's 64 columns, K rows, N / 64
// blocks; the blocks 128 bytes apart in global memory), and one box of it
// is the slice's four blocks side by side: the copy engine lays them one
// after another in shared memory, each as step 42's 2-D box would, so the
// stage's layout and everything that reads it stay as they are. Two copies
// a slice instead of five (the mainloop's BBlocks, sm90/producer.cuh; the
// registry's box [BK, 64, B_BLOCKS] makes the host's map: gpu/tma.py).
//
// Counter that shows it: UTMALDG in the producer's loop, 5 -> 2 a slice
// (SASS); the tensor pipe's busy share and the L2 hit rate (ncu at 4096) a
// little higher, and the tensor-pipe idle cycles per tile fewer. What it
// buys in time depends on the GPU: from nothing to a point or two at 4096,
// never slower at the study's shapes. The step's page gives the measured
// values.
//
// Ragged sizes: as step 42. Where N is not a multiple of 64, the last block
// would run into the next row, so the host's map is step 42's 2-D one and
// the producer makes four copies (the same rule on both sides). The result
// is step 42's bit for bit: the same bytes land in the same places.
//
// Parameters: step 42's, and B_BLOCKS = BN / 64. Needs sm_90a.

#include "../sm90/mainloop_bf16.cuh"
#include "../sm90/gemm.cuh"
#include "../common/pad_copy.cuh"   // pad_copy: the operands onto 16 bytes (align_rows in the registry)

using Tile = TileShape<BM, BN, BK>;
using Stages = StageCount<STAGES>;
using Mainloop = Bf16Mainloop<Tile, Stages, Descriptors::per_wgmma, Unaligned::host_copies, B_BLOCKS>;
using Scheduler = QueuedTiles<Tile, ClusterShape<1>, GROUP>;
using Kernel = Gemm<Mainloop, Scheduler, BufferStore>;

extern "C" __global__ void __launch_bounds__(Kernel::THREADS, 1)
gpu_wgmma_bf16_one_copy(int M, int N, int K, const bf16* __restrict__ A, const bf16* __restrict__ B,
                        float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                        const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c,
                        Workspace* workspace)
{
    Kernel::run(M, N, K, A, B, C, &map_a, &map_b, &map_c, workspace);
}

// its shared memory and workspace, read by the host (gemm.cuh)
extern "C" __constant__ const LaunchFacts gpu_wgmma_bf16_one_copy_facts = Kernel::FACTS;
