// Step 38 (EXPERIMENT): Stream-K's two-tile hybrid, the pieces placed apart.
// Head pieces first, whole tiles, tails after TAIL_AFTER whole tiles.

#include "../common/persistent_bf16.cuh"    // step 37's kernel and its queue of whole tiles (QueuedTiles)
#include "../common/pad_copy.cuh"           // step 35's copies where rows are off 16 bytes
#include "../common/stream_k_shares.cuh"    // owner_of and the bounded wait (wait_for)

#ifndef TICKET
#define TICKET 1
#endif
#ifndef TAIL_AFTER
#define TAIL_AFTER 2
#endif

#if GROUP < 2
#error "GROUP (>= 2) comes from kernels/registry.yaml as a -D define"
#endif

__device__ unsigned block_ticket;                                      // blocks numbered so far; 0 between launches
__device__ unsigned long long piece_progress[MAX_BLOCKS * CONSUMERS];   // per cut tile (by the block owning its
                                                                       // slice 0) and consumer: slices in C; 0
                                                                       // between launches
__shared__ int block_number;

// How many tiles, the first of the grouped order, are shared out as K-slices: none where the tiles fill whole
// waves or less than one; else the partial wave and the last full one (the paper's two-tile hybrid), so that
// every block's range is at least one tile long and a tile is cut in two pieces at most.
__device__ __forceinline__ int shared_tiles(int M, int N)
{
    const int tiles = TileGrid(M, N).total(), W = gridDim.x;
    return tiles >= W && tiles % W != 0 ? min(tiles, tiles % W + W) : 0;
}

struct Piece {
    int tile, from, to;   // the tile (grouped order) and its slices [from, to)
};

struct StreamKTiles : QueuedTiles {
    long long S, W;
    int per_tile;
    Piece head, tail;           // the range's piece holding a tile's slice 0 (at its end), and the one after an
                                // earlier block's (at its start); tile -1: none
    int inner, inner_end;       // the range's whole tiles
    int wholes;                 // whole tiles handed so far
    bool started, queue_done;
    Piece now;                  // the piece last handed
    unsigned long long* pending;   // a flag to set once this thread's stores are written (lead threads)
    int pending_to;

    __device__ StreamKTiles(int M, int N, int K, bool draws)
        : QueuedTiles(M, N, K, draws, shared_tiles(M, N)), W(gridDim.x), per_tile((K + BK - 1) / BK), wholes(0),
          started(false), queue_done(false), pending(nullptr), pending_to(0)
    {
        S = (long long)skip * per_tile;
        const long long first = block_number * S / W, end = (block_number + 1) * S / W;
        const long long first_tile = first / per_tile, end_tile = end / per_tile;
        head = tail = Piece{-1, 0, 0};
        if (first % per_tile != 0)
            tail = Piece{int(first_tile), int(first % per_tile), int(min(end, (first_tile + 1) * per_tile) - first_tile * per_tile)};
        if (end % per_tile != 0 && end_tile * per_tile >= first && !(tail.tile == int(end_tile)))
            head = Piece{int(end_tile), 0, int(end % per_tile)};
        inner = int((first + per_tile - 1) / per_tile);
        inner_end = int(end_tile);
        if (first >= end)
            inner = inner_end = 0;
    }

    __device__ static void init()
    {
        QueuedTiles::init();
        if (gridDim.x > MAX_BLOCKS)
            stop();
#if TICKET
        block_number = int(atomicAdd(&block_ticket, 1u));
        if (block_number == int(gridDim.x) - 1)
            atomicExch(&block_ticket, 0u);
#else
        block_number = blockIdx.x;
#endif
    }

    __device__ int hand(Piece p)
    {
        now = p;
        return p.tile;
    }

    __device__ int next()
    {
        if (!started) {
            started = true;
            if (head.tile >= 0)
                return hand(head);
        }
        if (tail.tile >= 0 && wholes >= TAIL_AFTER) {
            const Piece p = tail;
            tail.tile = -1;
            return hand(p);
        }
        if (inner < inner_end) {
            ++wholes;
            return hand(Piece{inner++, 0, per_tile});
        }
        if (!queue_done) {
            const int i = QueuedTiles::next();
            if (i >= 0) {
                ++wholes;
                return hand(Piece{i + skip, 0, per_tile});
            }
            queue_done = true;
        }
        if (tail.tile >= 0) {
            const Piece p = tail;
            tail.tile = -1;
            return hand(p);
        }
        return -1;
    }

    __device__ int2 origin(int tile) const { return grouped_origin(tile, rows, columns); }
    __device__ int2 k_range(int K) const { return make_int2(now.from * BK, min(K, now.to * BK)); }

    __device__ unsigned long long* flag(int warpgroup) const
    {
        return &piece_progress[owner_of((long long)now.tile * per_tile, S, W) * CONSUMERS + warpgroup - 1];
    }

    // Before a piece goes out: the lead thread sets the flag it owes (its previous piece's, written by now),
    // then, for a piece after the tile's first, waits until the pieces before it are in C. true: add.
    __device__ bool waits_for_earlier_pieces(int warpgroup, bool lead)
    {
        if (lead)
            finish(warpgroup, lead);
        if (now.from == 0)
            return false;
        if (lead) {
            wait_for(flag(warpgroup), 0, now.from);
            __threadfence();
            asm volatile("fence.proxy.async.global;" ::: "memory");
        }
        return true;
    }

    // After a piece went out: one that does not end its tile owes its flag (set at the next piece or the
    // end); the one that ends a cut tile sets the flag back to 0.
    __device__ void announce_piece(int warpgroup, bool lead)
    {
        if (!lead || (now.from == 0 && now.to == per_tile))
            return;
        if (now.to < per_tile) {
            pending = flag(warpgroup);
            pending_to = now.to;
        } else {
            atomicExch(flag(warpgroup), 0ull);
        }
    }

    __device__ void finish(int, bool lead)
    {
        if (!lead || pending == nullptr)
            return;
        tma_store_wait_written();
        __threadfence();
        atomicExch(pending, (unsigned long long)pending_to);
        pending = nullptr;
    }
};

extern "C" __global__ void __launch_bounds__(THREADS, 1)
gpu_wgmma_bf16_stream_k(int M, int N, int K, const bf16* __restrict__ A, const bf16* __restrict__ B,
                        float* __restrict__ C, const __grid_constant__ CUtensorMap map_a,
                        const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_c)
{
    multiply_tiles<StreamKTiles, false>(M, N, K, A, B, C, &map_a, &map_b, &map_c);
}
