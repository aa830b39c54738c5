// Step 40: step 39's kernel at every shape, its operands first copied where
// their rows do not start on 16 bytes.
//
// Source: the copy engine's rule (CUDA driver API, cuTensorMapEncodeTiled:
// the global address aligned to 16 bytes, every row stride a multiple of 16
// bytes), and padding to an aligned leading dimension, as the TF32 chapter's
// step 30 does; CUTLASS's kernels take each operand's alignment as a
// parameter (kAlignmentA, kAlignmentB), and cuBLAS BF16 falls to a fraction
// of its speed where K or N is odd.
//
// The problem: with K or N not a multiple of 8 (BF16: 8 elements in 16
// bytes), no tensor map describes A or B, and steps 38 and 39 load those
// slices with the producer's own threads, 2 bytes at a time: at
// 4096x4096x4095 step 39 runs at a small fraction of cuBLAS BF16, and below
// the mma.sync step 37 (devbench).
//
// What changes: nothing in the multiplication, and the producer's own loads
// go (a launch without the copies traps). Before it, where K or N is not a
// multiple of 8, pad_copy_16 copies A into a workspace of M rows of Kp =
// ceil(K / 8) * 8 columns and B into one of Kp rows of Np columns, zeros in
// the columns and rows added; the kernel multiplies the (M, Np, Kp) problem
// through the copy engine into a workspace C of Np columns, which pad_copy
// copies back to C's N columns. The added zeros change no sum. The copies
// are part of the timed launch; the workspace is allocated once per shape
// (matmulstudy/gpu/launch.py, and launch.cu for the sanitizer). At shapes
// whose rows already start on 16 bytes, step 40 is step 39.
//
// Counter that shows it: the time at a shape whose K or N is odd, many times
// faster, past cuBLAS BF16 there. At the aligned shapes it is step 39 without
// the producer's own loads, and was measured faster there too, the tensor
// pipe busier (ncu); why leaving out code that never runs there helps was not
// measured further. The step's page gives the measured values.
//
// Parameters: step 39's. Needs sm_90a.

#include "../sm90/mainloop_bf16.cuh"
#include "../sm90/gemm.cuh"
#include "../common/pad_copy.cuh"   // pad_copy: the operands onto 16 bytes (align_rows in the registry)

using Tile = TileShape<BM, BN, BK>;
using Stages = StageCount<STAGES>;
using Mainloop = Bf16Mainloop<Tile, Stages, Descriptors::per_wgmma, Unaligned::host_copies>;
using Scheduler = StridedTiles<Tile, ClusterShape<1>, 1>;
using Kernel = Gemm<Mainloop, Scheduler, BufferStore>;

extern "C" __global__ void __launch_bounds__(Kernel::THREADS, 1)
gpu_wgmma_bf16_aligned(int M, int N, int K, const bf16* __restrict__ A, const bf16* __restrict__ B,
                       float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                       const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c,
                       Workspace* workspace)
{
    Kernel::run(M, N, K, A, B, C, &map_a, &map_b, &map_c, workspace);
}

// its shared memory and workspace, read by the host (gemm.cuh)
extern "C" __constant__ const LaunchFacts gpu_wgmma_bf16_aligned_facts = Kernel::FACTS;
