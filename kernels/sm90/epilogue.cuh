// The epilogue, the third of the three roles (gemm.cuh): a consumer
// warpgroup's accumulators out to C, once its tile's K-slices are done.
// Where each value lies in the tile is the mainloop's to say (its Consumer's
// store, write_tile, quarter_origin and write_quarter); how C goes out is the
// epilogue's. Every epilogue has the same face, for any mainloop:
//   Epilogue<Mainloop> e(warpgroup, N, C)         each consumer thread makes its own;
//   Epilogue<Mainloop>::BUFFER_BYTES              the shared memory it keeps after the ring's stages
//                                                 (gemm.cuh's SharedStorage);
//   e.store(me, d, C, M, N, origin, map_c, ring)  one tile's accumulators, the tile at `origin`;
//   e.finish()                                    after the block's last tile.
// Three of them:
// - DirectStore: each thread stores its own values (bounds-checked);
// - RingStore: the tile through the ring's shared memory, which the consumers then no longer need, and out
//   by the copy engine (a block of one tile only: a persistent block's ring holds the next tile's slices);
// - BufferStore: through a buffer of each consumer warpgroup's own, after the ring, a quarter of its part at
//   a time, the copy engine's stores going on while the next tile is multiplied.
// The last two store C by the copy engine where its rows start on 16 bytes (store_map_usable), else directly.

#pragma once

#include "ring.cuh"

template <class Mainloop>
struct DirectStore {
    static constexpr int BUFFER_BYTES = 0;

    __device__ DirectStore(int, int, float*) {}

    __device__ __forceinline__ void store(const typename Mainloop::Consumer& me, const float (&d)[Mainloop::ACCUMULATORS],
                                          float* __restrict__ C, int M, int N, int2 origin, const CUtensorMap*,
                                          const Ring<Mainloop>&) const
    {
        me.store(d, C, M, N, origin.x, origin.y);
    }
    __device__ void finish() const {}
};

// Where C(row0 + m, col0 + n) lies when the whole tile is written into the ring: TILE_N / 32 boxes of TILE_M rows by
// 32 FP32 columns, where a TMA load of them would have put them (128-byte swizzle).
template <int TILE_M>
__device__ __forceinline__ int ring_c_offset(int m, int n)
{
    return (n / 32) * TILE_M * 128 + m * 128 + ((((n % 32) / 4) ^ (m % 8)) << 4) + (n % 4) * 4;
}

template <class Mainloop>
struct RingStore {
    static constexpr int TILE_M = Mainloop::TILE_M, TILE_N = Mainloop::TILE_N, BUFFER_BYTES = 0;   // the ring's own
    static_assert(TILE_M * TILE_N * 4 <= Mainloop::STAGE_COUNT * Mainloop::STAGE_BYTES,
                  "the tile must fit in the ring to be stored");
    bool tma;

    __device__ RingStore(int, int N, float* C) : tma(store_map_usable(N, C)) {}

    // Every consumer warpgroup first finishes its wgmma (the ring is then idle: every slice has been consumed);
    // each thread writes its values, fences (the copy engine reads what ordinary stores wrote), and after a
    // second meeting one thread sends the TILE_N / 32 boxes, clipped to C, and waits until the engine has read them.
    __device__ __forceinline__ void store(const typename Mainloop::Consumer& me, const float (&d)[Mainloop::ACCUMULATORS],
                                          float* __restrict__ C, int M, int N, int2 origin,
                                          const CUtensorMap* map_c, const Ring<Mainloop>& ring) const
    {
        if (!tma) {
            me.store(d, C, M, N, origin.x, origin.y);
            return;
        }
        named_barrier(1, 128 * Mainloop::CONSUMERS);
        unsigned char* out = ring.stages;
        me.write_tile(d, out, [](int m, int n) { return ring_c_offset<TILE_M>(m, n); });
        fence_proxy_async();
        named_barrier(1, 128 * Mainloop::CONSUMERS);
        if (threadIdx.x == 128) {
            for (int j = 0; j < TILE_N / 32; ++j)
                tma_store_2d(map_c, origin.y + 32 * j, origin.x, out + j * TILE_M * 128);
            tma_store_commit_and_wait();
        }
    }
    __device__ void finish() const {}
};

// C's buffers: each consumer warpgroup's, after the ring, two boxes of C of 64 rows by 32 FP32 columns (16 KB),
// filled and sent a quarter of its part of the tile at a time.
constexpr int C_ROWS = 64, C_BOX_BYTES = C_ROWS * 32 * 4;   // a box of C: 64 rows by 32 columns
constexpr int C_BUFFER_BYTES = 2 * C_BOX_BYTES;             // a consumer warpgroup's: 64 columns

// Where C(row + m, col + n) of a quarter sent from (row, col) lies in the buffer: where a TMA load of its two
// boxes would have put it (128-byte swizzle).
__device__ __forceinline__ int c_buffer_offset(int m, int n)
{
    return (n / 32) * C_BOX_BYTES + m * 128 + ((((n % 32) / 4) ^ (m % 8)) << 4) + (n % 4) * 4;
}

template <class Mainloop>
struct BufferStore {
    static constexpr int BUFFER_BYTES = Mainloop::CONSUMERS * C_BUFFER_BYTES;   // right after the ring's stages
    int warpgroup;
    bool tma, lead;

    __device__ BufferStore(int warpgroup, int N, float* C)
        : warpgroup(warpgroup), tma(store_map_usable(N, C)), lead(threadIdx.x % 128 == 0)
    {
    }

    // One quarter after another: the lead thread waits until the copy engine has read the last quarter out of
    // the buffer; the warpgroup meets; every thread writes its values of the quarter, fences and meets again;
    // the lead thread sends both boxes, clipped to C, and goes on without waiting. Named barrier 1 + warpgroup:
    // 128 threads, not the producer, not the other consumer.
    __device__ __forceinline__ void store(const typename Mainloop::Consumer& me, const float (&d)[Mainloop::ACCUMULATORS],
                                          float* __restrict__ C, int M, int N, int2 origin,
                                          const CUtensorMap* map_c, const Ring<Mainloop>& ring) const
    {
        if (!tma) {
            me.store(d, C, M, N, origin.x, origin.y);
            return;
        }
        unsigned char* out = ring.stages + Mainloop::STAGE_COUNT * Mainloop::STAGE_BYTES +
                             (warpgroup - 1) * C_BUFFER_BYTES;
#pragma unroll
        for (int q = 0; q < Mainloop::Consumer::QUARTERS; ++q) {
            const int2 at = me.quarter_origin(q);
            if (lead)
                tma_store_wait_read();
            named_barrier(1 + warpgroup, 128);
            me.write_quarter(q, d, out, [](int m, int n) { return c_buffer_offset(m, n); });
            fence_proxy_async();
            named_barrier(1 + warpgroup, 128);
            if (lead) {
                for (int j = 0; j < 2; ++j)
                    tma_store_2d(map_c, origin.y + at.y + 32 * j, origin.x + at.x, out + j * C_BOX_BYTES);
                tma_store_commit();
            }
        }
    }

    __device__ void finish() const
    {
        if (lead)
            tma_store_wait_read();   // the buffer is read out before the block's shared memory goes
    }
};
