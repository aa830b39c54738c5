// Step 30: step 29's kernel at every shape, its operands first copied where
// their rows do not start on 16 bytes.
//
// Source: the copy engine's rule (CUDA driver API, cuTensorMapEncodeTiled:
// the global address aligned to 16 bytes, every row stride a multiple of 16
// bytes), and padding to an aligned leading dimension, the usual answer to
// an alignment requirement: CUTLASS's kernels take each operand's alignment
// as a parameter (kAlignmentA, kAlignmentB) and fall back to 4-byte loads for
// alignment 1, as cuBLAS does at 4096x4096x4095 (ncu: an sm80 `..._align1`
// kernel).
//
// The problem: with K or N not a multiple of 4, no tensor map describes A or
// B, and steps 25 to 29 load those slices with their own threads, 4 bytes at
// a time: at 4096x4096x4095 a small fraction of cuBLAS TF32, slower than the
// FP32 steps.
//
// What changes: nothing in the multiplication. Before it, where K or N is not
// a multiple of 4, pad_copy copies A into a workspace of M rows of K4 =
// ceil(K / 4) * 4 columns and B into one of K4 rows of N4 columns, zeros in
// the columns and rows added; step 29's kernel then multiplies the (M, N4, K4)
// problem, every row on 16 bytes, through the copy engine, into a workspace C
// of N4 columns, which pad_copy copies back to C's N columns. The added zeros
// change no sum (x * 0 adds exactly 0). The copies are part of the timed
// launch; the workspace is allocated once per shape (matmulstudy/gpu/launch.py,
// and matmulstudy/gpu/launch.cu for the sanitizer: the same sequence). At
// shapes whose rows already start on 16 bytes, step 30 is step 29 without
// the producer's own loads (the mainloop's OwnLoads false).
//
// Counter that shows it: each kernel's time and DRAM bytes at a shape whose
// K or N is odd (ncu, devbench): the copies of A and B a small part of the
// launch, the multiplication past cuBLAS TF32 there, and C's copy back the
// largest of the copies at 1537x3001x997. The step's page gives the measured
// values.
//
// Parameters: step 29's. Needs sm_90a.

#include "../sm90/mainloop_tf32.cuh"
#include "../sm90/gemm.cuh"
#include "../common/pad_copy.cuh"   // pad_copy: the operands onto 16 bytes (align_rows in the registry)

using Tile = TileShape<BM, BN, BK>;
using Stages = StageCount<STAGES>;
using Cluster = ClusterShape<CLUSTER>;
using Mainloop = Tf32Mainloop<Tile, Stages, Cluster,
                              Overlap::next_slice, Fragments::rounded, Unaligned::host_copies>;
using Scheduler = OneTile<Tile, Cluster, GROUP>;
using Kernel = Gemm<Mainloop, Scheduler, RingStore>;

extern "C" __global__ void __cluster_dims__(Kernel::CLUSTER_SIZE, 1, 1) __launch_bounds__(Kernel::THREADS, 1)
gpu_wgmma_aligned(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                  float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                  const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c,
                  Workspace* workspace)
{
    Kernel::run(M, N, K, A, B, C, &map_a, &map_b, &map_c, workspace);
}

// its shared memory and workspace, read by the host (gemm.cuh)
extern "C" __constant__ const LaunchFacts gpu_wgmma_aligned_facts = Kernel::FACTS;
