// The mainloop of the tensor-core steps whose operands both come from shared
// memory (BF16, FP8), the second of the three roles (gemm.cuh): the stage
// layout of the ring, and what a consumer warpgroup does with a stage (the
// producer's side is producer.cuh, for every precision). What differs by
// precision is an Operands type (mainloop_bf16.cuh, mainloop_fp8.cuh): the
// element, the wgmma, and how B's slice lies in a stage.
//
// A stage is one K-slice of the block's TILE_M x TILE_N tile, TILE_K elements deep: one
// 128-byte swizzle row of A's and B's elements (TILE_K = 64 in BF16, 128 in FP8):
// - A's TILE_M x TILE_K box, K-major: row m at m * 128 bytes;
// - B's slice at A_BYTES, as Operands lays it out: MN-major boxes of 64
//   columns (BF16: row-major B, as the study stores it), or one K-major box
//   of TILE_N rows (FP8: B stored N x K).
// The tensor cores read both from shared memory through descriptors; no
// operand passes through registers. Consumer warpgroup c (1, 2, ...)
// multiplies rows 64 (c - 1) to 64 c - 1 of A's box by the whole of B's
// slice: a 64 x TILE_N part of C, TILE_N / 2 FP32 accumulators a thread (wgmma
// m64nBNk16 in BF16, m64nBNk32 in FP8: 32 bytes of K either way; TILE_N = 256
// for large problems, smaller tiles for small ones).
//
// Its shapes and switches, template parameters a step's file names:
// - Tile, Stages (shapes.cuh): the block's TILE_M x TILE_N tile and TILE_K, the ring's stages (no cluster: each block loads
//   all of its slices);
// - Descriptors: a consumer builds two for each wgmma (per_wgmma), or builds its descriptors once a tile and
//   steps them by constants (stepped);
// - Unaligned (ring.cuh): the producer loads a slice by itself where rows are off 16 bytes (own_loads), or the
//   host copies such operands onto 16 bytes first (host_copies, align_rows);
// - BBlocks: B's boxes one copy brings (producer.cuh; the registry's B_BLOCKS, which the host's map needs too);
// - Sums: where the sums are kept (below): TensorCoreSums or Promoted<Pieces>.

#pragma once

#include "ring.cuh"

// How a consumer keeps its sums:
// - TensorCoreSums: in the accumulators wgmma adds into, from a tile's first slice to its last;
// - Promoted<Pieces>: each slice's summed there from zero, in Pieces pieces of TILE_N / Pieces columns, and then
//   added into FP32 sums on the CUDA cores (multiply_promoted).
struct TensorCoreSums {
    static constexpr int PIECES = 0;
};

template <int Pieces>
struct Promoted {
    static_assert(Pieces >= 1, "promoted sums: a slice in one piece or more");
    static constexpr int PIECES = Pieces;
};

// How a consumer makes the shared-memory descriptors of a slice's wgmma (Consumer::descriptors and issue).
enum class Descriptors { per_wgmma, stepped };

template <class Operands, class Tile, class Stages, Descriptors Made, Unaligned Rows, int BBlocks = 1,
          class Sums = TensorCoreSums>
