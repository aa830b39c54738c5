// The tile scheduler, the first of the three roles (gemm.cuh): which tile of C
// a block computes next, for a Tile (shapes.cuh's TileShape: TILE_M x TILE_N) and a
// Cluster (ClusterShape). Every scheduler has the same face:
//   Scheduler(M, N, draws)        each thread makes its own (`draws`: the one thread that draws tickets);
//   Scheduler::Slots              what it keeps in the block's shared memory (gemm.cuh's SharedStorage);
//   Scheduler::init(n, slots)     thread 0, before the cluster's first barrier (n: the warps that read tiles);
//   next(slots, workspace)        called by every thread of the cluster the same number of times: the next
//                                 tile's number, or -1 when the block is done (workspace.cuh: the launch's);
//   origin(i)                     tile i's first row and column of C.
// Three of them:
// - OneTile: a block per tile, the grid the tiles (as a launch of one tile a block would);
// - StridedTiles: a persistent grid, a fixed share a cluster (CUTLASS's static persistent scheduler);
// - QueuedTiles: a persistent grid, tiles handed out in order to whichever cluster asks first, by all of the
//   grid's clusters or by as few as take them in the same rounds.
//
// The order of the tiles, each scheduler's Group: clusters walk Group tile rows down before moving one cluster
// tile right (a cluster tile: CLUSTER_SIZE tiles side by side, the cluster's blocks taking the same rows), so that
// the blocks running at once cover a squarer patch of C and read fewer distinct bytes of A and B from DRAM
// (Group 1: whole tile rows, in launch order).

#pragma once

#include "ring.cuh"
#include "workspace.cuh"

// Tile number `order` of a rows x columns grid of cluster tiles, in the grouped order: its first row and column
// of C (the block's rank in its cluster picks the column).
template <class Tile, class Cluster, int Group>
__device__ __forceinline__ int2 grouped_origin(int order, int rows, int columns)
{
    constexpr int CLUSTER_SIZE = Cluster::CLUSTER_SIZE;
    const int first = order / (Group * columns) * Group;   // its group's first tile row
    const int height = min(Group, rows - first);           // the last group may be shorter
    const int within = order - first * columns;
    return make_int2((first + within % height) * Tile::TILE_M,
                     (within / height * CLUSTER_SIZE + blockIdx.x % CLUSTER_SIZE) * Tile::TILE_N);
}

// A block per tile: the block's own, by its place in the grid. Blocks start roughly in launch order (x fastest,
// a cluster's blocks together), so the blocks running at one time compute neighbouring tiles of that order.
template <class Tile, class Cluster, int Group>
struct OneTile {
    static constexpr bool persistent = false, DRAWS_TICKETS = false;
    static constexpr int CLUSTER_SIZE = Cluster::CLUSTER_SIZE;
    struct Slots {};
    bool taken;

    __device__ OneTile(int, int, bool) : taken(false) {}
    __device__ static void init(int, Slots&) {}
    __device__ int next(Slots&, Workspace*)
    {
        const int tile = taken ? -1 : 0;
        taken = true;
        return tile;
    }
    __device__ int2 origin(int) const
    {
        if (Group == 1)
            return make_int2(blockIdx.y * Tile::TILE_M, blockIdx.x * Tile::TILE_N);
        const int columns = gridDim.x / CLUSTER_SIZE;   // clusters across (the grid is whole clusters)
        return grouped_origin<Tile, Cluster, Group>(blockIdx.y * columns + blockIdx.x / CLUSTER_SIZE, gridDim.y, columns);
    }
};

// The tiles of an M x N product, in cluster tiles, numbered in the grouped order.
template <class Tile, class Cluster, int Group>
struct TileGrid {
    static constexpr bool persistent = true;
    static constexpr int CLUSTER_SIZE = Cluster::CLUSTER_SIZE;
    struct Slots {};
    int rows, columns;

    __device__ TileGrid(int M, int N)
        : rows((M + Tile::TILE_M - 1) / Tile::TILE_M), columns(((N + Tile::TILE_N - 1) / Tile::TILE_N + CLUSTER_SIZE - 1) / CLUSTER_SIZE)
    {
    }
    __device__ int total() const { return rows * columns; }
    __device__ int2 origin(int order) const { return grouped_origin<Tile, Cluster, Group>(order, rows, columns); }
};

// A fixed share: cluster c takes tiles c, c + clusters, c + 2 clusters, ...
template <class Tile, class Cluster, int Group>
struct StridedTiles : TileGrid<Tile, Cluster, Group> {
    using Grid = TileGrid<Tile, Cluster, Group>;
    using Grid::total, Grid::CLUSTER_SIZE, typename Grid::Slots;
    static constexpr bool DRAWS_TICKETS = false;
    int order;

