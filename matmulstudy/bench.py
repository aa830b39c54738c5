"""One measurement: a variant on one shape and seed, verified, then timed.

Order of work, the same for every backend:
1. the output is poisoned (a NaN of known bits), the variant runs once, and
   the result is checked against the float64 reference;
2. only a verified variant is timed: warm-up runs, then timed runs (CUDA
   events around each launch on the GPU, perf_counter on the CPU) of a
   function already loaded, on buffers already in place;
3. the output of the last timed run is checked again.
A failed check gives one row with verified = False and no time, which the
report shows as a failure and never as a point.
"""

from __future__ import annotations

import ctypes
import time

import numpy as np
import pandas as pd

from . import host
from .config import Shape
from .errors import StudyError
from .registry import Variant
from .verify import POISON, POISON_BITS, Verification, check, worst


def _rows(variant: Variant, shape: Shape, seed: int, dtype: str, times_ms: list[float],
          result: Verification, extra: dict) -> pd.DataFrame:
    samples = times_ms if result.ok else [float("nan")]
    df = pd.DataFrame({"sample": range(len(samples)), "time_ms": samples})
    meta = {"variant": variant.id, "dtype": dtype, "backend": variant.backend, "M": shape.M,
            "N": shape.N, "K": shape.K, "seed": seed, "verified": result.ok, "max_error": result.max_error,
            "tolerance": result.tolerance, "bad_elements": result.bad,
            "unwritten_elements": result.unwritten, **extra}
    for key, value in meta.items():
        df[key] = value
    df["gflops"] = shape.flop / (df["time_ms"] * 1e-3) / 1e9
    first = ["variant", "dtype", "M", "N", "K", "seed", "sample", "time_ms", "gflops", "verified"]
    return df[first + [c for c in df.columns if c not in first]]


def _measure_gpu(variant, shape, a, b, ref, scale, binary, harness, cfg):
    from .gpu import GpuSession
    M, N, K = shape
    with GpuSession() as gpu:
        gpu.load_blocker(harness)
        d_a, d_b = gpu.to_device(a), gpu.to_device(b)
        d_c = gpu.empty(M * N * 4)
        extra = {"device": gpu.device.name()}
        if variant.backend == "cuda":
            func = gpu.load_function(binary, variant.kernel)
            grid, block = variant.grid(M, N), variant.block
            extra.update(grid=f"{grid[0]}x{grid[1]}", block=f"{block[0]}x{block[1]}")

            def launch():
                func.prepared_call(grid, block, M, N, K, d_a, d_b, d_c)
            return _verify_then_time(gpu, launch, d_c, shape, ref, scale, cfg, extra, a.dtype)

        from .cublas import Cublas
        with Cublas() as blas:
            extra["library"] = f"cuBLAS {blas.version}"
            return _verify_then_time(gpu, lambda: blas.sgemm(M, N, K, d_a, d_b, d_c),
                                     d_c, shape, ref, scale, cfg, extra)


def _verify_then_time(gpu, launch, d_c, shape, ref, scale, cfg, extra, dtype=np.float32):
    M, N, K = shape
    gpu.fill_u32(d_c, POISON_BITS, M * N)
    launch()
    gpu.synchronize()
    first = check(gpu.to_host(d_c, (M, N), dtype), ref, scale, K, cfg["tolerance"])
    if not first.ok:
        return [], first, extra
    times, extra["blocked"] = gpu.time_ms(launch, cfg["warmup"], cfg["repetitions"])
    last = check(gpu.to_host(d_c, (M, N), dtype), ref, scale, K, cfg["tolerance"])
    return times, worst(first, last), extra


def _measure_cpu(variant, shape, a, b, ref, scale, binary, cfg):
    M, N, K = shape
    c = np.full((M, N), POISON, dtype=np.float32)
    if variant.backend == "c":
        lib = ctypes.CDLL(str(binary))
        fn = getattr(lib, variant.id)
        fn.argtypes = [ctypes.c_int] * 3 + [ctypes.c_void_p] * 3
        fn.restype = None

        def run():
            fn(M, N, K, a.ctypes.data, b.ctypes.data, c.ctypes.data)
        extra = {"device": host.cpu_model(), "cpu_threads": 1}
    else:
        def run():
            np.matmul(a, b, out=c)
        extra = {"device": host.cpu_model(), "cpu_threads": host.cpu_threads(),
                 "library": host.blas_description()}
    run()   # the verified run is also the warm-up
    first = check(c, ref, scale, K, cfg["tolerance"])
    if not first.ok:
        return [], first, extra
    times = []
    for _ in range(cfg["cpu_repetitions"]):
        t0 = time.perf_counter()
        run()
        times.append((time.perf_counter() - t0) * 1e3)
    return times, worst(first, check(c, ref, scale, K, cfg["tolerance"])), extra


def measure(variant: Variant, shape: Shape, seed: int, a: np.ndarray, b: np.ndarray,
            ref: np.ndarray, scale: np.ndarray, binary, cfg: dict, harness=None) -> pd.DataFrame:
    """Verify and time one variant; one row per timed sample.

    binary: the variant's cubin or shared library, built for a's dtype;
    harness: the cubin of matmulstudy/harness.cu (GPU variants).
    """
    dtype = str(a.dtype)
    if dtype not in variant.dtypes:
        raise StudyError(f"{variant.id} does not run {dtype} (its dtypes: {list(variant.dtypes)})")
    if variant.is_gpu:
        times, result, extra = _measure_gpu(variant, shape, a, b, ref, scale, binary, harness, cfg)
    else:
        with host.blas_threads():
            times, result, extra = _measure_cpu(variant, shape, a, b, ref, scale, binary, cfg)
    return _rows(variant, shape, seed, dtype, times, result, extra)
