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
// Gemm<Mainloop, Scheduler, Epilogue, Producer> is the kernel they make: its
// block (THREADS), its shared memory (SharedStorage, below), the workspace
// its launch lends it (workspace.cuh), and run(), what a __global__ function
// of a step's file calls. Nothing lies at file scope: a module may hold
// several kernels of several shapes, and launches of one at once.
//
// Warp specialisation: warpgroup 0 produces, giving registers back
// (setmaxnreg); warpgroups 1 and up consume, taking them. Both walk the same
// tiles, the producer running ahead into the next tile's slices as soon as a
// stage is free, while the consumers are still on this tile or storing it. The
// ring's count runs on from tile to tile on both sides, so a stage's phase is
// still (count / STAGE_COUNT) % 2.
//
// In a persistent cluster (CLUSTER_SIZE > 1) the blocks write into each other's
// shared memory (A's halves, the ring's releases, the tile numbers) until
// their last tile, whose end neither knows of the other: so every thread ends
// with a cluster barrier, and the consumers release every slice, so that no
// arrival finds its block gone. A cluster of one-tile blocks releases only
// the slices a producer waits for, and needs no such barrier.

#pragma once

#include <climits>

#include "mainloop_tf32.cuh"
#include "mainloop_bf16.cuh"
#include "mainloop_fp8.cuh"
#include "producer.cuh"
#include "scheduler.cuh"
#include "epilogue.cuh"
#include "block_clock.cuh"
#include "workspace.cuh"

// Producer: the producer warpgroup's warps that stay to walk the tiles: the whole warpgroup, or only warp 0
// (one_warp), whose thread 0 makes all of the producer's copies (the others leave at once: they have no loads to
// make, and then neither wait on the tile slots nor arrive there).
enum class Producer { warpgroup, one_warp };

// What a block keeps in its shared memory, in the order it lies there: the ring's stages, then the epilogue's
// buffers (BufferStore's), as one run of bytes from the start (on 1024 bytes, the 128-byte swizzle's pattern);
// the ring's barriers; the scheduler's slots (QueuedTiles'). A block is launched with sizeof(SharedStorage) bytes
// of dynamic shared memory, its only shared memory.
template <class Mainloop, class Scheduler, class Epilogue>
struct SharedStorage {
    unsigned char tiles[Mainloop::STAGE_COUNT * Mainloop::STAGE_BYTES + Epilogue::BUFFER_BYTES];
    uint64_t full[Mainloop::STAGE_COUNT], empty[Mainloop::STAGE_COUNT];
    typename Scheduler::Slots slots;

    __device__ Ring<Mainloop> ring() { return Ring<Mainloop>{tiles, full, empty}; }
};

// The block's SharedStorage: its dynamic shared memory, declared on 1024 bytes, so that the compiler knows where
// each field lies (an address it would have to align at run time costs the main loop's every wait). Free to
// find again: each role does where it needs it (a pointer kept across setmaxnreg is spilled).
template <class Storage>
__device__ __forceinline__ Storage& shared_storage()
{
    extern __shared__ __align__(1024) unsigned char dynamic_shared[];
    return *reinterpret_cast<Storage*>(dynamic_shared);
}

// What the host reads of a built kernel (a step's file exports it as <kernel>_facts; matmulstudy/gpu/cubin.py
// reads it): the dynamic shared memory a block is launched with, and the bytes of workspace its launch lends it
// (0: none, and the kernel takes a null pointer).
struct LaunchFacts {
    unsigned shared_bytes, workspace_bytes;
};