struct SmemMainloop {
    static constexpr bool STEPPED = Made == Descriptors::stepped;
    using Element = typename Operands::Element;
    static constexpr int TILE_M = Tile::TILE_M, TILE_N = Tile::TILE_N, TILE_K = Tile::TILE_K, STAGE_COUNT = Stages::STAGE_COUNT, CLUSTER_SIZE = 1;
    static constexpr int CONSUMERS = TILE_M / 64, THREADS = 128 * (1 + CONSUMERS);
    static constexpr int ACCUMULATORS = TILE_N / 2;   // a consumer thread's: its share of a 64 x TILE_N part
    static constexpr int BOX_COLUMNS = Operands::BOX_COLUMNS, BOXES_A_COPY = BBlocks;   // of B, one box
    static constexpr int A_BYTES = TILE_M * 128, B_BOX_BYTES = Operands::B_BOX_BYTES;   // A: TILE_M rows of 128 bytes
    static constexpr int STAGE_BYTES = A_BYTES + (TILE_N / BOX_COLUMNS) * B_BOX_BYTES;
    static constexpr bool OWN_LOADS = Rows == Unaligned::own_loads, B_K_MAJOR = Operands::B_K_MAJOR;
    // as the TF32 mainloop's: the producer's own loads fit in 72 registers, the consumers take the rest of the
    // block's (65,536 / THREADS rounded down to 8, times THREADS; gemm.cuh checks they fit)
    static constexpr int PRODUCER_REGISTERS = 72, CONSUMER_REGISTERS = 216;
    static_assert((TILE_N == 64 || TILE_N == 128 || TILE_N == 256) && TILE_K * sizeof(Element) == 128 && TILE_M % 64 == 0 &&
                      CONSUMERS >= 1 && CONSUMERS <= 2,
                  "wgmma m64nBN over 128-byte swizzle rows: TILE_N = 64, 128 or 256, TILE_K one row (64 BF16, 128 FP8), "
                  "TILE_M = 64 or 128");
    static_assert(!(OWN_LOADS && B_K_MAJOR), "own loads are written for B stored K x N (BF16's)");
    static_assert(Sums::PIECES == 0 || (STEPPED && B_K_MAJOR && TILE_N % Sums::PIECES == 0 &&
                                        ACCUMULATORS + ACCUMULATORS / Sums::PIECES + 24 <= CONSUMER_REGISTERS),
                  "promoted sums are written for stepped descriptors and B stored N x K (FP8's), with pieces whose "
                  "part fits in a thread's registers beside its sums");
    static constexpr int WGMMAS = TILE_K / Operands::WGMMA_K;   // a slice's wgmma, each 32 bytes along K

    // Byte offsets inside a stage, as the copy engine writes them (128-byte swizzle: the 16-byte chunk c of a
    // 128-byte row r lies at chunk c XOR r % 8).
    __device__ __forceinline__ static int a_offset(int m, int k)   // A(row0 + m, k0 + k)
    {
        constexpr int PER16 = 16 / sizeof(Element);
        return m * 128 + (((k / PER16) ^ (m % 8)) << 4) + (k % PER16) * sizeof(Element);
    }

    __device__ __forceinline__ static int b_offset(int k, int n)   // B(k0 + k, col0 + n)
    {
        return A_BYTES + Operands::b_offset(k, n);
    }

    __device__ __forceinline__ static bool maps_usable(int N, int K, const Element* A, const Element* B)
    {
        return Operands::maps_usable(N, K, A, B);
    }

    // A consumer warpgroup: its rows of the tile, and each thread's place in wgmma's accumulator layout
    // (hopper.cuh): d[4i + h] is row 16 w + g + 8 (h / 2), column 8i + 2t + h % 2 of its 64 x TILE_N part.
    struct Consumer {
        int rows, g, t, w, lane;   // rows: its first row of the tile

        __device__ Consumer(int warpgroup, int tid)
            : rows(64 * (warpgroup - 1)), g(tid % 32 / 4), t(tid % 4), w(tid / 32), lane(tid % 32)
        {
        }

        // The stage of the ring that slice `count` uses, and the parity of that use. With stepped descriptors
        // the count is divided as unsigned: as an int, each % and / by STAGE_COUNT costs instructions that round
        // negative values toward zero.
        __device__ __forceinline__ static int slot(int count)
        {
            return STEPPED ? int(unsigned(count) % STAGE_COUNT) : count % STAGE_COUNT;
        }

        __device__ __forceinline__ static int parity(int count)
        {
            return STEPPED ? int(unsigned(count) / STAGE_COUNT % 2) : (count / STAGE_COUNT) % 2;
        }

        // Stepped descriptors: those of this warpgroup's rows of A and of B in stage 0, built once a tile from a
        // warpgroup number the compiler knows is the same across the warp (lane 0's, shuffled), so that they
        // live in the uniform registers HGMMA reads. No address leaves the ring's shared memory, so the offsets
        // added to their address field (bits 0-13) never carry into the next field.
        __device__ __forceinline__ void descriptors(const Ring<SmemMainloop>& ring, uint64_t (&base)[2]) const
        {
            if (STEPPED) {
                const int warpgroup = __shfl_sync(0xffffffffu, int(threadIdx.x / 128), 0);
                base[0] = descriptor_sw128(ring.stages + 64 * (warpgroup - 1) * 128);
                base[1] = Operands::b_descriptor(ring.stages + A_BYTES);
                // kept as built: left to itself, ptxas builds them again each slice (10 instructions) to free the
                // uniform registers they hold, and it cannot build again what an asm statement returned
                asm volatile("mov.b64 %0, %0;" : "+l"(base[0]));
                asm volatile("mov.b64 %0, %0;" : "+l"(base[1]));
            }
        }

