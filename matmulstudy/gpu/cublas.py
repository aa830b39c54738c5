"""cuBLAS SGEMM (and DGEMM, for the reference) through ctypes, in the caller's CUDA context.

PyCUDA has no cuBLAS binding; the C API needs six functions. (nvmath-python
binds cuBLAS too, but brings its own CUDA runtime wheels and stream model
for what is here a handful of calls in the context the session made.)
The math mode is set explicitly, the one the precision table gives the
precision asked for: CUBLAS_DEFAULT_MATH, which in cuBLAS 11+ means full
FP32 (the study's reference), or one that lets cuBLAS round the inputs and
use the tensor cores: a different precision, verified against its own
bound and labelled so. A precision whose inputs are of another element
type (BF16) is computed by cublasGemmEx: A and B of that type, C in FP32
(the study's C is FP32 in every chapter, so every result goes through the
same check), the sums in FP32 (CUBLAS_COMPUTE_32F).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os
import sys

from .. import precisions
from ..errors import StudyError

CUBLAS_OP_N = 0
CUDA_R_32F = 0               # library_types.h
CUBLAS_COMPUTE_32F = 68      # cublas_api.h
CUBLAS_GEMM_DEFAULT = -1     # cuBLAS's heuristics choose the kernel


def _candidates() -> list[str]:
    out = []
    if os.environ.get("CUBLAS_LIBRARY"):
        out.append(os.environ["CUBLAS_LIBRARY"])
    for root in filter(None, [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]):
        out += sorted(glob.glob(f"{root}/lib64/libcublas.so*"), reverse=True)
        out += sorted(glob.glob(f"{root}/targets/*/lib/libcublas.so*"), reverse=True)
    for site in sys.path:   # the nvidia-cublas wheels
        out += sorted(glob.glob(f"{site}/nvidia/cu*/lib/libcublas.so*"), reverse=True)
        out += sorted(glob.glob(f"{site}/nvidia/cublas/lib/libcublas.so*"), reverse=True)
    found = ctypes.util.find_library("cublas")
    if found:
        out.append(found)
    return out


def load_library() -> tuple[ctypes.CDLL, str]:
    tried = []
    for path in _candidates():
        if "libcublasLt" in path:
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as err:
            tried.append(f"{path}: {err}")
    raise StudyError("cuBLAS not found: install the CUDA toolkit or nvidia-cublas, "
                     "or set CUBLAS_LIBRARY=/path/to/libcublas.so" + (f" (tried {tried[0]})" if tried else ""))


class Cublas:
    """A cuBLAS handle on the current context, in one precision's math mode; row-major C = A @ B."""

    def __init__(self, precision: str = precisions.BASE.id):
        self.lib, self.path = load_library()
        self.lib.cublasSgemm_v2.argtypes = [
            ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int,
            ctypes.POINTER(ctypes.c_float), ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int,
            ctypes.POINTER(ctypes.c_float), ctypes.c_void_p, ctypes.c_int]
        self.lib.cublasDgemm_v2.argtypes = [
            ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int,
            ctypes.POINTER(ctypes.c_double), ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int,
            ctypes.POINTER(ctypes.c_double), ctypes.c_void_p, ctypes.c_int]
        self.lib.cublasGemmEx.argtypes = [
            ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int,
            ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_int,
            ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
        self.data_type = precisions.get(precision).cublas.data_type
        self.handle = ctypes.c_void_p()
        self._check(self.lib.cublasCreate_v2(ctypes.byref(self.handle)), "cublasCreate")
        self._check(self.lib.cublasSetMathMode(self.handle, precisions.get(precision).cublas.math_mode),
                    "cublasSetMathMode")
        version = ctypes.c_int()
        self._check(self.lib.cublasGetVersion_v2(self.handle, ctypes.byref(version)), "cublasGetVersion")
        v = version.value
        self.version = f"{v // 10000}.{v % 10000 // 100}.{v % 100}"
        self._one, self._zero = ctypes.c_float(1.0), ctypes.c_float(0.0)
        self._one64, self._zero64 = ctypes.c_double(1.0), ctypes.c_double(0.0)

    @staticmethod
    def _check(status: int, what: str) -> None:
        if status != 0:
            raise StudyError(f"cuBLAS {what} failed with status {status}")

    def sgemm(self, M: int, N: int, K: int, a, b, c) -> None:
        """C (M x N) = A (M x K) @ B (K x N), all row-major device pointers.

        cuBLAS is column-major; a row-major matrix is its transpose, so this
        asks for C^T = B^T @ A^T, which needs no transposition.
        """
        self._check(self.lib.cublasSgemm_v2(
            self.handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, ctypes.byref(self._one),
            int(b), N, int(a), K, ctypes.byref(self._zero), int(c), N), "sgemm")

    def gemm(self, M: int, N: int, K: int, a, b, c) -> None:
        """C (M x N, float32) = A @ B in the handle's precision: sgemm, or cublasGemmEx where A and B are of
        another element type (row-major likewise: C^T = B^T @ A^T)."""
        if self.data_type is None:
            return self.sgemm(M, N, K, a, b, c)
        self._check(self.lib.cublasGemmEx(
            self.handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, ctypes.byref(self._one), int(b), self.data_type, N,
            int(a), self.data_type, K, ctypes.byref(self._zero), int(c), CUDA_R_32F, N, CUBLAS_COMPUTE_32F,
            CUBLAS_GEMM_DEFAULT), "gemmEx")

    def dgemm(self, M: int, N: int, K: int, a, b, c) -> None:
        """The same product in float64 (the verification's reference), row-major likewise."""
        self._check(self.lib.cublasDgemm_v2(
            self.handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, ctypes.byref(self._one64),
            int(b), N, int(a), K, ctypes.byref(self._zero64), int(c), N), "dgemm")

    def close(self) -> None:
        if self.handle:
            self.lib.cublasDestroy_v2(self.handle)
            self.handle = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
