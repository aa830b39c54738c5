// The main loop of the FP32 steps that copy their slices with cp.async
// (28 to 30; a change here rebuilds them): the block's tile multiplied over
// a range of its K-slices, each slice copied from global straight into
// shared memory by the SM's asynchronous copies, into one of two buffers,
// while the other is multiplied.
//
// Step 28's header says what changes from step 17 and why. The pieces:
// - AsyncTiles: the two buffers. A is stored transposed (a[k][i]), so that
//   the math reads both operands along k with LDS.128, as in steps 12-17; its
//   rows are padded by 4 floats, so that the 32 four-byte copies of a warp
//   (8 k by 4 rows of A) land in 32 different banks.
// - Copies: a thread's share of a slice, 4-byte cp.async each. Which of its
//   copies lie inside M and N is worked out once per block (masks); a copy
//   outside is not made, and past K (the first slice only) it writes zeros.
//   Its two ways (below) share their pointers (CopyPointers) and how they
//   are first set (aim).
// - multiply_slices: the ragged slice first. K = (slices - 1) * BK + first,
//   1 <= first <= BK: slice 0 holds k < first (the rest of its rows zero),
//   and every later slice is whole, so the loop tests no k.
//
// - How a thread addresses its copies, two defines from the registry (0 or
//   1), both 1 being the reference kernel's way (step 28):
//   XOR_BUFFERS: the buffers a power of two apart, each thread's next
//   buffer found by flipping one bit of its addresses (not by buf * size);
//   LEAN_COPIES (needs XOR_BUFFERS): each copy's offset kept in a register,
//   B's copies two columns 128 apart on four k-rows, and after the last
//   slice the copies still made, of zero bytes, so that no predicate in the
//   loop changes with the slice. Step 29 takes XOR_BUFFERS alone: with
//   LEAN_COPIES too, ptxas spills 148 bytes in its kernel.
//   The define is the default of a template parameter (`lean` of Copies,
//   multiply_slice and multiply_slices), so that one file can hold kernels
//   of both ways: step 30's.
//
// Parameters (-D defines from kernels/registry.yaml): as pipeline.cuh's, XOR_BUFFERS and LEAN_COPIES.

#pragma once

#include "pipeline.cuh"   // the thread tile's layout (Place), its loads and FMAs (load_fragments, outer_product),
                          // the epilogue (store_tile)

constexpr int A_LD = BM + 4;   // floats from one k-row of A's buffer to the next
static_assert(THREADS % BK == 0 && THREADS % BN == 0 && BM * BK % THREADS == 0 && BK * BN % THREADS == 0,
              "each thread copies whole columns of the slice: THREADS must be a multiple of BK and BN");

#if !defined(XOR_BUFFERS) || !defined(LEAN_COPIES)
#error "XOR_BUFFERS and LEAN_COPIES (0 or 1) come from kernels/registry.yaml as -D defines"
#endif
#if LEAN_COPIES && !XOR_BUFFERS
#error "LEAN_COPIES flips its buffers by an XOR: it needs XOR_BUFFERS 1"
#endif

#if XOR_BUFFERS
constexpr unsigned FLIP = BK * BN * 4;   // bytes from one buffer to the other: a power of two, so an XOR flips them
static_assert((FLIP & (FLIP - 1)) == 0 && BK * A_LD * 4 <= FLIP, "A's and B's buffers are FLIP bytes each");
struct ABuffer {                       // one slice of A, padded to FLIP bytes: s.a[buf][k][i] as below
    float rows[BK][A_LD];
    float pad[FLIP / 4 - BK * A_LD];
    __device__ __forceinline__ const float* operator[](int k) const { return rows[k]; }
};
struct __align__(2 * FLIP) AsyncTiles {   // buffer 0 of A and of B at an address whose FLIP bit is 0
    ABuffer a[2];                      // a[buf][k][i] = A(row0 + i, k0 + k)
    float b[2][BK][BN];                // b[buf][k][j] = B(k0 + k, col0 + j)
};
#else
struct AsyncTiles {                    // the block's shared memory: two buffers of one slice each
    float a[2][BK][A_LD];              // a[buf][k][i] = A(row0 + i, k0 + k)
    float b[2][BK][BN];                // b[buf][k][j] = B(k0 + k, col0 + j)
};
#endif

// One 4-byte copy global -> shared (at a shared-memory address) of `bytes` bytes read: 4, or 0 (cp.async's
// source size 0: nothing is read, 4 zero bytes written).
__device__ __forceinline__ void copy_bytes(unsigned dst, const float* src, int bytes)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(dst), "l"(src), "r"(bytes) : "memory");
}