template <class Mainloop_, class Scheduler_, template <class> class Epilogue_, Producer Walkers = Producer::warpgroup>
struct Gemm {
    using Mainloop = Mainloop_;
    using Scheduler = Scheduler_;
    using Epilogue = Epilogue_<Mainloop>;
    using Element = typename Mainloop::Element;
    using Storage = SharedStorage<Mainloop, Scheduler, Epilogue>;
    static constexpr int THREADS = Mainloop::THREADS, CLUSTER_SIZE = Mainloop::CLUSTER_SIZE;
    static constexpr int PRODUCER_WARPS = Walkers == Producer::one_warp ? 1 : 4;
    static constexpr LaunchFacts FACTS = {unsigned(sizeof(Storage)),
                                          needs_workspace<Scheduler>() ? unsigned(sizeof(Workspace)) : 0u};
    static_assert(FACTS.shared_bytes <= 227 * 1024, "a block's shared memory is at most 227 KB");
#ifdef BLOCK_DIM_X   // built by the study, which launches the registry's block (matmulstudy/measure/build.py)
    static_assert(BLOCK_DIM_X == THREADS && BLOCK_DIM_Y == 1,
                  "kernels/registry.yaml's block must be THREADS x 1: a producer warpgroup and the consumers'");
#endif
    static_assert(Scheduler::CLUSTER_SIZE == CLUSTER_SIZE, "the scheduler's cluster is the mainloop's");
    static_assert(Walkers == Producer::warpgroup || (!Mainloop::OWN_LOADS && CLUSTER_SIZE == 1),
                  "one producer warp makes no loads of its own, and its leaving warps meet no cluster barrier");
    static_assert(128 * Mainloop::PRODUCER_REGISTERS + 128 * Mainloop::CONSUMERS * Mainloop::CONSUMER_REGISTERS <=
                      65536 / Mainloop::THREADS / 8 * 8 * Mainloop::THREADS,
                  "the warpgroups' registers after setmaxnreg must fit in what the block was launched with");

    // C (M x N, FP32, row-major) = A (M x K) B, B K x N (or N x K where Mainloop::B_K_MAJOR), by THREADS threads a
    // block on FACTS.shared_bytes of dynamic shared memory; the maps of A, B and C as the host makes them
    // (matmulstudy/gpu/tma.py; C's where the epilogue stores by the copy engine), and the launch's workspace.
    __device__ __forceinline__ static void run(int M, int N, int K, const Element* __restrict__ A,
                                               const Element* __restrict__ B, float* __restrict__ C,
                                               const CUtensorMap* map_a, const CUtensorMap* map_b,
                                               const CUtensorMap* map_c, Workspace* workspace)
    {
        if (threadIdx.x == 0)
            Scheduler::init((PRODUCER_WARPS + 4 * Mainloop::CONSUMERS) * CLUSTER_SIZE, shared_storage<Storage>().slots);
        setup_ring(shared_storage<Storage>().ring(), Mainloop::maps_usable(N, K, A, B));
        const int warpgroup = threadIdx.x / 128;
        int count = 0;   // slices through the ring so far, over every tile of the block
        if (warpgroup == 0) {   // the producer
            registers_release<Mainloop::PRODUCER_REGISTERS>();
            if (threadIdx.x >= 32 * PRODUCER_WARPS)
                return;
            if (!Mainloop::OWN_LOADS && !Mainloop::maps_usable(N, K, A, B))
                __trap();   // launched without the host's aligned copies (align_rows in the registry)
            const unsigned rank = CLUSTER_SIZE == 1 ? 0 : cluster_rank();
            Scheduler tiles(M, N, rank == 0 && threadIdx.x == 0);   // thread 0 of block 0 draws (QueuedTiles)
            for (int i = tiles.next(shared_storage<Storage>().slots, workspace); i >= 0;
                 i = tiles.next(shared_storage<Storage>().slots, workspace)) {
                const int2 origin = tiles.origin(i);
                produce_tile<Mainloop>(shared_storage<Storage>().ring(), count, origin.x, origin.y, M, N, K, A, B,
                                       map_a, map_b, Mainloop::maps_usable(N, K, A, B), threadIdx.x, rank);
            }
        } else {
            registers_claim<Mainloop::CONSUMER_REGISTERS>();   // a consumer: its part of each tile
            BlockClock clock;   // devbench's CLOCK_TRACE builds: the block's clock and epilogue, read by its first consumer
            const typename Mainloop::Consumer me(warpgroup, threadIdx.x % 128);
            const Epilogue epilogue(warpgroup, N, C);
            Scheduler tiles(M, N, false);
            for (int i = tiles.next(shared_storage<Storage>().slots, workspace); i >= 0;
                 i = tiles.next(shared_storage<Storage>().slots, workspace)) {
                float d[Mainloop::ACCUMULATORS];
                me.multiply(shared_storage<Storage>().ring(), count, K,
                            Scheduler::persistent ? INT_MAX : (K + Mainloop::TILE_K - 1) / Mainloop::TILE_K, d);
                clock.epilogue_starts();
                epilogue.store(me, d, C, M, N, tiles.origin(i), map_c, shared_storage<Storage>().ring());
                clock.epilogue_ends();
            }
            epilogue.finish();
            if (threadIdx.x == 128)
                clock.stop(workspace);
        }
        if (Scheduler::persistent && CLUSTER_SIZE > 1)
            cluster_sync();   // neither block ends while the other may still write into it
    }
};