        // Slice `count`'s WGMMAS wgmma, on its stage once full, committed as one group.
        __device__ __forceinline__ void issue(const Ring<SmemMainloop>& ring, int count, float (&d)[ACCUMULATORS],
                                              const uint64_t (&base)[2]) const
        {
            const unsigned char* tile = ring.stage(count);   // unused with stepped descriptors
            mbarrier_wait(&ring.full[slot(count)], parity(count));
            wgmma_fence();
            if (STEPPED) {
                // stage 0's descriptors, the stage's offset, and a constant for each wgmma (the address field
                // counts 16 bytes: a wgmma's k is 32 bytes along A's rows; Operands::B_STEP of B's)
                const uint64_t stage = uint64_t(slot(count) * (STAGE_BYTES / 16));
#pragma unroll
                for (int kk = 0; kk < WGMMAS; ++kk)
                    Operands::template wgmma<TILE_N>(d, base[0] + stage + 2 * kk, base[1] + stage + Operands::B_STEP * kk);
            } else {
#pragma unroll
                for (int kk = 0; kk < WGMMAS; ++kk)   // 32 bytes along A's rows, B_STEP x 16 bytes along B's
                    Operands::template wgmma<TILE_N>(d, descriptor_sw128(tile + rows * 128 + kk * 32),
                                                 Operands::b_descriptor(tile + A_BYTES + kk * 16 * Operands::B_STEP));
            }
            wgmma_commit();
        }

        // Slice `count` is done with: its stage may be refilled (one arrival per consumer warp).
        __device__ __forceinline__ void release(const Ring<SmemMainloop>& ring, int count) const
        {
            if (lane == 0)
                mbarrier_arrive(&ring.empty[slot(count)]);
        }

        // Every K-slice of one tile, from slice `count` of the ring on: issue slice s, wait until only it is
        // running (slice s - 1 done), give s - 1's stage back. One group in flight while the next is waited for.
        // (`end` is the TF32 mainloop's, for clusters: a block of this one has none.) Promoted sums: below.
        __device__ __forceinline__ void multiply(const Ring<SmemMainloop>& ring, int& count, int K, int,
                                                 float (&d)[ACCUMULATORS]) const
        {
#pragma unroll
            for (int i = 0; i < ACCUMULATORS; ++i)
                d[i] = 0.0f;
            uint64_t base[2] = {0, 0};
            descriptors(ring, base);
            const int slices = (K + TILE_K - 1) / TILE_K;
            if constexpr (Sums::PIECES > 0) {
                multiply_promoted(ring, count, slices, base, d);
            } else {
                for (int s = 0; s < slices; ++s, ++count) {
                    issue(ring, count, d, base);
                    wgmma_wait<1>();
                    if (s > 0)
                        release(ring, count - 1);
                }
                wgmma_wait<0>();
                release(ring, count - 1);
            }
        }