// The same, of 4 zero bytes where `zero`.
__device__ __forceinline__ void copy_async(unsigned dst, const float* src, bool zero) { copy_bytes(dst, src, zero ? 0 : 4); }

__device__ __forceinline__ void copies_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
__device__ __forceinline__ void copies_wait() { asm volatile("cp.async.wait_group 0;" ::: "memory"); }

// Where a thread's next copies come from and go to, in either way of addressing them (Copies, below).
struct CopyPointers {
    const float* a;      // A(row, k0 + k) of this thread's first row: the next slice's
    const float* b;      // B(k0 + kb, col) of this thread's first k-row (and first column)
    unsigned to_a, to_b; // the shared-memory address of its first copy of A, and of B, in buffer 0 (or, with
                         // XOR_BUFFERS, in the next buffer)

    // On to the next slice, `depth` k further.
    __device__ __forceinline__ void advance(int depth, int N)
    {
        a += depth;
        b += (size_t)depth * N;
    }
#if XOR_BUFFERS
    // Into the other buffer.
    __device__ __forceinline__ void flip()
    {
        to_a ^= FLIP;
        to_b ^= FLIP;
    }
#endif
};

// What both ways of addressing the copies work out alike, for a thread whose copies start at row i of A's
// slice and column j of B's (`c`: its Copies): which of its rows of A lie inside M (bit c of rows), and its
// first copies' sources, inside the matrix (a zero copy's source too), and destinations in buffer 0.
template <class Copies>
__device__ __forceinline__ void aim(Copies& c, const AsyncTiles& s, const float* __restrict__ A,
                                    const float* __restrict__ B, int M, int N, int K, int row0, int col0, int i, int j)
{
#pragma unroll
    for (int q = 0; q < Copies::A_COPIES; ++q)
        c.rows |= unsigned(row0 + i + q * Copies::A_APART < M) << q;
    c.a = A + (size_t)min(row0 + i, M - 1) * K + min(c.k, K - 1);
    c.b = B + (size_t)min(c.kb, K - 1) * N + min(col0 + j, N - 1);
    c.to_a = static_cast<unsigned>(__cvta_generic_to_shared(&s.a[0][c.k][i]));
    c.to_b = static_cast<unsigned>(__cvta_generic_to_shared(&s.b[0][c.kb][j]));
}

// How a thread copies a slice: Copies<true> (LEAN_COPIES 1; with XOR_BUFFERS only) or Copies<false> (0).
template <bool lean>
struct Copies;

#if XOR_BUFFERS
// A thread's copies of a slice, as the reference kernel makes them: A_COPIES of A (column k = tid % BK of the
// slice, rows tid / BK + c * A_APART) and B_COPIES of B (columns j = tid % HALF and j + HALF, k-rows
// tid / HALF + r * B_APART, r < B_ROWS). Copy number c of COPIES (A's first; then B's, two a k-row) is
// issued at k = c % (BK / 2) of the slice before, as below. Each copy's offset from the thread's first is
// worked out once, before the loop, and so is whether it lies inside M and N: a copy outside is not made.
// Past K (the first slice only) the copy writes zeros, from an address inside the matrix. After the last
// slice the copies are still issued, of zero bytes (nothing read, the idle buffer written with zeros), so
// that no predicate in the loop depends on the slice.
template <>
struct Copies<true> : CopyPointers {
    static constexpr int HALF = BN / 2;
    static constexpr int A_COPIES = BM * BK / THREADS, B_ROWS = BK * HALF / THREADS, COPIES = A_COPIES + 2 * B_ROWS;
    static constexpr int A_APART = THREADS / BK, B_APART = THREADS / HALF;
    static_assert(BN % 2 == 0 && THREADS % HALF == 0 && BK * HALF % THREADS == 0,
                  "each thread copies two columns of B, HALF apart, on whole k-rows");
    unsigned a_off[A_COPIES];    // floats from its first copy of A to copy c: c * A_APART rows
    unsigned b_off[B_ROWS];      // and of B, to k-row r: r * B_APART rows
    unsigned rows;               // bit c: copy c's row of A lies inside M
    bool column[2];              // its two columns of B lie inside N
    int k, kb;

