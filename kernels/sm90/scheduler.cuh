// The tile scheduler, the first of the three roles (gemm.cuh): which tile of C
// a block computes next. Every scheduler has the same face:
//   Scheduler(M, N, draws)   each thread makes its own (`draws`: the one thread that draws tickets);
//   Scheduler::init(n)       thread 0, before the cluster's first barrier (n: the warps that read tiles);
//   next()                   called by every thread of the cluster the same number of times: the next
//                            tile's number, or -1 when the block is done;
//   origin(i)                tile i's first row and column of C.
// Three of them:
// - OneTile: a block per tile, the grid the tiles (as a launch of one tile a block would);
// - StridedTiles: a persistent grid, a fixed share a cluster (CUTLASS's static persistent scheduler);
// - QueuedTiles: a persistent grid, tiles handed out in order to whichever cluster asks first, by all of the
//   grid's clusters or by as few as take them in the same rounds.
//
// The order of the tiles, each scheduler's Group: clusters walk Group tile rows down before moving one cluster
// tile right (a cluster tile: CLUSTER tiles side by side, the cluster's blocks taking the same rows), so that
// the blocks running at once cover a squarer patch of C and read fewer distinct bytes of A and B from DRAM
// (Group 1: whole tile rows, in launch order). BM, BN, CLUSTER and the registry's GROUP are -D defines.

#pragma once

#include "ring.cuh"

#if !defined(BM) || !defined(BN)
#error "BM and BN come from kernels/registry.yaml as -D defines"
#endif
// Tile number `order` of a rows x columns grid of cluster tiles, in the grouped order: its first row and column
// of C (the block's rank in its cluster picks the column).
template <int Group>
__device__ __forceinline__ int2 grouped_origin(int order, int rows, int columns)
{
    const int first = order / (Group * columns) * Group;   // its group's first tile row
    const int height = min(Group, rows - first);           // the last group may be shorter
    const int within = order - first * columns;
    return make_int2((first + within % height) * BM, (within / height * CLUSTER + blockIdx.x % CLUSTER) * BN);
}

// A block per tile: the block's own, by its place in the grid. Blocks start roughly in launch order (x fastest,
// a cluster's blocks together), so the blocks running at one time compute neighbouring tiles of that order.
template <int Group>
struct OneTile {
    static constexpr bool persistent = false;
    bool taken;

    __device__ OneTile(int, int, bool) : taken(false) {}
    __device__ static void init(int) {}
    __device__ int next()
    {
        const int tile = taken ? -1 : 0;
        taken = true;
        return tile;
    }
    __device__ int2 origin(int) const
    {
        if (Group == 1)
            return make_int2(blockIdx.y * BM, blockIdx.x * BN);
        const int columns = gridDim.x / CLUSTER;   // clusters across (the grid is whole clusters)
        return grouped_origin<Group>(blockIdx.y * columns + blockIdx.x / CLUSTER, gridDim.y, columns);
    }
};

// The tiles of an M x N product, in cluster tiles, numbered in the grouped order.
template <int Group>
struct TileGrid {
    static constexpr bool persistent = true;
    int rows, columns;

    __device__ TileGrid(int M, int N) : rows((M + BM - 1) / BM), columns(((N + BN - 1) / BN + CLUSTER - 1) / CLUSTER)
    {
    }
    __device__ int total() const { return rows * columns; }
    __device__ int2 origin(int order) const { return grouped_origin<Group>(order, rows, columns); }
};

// A fixed share: cluster c takes tiles c, c + clusters, c + 2 clusters, ...
template <int Group>
struct StridedTiles : TileGrid<Group> {
    using TileGrid<Group>::total;
    int order;

    __device__ StridedTiles(int M, int N, bool) : TileGrid<Group>(M, N), order(blockIdx.x / CLUSTER) {}
    __device__ static void init(int) {}
    __device__ int next()
    {
        const int mine = order;
        order += gridDim.x / CLUSTER;
        return mine < total() ? mine : -1;
    }
};

