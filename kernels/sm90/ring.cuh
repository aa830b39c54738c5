// The ring of shared-memory stages through which the producer warpgroup hands
// K-slices to the consumer warpgroups, for any mainloop (mainloop_tf32.cuh,
// mainloop_smem.cuh): Mainloop::STAGE_COUNT stages of Mainloop::STAGE_BYTES, each
// one K-slice of the block's tile as that mainloop lays it out. The stages and
// their barriers lie in the block's shared memory (gemm.cuh's SharedStorage);
// a Ring is a view of them, cheap to make: each role makes its own where it
// needs one (ptxas spills values kept across setmaxnreg).
//
// Stage s is handed over on two mbarriers: full[s] (the producer's bytes, or
// its 128 threads, have arrived) and empty[s] (every consumer warp of the
// cluster is done with it). The ring's position is a count of slices, the
// same on both sides, so a phase's parity is (count / STAGE_COUNT) % 2.

#pragma once

#include "hopper.cuh"
#include "shapes.cuh"

// Where a matrix's rows are off 16 bytes the copy engine cannot read it (no tensor map); how a mainloop's slices
// reach the ring then (producer.cuh):
//   own_loads:   the producer warpgroup loads such a slice itself, element by element, into the same layout;
//   host_copies: the kernel is never launched on such operands: the host copies them onto 16 bytes first
//                (align_rows in the registry), so that the producer is the copy engine's alone.
enum class Unaligned { own_loads, host_copies };

template <class Mainloop>
struct Ring {
    static constexpr int STAGE_COUNT = Mainloop::STAGE_COUNT, CLUSTER_SIZE = Mainloop::CLUSTER_SIZE;
    unsigned char* stages;   // STAGE_COUNT x STAGE_BYTES, 1024-byte aligned (the 128-byte swizzle's pattern)
    uint64_t* full;
    uint64_t* empty;

    __device__ unsigned char* stage(int count) const { return stages + (count % STAGE_COUNT) * Mainloop::STAGE_BYTES; }

    // Thread 0, before the block's barrier: the copy engine's bytes (one arrival), or every producer thread.
    __device__ void init(bool tma) const
    {
        for (int s = 0; s < STAGE_COUNT; ++s) {
            mbarrier_init(&full[s], tma ? 1 : 128);
            mbarrier_init(&empty[s], 4 * Mainloop::CONSUMERS * CLUSTER_SIZE);   // a consumer warp of the cluster each
        }
        mbarrier_init_fence();
    }
};

// Thread 0 initialises the barriers (of a ring in the block's shared memory: gemm.cuh's SharedStorage), then the
// whole block (the whole cluster: its blocks write into each other's rings) waits for it.
template <class Mainloop>
__device__ __forceinline__ void setup_ring(const Ring<Mainloop>& ring, bool tma)
{
    if (threadIdx.x == 0)
        ring.init(tma);
    if (Mainloop::CLUSTER_SIZE == 1)
        __syncthreads();
    else
        cluster_sync();
}