    __device__ __forceinline__ Copies(const AsyncTiles& s, const float* __restrict__ A, const float* __restrict__ B,
                                      int M, int N, int K, int row0, int col0, int tid)
        : rows(0), k(tid % BK), kb(tid / HALF)
    {
        const int i = tid / BK, j = tid % HALF;
        column[0] = col0 + j < N;
        column[1] = col0 + j + HALF < N;
        aim(*this, s, A, B, M, N, K, row0, col0, i, j);
#pragma unroll
        for (int c = 0; c < A_COPIES; ++c)
            a_off[c] = c * (A_APART * K);
#pragma unroll
        for (int r = 0; r < B_ROWS; ++r)
            b_off[r] = r * (B_APART * N);
    }

    // Copy c of a whole slice into the next buffer, of `bytes` bytes (0 after the last slice).
    __device__ __forceinline__ void issue(int c, int bytes) const
    {
        if (c < A_COPIES) {
            if (rows >> c & 1)
                copy_bytes(to_a + c * A_APART * 4, a + a_off[c], bytes);
        } else {
            const int r = (c - A_COPIES) / 2, half = (c - A_COPIES) % 2;
            if (column[half])
                copy_bytes(to_b + (r * B_APART * BN + half * HALF) * 4, b + b_off[r] + half * HALF, bytes);
        }
    }

    // Copy c of the first slice, whose first `depth` k-rows are inside K: zeros past them.
    __device__ __forceinline__ void issue_first(int c, int depth) const
    {
        if (c < A_COPIES) {
            if (rows >> c & 1)
                copy_async(to_a + c * A_APART * 4, k < depth ? a + a_off[c] : a, k >= depth);
        } else {
            const int r = (c - A_COPIES) / 2, half = (c - A_COPIES) % 2;
            const bool zero = kb + r * B_APART >= depth;
            if (column[half])
                copy_async(to_b + (r * B_APART * BN + half * HALF) * 4, (zero ? b : b + b_off[r]) + half * HALF, zero);
        }
    }

};
#endif

// A thread's copies of a slice: A_COPIES of A (column k = tid % BK of the slice, rows tid / BK + c * A_APART)
// and B_COPIES of B (column tid % BN, k-rows tid / BN + c * B_APART). Copy number c of COPIES (A's first)
// is issued at k = c % (BK / 2) of the slice before: spread over the FMAs of its first half, so that the
// second half's hide their latency. A copy whose row of A lies past M, or whose column of B past N, is not
// made at all: what its place in shared memory holds reaches only accumulators of rows or columns outside C,
// which are never stored. Past K (the first slice only) the copy writes zeros, from an address inside the
// matrix.
template <>
struct Copies<false> : CopyPointers {
    static constexpr int A_COPIES = BM * BK / THREADS, B_COPIES = BK * BN / THREADS, COPIES = A_COPIES + B_COPIES;
    static constexpr int A_APART = THREADS / BK, B_APART = THREADS / BN;
#if XOR_BUFFERS
    static constexpr unsigned A_BUFFER = 0, B_BUFFER = 0;   // to_a and to_b are the next buffer's (flip)
#else
    static constexpr unsigned A_BUFFER = BK * A_LD * 4, B_BUFFER = BK * BN * 4;   // bytes from buffer 0 to 1
#endif
    unsigned a_step, b_step;   // floats from one of its copies to the next: A_APART rows of A, B_APART of B
    unsigned rows;             // bit c: copy c's row of A lies inside M
    bool column;               // its column of B lies inside N
    int k, kb;

    __device__ __forceinline__ Copies(const AsyncTiles& s, const float* __restrict__ A, const float* __restrict__ B,
                                      int M, int N, int K, int row0, int col0, int tid)
        : a_step(A_APART * K), b_step(B_APART * N), rows(0), column(col0 + tid % BN < N), k(tid % BK),
          kb(tid / BN)
    {
        aim(*this, s, A, B, M, N, K, row0, col0, tid / BK, tid % BN);
    }

    // Copy c of a whole slice into buffer `buf`, if there is a next slice (`more`).
    __device__ __forceinline__ void issue(int buf, int c, bool more = true) const
    {
        if (c < A_COPIES) {
            if (more && (rows >> c & 1))
                copy_async(to_a + buf * A_BUFFER + c * A_APART * 4, a + c * a_step, false);
        } else if (more && column) {
            const int q = c - A_COPIES;
            copy_async(to_b + buf * B_BUFFER + q * B_APART * BN * 4, b + q * b_step, false);
        }
    }

