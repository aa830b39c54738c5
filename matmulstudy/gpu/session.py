"""A GPU session: a CUDA context of its own, its memory, and the modules loaded into it.

Small verbs in the manner of Kernel Tuner's backends: open a session, put
arrays on the device, load a function from a cubin, synchronise. Each
session makes a fresh context, current on entry and destroyed on exit
(never pycuda.autoinit); cuBLAS, which uses the runtime API, works in the
context current on the thread, so it shares it. A fresh context each time,
not the device's primary one (which the runtime keeps alive once it has
used it): a context sets an offset all its launches share, and a
measurement taken in several contexts one after another (config:
`contexts`) is not the luck of one. What else lives as long as a session (the
timer's buffers, the reference's cuBLAS handle, a kernel loaded through the
driver) is made once with `kept` and closed with the session.

Beside it: launch.py launches a variant, timer.py times launches, facts.py
says what the device is, cublas.py and tma.py bind what PyCUDA does not.
"""

from __future__ import annotations

import functools
import shutil

import numpy as np

from ..errors import StudyError


@functools.cache   # once a process: a measuring job opens three sessions, and cuInit with the count took 34 ms
def require_pycuda():
    """Import and initialise PyCUDA, or say in one line what is missing: the NVIDIA driver first (without it
    PyCUDA would not help), then PyCUDA."""
    try:
        import pycuda.driver as cuda
    except ImportError as err:
        if shutil.which("nvidia-smi") is None:
            raise StudyError("no usable GPU: nvidia-smi was not found (no NVIDIA driver on this machine)") from None
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
        self._modules = {}   # cubin path -> its module, loaded once a session
        self._kept = {}      # key -> what lives as long as the session (closed at its end, newest first)
        self.ctx = None

    def __enter__(self):
        self.ctx = self.device.make_context()   # made current
        return self

    def __exit__(self, *exc):
        try:
            self.ctx.synchronize()
        finally:
            for alloc in self._allocations:
                alloc.free()
            self._allocations.clear()
            for kept in reversed(list(self._kept.values())):
                if hasattr(kept, "close"):
                    kept.close()
            self._kept.clear()
            self._modules.clear()
            self.ctx.pop()
            self.ctx.detach()   # the last reference: the context is destroyed
            self.ctx = None
            from pycuda.tools import clear_context_caches
            clear_context_caches()
        return False

    def kept(self, key, make):
        """The object `make()` returns, made once a session under `key`; its close() runs when the session
        ends."""
        if key not in self._kept:
            self._kept[key] = make()
        return self._kept[key]

    def held(self, key):
        """What kept() made under `key`, or None where it made nothing (nothing is made here)."""
        return self._kept.get(key)

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
        self.copy_in(alloc, array)
        return alloc

    def duplicate(self, alloc, nbytes: int):
        """A new allocation holding a copy of `nbytes` of another, copied on the GPU."""
        copy = self.empty(nbytes)
        self.cuda.memcpy_dtod(copy, alloc, int(nbytes))
        return copy

    def copy_in(self, alloc, array: np.ndarray) -> None:
        """Copy a host array into device memory already allocated."""
        self.cuda.memcpy_htod(alloc, np.ascontiguousarray(array))

    def fill_u32(self, alloc, bits: int, count: int) -> None:
        self.cuda.memset_d32(alloc, bits, count)

    def to_host(self, alloc, shape, dtype=np.float32) -> np.ndarray:
        out = np.empty(shape, dtype=dtype)
        self.cuda.memcpy_dtoh(out, alloc)
        return out

    def free_memory(self) -> int:
        """Bytes of device memory free now."""
        return self.cuda.mem_get_info()[0]

    # --- the device -----------------------------------------------------
    def attribute(self, name: str) -> int:
        """A device attribute by its CUDA name (MULTIPROCESSOR_COUNT, L2_CACHE_SIZE, CLOCK_RATE, ...)."""
        return self.device.get_attribute(getattr(self.cuda.device_attribute, name))

    @property
    def sm_count(self) -> int:
        """The device's multiprocessors (a persistent kernel's grid depends on them)."""
        return self.attribute("MULTIPROCESSOR_COUNT")

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

    def module_global(self, cubin_path, name: str) -> tuple[int, int]:
        """The device address and bytes of a __device__ variable of a cubin loaded by load_function."""
        address, size = self._modules[str(cubin_path)].get_global(name)
        return int(address), int(size)
