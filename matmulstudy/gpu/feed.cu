// How fast the copy engine (TMA) can fill one multiprocessor's shared memory
// while every multiprocessor asks at once: the ceiling on what a TMA + wgmma
// mainloop can be fed, in bytes per SM clock, with and without TMA multicast
// across a cluster of two blocks (matmulstudy/tools/feed.py runs it).
//
// Why: a mainloop whose tile is smaller per tensor-core instruction needs more
// bytes a clock. Per K-slice of 64 BF16, a 128 x 256 block tile (two consumer
// warpgroups of 64 x 256) brings 48 KB for 2 x 64 x 256 x 64 products; two
// 128 x 128 tiles, one a consumer (ping-pong), bring 64 KB for as many. Which
// of them the copy engine can feed at the tensor cores' rate is what this
// measures, before either is written.
//
// What it does: a block a multiprocessor (one thread the producer, one warp
// the consumer, the rest idle), a ring of `stages` stages of `boxes` boxes of
// 64 rows by 128 bytes (8 KB, the 128-byte swizzle of the GEMM's maps), and
// `slices` slices through it. The consumer waits for each stage to be full
// and gives it back at once: no arithmetic, so the time is the feed alone. In
// a pair (CLUSTER_PAIR), the first `shared_boxes` of a stage are the same for
// both blocks: each brings half of them into both (TMA multicast), as the
// TF32 chapter's clusters share A's slices, and each block's stage is full
// when its own boxes and both halves have landed. The source is one matrix of
// BF16 values, read a slice (64 columns) at a time along its rows, block b's
// own boxes at rows of its own, the shared ones at rows of its cluster's.
//
// Each block writes, for the host: the SM clock's cycles and the global
// timer's nanoseconds from its first copy to its last full stage, the bytes
// that landed in its shared memory, and its multiprocessor's number. Bytes
// over cycles is the feed a clock; cycles over nanoseconds the SM clock inside
// the launch.
//
// Sources: the PTX ISA (cp.async.bulk.tensor, .multicast::cluster, mbarrier
// complete_tx, %globaltimer); CUTLASS SM90's TMA multicast (its collective
// mainloops share A along a cluster's row, B along its column).

#include "../../kernels/sm90/hopper.cuh"

constexpr int MAX_STAGES = 8, BOX_BYTES = 64 * 128;   // a box: 64 rows of 128 bytes

__device__ __forceinline__ unsigned sm_id()
{
    unsigned id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    return id;
}

extern __shared__ unsigned char feed_memory[];
__shared__ uint64_t feed_full[MAX_STAGES], feed_empty[MAX_STAGES];

// PAIR: a cluster of two blocks sharing the first shared_boxes of each stage. slices: K-slices through the ring
// of `stages` stages (up to MAX_STAGES) of `boxes` boxes; rows, cols: the source matrix's, in BF16 values, whole
// boxes; out: 4 numbers a block (cycles, nanoseconds, bytes, SM).
template <bool PAIR>
__device__ __forceinline__ void feed(const CUtensorMap* map, int slices, int boxes, int shared_boxes, int stages,
                                     int rows, int cols, unsigned long long* out)
{
    unsigned char* ring = feed_memory + (1024 - smem_address(feed_memory) % 1024) % 1024;
    const int stage_bytes = boxes * BOX_BYTES;
    const unsigned rank = PAIR ? cluster_rank() : 0;
    const int cluster = PAIR ? blockIdx.x / 2 : blockIdx.x;
    if (threadIdx.x == 0) {
        for (int s = 0; s < stages; ++s) {
            mbarrier_init(&feed_full[s], 1);
            mbarrier_init(&feed_empty[s], PAIR ? 2 : 1);   // the consumer warp of each block that a stage feeds
        }
        mbarrier_init_fence();
    }
    if (PAIR)
        cluster_sync();
    else
        __syncthreads();
    const int row_groups = rows / (64 * boxes), col_slices = cols / 64;
    if (threadIdx.x == 0) {   // the producer
        for (int s = 0; s < slices; ++s) {
            const int stage = s % stages;
            mbarrier_wait(&feed_empty[stage], ((s / stages) % 2) ^ 1);
            mbarrier_arrive_expect_bytes(&feed_full[stage], stage_bytes);
            unsigned char* dst = ring + stage * stage_bytes;
            const int x = (s % col_slices) * 64;
            for (int j = 0; j < boxes; ++j) {
                if (PAIR && j < shared_boxes) {   // this block's half of the shared boxes, into both blocks
                    if (j % 2 == int(rank))
                        tma_load_2d_multicast(dst + j * BOX_BYTES, map, x,
                                              ((cluster % row_groups) * boxes + j) * 64, &feed_full[stage], 0b11);
                } else {
                    tma_load_2d(dst + j * BOX_BYTES, map, x, ((blockIdx.x % row_groups) * boxes + j) * 64,
                                &feed_full[stage]);
                }
            }
        }
    } else if (threadIdx.x / 32 == 1) {   // the consumer warp: each stage given back as soon as it is full
        const uint64_t cycles0 = clock64(), ns0 = global_ns();   // as the producer starts: both left the barrier
        for (int s = 0; s < slices; ++s) {
            const int stage = s % stages;
            mbarrier_wait(&feed_full[stage], (s / stages) % 2);
            __syncwarp();
            if (threadIdx.x % 32 == 0) {
                if (PAIR) {
                    mbarrier_arrive_cluster(&feed_empty[stage], 0);
                    mbarrier_arrive_cluster(&feed_empty[stage], 1);
                } else {
                    mbarrier_arrive(&feed_empty[stage]);
                }
            }
        }
        if (threadIdx.x % 32 == 0) {
            const uint64_t cycles = clock64(), ns = global_ns();
            out[4 * blockIdx.x + 0] = cycles - cycles0;
            out[4 * blockIdx.x + 1] = ns - ns0;
            out[4 * blockIdx.x + 2] = uint64_t(slices) * stage_bytes;
            out[4 * blockIdx.x + 3] = sm_id();
        }
    }
    if (PAIR)
        cluster_sync();   // neither block ends while the other may still write into it or arrive on it
}

// Launched by matmulstudy/tools/feed.py.
extern "C" __global__ void __launch_bounds__(128, 1)
tma_feed(int slices, int boxes, int shared_boxes, int stages, unsigned long long* out, int rows, int cols,
         const __grid_constant__ CUtensorMap map)
{
    feed<false>(&map, slices, boxes, 0, stages, rows, cols, out);
}

extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128, 1)
tma_feed_pair(int slices, int boxes, int shared_boxes, int stages, unsigned long long* out, int rows, int cols,
              const __grid_constant__ CUtensorMap map)
{
    feed<true>(&map, slices, boxes, shared_boxes, stages, rows, cols, out);
}