// Handed out in order, one at a time, to whichever cluster asks first. Cluster c starts on tile c, as a grid of
// one tile a block would. The drawer (thread 0 of the cluster's block 0) draws a ticket from a counter in global
// memory (atomicAdd): ticket t is tile active + t, the cluster's next. It writes that number into a slot of
// every block's shared memory of the cluster (store_cluster), with an arrival on each block's slot_full
// barrier; every warp that reads tiles waits for it, reads it, and arrives on block 0's slot_empty. Two slots,
// used in turn. So the clusters running at one time hold tiles next to each other in the order, however far
// some have run ahead. A cluster draws until a ticket lies past the last tile, and one without a first tile
// draws none: total() tickets a launch in all, and the drawer of the last one sets the counter back to 0 for
// the next launch. A launch that does not finish leaves the context unusable (a fault or a trap is sticky in
// CUDA), and a new context loads the module with the counter at 0; two launches of one module at once on two
// streams would share it (the study launches one at a time).
//
// Which clusters take tiles (Takers): every_cluster of the grid; or whole_rounds, the fewest that take them in as
// few rounds as the whole grid would (the rounds are ceil(tiles / clusters) either way): at 4096 in BF16, 512
// tiles on 132 SMs take 4 rounds, so 128 clusters take 4 tiles each, and none sits out the last round while its
// neighbours finish (the others take none and end at once). Fewer blocks at a time read fewer distinct rows of A
// and B.
//
// When the drawer draws (Draw): ahead, as a tile starts, for the next one (the atomic's trip to L2 hidden
// behind a tile); or when_needed, as it publishes it, once the producer is done with the tile before, so that
// a block asks for work when it needs it (Aila and Laine's persistent threads: the next item from a global
// pool), and the tickets go in the order in which the blocks got through their tiles.
__device__ unsigned tile_ticket;   // the next ticket; 0 between launches
__shared__ int tile_slot[2];
__shared__ uint64_t slot_full[2], slot_empty[2];

enum class Draw { ahead, when_needed };
enum class Takers { every_cluster, whole_rounds };

template <int Group, Takers Who = Takers::every_cluster, Draw When = Draw::ahead>
struct QueuedTiles : TileGrid<Group> {
    using TileGrid<Group>::total;
    int taken;          // slots read so far
    int active;         // the clusters that take tiles: the first `active` of the grid
    bool drawer;        // thread 0 of the cluster's block 0
    unsigned ticket;    // the drawer's, for the next slot (Draw::ahead): drawn a tile ahead

    __device__ QueuedTiles(int M, int N, bool draws) : TileGrid<Group>(M, N), taken(0), drawer(draws), ticket(0)
    {
        const int clusters = gridDim.x / CLUSTER, rounds = (total() + clusters - 1) / clusters;
        active = Who == Takers::whole_rounds ? (total() + rounds - 1) / rounds : clusters;
    }

    // slot_full waits for the drawer's one arrival, slot_empty (block 0's) for one from each of `readers`, the
    // warps of the cluster that read tiles.
    __device__ static void init(int readers)
    {
        for (int s = 0; s < 2; ++s) {
            mbarrier_init(&slot_full[s], 1);
            mbarrier_init(&slot_empty[s], readers);
        }
    }

    __device__ int first() const
    {
        const int c = blockIdx.x / CLUSTER;
        return c < total() && c < active ? c : -1;
    }

    __device__ int tile_of(unsigned t) const
    {
        if (t == unsigned(total() - 1))
            atomicExch(&tile_ticket, 0u);   // the launch's last ticket: every cluster has drawn its last
        const unsigned tile = t + active;
        return tile < unsigned(total()) ? int(tile) : -1;
    }

    __device__ void publish(int s, int use, int tile) const   // into slot s of every block, its use-th time
    {
        mbarrier_wait(&slot_empty[s], (use + 1) % 2);   // every warp has read what it held before
        for (unsigned r = 0; r < CLUSTER; ++r) {
            store_cluster(&tile_slot[s], r, tile);
            mbarrier_arrive_release_cluster(&slot_full[s], r);
        }
    }

    // The first tile is each thread's own to work out; the drawer publishes each later one into slot (j - 1) % 2.
    // Either way one ticket is drawn for each tile a cluster gets.
    __device__ int next()
    {
        const int j = taken++;
        int tile = first();
        if (j > 0) {
            const int s = (j - 1) % 2, use = (j - 1) / 2;   // the slot, and how many times it was used before
            if (drawer)
                publish(s, use, tile_of(When == Draw::when_needed ? atomicAdd(&tile_ticket, 1u) : ticket));
            mbarrier_wait_acquire_cluster(&slot_full[s], use % 2);
            tile = tile_slot[s];
            __syncwarp();
            if (threadIdx.x % 32 == 0)
                mbarrier_arrive_cluster(&slot_empty[s], 0);
        }
        if (When == Draw::ahead && drawer && tile >= 0)
            ticket = atomicAdd(&tile_ticket, 1u);
        return tile;
    }
};
