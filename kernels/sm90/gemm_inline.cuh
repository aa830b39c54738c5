// A body of a TMA + wgmma kernel with no producer warpgroup: every warpgroup
// multiplies, and one thread of the first also asks the copy engine for the
// slices, STAGES of them ahead of the multiplying. It composes the same three
// roles as gemm.cuh (a Mainloop, a Scheduler, an Epilogue); only who makes the
// copies differs. CUTLASS SM90's kernel that is not warp-specialised
// (KernelTma: sm90_gemm_tma.hpp, its mainloop sm90_mma_tma_gmma_ss.hpp) works
// so, a tile a block; this body is persistent, as gemm.cuh's.
//
// Why a block without a producer warpgroup: the bytes a product. A K-slice of
// a BM x BN tile brings (BM + BN) x BK values for BM x BN x BK products, and
// the copy engine fills an SM's shared memory only so fast (tools/feed.py
// measures it in bytes a clock), so a taller tile needs fewer bytes for the
// same products. Three consumer warpgroups of 64 x 256 make a 192 x 256 tile:
// 7/9 of the bytes a product of 128 x 256. With a producer warpgroup that
// block is 512 threads, and ptxas then gives each thread 128 registers, fewer
// than a wgmma with 128 accumulators needs; without it, 384 threads have 168
// each, and setmaxnreg has nothing to move.
//
// The copies: thread 0 keeps a cursor of its own over the block's tiles (its
// own Scheduler, which walks the same tiles as the block's; a queue's drawer,
// it publishes each tile for the others as it reaches it: lead()) and the
// slices of each. Before the first tile it asks for STAGES slices; then each
// time its warp gives a stage back (the mainloop's refill), it asks for the
// slice STAGES on, into that stage, once every warp has given it back. The
// cursor runs into the next tile while the last slices of this one are
// multiplied, so the next tile's first slices are on their way while C goes
// out.

#pragma once

#include <climits>

#include "producer.cuh"
#include "scheduler.cuh"
#include "epilogue.cuh"
#include "block_clock.cuh"

// Thread 0's cursor: the next slice it asks for (the tile, its origin, its k0) and its count in the ring.
template <class Mainloop, class Scheduler>
struct InlineCopies {
    Scheduler tiles;
    int tile, k0, count, N, K;
    int2 origin;
    const CUtensorMap *map_a, *map_b;

    __device__ InlineCopies(int M, int N, int K, const CUtensorMap* map_a, const CUtensorMap* map_b, bool leads)
        : tiles(M, N, leads), tile(tiles.lead()), k0(0), count(0), N(N), K(K),
          origin(tile >= 0 ? tiles.origin(tile) : make_int2(0, 0)), map_a(map_a), map_b(map_b)
    {
    }

    // The next slice into the ring, if the block has one left.
    __device__ __forceinline__ void operator()()
    {
        if (tile < 0)
            return;
        copy_slice<Mainloop>(the_ring<Mainloop>(), count++, origin.x, origin.y, N, k0, map_a, map_b, 0);
        k0 += BK;
        if (k0 >= K) {
            k0 = 0;
            tile = tiles.lead();
            if (tile >= 0)
                origin = tiles.origin(tile);
        }
    }
};

template <class Mainloop, class Scheduler, template <class> class Epilogue>
__device__ __forceinline__ void gemm_inline(int M, int N, int K, const typename Mainloop::Element* __restrict__ A,
                                            const typename Mainloop::Element* __restrict__ B, float* __restrict__ C,
                                            const CUtensorMap* map_a, const CUtensorMap* map_b,
                                            const CUtensorMap* map_c)
{
    static_assert(BLOCK_DIM_X == 128 * Mainloop::CONSUMERS && BLOCK_DIM_Y == 1,
                  "kernels/registry.yaml's block must be 128 x CONSUMERS threads: the consumer warpgroups only");
    static_assert(!Mainloop::OWN_LOADS && CLUSTER == 1, "the copy engine makes every copy, for one block");
    if (threadIdx.x == 0)
        Scheduler::init(4 * Mainloop::CONSUMERS);   // the warps that read tiles: every warp; the cursor draws
    setup_ring<Mainloop>(true);
    if (!Mainloop::maps_usable(N, K, A, B))
        __trap();   // launched without the host's aligned copies (align_rows in the registry)
    const int warpgroup = 1 + threadIdx.x / 128;   // 1, 2, ...: numbered as gemm.cuh's consumers are
    const typename Mainloop::Consumer me(warpgroup, threadIdx.x % 128);
    const Epilogue<Mainloop> epilogue(warpgroup, N, C);
    BlockClock clock;   // devbench's CLOCK_TRACE builds: the block's clock and epilogue, read by thread 0
    InlineCopies<Mainloop, Scheduler> copies(M, N, K, map_a, map_b, threadIdx.x == 0);
    if (threadIdx.x == 0)
        for (int s = 0; s < STAGES; ++s)
            copies();
    const auto refill = [&]() {
        if (threadIdx.x == 0)
            copies();
    };
    Scheduler tiles(M, N, false);
    int count = 0;   // slices through the ring so far, over every tile of the block
    for (int i = tiles.next(); i >= 0; i = tiles.next()) {
        float d[128];
        me.multiply(the_ring<Mainloop>(), count, K, INT_MAX, d, refill);
        clock.epilogue_starts();
        epilogue.store(me, d, C, M, N, tiles.origin(i), map_c);
        clock.epilogue_ends();
    }
    epilogue.finish();
    if (threadIdx.x == 0)
        clock.stop();
}
