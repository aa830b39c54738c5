"""One measurement: a variant on one shape and seed, verified, then timed.

Order of work, the same for every backend:
1. the output is poisoned (a NaN of known bits), the variant runs once, and
   the result is checked: against the float64 reference, or by Freivalds'
   method above `full_check_max_size` (ref is None then);
2. only a verified variant is timed: warm-up runs, then timed runs (CUDA
   events around each launch on the GPU, an L2 flush before each in cold
   mode; perf_counter on the CPU), as many as matmulstudy.timing's
   criterion asks, of a function already loaded, on buffers already in place;
3. the output of the last timed run is checked again.
A failed check gives one row with verified = False and no time, which the
report shows as a failure and never as a point.
"""

from __future__ import annotations

import contextlib
import ctypes
import time

import numpy as np
import pandas as pd

from . import host, nvml
from .config import Shape
from .errors import StudyError
from .registry import Variant
from .timing import Criterion, relative_noise
from .verify import POISON, POISON_BITS, Verification, check, freivalds, worst


def _rows(variant: Variant, shape: Shape, seed: int, dtype: str, times_ms: list[float],
          result: Verification, extra: dict, per_sample: dict | None = None) -> pd.DataFrame:
    samples = times_ms if result.ok else [float("nan")]
    df = pd.DataFrame({"sample": range(len(samples)), "time_ms": samples})
    if per_sample and result.ok:
        for key, values in per_sample.items():
            df[key] = values
    meta = {"variant": variant.id, "dtype": dtype, "backend": variant.backend,
            "precision": "int32" if dtype == "int32" else variant.precision, "M": shape.M,
            "N": shape.N, "K": shape.K, "seed": seed, "verified": result.ok, "check": result.method,
            "max_error": result.max_error, "tolerance": result.tolerance, "bad_elements": result.bad,
            "unwritten_elements": result.unwritten, **extra}
    for key, value in meta.items():
        df[key] = value
    df["gflops"] = shape.flop / (df["time_ms"] * 1e-3) / 1e9
    first = ["variant", "dtype", "M", "N", "K", "seed", "sample", "time_ms", "gflops", "verified"]
    return df[first + [c for c in df.columns if c not in first]]


class Checker:
    """The check of one measurement: full against `ref`, or Freivalds' if ref is None."""

    def __init__(self, a, b, ref, scale, seed: int, cfg: dict, precision: str):
        self.a, self.b, self.ref, self.scale = a, b, ref, scale
        self.seed, self.cfg, self.precision = seed, cfg, precision
        self.calls = 0

    def __call__(self, c: np.ndarray) -> Verification:
        self.calls += 1
        K = self.a.shape[1]
        if self.ref is not None:
            return check(c, self.ref, self.scale, K, self.cfg["tolerance"], self.precision)
        return freivalds(c, self.a, self.b, self.cfg["tolerance"], self.cfg["freivalds_vectors"],
                         seed=(self.seed, self.calls), precision=self.precision)


def _measure_gpu(variant, shape, a, b, checker, binary, harness, cfg, session=None):
    from .gpu import GpuSession
    M, N, K = shape
    with contextlib.ExitStack() as stack:
        gpu = session or stack.enter_context(GpuSession())
        gpu.load_harness(harness)
        d_a, d_b = gpu.to_device(a), gpu.to_device(b)
        d_c = gpu.empty(M * N * 4)
        stack.callback(gpu.release, d_a, d_b, d_c)
        extra = {"device": gpu.device.name()}
        if variant.backend == "cuda":
            func = gpu.load_function(binary, variant.kernel)
            grid, block = variant.grid(M, N), variant.block
            extra.update(grid=f"{grid[0]}x{grid[1]}", block=f"{block[0]}x{block[1]}")

            def launch():
                func.prepared_call(grid, block, M, N, K, d_a, d_b, d_c)
            return _verify_then_time(gpu, launch, d_c, shape, checker, cfg, extra, a.dtype)

        from .cublas import Cublas
        blas = stack.enter_context(Cublas(variant.precision))
        extra["library"] = f"cuBLAS {blas.version}"
        return _verify_then_time(gpu, lambda: blas.sgemm(M, N, K, d_a, d_b, d_c),
                                 d_c, shape, checker, cfg, extra)


