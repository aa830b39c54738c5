// The SM clock inside a launch, for devbench (matmulstudy/tools/devbench.py reads it where a candidate sets
// CLOCK_TRACE=1): each block's clock64 and the global timer at its start and at its end, in a __device__ array
// of the module that the host reads after the launch. Cycles over nanoseconds is the clock the block ran at;
// NVML's clock is sampled every few milliseconds, between launches as much as during them, so near the power
// cap the two differ. Without CLOCK_TRACE (the study's builds) a BlockClock is empty and costs nothing.

#pragma once

#include "hopper.cuh"

#ifdef CLOCK_TRACE
constexpr int CLOCKED_BLOCKS = 1024;
__device__ unsigned long long block_clock[CLOCKED_BLOCKS][4];   // start cycles, end cycles, start ns, end ns

// Made by the thread that reads it, as its block starts; stop() as the block ends.
struct BlockClock {
    unsigned long long cycles, ns;

    __device__ BlockClock() : cycles(clock64()), ns(global_ns()) {}

    __device__ void stop() const
    {
        if (blockIdx.x < CLOCKED_BLOCKS) {
            const unsigned long long end_cycles = clock64(), end_ns = global_ns();
            block_clock[blockIdx.x][0] = cycles;
            block_clock[blockIdx.x][1] = end_cycles;
            block_clock[blockIdx.x][2] = ns;
            block_clock[blockIdx.x][3] = end_ns;
        }
    }
};
#else
struct BlockClock {
    __device__ void stop() const {}
};
#endif
