// The persistent grid's pieces that both tensor-core chapters use (TF32:
// steps 26 and 27, persistent.cuh; BF16: 34 and later, persistent_bf16.cuh):
// which tiles a cluster computes, in ring.cuh's grouped order, and C's way
// out through a buffer of each consumer warpgroup's own. persistent.cuh's
// header says what changes when a block computes many tiles instead of one.
//
// Before it is included: the including pipeline's STAGE_BYTES and
// CONSUMERS (ring.cuh's needs).

#pragma once

#include "ring.cuh"

// The tiles of an M x N product, in cluster tiles (CLUSTER tiles side by side: the cluster's blocks take the
// same rows), numbered in step 23's grouped order.
struct TileGrid {
    int rows, columns;

    __device__ TileGrid(int M, int N) : rows((M + BM - 1) / BM), columns(((N + BN - 1) / BN + CLUSTER - 1) / CLUSTER)
    {
    }
    __device__ int total() const { return rows * columns; }
    __device__ int2 origin(int order) const { return grouped_origin(order, rows, columns); }
};

// Step 26: a fixed share. Cluster c takes tiles c, c + clusters, c + 2 clusters, ... (CUTLASS's static
// persistent scheduler). next() gives the next tile's number, or -1 when the share is done.
struct StridedTiles : TileGrid {
    int order;

    __device__ StridedTiles(int M, int N, bool) : TileGrid(M, N), order(blockIdx.x / CLUSTER) {}
    __device__ static void init() {}
    __device__ int next()
    {
        const int mine = order;
        order += gridDim.x / CLUSTER;
        return mine < total() ? mine : -1;
    }
};

// Step 27: handed out in order, one at a time, to whichever cluster asks first. Cluster c starts on tile c,
// as a grid of one tile a block would. As it starts a tile, thread 0 of its block 0 (the drawer) draws a
// ticket from a counter in global memory (atomicAdd): ticket t is tile clusters + t, the cluster's next.
// When the cluster is done producing this tile, the drawer writes that number into a slot of both blocks'
// shared memory (store_cluster), with an arrival on each block's slot_full barrier; every warp of both
// blocks waits for it, reads it, and arrives on block 0's slot_empty. Two slots, used in turn. So the
// clusters running at one time hold tiles next to each other in the order, as a grid of one tile a block
// does (step 23), however far some clusters have run ahead; and the atomic's trip to L2 is hidden behind a
// tile. A cluster draws until a ticket lies past the last tile, and one without a first tile draws none:
// total() tickets a launch in all, and the drawer of the last one sets the counter back to 0 for the next
// launch. A launch that does not finish leaves the context unusable (a fault or a trap is sticky in CUDA),
// and a new context loads the module with the counter at 0; two launches of one module at once on two
// streams would share it (the study launches one at a time).
//
// Step 44 (DRAW_LATE = 1): the drawer draws each ticket when it is about to publish it, as the producer is done
// producing the tile before, instead of as that tile starts. A block then asks for work when it needs it, as a
// persistent worker takes the next item from a global pool when it runs out (Aila and Laine's persistent
// threads), so the order of the tickets is the order in which the blocks got through their tiles. Drawn a tile
// ahead, it was the order in which they started them, and ptxas's warp-aggregated atomicAdd made thread 0,
// which makes every copy, wait for the atomic's trip to L2 before its first copy of each tile (6fbf69a:notes/bf16.md).
__device__ unsigned tile_ticket;   // the next ticket; 0 between launches
__shared__ int tile_slot[2];
__shared__ uint64_t slot_full[2], slot_empty[2];

// The producer warpgroup's warps that walk the tiles: all four (the queued steps 27, 37 to 41), or only warp 0,
// whose thread 0 makes all of the producer's copies (step 42; the others leave: persistent_bf16.cuh).
#ifndef PRODUCER_WARPS
#define PRODUCER_WARPS 4
#endif
static_assert(PRODUCER_WARPS == 1 || PRODUCER_WARPS == 4, "PRODUCER_WARPS: 4, or 1 (step 42)");

// When the drawer draws a ticket: as a tile starts, for the next one (0: steps 27, 37 to 43), or as it
// publishes it (1: step 44).
#ifndef DRAW_LATE
#define DRAW_LATE 0
#endif

struct QueuedTiles : TileGrid {
    int taken;          // slots read so far
    bool drawer;        // thread 0 of the cluster's block 0
    unsigned ticket;    // the drawer's, for the next slot: drawn a tile ahead, its value needed only then

    __device__ QueuedTiles(int M, int N, bool draws) : TileGrid(M, N), taken(0), drawer(draws), ticket(0) {}

