// A persistent grid for the TMA + wgmma steps (26 and later): one cluster per pair of multiprocessors, each
// computing tile after tile, on step 25's producer and consumers (tma_pipeline.cuh). Step 26's header says
// why; this file holds the mechanics: which tiles a cluster takes (steps 26 and 27 differ only there), and
// C's way out through a buffer of its own.
//
// What changes when a block computes many tiles instead of one:
// - The ring's count runs on from tile to tile, on both sides, so a stage's phase is still (count / STAGES)
//   % 2; the producer goes on into the next tile's slices as soon as a stage is free, while the consumers
//   are still on this tile or storing it.
// - C can no longer go out through the ring (step 20), which by then holds the next tile's slices. Each
//   consumer warpgroup has a buffer of its own after the ring: two boxes of C of 64 rows by 32 columns
//   (16 KB; the ring's four stages leave 35 KB of the 227 KB), filled and sent four times a tile, a quarter
//   of its rows each time. Its copies are waited for only before the buffer is written again.
// - The blocks of a cluster write into each other's shared memory (A's halves, the ring's releases, step
//   27's tile numbers) until their last tile, whose end neither knows of the other. So every thread of both
//   ends with a cluster barrier, and the consumers release every slice: no arrival can find its block gone.
// - The grid is the GPU's multiprocessors, rounded down to whole clusters (the registry's `grid`, and
//   matmulstudy/gpu/launch.py cuts it to the clusters that can run at once). No block waits for another
//   cluster: the result does not depend on how many clusters run at once, only the time does.

#pragma once

#include <climits>

#include "tma_pipeline.cuh"

constexpr int C_ROWS = 64, C_BOX_BYTES = C_ROWS * 32 * 4;   // a box of C: 64 rows by 32 columns
constexpr int C_BUFFER_BYTES = 2 * C_BOX_BYTES;             // a consumer warpgroup's: its 64 columns
static_assert(BM % C_ROWS == 0 && BN == 64 * CONSUMERS, "C goes out in quarters of rows, 64 columns a consumer");
static_assert(STAGES * STAGE_BYTES + CONSUMERS * C_BUFFER_BYTES + 1024 <= 227 * 1024,
              "the ring and C's buffers must fit in a block's 227 KB of shared memory");

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
__device__ unsigned tile_ticket;   // the next ticket; 0 between launches
__shared__ int tile_slot[2];
__shared__ uint64_t slot_full[2], slot_empty[2];

struct QueuedTiles : TileGrid {
    int taken;          // slots read so far
    bool drawer;        // thread 0 of the cluster's block 0
    unsigned ticket;    // the drawer's, for the next slot: drawn a tile ahead, its value needed only then

    __device__ QueuedTiles(int M, int N, bool draws) : TileGrid(M, N), taken(0), drawer(draws), ticket(0) {}