    // Copy c of the first slice, whose first `depth` k-rows are inside K, into buffer 0: zeros past them.
    __device__ __forceinline__ void issue_first(int c, int depth) const
    {
        if (c < A_COPIES) {
            if (rows >> c & 1)
                copy_async(to_a + c * A_APART * 4, k < depth ? a + c * a_step : a, k >= depth);
        } else if (column) {
            const int q = c - A_COPIES;
            const bool zero = kb + q * B_APART >= depth;
            copy_async(to_b + q * B_APART * BN * 4, zero ? b : b + q * b_step, zero);
        }
    }

};

// One slice: its BK k-rows of FMAs, the next k's fragments loaded while each k's are multiplied, and the next slice
// copied into the other buffer meanwhile (a share of its copies at each k of the first half; after the last slice,
// `more` false, none, or of zero bytes with LEAN_COPIES). At its end, once every thread's copies have landed (the
// barrier), the next slice's first fragments are loaded. The last slice runs the same code, its copies predicated
// off (or empty) and its last loads unused. Two other shapes of this loop were slower on the H100
// (6fbf69a:notes/beyond_the_seeds.md): a branch around the barrier kept ptxas from moving the last k's FMAs over the next
// slice's first loads (87% of cuBLAS SGEMM at 4096); the last slice peeled off the loop made ptxas take 254
// registers and put 176 of the loop's 1,024 FFMAs on a register-bank conflict (two sources read from one bank of
// the register file), against 102 this way (about 1 point).
template <FmaOrder order, bool lean>
__device__ __forceinline__ void multiply_slice(float (&acc)[TM][TN], float (&a)[2][TM], float (&b)[2][TN],
                                               AsyncTiles& s, int buf, Copies<lean>& copies, int N, const Place& p,
                                               bool more)
{
    const int bytes = more ? 4 : 0;   // a lean copy after the last slice reads nothing
#pragma unroll
    for (int k = 0; k < BK; ++k) {
        if (k < BK / 2)
#pragma unroll
            for (int c = k; c < Copies<lean>::COPIES; c += BK / 2)
                if constexpr (lean)
                    copies.issue(c, bytes);
                else
                    copies.issue(1 - buf, c, more);
        if (k < BK - 1)   // the next k's fragments, from this slice
            load_fragments(a[(k + 1) % 2], b[(k + 1) % 2], s, buf, k + 1, p);
        outer_product<order>(acc, a[k % 2], b[k % 2]);
    }
    copies.advance(BK, N);
#if XOR_BUFFERS
    copies.flip();
#endif
    copies_commit();
    copies_wait();
    __syncthreads();
    load_fragments(a[0], b[0], s, 1 - buf, 0, p);
}

// acc += the block tile's product over its K-slices [from, to) (all of them for step 28; Stream-K's ranges,
// step 29), its copies made the `lean` way or not (LEAN_COPIES, above). Slice 0 is the ragged one, k < first;
// slice t > 0 covers k = first + (t - 1) * BK, ... BK of them.
// One barrier per slice: after it, every copy into the buffer just filled has landed (each thread waited for
// its own), and every read of the other buffer is done; and one on entry, as pipeline.cuh's: a previous
// call's last fragments may still be being read from the buffer this one fills first.
template <FmaOrder order, bool lean = LEAN_COPIES>
__device__ __forceinline__ void multiply_slices(float (&acc)[TM][TN], AsyncTiles& s, const float* __restrict__ A,
                                                const float* __restrict__ B, int M, int N, int K, const Place& p,
                                                int from, int to)
{
    Copies<lean> copies(s, A, B, M, N, K, p.row0, p.col0, p.tid);
    const int slices = (K + BK - 1) / BK, first = K - (slices - 1) * BK;   // the ragged slice, done first
    __syncthreads();
    if (from == 0) {
#pragma unroll
        for (int c = 0; c < Copies<lean>::COPIES; ++c)
            copies.issue_first(c, first);
        copies.advance(first, N);
    } else {
        copies.advance(first + (from - 1) * BK, N);
#pragma unroll
        for (int c = 0; c < Copies<lean>::COPIES; ++c)
            if constexpr (lean)
                copies.issue(c, 4);
            else
                copies.issue(0, c);
        copies.advance(BK, N);
    }
#if XOR_BUFFERS
    copies.flip();
#endif
    copies_commit();
    copies_wait();
    __syncthreads();
    float a[2][TM], b[2][TN];
    load_fragments(a[0], b[0], s, 0, 0, p);
    for (int t = from, buf = 0; t < to; ++t, buf ^= 1)
        multiply_slice<order, lean>(acc, a, b, s, buf, copies, N, p, t + 1 < to);
}
