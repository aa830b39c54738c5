// The harness's own kernel, not a step of the study.
//
// block_stream holds the GPU's stream until the host has queued every timed
// launch of a batch (nvbench's "blocking kernel"). Without it, a kernel that
// runs faster than Python can launch it is timed together with the idle gap
// before it, and small sizes look slower than they are. Once released, the
// queued launches run back to back and each event pair brackets one kernel.
//
// release and status live in page-locked host memory mapped into the GPU's
// address space: the host writes release = 1; the kernel writes status = 1 if
// it gave up waiting after timeout_ns (the batch then ran unprotected, and
// the measurement says so).

extern "C" __global__ void block_stream(const volatile int* release, int* status,
                                        unsigned long long timeout_ns)
{
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    while (*release == 0) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (now - start > timeout_ns) {
            *status = 1;
            return;
        }
        __nanosleep(1000);
    }
}
