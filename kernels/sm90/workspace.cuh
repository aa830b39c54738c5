// The global memory a launch lends its kernel (gemm.cuh): what the blocks of one grid share, which a variable
// at file scope would share with every other launch of the module instead, on any stream. The host allocates
// Workspace's bytes with the launch (the kernel's exported LaunchFacts say how many: none where it needs none),
// zeroed once; the ticket is 0 again when a launch ends.
//   tile_ticket  QueuedTiles' next ticket (scheduler.cuh), 0 between launches;
//   block_clock  in devbench's CLOCK_TRACE builds only, each block's clocks (block_clock.cuh), at byte 8.

#pragma once

#ifdef CLOCK_TRACE
constexpr int CLOCKED_BLOCKS = 1024;
constexpr int CLOCK_FIELDS = 6;   // start cycles, end cycles, start ns, end ns, epilogue cycles, tiles stored
#endif

struct Workspace {
    unsigned tile_ticket;
#ifdef CLOCK_TRACE
    unsigned long long block_clock[CLOCKED_BLOCKS][CLOCK_FIELDS];
#endif
};

// Whether a kernel needs a workspace at all: its scheduler draws tickets, or it traces its blocks' clocks.
template <class Scheduler>
constexpr bool needs_workspace()
{
#ifdef CLOCK_TRACE
    return true;
#else
    return Scheduler::DRAWS_TICKETS;
#endif
}
