// Stream-K's sharing out of K-slices, without a main loop: how many tiles
// go whole and which block's range holds a slice, the bounded wait for the
// pieces of a cut tile before one's own, and the launch's stop. The FP32
// steps' machinery (stream_k.cuh: 15 to 17, 29 to 31) and the BF16 chapter's
// step 38 use it; a change here rebuilds them all. stream_k.cuh's header
// says how the FP32 steps mark what they leave in global memory with the
// launch's number; step 38 sets its state back to 0 instead, as step 37's
// tile counter is (tiles.cuh).

#pragma once

constexpr int MAX_BLOCKS = 4096;                        // progress has a place per block
constexpr unsigned long long WAIT_LIMIT_NS = 10000000000ull;

__device__ __forceinline__ unsigned long long marked(unsigned launch, unsigned value)
{
    return (unsigned long long)launch << 32 | value;
}

// The launch's end (__trap(): stream_k.cuh's header says what the study then records), out of line: with the __trap() inlined into take_ticket, ptxas spilled 192
// bytes in step 17's main loop, which ran 18% slower at 4096 (measured on the H100).
__device__ __noinline__ void stop() { __trap(); }

// One thread: wait until the pieces of the tile before this one have summed `from` slices into C (their
// value marked with the launch's number; step 38's unmarked, launch 0).
__device__ __forceinline__ void wait_for(const unsigned long long* done, unsigned launch, int from)
{
    const unsigned long long want = marked(launch, from);
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    while (atomicAdd(const_cast<unsigned long long*>(done), 0ull) != want) {
        __nanosleep(64);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (now - start > WAIT_LIMIT_NS)
            stop();   // waited 10 s
    }
}

// The block whose range holds slice x: the largest w with w * S / W <= x.
__device__ __forceinline__ int owner_of(long long x, long long S, long long W) { return ((x + 1) * W + S - 1) / S - 1; }

// How many tiles go whole, wave by wave, before the rest is shared out as slices (Stream-K's hybrids, for
// `tiles` tiles on W blocks). Tiles that fill whole waves all go whole, and so does one wave at least 7/8
// full (step 15's rule: cutting every tile in pieces would cost more than the idle eighth). Otherwise the
// paper's two hybrids: "two-tile Stream-K + data-parallel" (step 17's) shares out the last full wave with
// the partial one, so each block gets one to two tiles' slices; "data-parallel + one-tile Stream-K" shares
// out the partial wave alone, each block less than a tile's. Step 29 takes the second where the partial
// wave is at least half full: a tile is then cut in at most three pieces, whose hand-over through C is
// short (cut in more, at 1537 x 3001 x 997 on the H100 it was 25% slower).
__device__ __forceinline__ long long whole_tiles(long long tiles, long long W, bool one_tile)
{
    const long long waves = tiles / W, rest = tiles % W;
    return rest == 0 ? tiles                                           // whole waves only
         : waves == 0 ? (rest * 8 >= W * 7 ? tiles : 0)               // one wave: step 15's 7/8 rule
         : one_tile && rest * 2 >= W ? waves * W                      // the partial wave alone
         : (waves - 1) * W;                                           // the last full wave and the partial one
}
