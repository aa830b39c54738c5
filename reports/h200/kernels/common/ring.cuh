// The ring of shared-memory stages that the TMA + wgmma steps pass their
// K-slices through (TF32: 19 and later, tma_pipeline.cuh; BF16: 33 and
// later, wgmma_bf16.cuh), and which tile of C a block computes. A change
// here rebuilds them all.
//
// STAGES stages, each one K-slice of the block's tile, as the including
// pipeline lays it out in STAGE_BYTES. Stage s is handed over on two
// mbarriers: full[s] (the producer's bytes, or its threads, have arrived)
// and empty[s] (every consumer warp of the cluster is done with it). The
// ring's position is a count of slices, so a phase's parity is
// (count / STAGES) % 2 on both sides.
//
// Before it is included: BM, BN and STAGES (-D defines), and the including
// pipeline's STAGE_BYTES and CONSUMERS (consumer warpgroups a block).

#pragma once

#include "hopper.cuh"

#ifndef CLUSTER
#define CLUSTER 1   // blocks of a cluster that share A's slices (step 22: 2)
#endif
#ifndef GROUP
#define GROUP 1     // tile rows a group of clusters walks down before moving right (step 23: 8); 1: launch order
#endif

struct Ring {
    unsigned char* stages;   // STAGES x STAGE_BYTES, 1024-byte aligned
    uint64_t* full;
    uint64_t* empty;

    __device__ unsigned char* stage(int count) const { return stages + (count % STAGES) * STAGE_BYTES; }

    // Thread 0, before the block's barrier: the copy engine's bytes (one arrival), or every producer thread.
    __device__ void init(bool tma) const
    {
        for (int s = 0; s < STAGES; ++s) {
            mbarrier_init(&full[s], tma ? 1 : 128);
            mbarrier_init(&empty[s], 4 * CONSUMERS * CLUSTER);   // one arrival per consumer warp of the cluster
        }
        mbarrier_init_fence();
    }
};

// The ring in the block's dynamic shared memory (STAGES x STAGE_BYTES plus 1 KB to align it: the registry's
// `shared`), its barriers in static shared memory. A view of it is cheap to make: each role makes its own
// after setmaxnreg (ptxas spills values kept across it).
extern __shared__ unsigned char ring_memory[];
__shared__ uint64_t ring_full[STAGES], ring_empty[STAGES];

__device__ __forceinline__ Ring the_ring()
{
    return Ring{ring_memory + (1024 - smem_address(ring_memory) % 1024) % 1024, ring_full, ring_empty};
}

// The tile a block computes: its first row and column of C. Blocks start roughly in launch order (x fastest,
// a cluster's blocks together), so the blocks running at one time compute neighbouring tiles of that order.
// With GROUP = 1 that is a band of whole tile rows: each block's slice of B is read by few others while it is
// in L2. With GROUP > 1 (step 23) the clusters walk down GROUP tile rows before moving one cluster right, so
// the blocks running at once cover a squarer patch of C and read fewer distinct bytes of A and B from DRAM.
// Tile number `order` of a rows x columns grid of cluster tiles (a cluster tile: CLUSTER tiles side by side),
// walking GROUP tile rows down before moving one cluster tile right: the first row and column of C of this
// block's tile in it (its rank in the cluster picks the column).
__device__ __forceinline__ int2 grouped_origin(int order, int rows, int columns)
{
    const int first = order / (GROUP * columns) * GROUP;   // its group's first tile row
    const int height = min(GROUP, rows - first);           // the last group may be shorter
    const int within = order - first * columns;
    return make_int2((first + within % height) * BM, (within / height * CLUSTER + blockIdx.x % CLUSTER) * BN);
}

__device__ __forceinline__ int2 tile_origin()
{
    if (GROUP == 1)
        return make_int2(blockIdx.y * BM, blockIdx.x * BN);
    const int columns = gridDim.x / CLUSTER;   // clusters across (the grid is whole clusters)
    return grouped_origin(blockIdx.y * columns + blockIdx.x / CLUSTER, gridDim.y, columns);   // launch order
}

// Thread 0 initialises the barriers, then the whole block (the whole cluster: its blocks write into each
// other's rings) waits for it.
__device__ __forceinline__ void setup_ring(bool tma)
{
    if (threadIdx.x == 0)
        the_ring().init(tma);
    if (CLUSTER == 1)
        __syncthreads();
    else
        cluster_sync();
}
