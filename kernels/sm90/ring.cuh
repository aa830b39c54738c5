// The ring of shared-memory stages through which the producer warpgroup hands
// K-slices to the consumer warpgroups, for any mainloop (mainloop_tf32.cuh,
// mainloop_smem.cuh): STAGES stages of Mainloop::STAGE_BYTES, each one
// K-slice of the block's tile as that mainloop lays it out.
//
// Stage s is handed over on two mbarriers: full[s] (the producer's bytes, or
// its 128 threads, have arrived) and empty[s] (every consumer warp of the
// cluster is done with it). The ring's position is a count of slices, the
// same on both sides, so a phase's parity is (count / STAGES) % 2.
//
// STAGES and CLUSTER are the registry's tunables (-D defines).

#pragma once

#include "hopper.cuh"

#if !defined(STAGES)
#error "STAGES comes from kernels/registry.yaml as a -D define"
#endif
#ifndef CLUSTER
#define CLUSTER 1   // blocks of a cluster that share A's slices (multicast, producer.cuh)
#endif

// Where a matrix's rows are off 16 bytes the copy engine cannot read it (no tensor map); how a mainloop's slices
// reach the ring then (producer.cuh):
//   own_loads:   the producer warpgroup loads such a slice itself, element by element, into the same layout;
//   host_copies: the kernel is never launched on such operands: the host copies them onto 16 bytes first
//                (align_rows in the registry), so that the producer is the copy engine's alone.
enum class Unaligned { own_loads, host_copies };

template <class Mainloop>
struct Ring {
    unsigned char* stages;   // STAGES x STAGE_BYTES, 1024-byte aligned (the 128-byte swizzle's pattern)
    uint64_t* full;
    uint64_t* empty;

    __device__ unsigned char* stage(int count) const { return stages + (count % STAGES) * Mainloop::STAGE_BYTES; }

    // Thread 0, before the block's barrier: the copy engine's bytes (one arrival), or every producer thread.
    __device__ void init(bool tma) const
    {
        for (int s = 0; s < STAGES; ++s) {
            mbarrier_init(&full[s], tma ? 1 : 128);
            mbarrier_init(&empty[s], 4 * Mainloop::CONSUMERS * CLUSTER);   // a consumer warp of the cluster each
        }
        mbarrier_init_fence();
    }
};

// The ring in the block's dynamic shared memory (STAGES x STAGE_BYTES plus 1 KB to align it: the registry's
// `shared`), its barriers in static shared memory. A view of it is cheap to make: each role makes its own
// after setmaxnreg (ptxas spills values kept across it).
extern __shared__ unsigned char ring_memory[];
__shared__ uint64_t ring_full[STAGES], ring_empty[STAGES];

template <class Mainloop>
__device__ __forceinline__ Ring<Mainloop> the_ring()
{
    return Ring<Mainloop>{ring_memory + (1024 - smem_address(ring_memory) % 1024) % 1024, ring_full, ring_empty};
}

// Thread 0 initialises the barriers, then the whole block (the whole cluster: its blocks write into each
// other's rings) waits for it.
template <class Mainloop>
__device__ __forceinline__ void setup_ring(bool tma)
{
    if (threadIdx.x == 0)
        the_ring<Mainloop>().init(tma);
    if (CLUSTER == 1)
        __syncthreads();
    else
        cluster_sync();
}
