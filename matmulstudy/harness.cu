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

// flush_l2 evicts the previous launch's data from the L2 cache before a cold
// measurement: it reads a buffer twice the size of L2 (the size comes from
// the device's attributes). Loads use ld.global.cg (cached in L2, not L1), so
// L2 ends up holding clean lines of this buffer and the timed kernel finds
// none of its operands there and pays no write-back of the flush's data,
// which matches Nsight Compute's own "--cache-control all". The sum is
// written only if it equals a value the buffer never produces, so the loads
// cannot be optimised away and nothing is written.

extern "C" __global__ void flush_l2(const int4* buffer, unsigned long long count, int* sink)
{
    int acc = 0;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < count;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        int4 v = __ldcg(buffer + i);
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x5EED5EED)
        *sink = acc;
}
