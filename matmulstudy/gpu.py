"""PyCUDA backend: one context per process, device facts, cubins, event timing.

Small verbs in the manner of Kernel Tuner's backends: open a session, put
arrays on the device, load a function from a cubin, launch, time with events.
The context is the device's primary context, pushed on entry and popped on
exit (never pycuda.autoinit), so cuBLAS, which uses the runtime API and hence
the primary context, shares it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from .errors import StudyError

BLOCK_TIMEOUT_NS = 5 * 10**9   # block_stream gives up after 5 s
POLL_S = 0.002                 # NVML is read every ~2 ms while a batch runs

# FP32 lanes (FMA units) per SM by compute capability, from the CUDA C
# Programming Guide's table of arithmetic instruction throughput.
FP32_LANES_PER_SM = {
    (6, 0): 64, (6, 1): 128, (6, 2): 128, (7, 0): 64, (7, 2): 64, (7, 5): 64,
    (8, 0): 64, (8, 6): 128, (8, 7): 128, (8, 9): 128, (9, 0): 128,
    (10, 0): 128, (10, 3): 128, (12, 0): 128,
}

# Dense TF32 tensor-core flop per clock per SM (2 per multiply-add), from NVIDIA's whitepapers' peak
# tables divided by SMs and boost clock: A100 156 TFLOP/s = 108 x 1024 x 1410 MHz; GA102 (RTX 3090)
# 35.6 = 82 x 256 x 1695 MHz; AD102 (RTX 4090) 82.6 = 128 x 256 x 2520 MHz; H100 SXM 494.7 =
# 132 x 2048 x 1830 MHz. Other architectures: not known here (no TF32 peak is drawn).
TF32_FLOP_PER_CLOCK_PER_SM = {(8, 0): 1024, (8, 6): 256, (8, 9): 256, (9, 0): 2048}


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


@dataclass
class Timing:
    """The samples of one measurement, and how it went."""
    times_ms: list = field(default_factory=list)
    batch_readings: list = field(default_factory=list)   # NVML readings of each sample's batch
    blocked: bool = True          # every batch waited behind block_stream until released
    stop_reason: str = ""
    elapsed_s: float = 0.0


class GpuSession:
    """``with GpuSession() as gpu:`` — everything CUDA happens inside."""

    def __init__(self, ordinal: int = 0):
        self.cuda = require_pycuda()
        self.device = self.cuda.Device(ordinal)
        self._allocations = []
        self._modules = {}   # cubin path -> its module, loaded once a session
        self._driver_kernels = {}   # cubin path -> a TMA kernel loaded through the driver (matmulstudy/tma.py)
        self._block = None   # the harness, once loaded
        self._blas = None    # cuBLAS for the float64 reference, once needed
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
            for kernel in self._driver_kernels.values():
                kernel.unload()
            self._driver_kernels.clear()
            self._modules.clear()
            if self._blas is not None:
                self._blas.close()
                self._blas = None
            self._block = None
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

    def release(self, *allocs) -> None:
        """Free device memory before the session ends (one session, many shapes)."""
        for alloc in allocs:
            alloc.free()
            self._allocations.remove(alloc)

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

    @property
    def sm_count(self) -> int:
        """The device's multiprocessors (a persistent kernel's grid depends on them)."""
        return self.device.get_attribute(self.cuda.device_attribute.MULTIPROCESSOR_COUNT)

    def synchronize(self) -> None:
        self.ctx.synchronize()

    # --- kernels --------------------------------------------------------
    def load_function(self, cubin_path, name: str, arg_types: str = "iiiPPP"):
        """A kernel from a prebuilt cubin (no compilation here), prepared; each cubin is loaded once."""
        path = str(cubin_path)
        if path not in self._modules:
            try:
                self._modules[path] = self.cuda.module_from_file(path)
            except self.cuda.Error as err:
                raise StudyError(f"cannot load {cubin_path} on {self.device.name()} ({err}); "
                                 "was it built for another GPU? set arch: auto or this GPU's sm_XY") from None
        func = self._modules[path].get_function(name)
        func.prepare(arg_types)
        return func

    def launcher(self, cubin_path, variant, M: int, N: int, K: int, d_a, d_b, d_c):
        """A call that launches a cuda variant once on these buffers, as the study launches it: its grid and
        block, its dynamic shared memory (the kernel's limit raised to it first), and the tensor maps (of
        A, B and maybe C) after (M, N, K, A, B, C) where the registry gives `tensor_maps` (such a kernel is
        launched through the driver: matmulstudy/tma.py says why)."""
        from . import tma
        shared = variant.dynamic_shared
        limit = self.device.get_attribute(self.cuda.device_attribute.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
        if shared > limit:
            raise StudyError(f"{variant.id} asks for {shared} bytes of shared memory a block; "
                             f"{self.device.name()} allows {limit}: change its defines")
        grid, block = variant.grid(M, N, self.sm_count), variant.block
        if variant.tensor_maps:
            path = str(cubin_path)
            if path not in self._driver_kernels:
                self._driver_kernels[path] = tma.DriverKernel(path, variant.kernel, shared)
            maps = tma.map_arguments(variant.tensor_maps, M, N, K, {"A": int(d_a), "B": int(d_b), "C": int(d_c)})
            return self._driver_kernels[path].launcher(grid, block, M, N, K, int(d_a), int(d_b), int(d_c), maps)
        func = self.load_function(cubin_path, variant.kernel)
        if shared > 48 * 1024:
            func.set_attribute(self.cuda.function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, shared)

        def launch():
            func.prepared_call(grid, block, M, N, K, d_a, d_b, d_c, shared_size=shared)
        return launch

    def reference_blas(self):
        """A cuBLAS handle with default (native FP32/FP64) math, for the verification's reference."""
        if self._blas is None:
            from .cublas import Cublas
            self._blas = Cublas("fp32")
        return self._blas

    # --- timing ---------------------------------------------------------
    def load_harness(self, harness_cubin) -> None:
        """Load block_stream and flush_l2 (matmulstudy/harness.cu) and their buffers, once."""
        if self._block is not None:
            return
        cuda = self.cuda
        self._block = self.load_function(harness_cubin, "block_stream", "PPQ")
        self._flags = cuda.pagelocked_zeros((2,), np.int32, mem_flags=cuda.host_alloc_flags.DEVICEMAP)
        self._flags_dev = np.intp(self._flags.base.get_device_pointer())
        self._flush = self.load_function(harness_cubin, "flush_l2", "PQP")
        l2 = self.device.get_attribute(cuda.device_attribute.L2_CACHE_SIZE)
        self.flush_bytes = max(2 * l2, 1 << 20) // 16 * 16
        self._flush_buf = self.empty(self.flush_bytes)
        cuda.memset_d32(self._flush_buf, 0, self.flush_bytes // 4)
        self._flush_sink = self.empty(4)
        sms = self.device.get_attribute(cuda.device_attribute.MULTIPROCESSOR_COUNT)
        self._flush_grid = (4 * sms, 1, 1)

    def flush_l2(self) -> None:
        """Queue a read of twice L2's size: the next launch starts with a cold L2."""
        self._flush.prepared_call(self._flush_grid, (512, 1, 1), self._flush_buf,
                                  np.uint64(self.flush_bytes // 16), self._flush_sink)

    def time_launches(self, launch, warmup: int, criterion, cold: bool = True, monitor=None) -> Timing:
        """Time `launch` until `criterion` (matmulstudy.timing) says stop.

        After `warmup` launches, timed launches are queued in batches behind
        block_stream, each launch between its own pair of events (with an L2
        flush before the start event when `cold`), released together and
        synchronised once per batch. While a batch runs, `monitor` (NVML)
        is read; each sample keeps the lowest SM clock seen during its batch.
        """
        cuda = self.cuda
        for _ in range(warmup):
            if cold:
                self.flush_l2()
            launch()
        self.synchronize()
        out = Timing()
        t0 = time.perf_counter()
        estimate = 0.0
        while True:
            elapsed = time.perf_counter() - t0
            reason = criterion.stop(out.times_ms, elapsed)
            if reason:
                out.stop_reason, out.elapsed_s = reason, elapsed
                return out
            count = criterion.next_batch(len(out.times_ms), estimate, elapsed)
            starts = [cuda.Event() for _ in range(count)]
            ends = [cuda.Event() for _ in range(count)]
            self._flags[:] = 0
            self._block.prepared_call((1, 1, 1), (1, 1, 1), self._flags_dev,
                                      self._flags_dev + 4, BLOCK_TIMEOUT_NS)
            for start, end in zip(starts, ends):
                if cold:
                    self.flush_l2()
                start.record()
                launch()
                end.record()
            self._flags[0] = 1
            readings = []
            if monitor is not None:
                readings.append(monitor.read())
                while not ends[-1].query():
                    time.sleep(POLL_S)
                    readings.append(monitor.read())
            ends[-1].synchronize()
            out.blocked &= bool(self._flags[1] == 0)
            batch = [start.time_till(end) for start, end in zip(starts, ends)]
            out.times_ms += batch
            out.batch_readings += [readings] * count
            # wall time per launch, flushes included, for the next batch's size
            estimate = (time.perf_counter() - t0 - elapsed) / count

    def copy_bandwidth(self, warmup: int = 3, repetitions: int = 20) -> dict:
        """DRAM bandwidth measured by device-to-device copies, in GB/s.

        Copies a buffer of 1 GiB (an eighth of the memory on smaller GPUs;
        either way far larger than L2), each copy between its own events.
        A copy reads and writes every byte: bandwidth = 2 x bytes / time.
        """
        cuda = self.cuda
        nbytes = min(1 << 30, self.device.total_memory() // 8) // 4 * 4
        src, dst = self.empty(nbytes), self.empty(nbytes)
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
        self.release(src, dst)
        median = float(np.median(times))
        return {"copy_bandwidth_gbs": 2 * nbytes / (median * 1e-3) / 1e9, "copy_bytes": nbytes,
                "copy_median_ms": median, "copy_samples": repetitions}

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
            # the tensor cores' dense TF32 rate at the same clock (a datasheet may quote a lower boost clock)
            "tf32_flop_per_clock_per_sm": TF32_FLOP_PER_CLOCK_PER_SM.get(cc),
            "tf32_peak_gflops": (sm_count * TF32_FLOP_PER_CLOCK_PER_SM[cc] * sm_clock_khz / 1e6
                                 if cc in TF32_FLOP_PER_CLOCK_PER_SM else None),
            # double data rate: 2 transfers per memory clock over the bus
            "dram_peak_gbs": 2 * mem_clock_khz * 1e3 * bus_bits / 8 / 1e9,
            "driver_cuda_version": f"{driver // 1000}.{driver % 1000 // 10}",
            "pycuda_version": pycuda.VERSION_TEXT,
        }