    // Thread 0 of each block, before the cluster's first barrier: slot_full waits for the drawer's one
    // arrival, slot_empty (block 0's) for one from every warp of the cluster that walks the tiles.
    __device__ static void init()
    {
        for (int s = 0; s < 2; ++s) {
            mbarrier_init(&slot_full[s], 1);
            mbarrier_init(&slot_empty[s], (PRODUCER_WARPS + 4 * CONSUMERS) * CLUSTER);
        }
    }

    __device__ int first() const
    {
        const int c = blockIdx.x / CLUSTER;
        return c < total() ? c : -1;
    }

    __device__ int tile_of(unsigned t) const
    {
        if (t == unsigned(total() - 1))
            atomicExch(&tile_ticket, 0u);   // the launch's last ticket: every cluster has drawn its last
        const unsigned tile = t + gridDim.x / CLUSTER;
        return tile < unsigned(total()) ? int(tile) : -1;
    }

    __device__ void publish(int s, int use, int tile) const   // into slot s of both blocks, its use-th time
    {
        mbarrier_wait(&slot_empty[s], (use + 1) % 2);   // every warp has read what it held before
        for (unsigned r = 0; r < CLUSTER; ++r) {
            store_cluster(&tile_slot[s], r, tile);
            mbarrier_arrive_release_cluster(&slot_full[s], r);
        }
    }

    // Called by every thread of both blocks, the same number of times: the next tile, or -1 when none is left.
    // The first is each thread's own to work out; the drawer publishes each later one into slot (j - 1) % 2,
    // from the ticket it drew a tile before, and draws the next ticket once it has published (DRAW_LATE 0);
    // or from a ticket it draws there and then (DRAW_LATE 1). Either way one ticket is drawn for each tile a
    // cluster gets.
    __device__ int next()
    {
        const int j = taken++;
        int tile = first();
        if (j > 0) {
            const int s = (j - 1) % 2, use = (j - 1) / 2;   // the slot, and how many times it was used before
            if (drawer)
                publish(s, use, tile_of(DRAW_LATE ? atomicAdd(&tile_ticket, 1u) : ticket));
            mbarrier_wait_acquire_cluster(&slot_full[s], use % 2);
            tile = tile_slot[s];
            __syncwarp();
            if (threadIdx.x % 32 == 0)
                mbarrier_arrive_cluster(&slot_empty[s], 0);
        }
        if (!DRAW_LATE && drawer && tile >= 0)
            ticket = atomicAdd(&tile_ticket, 1u);
        return tile;
    }
};

// C's buffers: each consumer warpgroup's, after the ring, two boxes of C of 64 rows by 32 FP32 columns (16 KB),
// filled and sent a quarter of its part of the tile at a time.
constexpr int C_ROWS = 64, C_BOX_BYTES = C_ROWS * 32 * 4;   // a box of C: 64 rows by 32 columns
constexpr int C_BUFFER_BYTES = 2 * C_BOX_BYTES;             // a consumer warpgroup's: 64 columns
static_assert(STAGES * STAGE_BYTES + CONSUMERS * C_BUFFER_BYTES + 1024 <= 227 * 1024,
              "the ring and C's buffers must fit in a block's 227 KB of shared memory");

// Consumer warpgroup `warpgroup`'s buffer for C, after the ring (both 1024-byte aligned, for the swizzle).
__device__ __forceinline__ unsigned char* c_buffer(int warpgroup)
{
    return the_ring().stages + STAGES * STAGE_BYTES + (warpgroup - 1) * C_BUFFER_BYTES;
}

// Where C(row + m, col + n) of a quarter sent from (row, col) lies in the buffer: where a TMA load of its two
// boxes would have put it (128-byte swizzle; step 20's layout).
__device__ __forceinline__ int c_buffer_offset(int m, int n)
{
    return (n / 32) * C_BOX_BYTES + m * 128 + ((((n % 32) / 4) ^ (m % 8)) << 4) + (n % 4) * 4;
}

// One quarter of a consumer warpgroup's part of a tile, 64 x 64 of C from (row, col), out through its buffer:
// its lead thread waits until the copy engine has read the last quarter out of the buffer; the warpgroup meets;
// every thread writes its values of the quarter (`write`, at c_buffer_offset from `out`), fences (the copy
// engine reads what ordinary stores wrote) and meets again; the lead thread sends both boxes, clipped to C,
// and goes on without waiting. Named barrier 1 + warpgroup: 128 threads, not the producer, not the other
// consumer.
template <class Write>
__device__ __forceinline__ void send_quarter(int warpgroup, const CUtensorMap* map_c, int row, int col, bool lead,
                                             Write write)
{
    unsigned char* out = c_buffer(warpgroup);
    if (lead)
        tma_store_wait_read();
    named_barrier(1 + warpgroup, 128);
    write(out);
    fence_proxy_async();
    named_barrier(1 + warpgroup, 128);
    if (lead) {
        for (int j = 0; j < 2; ++j)
            tma_store_2d(map_c, col + 32 * j, row, out + j * C_BOX_BYTES);
        tma_store_commit();
    }
}
