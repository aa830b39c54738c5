// The SM clock inside a launch, and the share of it a block spends storing C, for devbench
// (matmulstudy/tools/devbench.py reads them where a candidate sets CLOCK_TRACE=1): each block's clock64 and the
// global timer at its start and at its end, and the cycles its reading thread spent in the epilogue and the
// tiles it stored, in the launch's workspace (workspace.cuh), which the host reads after the launch. Cycles over
// nanoseconds is the clock the block ran at; NVML's clock is sampled every few milliseconds, between launches
// as much as during them, so near the power cap the two differ. The epilogue's cycles are the time its
// warpgroup's tensor work waits for C to go out (the consumers of a tile store it together). Without
// CLOCK_TRACE (the study's builds) a BlockClock is empty and costs nothing.

#pragma once

#include "hopper.cuh"
#include "workspace.cuh"

#ifdef CLOCK_TRACE
// Made by the thread that reads it, as its block starts; stop() as the block ends.
struct BlockClock {
    unsigned long long cycles, ns, epilogue_from = 0, in_epilogue = 0, tiles = 0;

    __device__ BlockClock() : cycles(clock64()), ns(global_ns()) {}

    __device__ void epilogue_starts() { epilogue_from = clock64(); }

    __device__ void epilogue_ends()
    {
        in_epilogue += clock64() - epilogue_from;
        ++tiles;
    }

    __device__ void stop(Workspace* workspace) const
    {
        if (blockIdx.x < CLOCKED_BLOCKS) {
            const unsigned long long end_cycles = clock64(), end_ns = global_ns();
            unsigned long long* mine = workspace->block_clock[blockIdx.x];
            mine[0] = cycles;
            mine[1] = end_cycles;
            mine[2] = ns;
            mine[3] = end_ns;
            mine[4] = in_epilogue;
            mine[5] = tiles;
        }
    }
};
#else
struct BlockClock {
    __device__ void epilogue_starts() {}
    __device__ void epilogue_ends() {}
    __device__ void stop(Workspace*) const {}
};
#endif