    __device__ StridedTiles(int M, int N, bool) : Grid(M, N), order(blockIdx.x / CLUSTER_SIZE) {}
    __device__ static void init(int, Slots&) {}
    __device__ int next(Slots&, Workspace*)
    {
        const int mine = order;
        order += gridDim.x / CLUSTER_SIZE;
        return mine < total() ? mine : -1;
    }
};

// Handed out in order, one at a time, to whichever cluster asks first. Cluster c starts on tile c, as a grid of
// one tile a block would. The drawer (thread 0 of the cluster's block 0) draws a ticket from a counter in global
// memory (atomicAdd on the launch's workspace, workspace.cuh): ticket t is tile active + t, the cluster's next. It
// writes that number into a slot of every block's shared memory of the cluster (store_cluster), with an arrival
// on each block's slot barrier `full`; every warp that reads tiles waits for it, reads it, and arrives on block
// 0's `empty`. Two slots, used in turn. So the clusters running at one time hold tiles next to each other in the
// order, however far some have run ahead. A cluster draws until a ticket lies past the last tile, and one
// without a first tile draws none: total() tickets a launch in all, and the drawer of the last one sets the
// counter back to 0. The counter is the launch's own: two launches at once, on two streams, each have theirs.
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
enum class Draw { ahead, when_needed };
enum class Takers { every_cluster, whole_rounds };

template <class Tile, class Cluster, int Group, Takers Who = Takers::every_cluster, Draw When = Draw::ahead>
struct QueuedTiles : TileGrid<Tile, Cluster, Group> {
    using Grid = TileGrid<Tile, Cluster, Group>;
    using Grid::total, Grid::CLUSTER_SIZE;
    static constexpr bool DRAWS_TICKETS = true;

    // The two slots of the cluster's tile numbers, and their barriers, in the block's shared memory.
    struct Slots {
        int tile[2];
        uint64_t full[2], empty[2];
    };

    int taken;          // slots read so far
    int active;         // the clusters that take tiles: the first `active` of the grid
    bool drawer;        // thread 0 of the cluster's block 0
    unsigned ticket;    // the drawer's, for the next slot (Draw::ahead): drawn a tile ahead

    __device__ QueuedTiles(int M, int N, bool draws) : Grid(M, N), taken(0), drawer(draws), ticket(0)
    {
        const int clusters = gridDim.x / CLUSTER_SIZE, rounds = (total() + clusters - 1) / clusters;
        active = Who == Takers::whole_rounds ? (total() + rounds - 1) / rounds : clusters;
    }

    // full waits for the drawer's one arrival, empty (block 0's) for one from each of `readers`, the warps of the
    // cluster that read tiles.
    __device__ static void init(int readers, Slots& slots)
    {
        for (int s = 0; s < 2; ++s) {
            mbarrier_init(&slots.full[s], 1);
            mbarrier_init(&slots.empty[s], readers);
        }
    }

    __device__ int first() const
    {
        const int c = blockIdx.x / CLUSTER_SIZE;
        return c < total() && c < active ? c : -1;
    }

    __device__ int tile_of(unsigned t, Workspace* workspace) const
    {
        if (t == unsigned(total() - 1))
            atomicExch(&workspace->tile_ticket, 0u);   // the launch's last ticket: every cluster has drawn its last
        const unsigned tile = t + active;
        return tile < unsigned(total()) ? int(tile) : -1;
    }

    __device__ void publish(Slots& slots, int s, int use, int tile) const   // into slot s of every block, use-th time
    {
        mbarrier_wait(&slots.empty[s], (use + 1) % 2);   // every warp has read what it held before
        for (unsigned r = 0; r < CLUSTER_SIZE; ++r) {
            store_cluster(&slots.tile[s], r, tile);
            mbarrier_arrive_release_cluster(&slots.full[s], r);
        }
    }

    // The first tile is each thread's own to work out; the drawer publishes each later one into slot (j - 1) % 2.
    // Either way one ticket is drawn for each tile a cluster gets.
    __device__ int next(Slots& slots, Workspace* workspace)
    {
        const int j = taken++;
        int tile = first();
        if (j > 0) {
            const int s = (j - 1) % 2, use = (j - 1) / 2;   // the slot, and how many times it was used before
            if (drawer) {
                const unsigned t = When == Draw::when_needed ? atomicAdd(&workspace->tile_ticket, 1u) : ticket;
                publish(slots, s, use, tile_of(t, workspace));
            }
            mbarrier_wait_acquire_cluster(&slots.full[s], use % 2);
            tile = slots.tile[s];
            __syncwarp();
            if (threadIdx.x % 32 == 0)
                mbarrier_arrive_cluster(&slots.empty[s], 0);
        }
        if (When == Draw::ahead && drawer && tile >= 0)
            ticket = atomicAdd(&workspace->tile_ticket, 1u);
        return tile;
    }
};