def _verify_then_time(gpu, launch, d_c, shape, checker, cfg, extra, dtype=np.float32):
    M, N, _ = shape
    gpu.fill_u32(d_c, POISON_BITS, M * N)
    launch()
    gpu.synchronize()
    first = checker(gpu.to_host(d_c, (M, N), dtype))
    if not first.ok:
        return [], first, extra, None
    monitor = nvml.Monitor(gpu.device.pci_bus_id())
    try:
        timing = gpu.time_launches(launch, cfg["warmup"], Criterion.from_config(cfg),
                                   cold=cfg["cache"] == "cold", monitor=monitor)
    finally:
        monitor.close()
    last = checker(gpu.to_host(d_c, (M, N), dtype))
    max_clock = gpu.device.get_attribute(gpu.cuda.device_attribute.CLOCK_RATE) / 1000
    per_sample = _clock_columns(timing.batch_readings, max_clock, cfg["throttle_fraction"])
    extra.update(blocked=timing.blocked, cache=cfg["cache"], stop_reason=timing.stop_reason,
                 noise=relative_noise(timing.times_ms), timing_s=timing.elapsed_s,
                 max_sm_clock_mhz=max_clock, nvml=monitor.unavailable or "ok")
    return timing.times_ms, worst(first, last), extra, per_sample


def _clock_columns(batch_readings: list, max_clock_mhz: float, fraction: float) -> dict:
    """Per sample: the worst NVML reading of its batch, and the throttle flag."""
    worst_of = [nvml.worst(readings) for readings in batch_readings]
    return {"sm_clock_mhz": [r.sm_clock_mhz for r in worst_of],
            "mem_clock_mhz": [r.mem_clock_mhz for r in worst_of],
            "temperature_c": [r.temperature_c for r in worst_of],
            "power_w": [r.power_w for r in worst_of],
            "clock_event_reasons": [nvml.reason_names(r.reasons) for r in worst_of],
            "throttled": [nvml.throttled(r.sm_clock_mhz, max_clock_mhz, fraction) for r in worst_of]}


def _measure_cpu(variant, shape, a, b, checker, binary, cfg):
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
    first = checker(c)
    if not first.ok:
        return [], first, extra
    criterion, times = Criterion.from_config(cfg), []
    start = time.perf_counter()
    while not (reason := criterion.stop(times, time.perf_counter() - start)):
        t0 = time.perf_counter()
        run()
        times.append((time.perf_counter() - t0) * 1e3)
    extra.update(stop_reason=reason, noise=relative_noise(times), timing_s=time.perf_counter() - start)
    return times, worst(first, checker(c)), extra


def measure(variant: Variant, shape: Shape, seed: int, a: np.ndarray, b: np.ndarray,
            ref: np.ndarray | None, scale: np.ndarray | None, binary, cfg: dict, harness=None,
            session=None) -> pd.DataFrame:
    """Verify and time one variant; one row per timed sample.

    ref, scale: the float64 reference (None: Freivalds' check instead);
    binary: the variant's cubin or shared library, built for a's dtype;
    harness: the cubin of matmulstudy/harness.cu (GPU variants);
    cfg: the study's config (timing, cache, tolerance and check keys);
    session: a GpuSession to measure in (one is opened if None).
    """
    dtype = str(a.dtype)
    if dtype not in variant.dtypes:
        raise StudyError(f"{variant.id} does not run {dtype} (its dtypes: {list(variant.dtypes)})")
    checker = Checker(a, b, ref, scale, seed, cfg, variant.precision)
    if variant.is_gpu:
        times, result, extra, per_sample = _measure_gpu(variant, shape, a, b, checker, binary, harness, cfg,
                                                        session)
    else:
        per_sample = None
        with host.blas_threads():
            times, result, extra = _measure_cpu(variant, shape, a, b, checker, binary, cfg)
    return _rows(variant, shape, seed, dtype, times, result, extra, per_sample)


def describe(rows: pd.DataFrame) -> str:
    """One line for the log: the check, the samples, the median, why timing stopped."""
    r = rows.iloc[0]
    if not r["verified"]:
        return (f"VERIFICATION FAILED ({r['check']}): {r['bad_elements']} wrong, "
                f"{r['unwritten_elements']} never written, max error {r['max_error']:.3g}")
    text = (f"verified ({r['check']}), {len(rows)} samples, median {rows['time_ms'].median():.4f} ms, "
            f"{rows['gflops'].median():,.1f} GFLOP/s")
    if "stop_reason" in rows:
        text += f", stopped on {r['stop_reason']} (noise {r['noise']:.2%})"
        if "throttled" in rows and rows["throttled"].eq(True).any():
            text += f", {int(rows['throttled'].eq(True).sum())} throttled"
    return text
