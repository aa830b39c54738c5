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
same check), the sums in FP32 (CUBLAS_COMPUTE_32F). FP8 (e4m3) is not
cublasGemmEx's: it is cuBLASLt's (CublasLt below, cublasLtMatmul), whose
FP8 GEMM takes only the "TN" layout, B stored N x K as the FP8 chapter
stores it, and sums in the tensor cores alone or promoted to FP32 as its
precision's row says (CUBLASLT_MATMUL_DESC_FAST_ACCUM).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os
import sys

import numpy as np

from .. import precisions
from ..errors import StudyError

CUBLAS_OP_N = 0
CUDA_R_32F = 0               # library_types.h
CUBLAS_COMPUTE_32F = 68      # cublas_api.h
CUBLAS_GEMM_DEFAULT = -1     # cuBLAS's heuristics choose the kernel


def _candidates(name: str) -> list[str]:
    """Where lib<name>.so (cublas or cublasLt) may be: the variable that names it, the toolkit, the wheels."""
    out = []
    variable = f"{name.upper()}_LIBRARY"
    if os.environ.get(variable):
        out.append(os.environ[variable])
    for root in filter(None, [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]):
        out += sorted(glob.glob(f"{root}/lib64/lib{name}.so*"), reverse=True)
        out += sorted(glob.glob(f"{root}/targets/*/lib/lib{name}.so*"), reverse=True)
    for site in sys.path:   # the nvidia-cublas wheels
        out += sorted(glob.glob(f"{site}/nvidia/cu*/lib/lib{name}.so*"), reverse=True)
        out += sorted(glob.glob(f"{site}/nvidia/cublas/lib/lib{name}.so*"), reverse=True)
    found = ctypes.util.find_library(name)
    if found:
        out.append(found)
    return out


def load_library(name: str = "cublas") -> tuple[ctypes.CDLL, str]:
    """libcublas, or libcublasLt (name "cublasLt"), and the path it was loaded from."""
    tried = []
    for path in _candidates(name):
        if not os.path.basename(path).startswith(f"lib{name}.so"):   # libcublas.so* globs no libcublasLt
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as err:
            tried.append(f"{path}: {err}")
    raise StudyError(f"{name} not found: install the CUDA toolkit or nvidia-cublas, or set "
                     f"{name.upper()}_LIBRARY=/path/to/lib{name}.so" + (f" (tried {tried[0]})" if tried else ""))