        // Promoted sums (DeepGEMM's promotion to the CUDA cores), on d zeroed and the descriptors built by
        // multiply: each slice's WGMMAS wgmma summed by the tensor cores from zero into a part, then added into d
        // in FP32, rounded to nearest, so that no sum of the tensor cores runs longer than a slice (TILE_K k). A thread's registers hold d (TILE_N / 2) and the part of one piece of
        // its columns (TILE_N / 2 / PIECES): a slice goes in PIECES pieces of TILE_N / PIECES columns (wgmma
        // m64n(TILE_N/PIECES)), each one group, waited for and added before the next is issued. While a warpgroup
        // waits and adds, its tensor work stops; the other consumer warpgroup's goes on. A stage is released
        // once its last piece is read, before that piece's adds. (What was tried against it, and measured
        // slower on the H200, docs/fp8.md says: two parts, one piece added while the next runs, which with
        // pieces of half a slice would need 64 more registers than a thread has, and with quarters takes four
        // wgmma m64n64 a k-step; the consumers taking turns at the tensor cores; two parts across slices, which
        // ptxas serialises (C7514: a part read after wgmma_wait<1> across the loop's back edge).)
        __device__ __forceinline__ void multiply_promoted(const Ring<SmemMainloop>& ring, int& count, int slices,
                                                          const uint64_t (&base)[2], float (&d)[ACCUMULATORS]) const
        {
            constexpr int PIECES = Sums::PIECES, PART = ACCUMULATORS / PIECES;   // a thread's part of a piece
            constexpr uint64_t B_PIECE = (TILE_N / PIECES) * 128 / 16;   // B's rows of one piece, in 16 bytes
            float part[PART];
            for (int s = 0; s < slices; ++s, ++count) {
                mbarrier_wait(&ring.full[slot(count)], parity(count));
                const uint64_t stage = uint64_t(slot(count) * (STAGE_BYTES / 16));
#pragma unroll
                for (int p = 0; p < PIECES; ++p) {
                    const uint64_t a = base[0] + stage, b = base[1] + stage + p * B_PIECE;
                    wgmma_fence();
                    Operands::template wgmma<TILE_N / PIECES, false>(part, a, b);   // from zero
#pragma unroll
                    for (int kk = 1; kk < WGMMAS; ++kk)
                        Operands::template wgmma<TILE_N / PIECES>(part, a + 2 * kk, b + Operands::B_STEP * kk);
                    wgmma_commit();
                    wgmma_wait<0>();
                    if (p == PIECES - 1)
                        release(ring, count);
#pragma unroll
                    for (int i = 0; i < PART; ++i)
                        d[p * PART + i] += part[i];
                }
            }
        }

        // --- what the epilogue (epilogue.cuh) asks of the accumulators ---

        // Its 64 x TILE_N part of the tile at (row0, col0) into C: each thread's pairs of neighbouring columns as
        // one 8-byte store where C's rows start on 8 bytes (N even, C on 8 bytes) and both lie inside, else one
        // by one; nothing outside C.
        __device__ __forceinline__ void store(const float (&d)[ACCUMULATORS], float* __restrict__ C, int M, int N, int row0,
                                              int col0) const
        {
            const bool pairs = N % 2 == 0 && reinterpret_cast<uintptr_t>(C) % 8 == 0;
#pragma unroll
            for (int i = 0; i < TILE_N / 8; ++i)
#pragma unroll
                for (int h = 0; h < 2; ++h) {   // h = 0: row g, d[4i], d[4i + 1]; h = 1: row g + 8, d[4i + 2, 3]
                    const int r = row0 + rows + 16 * w + g + 8 * h, c = col0 + 8 * i + 2 * t;
                    if (r >= M)
                        continue;
                    float* out = C + (size_t)r * N + c;
                    if (pairs && c + 1 < N) {
                        *reinterpret_cast<float2*>(out) = make_float2(d[4 * i + 2 * h], d[4 * i + 2 * h + 1]);
                    } else {
                        if (c < N)
                            out[0] = d[4 * i + 2 * h];
                        if (c + 1 < N)
                            out[1] = d[4 * i + 2 * h + 1];
                    }
                }
        }

        // Its part in quarters of 64 x 64 (TILE_N / 64 of them: four of 256 columns): quarter q's place in the
        // tile, and its values at offset(m, n) from `out`, (m, n) their place in the quarter; each neighbouring
        // pair (columns n and n + 1 of one 16-byte chunk) as one 8-byte store.
        static constexpr int QUARTERS = TILE_N / 64;

        __device__ __forceinline__ int2 quarter_origin(int q) const { return make_int2(rows, 64 * q); }

        template <class Offset>
        __device__ __forceinline__ void write_quarter(int q, const float (&d)[ACCUMULATORS], unsigned char* out,
                                                      Offset offset) const
        {
#pragma unroll
            for (int i = 8 * q; i < 8 * q + 8; ++i)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const int m = 16 * w + g + 8 * h, n = 8 * (i - 8 * q) + 2 * t;
                    *reinterpret_cast<float2*>(out + offset(m, n)) =
                        make_float2(d[4 * i + 2 * h], d[4 * i + 2 * h + 1]);
                }
        }
    };
};
