"""What the GPU is: its attributes, the peaks of the study's precisions on it, and its memory bandwidth,
measured. A new GPU generation is a row in the precision table (its rates per SM), not a change here."""

from __future__ import annotations

import numpy as np

from .. import precisions


def device_facts(gpu) -> dict:
    """What the device says of itself, and the limits that follow: gpu.json's facts."""
    cuda, dev = gpu.cuda, gpu.device
    attr = dev.get_attributes()
    A = cuda.device_attribute
    cc = dev.compute_capability()
    sm_count = attr[A.MULTIPROCESSOR_COUNT]
    sm_clock_khz = attr[A.CLOCK_RATE]
    mem_clock_khz = attr[A.MEMORY_CLOCK_RATE]
    bus_bits = attr[A.GLOBAL_MEMORY_BUS_WIDTH]
    driver = cuda.get_driver_version()
    import pycuda
    facts = {
        "gpu_name": dev.name(),
        "pci_bus_id": dev.pci_bus_id(),
        "compute_capability": f"{cc[0]}.{cc[1]}",
        "sm_count": sm_count,
        "max_sm_clock_mhz": sm_clock_khz / 1000,
        "memory_clock_mhz": mem_clock_khz / 1000,
        "memory_bus_bits": bus_bits,
        "l2_bytes": attr[A.L2_CACHE_SIZE],
        "total_memory_bytes": dev.total_memory(),
        "shared_per_sm_bytes": attr[A.MAX_SHARED_MEMORY_PER_MULTIPROCESSOR],
        "registers_per_sm": attr[A.MAX_REGISTERS_PER_MULTIPROCESSOR],
        "max_threads_per_sm": attr[A.MAX_THREADS_PER_MULTIPROCESSOR],
        "max_blocks_per_sm": attr[A.MAX_BLOCKS_PER_MULTIPROCESSOR],
        "reserved_shared_per_block_bytes": attr[A.RESERVED_SHARED_MEMORY_PER_BLOCK],
    }
    # each precision's rate per SM and its dense peak at the highest SM clock (a datasheet may quote a lower
    # boost clock)
    for precision in precisions.TABLE:
        facts.update(precision.peak_facts(sm_count, cc, sm_clock_khz))
    facts.update({
        # double data rate: 2 transfers per memory clock over the bus
        "dram_peak_gbs": 2 * mem_clock_khz * 1e3 * bus_bits / 8 / 1e9,
        "driver_cuda_version": f"{driver // 1000}.{driver % 1000 // 10}",
        "pycuda_version": pycuda.VERSION_TEXT,
    })
    return facts


def copy_bandwidth(gpu, warmup: int = 3, repetitions: int = 20) -> dict:
    """DRAM bandwidth measured by device-to-device copies, in GB/s.

    Copies a buffer of 1 GiB (an eighth of the memory on smaller GPUs;
    either way far larger than L2), each copy between its own events.
    A copy reads and writes every byte: bandwidth = 2 x bytes / time.
    """
    cuda = gpu.cuda
    nbytes = min(1 << 30, gpu.device.total_memory() // 8) // 4 * 4
    src, dst = gpu.empty(nbytes), gpu.empty(nbytes)
    cuda.memset_d32(src, 0x3F800000, nbytes // 4)
    times = []
    for i in range(warmup + repetitions):
        start, end = cuda.Event(), cuda.Event()
        start.record()
        cuda.memcpy_dtod_async(dst, src, nbytes)
        end.record()
        end.synchronize()
        if i >= warmup:
            times.append(start.time_till(end))
    gpu.release(src, dst)
    median = float(np.median(times))
    return {"copy_bandwidth_gbs": 2 * nbytes / (median * 1e-3) / 1e9, "copy_bytes": nbytes,
            "copy_median_ms": median, "copy_samples": repetitions}