    // Thread 0 of each block, before the cluster's first barrier: slot_full waits for the drawer's one
    // arrival, slot_empty (block 0's) for one from every warp of the cluster.
    __device__ static void init()
    {
        for (int s = 0; s < 2; ++s) {
            mbarrier_init(&slot_full[s], 1);
            mbarrier_init(&slot_empty[s], 4 * (1 + CONSUMERS) * CLUSTER);
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
    // The first is each thread's own to work out; the drawer publishes each later one (from the ticket it
    // drew a tile before) into slot (j - 1) % 2, and draws the next ticket once it has published.
    __device__ int next()
    {
        const int j = taken++;
        int tile = first();
        if (j > 0) {
            const int s = (j - 1) % 2, use = (j - 1) / 2;   // the slot, and how many times it was used before
            if (drawer)
                publish(s, use, tile_of(ticket));
            mbarrier_wait_acquire_cluster(&slot_full[s], use % 2);
            tile = tile_slot[s];
            __syncwarp();
            if (threadIdx.x % 32 == 0)
                mbarrier_arrive_cluster(&slot_empty[s], 0);
        }
        if (drawer && tile >= 0)
            ticket = atomicAdd(&tile_ticket, 1u);
        return tile;
    }
};

// Consumer warpgroup `warpgroup`'s buffer for C, after the ring (both 1024-byte aligned, for the swizzle).
__device__ __forceinline__ unsigned char* c_buffer(int warpgroup)
{
    return the_ring().stages + STAGES * STAGE_BYTES + (warpgroup - 1) * C_BUFFER_BYTES;
}

// One consumer warpgroup's 256 x 64 part of the tile at (row0, col0), out through its buffer in four
// quarters of 64 rows. Each quarter: its lead thread waits until the copy engine has read the last quarter
// out of the buffer; the warpgroup meets; every thread writes its 32 values of the quarter where a TMA load
// of the two boxes would have put them (step 20's layout), fences (the copy engine reads what ordinary
// stores wrote) and meets again; the lead thread sends both boxes, clipped to C, and goes on without
// waiting. Named barrier 1 + warpgroup: 128 threads, not the producer, not the other consumer.
__device__ __forceinline__ void store_through_buffer(const Consumer& me, const float (&d)[128], int warpgroup,
                                                     const CUtensorMap* map_c, int row0, int col0, int tid)
{
    unsigned char* out = c_buffer(warpgroup);
    const bool lead = tid % 128 == 0;
    const int first_column = 64 * (warpgroup - 1);   // of the tile: this warpgroup's columns start here
#pragma unroll
    for (int q = 0; q < BM / C_ROWS; ++q) {
        if (lead)
            tma_store_wait_read();
        named_barrier(1 + warpgroup, 128);
#pragma unroll
        for (int i = 0; i < C_ROWS / 8; ++i)
#pragma unroll
            for (int h = 0; h < 4; ++h) {
                const int m = 8 * i + 2 * me.t + h % 2, n = (h < 2 ? me.n_lo : me.n_hi) - first_column;
                const int offset = (n / 32) * C_BOX_BYTES + m * 128 + ((((n % 32) / 4) ^ (m % 8)) << 4) + (n % 4) * 4;
                *reinterpret_cast<float*>(out + offset) = d[4 * (C_ROWS / 8 * q + i) + h];
            }
        fence_proxy_async();
        named_barrier(1 + warpgroup, 128);
        if (lead) {
            for (int j = 0; j < 2; ++j)
                tma_store_2d(map_c, col0 + first_column + 32 * j, row0 + C_ROWS * q, out + j * C_BOX_BYTES);
            tma_store_commit();
        }
    }
}

// The persistent kernel's body (steps 26 and 27): as multiply_tile, for each tile `Tiles` hands the cluster.
template <Overlap Order, class Tiles>
__device__ __forceinline__ void multiply_tiles(int M, int N, int K, const float* __restrict__ A,
                                               const float* __restrict__ B, float* __restrict__ C,
                                               const CUtensorMap* map_a, const CUtensorMap* map_b,
                                               const CUtensorMap* map_c)
{
    if (threadIdx.x == 0)
        Tiles::init();
    setup_ring(true);   // and the cluster's first barrier
    const int warpgroup = threadIdx.x / 128;
    int count = 0;   // slices through the ring so far, over every tile of the block
    if (warpgroup == 0) {   // the producer
        registers_release<PRODUCER_REGISTERS>();
        if (!maps_usable(N, K, A, B))
            __trap();   // launched without step 24's copies (align_rows in the registry): no loads of its own
        const unsigned rank = CLUSTER == 1 ? 0 : cluster_rank();
        Tiles tiles(M, N, rank == 0 && threadIdx.x == 0);
        for (int i = tiles.next(); i >= 0; i = tiles.next()) {
            const int2 origin = tiles.origin(i);
            produce_tile<false>(the_ring(), count, origin.x, origin.y, M, N, K, A, B, map_a, map_b, true,
                                threadIdx.x, rank);
        }
    } else {
        registers_claim<CONSUMER_REGISTERS>();
        const Consumer me(warpgroup, threadIdx.x % 128);
        const bool tma_store = store_map_usable(N, C);
        Tiles tiles(M, N, false);
        for (int i = tiles.next(); i >= 0; i = tiles.next()) {
            float d[128];
            me.multiply<Order>(the_ring(), count, K, INT_MAX, d);   // every slice released (see above)
            const int2 origin = tiles.origin(i);
            if (tma_store)
                store_through_buffer(me, d, warpgroup, map_c, origin.x, origin.y, threadIdx.x);
            else
                me.store(d, C, M, N, origin.x, origin.y);
        }
        if (threadIdx.x % 128 == 0)
            tma_store_wait_read();   // the buffer is read out before the block's shared memory goes
    }
    cluster_sync();   // neither block ends while the other may still write into it
}
