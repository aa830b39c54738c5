// The body of every TMA + wgmma kernel, TF32, BF16 and FP8: CUTLASS SM90's three
// roles composed as types, so that a step's file names its parts and the
// change from the step before is a changed type.
//   Mainloop  (mainloop_tf32.cuh; mainloop_smem.cuh with mainloop_bf16.cuh or
//             mainloop_fp8.cuh's operands): the ring's stage layout,
//             the producer's loads into it (producer.cuh) and the consumers'
//             wgmma on it. What a precision is, is a mainloop.
//   Scheduler (scheduler.cuh): which tile a block computes next (one tile a
//             block, or a persistent grid's share or queue).
//   Epilogue  (epilogue.cuh): the accumulators out to C.
//
// Warp specialisation: warpgroup 0 produces, giving registers back
// (setmaxnreg); warpgroups 1 and up consume, taking them. Both walk the same
// tiles, the producer running ahead into the next tile's slices as soon as a
// stage is free, while the consumers are still on this tile or storing it. The
// ring's count runs on from tile to tile on both sides, so a stage's phase is
// still (count / STAGES) % 2.
//
// In a persistent cluster (CLUSTER > 1) the blocks write into each other's
// shared memory (A's halves, the ring's releases, the tile numbers) until
// their last tile, whose end neither knows of the other: so every thread ends
// with a cluster barrier, and the consumers release every slice, so that no
// arrival finds its block gone. A cluster of one-tile blocks releases only
// the slices a producer waits for, and needs no such barrier.

#pragma once

#include <climits>

#include "producer.cuh"
#include "scheduler.cuh"
#include "epilogue.cuh"
#include "block_clock.cuh"

// Producer: the producer warpgroup's warps that stay to walk the tiles: the whole warpgroup, or only warp 0
// (one_warp), whose thread 0 makes all of the producer's copies (the others leave at once: they have no loads to
// make, and then neither wait on the tile slots nor arrive there).
enum class Producer { warpgroup, one_warp };

template <class Mainloop, class Scheduler, template <class> class Epilogue, Producer Walkers = Producer::warpgroup>
__device__ __forceinline__ void gemm(int M, int N, int K, const typename Mainloop::Element* __restrict__ A,
                                     const typename Mainloop::Element* __restrict__ B, float* __restrict__ C,
                                     const CUtensorMap* map_a, const CUtensorMap* map_b, const CUtensorMap* map_c)
{
    constexpr int producer_warps = Walkers == Producer::one_warp ? 1 : 4;
    static_assert(Walkers == Producer::warpgroup || (!Mainloop::OWN_LOADS && CLUSTER == 1),
                  "one producer warp makes no loads of its own, and its leaving warps meet no cluster barrier");
    static_assert(128 * Mainloop::PRODUCER_REGISTERS + 128 * Mainloop::CONSUMERS * Mainloop::CONSUMER_REGISTERS <=
                      65536 / Mainloop::THREADS / 8 * 8 * Mainloop::THREADS,
                  "the warpgroups' registers after setmaxnreg must fit in what the block was launched with");
    if (threadIdx.x == 0)
        Scheduler::init((producer_warps + 4 * Mainloop::CONSUMERS) * CLUSTER);
    setup_ring<Mainloop>(Mainloop::maps_usable(N, K, A, B));
    const int warpgroup = threadIdx.x / 128;
    int count = 0;   // slices through the ring so far, over every tile of the block
    if (warpgroup == 0) {   // the producer
        registers_release<Mainloop::PRODUCER_REGISTERS>();
        if (threadIdx.x >= 32 * producer_warps)
            return;
        if (!Mainloop::OWN_LOADS && !Mainloop::maps_usable(N, K, A, B))
            __trap();   // launched without the host's aligned copies (align_rows in the registry)
        const unsigned rank = CLUSTER == 1 ? 0 : cluster_rank();
        Scheduler tiles(M, N, rank == 0 && threadIdx.x == 0);   // thread 0 of block 0 draws (QueuedTiles)
        for (int i = tiles.next(); i >= 0; i = tiles.next()) {
            const int2 origin = tiles.origin(i);
            produce_tile<Mainloop>(the_ring<Mainloop>(), count, origin.x, origin.y, M, N, K, A, B, map_a, map_b,
                                   Mainloop::maps_usable(N, K, A, B), threadIdx.x, rank);
        }
    } else {
        registers_claim<Mainloop::CONSUMER_REGISTERS>();   // a consumer: its part of each tile
        BlockClock clock;   // devbench's CLOCK_TRACE builds: the block's clock and epilogue, read by its first consumer
        const typename Mainloop::Consumer me(warpgroup, threadIdx.x % 128);
        const Epilogue<Mainloop> epilogue(warpgroup, N, C);
        Scheduler tiles(M, N, false);
        for (int i = tiles.next(); i >= 0; i = tiles.next()) {
            float d[Mainloop::ACCUMULATORS];
            me.multiply(the_ring<Mainloop>(), count, K, Scheduler::persistent ? INT_MAX : (K + BK - 1) / BK, d);
            clock.epilogue_starts();
            epilogue.store(me, d, C, M, N, tiles.origin(i), map_c);
            clock.epilogue_ends();
        }
        epilogue.finish();
        if (threadIdx.x == 128)
            clock.stop();
    }
    if (Scheduler::persistent && CLUSTER > 1)
        cluster_sync();   // neither block ends while the other may still write into it
}
