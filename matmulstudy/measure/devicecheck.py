"""Every element checked on the GPU: the float64 reference by cuBLAS DGEMM, and bound (1) of verify.py.

In the bench job's own CUDA context, for one shape:

    R = A @ B                          cublasDgemm on A and B widened to float64
    r = sqrt((A∘A) @ (B∘B))            cublasDgemm on their squares, then sqrt

(CUBLAS_DEFAULT_MATH: native FP64 arithmetic; cuBLAS emulates FP64 only when
a handle asks for an emulated math mode, which this one never does.) The
check kernel (harness.cu's check_result) then reads C, R and r once and
returns four counters, so checking 8192^2 elements costs a few milliseconds
and no copy of C to the host. The same check, element by element on the
CPU, is verify.elementwise; the two agree (tests/test_gpu_kernels.py).

A shape whose reference does not fit in the GPU's free memory stops with a
one-line error that names it and the option that checks it by Freivalds'
method instead; it never silently checks less.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from pathlib import Path

import numpy as np

from .. import precisions
from ..errors import StudyError
from ..gpu.cublas import Cublas
from ..gpu.session import GpuSession
from ..gpu.timer import Timer
from ..study.shapes import Shape
from .build import build_harness
from .verify import POISON_BITS, TINY, Verification, bounds

THREADS = 256
HEADROOM = 512 << 20   # bytes left free for cuBLAS's workspace and the timed launches


def _grid(count: int) -> tuple[int, int, int]:
    """Blocks of a grid-stride loop over `count` elements."""
    return (int(min(max(-(-count // THREADS), 1), 4096)), 1, 1)


def reference_bytes(shape: Shape) -> int:
    """GPU memory a DeviceReference takes at its peak: A and B in float64, R and r."""
    M, N, K = shape
    return 8 * (M * K + K * N + 2 * M * N)


class DeviceReference:
    """R and r of one shape on the GPU, and the element-wise check of results against them.

    `precision`: the precision of the variants it checks. Where its kernels read
    BF16 or e4m3, A and B are rounded so first, on the GPU (harness.cu's
    round_bf16 and round_e4m3: the bits of precisions.Precision.rounded), so
    that R is the product of the inputs as those kernels read them.
    `d_a`, `d_b` are the inputs (so rounded, float32 or int32) on the device;
    `operands` the same as a variant of the precision reads them (d_a and d_b,
    or their 16-bit BF16 values, or their e4m3 bytes, B's as N x K where the
    precision stores it so): a GPU variant is launched on these very buffers.
    """

    def __init__(self, gpu, harness, a: np.ndarray, b: np.ndarray,
                 precision: precisions.Precision = precisions.BASE):
        start = time.perf_counter()
        self.gpu, self.precision = gpu, precision
        M, K = a.shape
        N = b.shape[1]
        self.shape = Shape(M, N, K)
        self.exact = np.issubdtype(a.dtype, np.integer)
        free = gpu.free_memory()
        need = reference_bytes(self.shape) + 4 * (M * K + K * N + M * N)
        narrow = self.precision.rounds_inputs
        if narrow and a.dtype != np.float32:
            raise StudyError(f"shape {self.shape.tag}: {self.precision.label} rounds float32 inputs to "
                             f"{self.precision.inputs}; these are {a.dtype} (run its variants with dtype float32)")
        width = self.precision.operand_bytes if narrow else 0
        need += width * (M * K + K * N)
        if need + HEADROOM > free:
            raise StudyError(
                f"shape {self.shape.tag}: checking every element needs {need / 2**30:.1f} GiB of GPU memory "
                f"(the float64 reference and scale), {free / 2**30:.1f} GiB are free; set full_check_max_size "
                f"below {max(self.shape)} to check larger shapes by Freivalds' method (probabilistic) instead")
        Timer.for_session(gpu, harness)   # the session's timer (its L2-flush buffer) before the reference's buffers
        self._widen = gpu.load_function(harness, "widen", "PiPQi")
        self._root = gpu.load_function(harness, "root", "PQ")
        self._check_result = gpu.load_function(harness, "check_result", "PiPPddQIP")
        self.d_a, self.d_b = gpu.to_device(a), gpu.to_device(b)
        self.operands = self.d_a, self.d_b
        if narrow:   # d_a and d_b rounded in place, their narrow values beside them: what the kernels read
            self.operands = gpu.empty(width * M * K), gpu.empty(width * K * N)
            if width == 2:
                rounding = gpu.load_function(harness, "round_bf16", "PPQ")
                for full, bits, count in ((self.d_a, self.operands[0], M * K), (self.d_b, self.operands[1], K * N)):
                    rounding.prepared_call(_grid(count), (THREADS, 1, 1), full, bits, np.uint64(count))
            else:
                rounding = gpu.load_function(harness, "round_e4m3", "PPQQi")
                for full, bits, rows, cols, transpose in ((self.d_a, self.operands[0], M, K, False),
                                                          (self.d_b, self.operands[1], K, N,
                                                           self.precision.b_transposed)):
                    rounding.prepared_call(_grid(rows * cols), (THREADS, 1, 1), full, bits, np.uint64(rows),
                                           np.uint64(cols), int(transpose))
        a64, b64 = gpu.empty(8 * M * K), gpu.empty(8 * K * N)
        self.d_ref, self.d_scale = gpu.empty(8 * M * N), gpu.empty(8 * M * N)
        self._counters = gpu.empty(4 * 8)
        self._d_c = None   # a device copy of a host result (CPU variants), made on demand
        blas = gpu.kept("reference cuBLAS", lambda: Cublas(precisions.BASE))   # native FP32 and FP64 math
        for square, out in ((0, self.d_ref), (1, self.d_scale)):
            self._widen.prepared_call(_grid(M * K), (THREADS, 1, 1), self.d_a, int(self.exact), a64,
                                      np.uint64(M * K), square)
            self._widen.prepared_call(_grid(K * N), (THREADS, 1, 1), self.d_b, int(self.exact), b64,
                                      np.uint64(K * N), square)
            blas.dgemm(M, N, K, a64, b64, out)
        self._root.prepared_call(_grid(M * N), (THREADS, 1, 1), self.d_scale, np.uint64(M * N))
        gpu.release(a64, b64)
        gpu.synchronize()
        self.seconds = time.perf_counter() - start   # building the reference

    def verify(self, d_c, tolerance: float, precision: precisions.Precision) -> Verification:
        """Check a result on the device (d_c: M x N elements of the input's type) against bound (1)."""
        gpu, (M, N, K) = self.gpu, self.shape
        held = bounds(K, tolerance, precision, self.exact)
        gpu.fill_u32(self._counters, 0, 8)
        count = M * N
        self._check_result.prepared_call(_grid(count), (THREADS, 1, 1), d_c, int(self.exact), self.d_ref,
                                         self.d_scale, held["bound"], TINY, np.uint64(count),
                                         np.uint32(POISON_BITS), self._counters)
        bad, nan, unwritten, worst = gpu.to_host(self._counters, (4,), np.uint64)
        max_err = float(np.array(worst, dtype=np.uint64).view(np.float64)) if not nan else float("nan")
        return Verification(ok=bool(bad == 0), method="full", max_error=max_err, bad=int(bad), unwritten=int(unwritten),
                            nan=int(nan), **held)

    def verify_host(self, c: np.ndarray, tolerance: float, precision: precisions.Precision) -> Verification:
        """Check a result computed on the host (a CPU variant): copied to the device first."""
        if self._d_c is None:
            self._d_c = self.gpu.empty(c.nbytes)
        self.gpu.copy_in(self._d_c, c)
        return self.verify(self._d_c, tolerance, precision)

    def close(self) -> None:
        allocs = [self.d_a, self.d_b, self.d_ref, self.d_scale, self._counters] + [self._d_c] * (self._d_c is not None)
        allocs += [d for d in self.operands if d not in (self.d_a, self.d_b)]
        self.gpu.release(*allocs)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class References:
    """The DeviceReferences of one shape's inputs, one for each way a precision takes them (as given, where it
    rounds them in the kernel or not at all; rounded to BF16 or to e4m3 first), each made when a variant of such
    a precision is first checked."""

    def __init__(self, gpu, harness, a: np.ndarray, b: np.ndarray):
        self.gpu, self.harness, self.a, self.b = gpu, harness, a, b
        self._made = {}

    def __getitem__(self, precision: precisions.Precision) -> DeviceReference:
        key = precision.inputs
        if key not in self._made:
            self._made[key] = DeviceReference(self.gpu, self.harness, self.a, self.b, precision)
        return self._made[key]

    def close(self) -> None:
        for reference in self._made.values():
            reference.close()
        self._made.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


@contextlib.contextmanager
def workspace(arch: str, log):
    """What the tools outside the workflow (faults, tune, devbench) measure in: a GPU session, a scratch
    folder, and the harness built into it for `arch`. Yields (gpu, folder, harness cubin)."""
    with tempfile.TemporaryDirectory() as tmp, GpuSession() as gpu:
        harness = Path(tmp) / "harness.cubin"
        build_harness(arch, harness, log)
        yield gpu, Path(tmp), harness
