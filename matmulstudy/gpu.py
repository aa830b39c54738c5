"""PyCUDA backend: one context per process, device facts, cubins, event timing.

Small verbs in the manner of Kernel Tuner's backends: open a session, put
arrays on the device, load a function from a cubin, launch, time with events.
The context is the device's primary context, pushed on entry and popped on
exit (never pycuda.autoinit), so cuBLAS, which uses the runtime API and hence
the primary context, shares it.
"""

from __future__ import annotations

import numpy as np

from .errors import StudyError

BATCH = 100                    # timed launches queued behind one block_stream
BLOCK_TIMEOUT_NS = 5 * 10**9   # block_stream gives up after 5 s

# FP32 lanes (FMA units) per SM by compute capability, from the CUDA C
# Programming Guide's table of arithmetic instruction throughput.
FP32_LANES_PER_SM = {
    (6, 0): 64, (6, 1): 128, (6, 2): 128, (7, 0): 64, (7, 2): 64, (7, 5): 64,
    (8, 0): 64, (8, 6): 128, (8, 7): 128, (8, 9): 128, (9, 0): 128,
    (10, 0): 128, (10, 3): 128, (12, 0): 128,
}


def require_pycuda():
    """Import and initialise PyCUDA, or say in one line what is missing."""
    try:
        import pycuda.driver as cuda
    except ImportError as err:
        raise StudyError(f"no usable GPU: pycuda cannot be imported ({err}); "
                         "install it with: pip install pycuda (needs the CUDA toolkit)") from None
    try:
        cuda.init()
        count = cuda.Device.count()
    except cuda.Error as err:
        raise StudyError(f"no usable GPU: the CUDA driver did not start ({err}); "
                         "check the NVIDIA driver with nvidia-smi") from None
    if count == 0:
        raise StudyError("no usable GPU: the CUDA driver sees no device (check CUDA_VISIBLE_DEVICES)")
    return cuda


class GpuSession:
    """``with GpuSession() as gpu:`` — everything CUDA happens inside."""

    def __init__(self, ordinal: int = 0):
        self.cuda = require_pycuda()
        self.device = self.cuda.Device(ordinal)
        self._allocations = []
        self._modules = []
        self.ctx = None

    def __enter__(self):
        self.ctx = self.device.retain_primary_context()
        self.ctx.push()
        return self

    def __exit__(self, *exc):
        try:
            self.ctx.synchronize()
        finally:
            for alloc in self._allocations:
                alloc.free()
            self._allocations.clear()
            self._modules.clear()
            self.ctx.pop()
            self.ctx = None
            from pycuda.tools import clear_context_caches
            clear_context_caches()
        return False

    # --- memory ---------------------------------------------------------
    def empty(self, nbytes: int):
        alloc = self.cuda.mem_alloc(max(int(nbytes), 1))
        self._allocations.append(alloc)
        return alloc

    def to_device(self, array: np.ndarray):
        alloc = self.empty(array.nbytes)
        self.cuda.memcpy_htod(alloc, np.ascontiguousarray(array))
        return alloc

    def fill_u32(self, alloc, bits: int, count: int) -> None:
        self.cuda.memset_d32(alloc, bits, count)

    def to_host(self, alloc, shape, dtype=np.float32) -> np.ndarray:
        out = np.empty(shape, dtype=dtype)
        self.cuda.memcpy_dtoh(out, alloc)
        return out

    def synchronize(self) -> None:
        self.ctx.synchronize()

    # --- kernels --------------------------------------------------------
    def load_function(self, cubin_path, name: str, arg_types: str = "iiiPPP"):
        """A kernel from a prebuilt cubin (no compilation here), prepared."""
        try:
            module = self.cuda.module_from_file(str(cubin_path))
        except self.cuda.Error as err:
            raise StudyError(f"cannot load {cubin_path} on {self.device.name()} ({err}); "
                             "was it built for another GPU? set arch: auto or this GPU's sm_XY") from None
        self._modules.append(module)
        func = module.get_function(name)
        func.prepare(arg_types)
        return func

    # --- timing ---------------------------------------------------------
    def load_blocker(self, harness_cubin) -> None:
        """Load block_stream (matmulstudy/harness.cu) and its mapped flags."""
        cuda = self.cuda
        self._block = self.load_function(harness_cubin, "block_stream", "PPQ")
        self._flags = cuda.pagelocked_zeros((2,), np.int32, mem_flags=cuda.host_alloc_flags.DEVICEMAP)
        self._flags_dev = np.intp(self._flags.base.get_device_pointer())

    def time_ms(self, launch, warmup: int, repetitions: int) -> tuple[list[float], bool]:
        """Milliseconds of each of `repetitions` launches, one event pair each.

        After `warmup` launches, the timed launches are queued in batches
        behind block_stream, released together, and synchronised once per
        batch. Returns the times and whether every batch stayed blocked
        until released (False: a batch may include host launch gaps).
        """
        for _ in range(warmup):
            launch()
        self.synchronize()
        times, blocked = [], True
        for first in range(0, repetitions, BATCH):
            count = min(BATCH, repetitions - first)
            starts = [self.cuda.Event() for _ in range(count)]
            ends = [self.cuda.Event() for _ in range(count)]
            self._flags[:] = 0
            self._block.prepared_call((1, 1, 1), (1, 1, 1), self._flags_dev,
                                      self._flags_dev + 4, BLOCK_TIMEOUT_NS)
            for start, end in zip(starts, ends):
                start.record()
                launch()
                end.record()
            self._flags[0] = 1
            ends[-1].synchronize()
            blocked &= self._flags[1] == 0
            times += [start.time_till(end) for start, end in zip(starts, ends)]
        return times, bool(blocked)

    # --- facts ----------------------------------------------------------
    def info(self) -> dict:
        """What the device says of itself, and the limits that follow."""
        cuda, dev = self.cuda, self.device
        attr = dev.get_attributes()
        A = cuda.device_attribute
        cc = dev.compute_capability()
        sm_count = attr[A.MULTIPROCESSOR_COUNT]
        sm_clock_khz = attr[A.CLOCK_RATE]
        mem_clock_khz = attr[A.MEMORY_CLOCK_RATE]
        bus_bits = attr[A.GLOBAL_MEMORY_BUS_WIDTH]
        lanes = FP32_LANES_PER_SM.get(cc)
        driver = cuda.get_driver_version()
        import pycuda
        return {
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
            "fp32_lanes_per_sm": lanes,
            # 2 flop per FMA per lane per cycle at the highest SM clock
            "fp32_peak_gflops": (sm_count * lanes * 2 * sm_clock_khz / 1e6) if lanes else None,
            # double data rate: 2 transfers per memory clock over the bus
            "dram_peak_gbs": 2 * mem_clock_khz * 1e3 * bus_bits / 8 / 1e9,
            "driver_cuda_version": f"{driver // 1000}.{driver % 1000 // 10}",
            "pycuda_version": pycuda.VERSION_TEXT,
        }