class Cublas:
    """A cuBLAS handle on the current context, in one precision's math mode; row-major C = A @ B."""

    def __init__(self, precision: precisions.Precision = precisions.BASE):
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
        self.data_type = precision.cublas.data_type
        self.handle = ctypes.c_void_p()
        self._check(self.lib.cublasCreate_v2(ctypes.byref(self.handle)), "cublasCreate")
        self._check(self.lib.cublasSetMathMode(self.handle, precision.cublas.math_mode),
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


def open_reference(precision: precisions.Precision, gpu):
    """The library call a precision's reference variant makes, on the session's context: cuBLAS, or cuBLASLt
    where the precision's row names FAST_ACCUM (FP8). Both have gemm(M, N, K, a, b, c), version and close()."""
    if precision.cublas.library == "cuBLASLt":
        return CublasLt(precision, gpu)
    return Cublas(precision)


# cublasLt.h's enumerators (cuBLAS 12 and 13), and library_types.h's
_DESC_TRANSA, _DESC_TRANSB, _DESC_A_SCALE, _DESC_B_SCALE, _DESC_FAST_ACCUM = 3, 4, 17, 18, 25
_PREF_MAX_WORKSPACE_BYTES = 1
CUBLAS_OP_T = 1


class _Heuristic(ctypes.Structure):
    """cublasLt.h's cublasLtMatmulHeuristicResult_t: the algorithm (8 opaque words) and what it needs."""
    _fields_ = [("algo", ctypes.c_uint64 * 8), ("workspace_bytes", ctypes.c_size_t), ("state", ctypes.c_int),
                ("waves", ctypes.c_float), ("reserved", ctypes.c_int * 4)]


class CublasLt:
    """cuBLASLt's FP8 GEMM on the session's context: row-major C (M x N, FP32) = A (M x K) @ B, A and B e4m3
    bytes, B stored N x K. cuBLASLt is column-major and computes C^T (N x M): its "A" is our stored B (K x N
    column-major, transposed: TRANSA = T), its "B" our A (K x M column-major, TRANSB = N): the "TN" layout, the
    only one its FP8 GEMM takes. Scales 1 (the study's inputs need none), CUBLAS_COMPUTE_32F, FP32 C and D,
    FAST_ACCUM as the precision's row says.

    Its FP8 kernels need every leading dimension on 16 bytes: where cuBLASLt offers no algorithm for a shape,
    A and B are copied into zero-padded workspace of K rounded up to 16 (and of M and N so, C then out of
    workspace too, where that is not enough), inside the timed call, as the study's own FP8 steps copy such
    operands (gpu/launch.py's Padding). The algorithm is
    cuBLASLt's first heuristic choice for the shape, asked once, with 32 MiB of workspace."""

    WORKSPACE = 32 << 20

    def __init__(self, precision: precisions.Precision, gpu):
        row = precision.cublas
        self.lib, self.path = load_library("cublasLt")
        self.gpu, self.data_type, self.fast_accum = gpu, row.data_type, row.fast_accum
        self.lib.cublasLtGetVersion.restype = ctypes.c_size_t
        v = self.lib.cublasLtGetVersion()
        self.version = f"{v // 10000}.{v % 10000 // 100}.{v % 100}"
        self.handle = ctypes.c_void_p()
        self._check(self.lib.cublasLtCreate(ctypes.byref(self.handle)), "cublasLtCreate")
        self.workspace = gpu.empty(self.WORKSPACE)
        self.scales = gpu.to_device(np.ones(1, np.float32))
        self._one, self._zero = ctypes.c_float(1.0), ctypes.c_float(0.0)
        self._plans = {}

    @staticmethod
    def _check(status: int, what: str) -> None:
        if status != 0:
            raise StudyError(f"cuBLASLt {what} failed with status {status}")

    def _layout(self, data_type: int, rows: int, cols: int, ld: int) -> ctypes.c_void_p:
        layout = ctypes.c_void_p()
        self._check(self.lib.cublasLtMatrixLayoutCreate(ctypes.byref(layout), data_type, ctypes.c_uint64(rows),
                                                        ctypes.c_uint64(cols), ctypes.c_int64(ld)), "layout")
        return layout

    def _describe(self, M: int, N: int, K: int):
        """The operation's descriptor, its four layouts and cuBLASLt's first algorithm for it (None if none)."""
        desc = ctypes.c_void_p()
        self._check(self.lib.cublasLtMatmulDescCreate(ctypes.byref(desc), CUBLAS_COMPUTE_32F, CUDA_R_32F), "desc")
        for attribute, value in ((_DESC_TRANSA, ctypes.c_int32(CUBLAS_OP_T)),
                                 (_DESC_TRANSB, ctypes.c_int32(CUBLAS_OP_N)),
                                 (_DESC_FAST_ACCUM, ctypes.c_int8(int(self.fast_accum))),
                                 (_DESC_A_SCALE, ctypes.c_void_p(int(self.scales))),
                                 (_DESC_B_SCALE, ctypes.c_void_p(int(self.scales)))):
            self._check(self.lib.cublasLtMatmulDescSetAttribute(desc, attribute, ctypes.byref(value),
                                                                ctypes.c_size_t(ctypes.sizeof(value))), "attribute")
        layouts = (self._layout(self.data_type, K, N, K), self._layout(self.data_type, K, M, K),
                   self._layout(CUDA_R_32F, N, M, N))
        pref = ctypes.c_void_p()
        self._check(self.lib.cublasLtMatmulPreferenceCreate(ctypes.byref(pref)), "preference")
        limit = ctypes.c_uint64(self.WORKSPACE)
        self._check(self.lib.cublasLtMatmulPreferenceSetAttribute(pref, _PREF_MAX_WORKSPACE_BYTES, ctypes.byref(limit),
                                                                  ctypes.c_size_t(8)), "preference attribute")
        found, count = _Heuristic(), ctypes.c_int()
        status = self.lib.cublasLtMatmulAlgoGetHeuristic(self.handle, desc, layouts[0], layouts[1], layouts[2],
                                                         layouts[2], pref, 1, ctypes.byref(found), ctypes.byref(count))
        self.lib.cublasLtMatmulPreferenceDestroy(pref)
        algo = found if status == 0 and count.value > 0 else None
        return desc, layouts, algo

    def _plan(self, M: int, N: int, K: int):
        """(descriptor, layouts, algorithm, padded workspace or None) for this shape, made once: the first of the
        shape as it is, with K rounded up to 16, or with M, N and K so, that cuBLASLt offers an algorithm for.
        Only what is padded is copied: A and B where K is, C too where M or N is."""
        if (M, N, K) not in self._plans:
            Mp, Np, Kp = (-(-x // 16) * 16 for x in (M, N, K))
            for shape in dict.fromkeys([(M, N, K), (M, N, Kp), (Mp, Np, Kp)]):
                desc, layouts, algo = self._describe(*shape)
                if algo is not None:
                    break
                self._release(desc, layouts)
            else:
                raise StudyError(f"cuBLASLt offers no FP8 algorithm for {M}x{N}x{K}, nor padded to {Mp}x{Np}x{Kp}")
            space = None
            if shape != (M, N, K):
                rows_a, rows_b, Kp = shape
                space = {"shape": shape, "A": self.gpu.empty(rows_a * Kp), "B": self.gpu.empty(rows_b * Kp)}
                self.gpu.fill_u32(space["A"], 0, rows_a * Kp // 4)   # the added rows and columns stay zero:
                self.gpu.fill_u32(space["B"], 0, rows_b * Kp // 4)   # the copies write only the matrices' own
                if shape[:2] != (M, N):
                    space["C"] = self.gpu.empty(4 * rows_a * rows_b)
            self._plans[M, N, K] = (desc, layouts, algo, space)
        return self._plans[M, N, K]

    def _copy(self, src: int, src_pitch: int, dst: int, dst_pitch: int, width: int, height: int) -> None:
        copy = self.gpu.cuda.Memcpy2D()
        copy.set_src_device(int(src))
        copy.set_dst_device(int(dst))
        copy.src_pitch, copy.dst_pitch, copy.width_in_bytes, copy.height = src_pitch, dst_pitch, width, height
        copy(aligned=False)

    def gemm(self, M: int, N: int, K: int, a, b, c) -> None:
        """C (M x N, float32) = A (M x K, e4m3) @ B (stored N x K, e4m3), row-major device pointers."""
        desc, layouts, algo, space = self._plan(M, N, K)
        out = c
        if space is not None:
            _, Np, Kp = space["shape"]
            self._copy(a, K, space["A"], Kp, K, M)
            self._copy(b, K, space["B"], Kp, K, N)
            a, b, out = space["A"], space["B"], space.get("C", c)
        self._check(self.lib.cublasLtMatmul(
            self.handle, desc, ctypes.byref(self._one), ctypes.c_void_p(int(b)), layouts[0],
            ctypes.c_void_p(int(a)), layouts[1], ctypes.byref(self._zero), ctypes.c_void_p(int(out)), layouts[2],
            ctypes.c_void_p(int(out)), layouts[2], ctypes.byref(algo.algo), ctypes.c_void_p(int(self.workspace)),
            ctypes.c_size_t(self.WORKSPACE), None), "matmul")
        if out is not c:
            self._copy(out, 4 * Np, c, 4 * N, 4 * N, M)

    def _release(self, desc, layouts) -> None:
        for layout in layouts:
            self.lib.cublasLtMatrixLayoutDestroy(layout)
        self.lib.cublasLtMatmulDescDestroy(desc)

    def close(self) -> None:
        """Its descriptors and handle (its device memory is the session's, which frees it as it ends)."""
        if self.handle:
            for desc, layouts, _, _ in self._plans.values():
                self._release(desc, layouts)
            self._plans.clear()
            self.lib.cublasLtDestroy(self.handle)
            self.handle = ctypes.c_void_p()
