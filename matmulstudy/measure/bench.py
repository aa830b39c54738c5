"""One measurement: a variant on one shape and seed, verified, then timed.

Order of work, the same for every backend:
1. the output is poisoned (a NaN of known bits), the variant runs once (on
   the GPU, on the first of `placements` copies of the operands, each copy's
   output poisoned, each launched through its own copy of the cubin's
   module), and every element of the result is checked against the float64
   reference (verify.py's bound): on the GPU where the study has one
   (devicecheck.py), on the CPU in a CPU-only study, or, only where the
   config asks for it, by Freivalds' method;
2. only a verified variant is timed: warm-up runs, then timed runs (CUDA
   events around each launch on the GPU, an L2 flush before each in cold
   mode: gpu/timer.py; perf_counter on the CPU), as many as criterion.py's
   stopping criterion asks, of a function already loaded, on buffers
   already in place (on the GPU, each launch on the next copy in turn);
3. the output of the last timed run of each copy is checked, its poison still
   in any element that no launch wrote.
A failed check gives one row with verified = False and no time, which the
report shows as a failure and never as a point.

On the GPU a measurement may span several CUDA contexts (`Pooled`): steps
1-3 are done again in each, the samples pooled, every check kept.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import itertools
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .. import precisions
from ..errors import StudyError
from ..gpu import host, nvml
from ..gpu.cublas import open_reference
from ..gpu.launch import launcher
from ..gpu.session import GpuSession
from ..gpu.timer import TimedSamples, Timer
from ..study.settings import Checking, Timing
from ..study.shapes import Shape
from ..study.variant import Variant
from . import data
from .criterion import Criterion, Retake, relative_noise
from .verify import POISON, POISON_BITS, Verification, elementwise, freivalds, worst


@dataclass(frozen=True)
class HostReference:
    """The float64 reference R and the scale r of one shape, on the CPU (data.reference)."""
    ref: np.ndarray
    scale: np.ndarray


def _rows(variant: Variant, shape: Shape, seed: int, dtype: str, times_ms: list[float],
          result: Verification, extra: dict, per_sample: dict | None = None) -> pd.DataFrame:
    samples = times_ms if result.ok else [float("nan")]
    columns = {"sample": range(len(samples)), "time_ms": samples}
    if per_sample and result.ok:
        columns.update(per_sample)
    meta = {"variant": variant.id, "dtype": dtype, "backend": variant.backend,
            "precision": "int32" if dtype == "int32" else variant.precision.id, "M": shape.M,
            "N": shape.N, "K": shape.K, "seed": seed, "verified": result.ok, "check": result.method,
            # 'tolerance': the bound's coefficient at this K (the column's name since the first studies)
            "max_error": result.max_error, "tolerance": result.bound, "margin": result.margin,
            "fp32_margin": result.base_margin, "bad_elements": result.bad,
            "unwritten_elements": result.unwritten, **extra}
    columns.update((key, [value] * len(samples)) for key, value in meta.items())
    df = pd.DataFrame(columns)   # built at once: a column at a time cost 0.6 s a job's 27 measurements
    df["gflops"] = shape.flop / (df["time_ms"] * 1e-3) / 1e9
    first = ["variant", "dtype", "M", "N", "K", "seed", "sample", "time_ms", "gflops", "verified"]
    return df[first + [c for c in df.columns if c not in first]]


def failure_rows(variant: Variant, shape: Shape, seed: int, dtype: str, failure: str) -> pd.DataFrame:
    """A measurement that could not be made (the build or the run failed): one row that says why, with no
    time and verified False, so that the study records it and plots nothing for it."""
    return pd.DataFrame([{"variant": variant.id, "dtype": dtype, "M": shape.M, "N": shape.N, "K": shape.K,
                          "seed": seed, "sample": 0, "time_ms": float("nan"), "gflops": float("nan"),
                          "verified": False, "backend": variant.backend,
                          "precision": "int32" if dtype == "int32" else variant.precision.id, "check": "none",
                          "failure": failure}])


class Verifier:
    """How one measurement's results are verified.

    reference: a devicecheck.DeviceReference (every element, on the GPU), a
    HostReference (every element, on the CPU), or None (Freivalds' method).
    """

    def __init__(self, reference, a, b, seed: int, checking: Checking, precision: precisions.Precision):
        self.reference, self.a, self.b = reference, a, b
        self.seed, self.checking, self.precision = seed, checking, precision
        self.on_device = reference is not None and not isinstance(reference, HostReference)
        self.calls = 0
        self.seconds = 0.0   # spent checking (the device reference's own build time not included)

    def on_host(self, c: np.ndarray) -> Verification:
        """Verify a result that is on the host."""
        self.calls += 1
        start = time.perf_counter()
        K, tolerance = self.a.shape[1], self.checking.tolerance
        if self.on_device:
            result = self.reference.verify_host(c, tolerance, self.precision)
        elif self.reference is not None:
            result = elementwise(c, self.reference.ref, self.reference.scale, K, tolerance, self.precision)
        else:
            result = freivalds(c, self.a, self.b, tolerance, self.checking.freivalds_vectors,
                               seed=(self.seed, self.calls), precision=self.precision)
        self.seconds += time.perf_counter() - start
        return result

    def in_device_memory(self, gpu, d_c, dtype) -> Verification:
        """Verify a result that is in the GPU's memory: there if the reference is, else copied back."""
        if not self.on_device:
            M, N = self.a.shape[0], self.b.shape[1]
            return self.on_host(gpu.to_host(d_c, (M, N), dtype))
        self.calls += 1
        start = time.perf_counter()
        result = self.reference.verify(d_c, self.checking.tolerance, self.precision)
        self.seconds += time.perf_counter() - start
        return result

    def facts(self) -> dict:
        """Where the reference came from and what checking cost, for the results row."""
        where = {True: "gpu (cuBLAS DGEMM)", False: "cpu (NumPy float64)"}[self.on_device]
        return {"reference": where if self.reference is not None else "none (Freivalds)",
                "reference_s": getattr(self.reference, "seconds", None), "check_s": self.seconds}


@dataclass(frozen=True)
class Placement:
    """One copy of a measurement's operands in the GPU's memory, and the launch that runs on it."""
    launch: object
    d_c: object


@dataclass
class Pooled:
    """One GPU measurement taken in `parts` CUDA contexts, one after another (measure_variant.py measures a
    job's shapes in one context, then again in a fresh one): the samples so far and every check so far,
    carried from one context to the next. `part`: the context the next samples are taken in."""
    parts: int = 1
    part: int = 0
    timed: TimedSamples = field(default_factory=TimedSamples)
    checks: list = field(default_factory=list)

    @property
    def done(self) -> bool:
        """Whether every context of the measurement has been taken."""
        return self.part >= self.parts

    def settle(self, launch_s: float, long_s: float) -> None:
        """Before its first context is timed: a measurement whose launch took `long_s` or more (its verified
        launches, by the host's clock) is taken in that one context only."""
        if self.part == 0 and launch_s >= long_s:
            self.parts = 1


def _measure_gpu(variant, shape, a, b, verifier, binary, harness, timing, session=None, pooled=None):
    M, N, K = shape
    with contextlib.ExitStack() as stack:
        gpu = session or stack.enter_context(GpuSession())
        timer = Timer.for_session(gpu, harness)
        operand_bytes = variant.precision.operand_bytes if a.dtype == np.float32 else a.itemsize
        if verifier.on_device:   # the reference's own copies of A and B, as the variant reads them
            origin = verifier.reference.operands
        else:
            origin = tuple(gpu.to_device(x) for x in data.operands(a, b, variant.precision))
            stack.callback(gpu.release, *origin)
        placements = []
        for copy in range(max(1, timing.placements)):
            d_a, d_b = origin
            module = binary
            if copy:   # the others copied from the first, on the GPU, each launching a module of its own
                d_a, d_b = (gpu.duplicate(origin[0], a.size * operand_bytes),
                            gpu.duplicate(origin[1], b.size * operand_bytes))
                stack.callback(gpu.release, d_a, d_b)
                if binary is not None:
                    module = gpu.kept("module copies", ModuleCopies).path(binary, copy)
            d_c = gpu.empty(M * N * 4)
            stack.callback(gpu.release, d_c)
            launch, extra = gpu_launch(gpu, variant, module, shape, d_a, d_b, d_c)
            placements.append(Placement(launch, d_c))
        extra["placements"] = len(placements)
        return _verify_then_time(gpu, timer, placements, shape, verifier, timing, extra, a.dtype, pooled)


class ModuleCopies:
    """Copies of the cubins a session launches, one a placement after the first, each loaded as a module of its
    own. Where a module lies is a placement too: a queued step's tile counter, when it was a global of its
    module, ran step 46 at 4096 1.3% apart on counters 256 bytes apart, each the same in every round
    (6fbf69a:notes/c_placement/); the counter now lies in each launcher's workspace (kernels/sm90/workspace.cuh),
    as placed as the module. Kept by the session (GpuSession.kept), deleted with it."""

    def __init__(self):
        self._dir = tempfile.TemporaryDirectory(prefix="matmulstudy-modules-")

    def path(self, binary, copy: int) -> Path:
        """The copy-th copy of `binary` (the same bytes; a name of its own, so a module of its own)."""
        stat = Path(binary).stat()   # a binary built again in the session gets copies of its own
        tag = hashlib.sha1(f"{Path(binary).resolve()}:{stat.st_mtime_ns}:{stat.st_size}".encode()).hexdigest()[:16]
        target = Path(self._dir.name) / f"{tag}.{copy}{Path(binary).suffix}"
        if not target.exists():
            shutil.copyfile(binary, target)
        return target

    def close(self) -> None:
        self._dir.cleanup()


def gpu_launch(gpu, variant, binary, shape, d_a, d_b, d_c):
    """A call that runs a GPU variant once on these buffers (a cuda kernel as the study launches it, or cuBLAS
    in the variant's precision, on the session's one handle for it), and the facts of the launch for its rows."""
    M, N, K = shape
    extra = {"device": gpu.device.name()}
    if variant.backend == "cuda":
        grid, block = variant.launch_grid(M, N, gpu.sm_count), variant.block
        extra.update(grid=f"{grid[0]}x{grid[1]}", block=f"{block[0]}x{block[1]}")
        return launcher(gpu, binary, variant, M, N, K, d_a, d_b, d_c), extra
    blas = gpu.kept(("cuBLAS", variant.precision), lambda: open_reference(variant.precision, gpu))
    extra["library"] = f"{variant.precision.cublas.library} {blas.version}"
    return (lambda: blas.gemm(M, N, K, d_a, d_b, d_c)), extra


def _verify_then_time(gpu, timer, placements: list, shape, verifier, timing: Timing, extra, dtype=np.float32,
                      pooled: Pooled | None = None):
    """Every placement's output poisoned, the first placement's launch verified, then the launches timed in
    turn on the placements (the timed launch is the next placement's; the warm-up's launches take them in
    turn too), then each placement's last result verified. A placement's first launch is thus checked after
    the timing, its poison still in any element that no launch wrote: a launch of each before the timing
    checked nothing more, and cost a naive step's 8192 launches 3 x 0.36 s. With `pooled`, the measurement's
    context `pooled.part` of `pooled.parts`: its samples join those of the earlier contexts, and the result
    is the worst check of them all."""
    M, N, _ = shape
    pooled = pooled or Pooled()
    for placement in placements:
        gpu.fill_u32(placement.d_c, POISON_BITS, M * N)
    start = time.perf_counter()
    placements[0].launch()
    gpu.synchronize()
    launch_s = time.perf_counter() - start
    pooled.checks.append(verifier.in_device_memory(gpu, placements[0].d_c, dtype))
    if not pooled.checks[-1].ok:
        return [], pooled.checks[-1], extra, None
    pooled.settle(launch_s, timing.contexts_below_ms / 1e3)
    turns = itertools.cycle(placements)

    def launch():
        next(turns).launch()
    max_clock = gpu.attribute("CLOCK_RATE") / 1000
    monitor = nvml.Monitor.for_session(gpu)
    retake = Retake(max_clock, timing.throttle_fraction, timing.throttle_recovery_s, timing.max_retakes)
    pooled.timed.context = pooled.part
    timed = timer.time(launch, timing.warmup, Criterion.from_timing(timing).share(pooled.part, pooled.parts),
                       cold=timing.cache == "cold", monitor=monitor,
                       retake=retake if timing.max_retakes else None, out=pooled.timed)
    pooled.checks += [verifier.in_device_memory(gpu, placement.d_c, dtype) for placement in placements]
    pooled.part += 1
    per_sample = _clock_columns(timed.batch_readings + timed.retaken_readings, max_clock, timing.throttle_fraction)
    per_sample["retaken"] = [False] * len(timed.times_ms) + [True] * len(timed.retaken_ms)
    per_sample["context"] = timed.contexts + timed.retaken_contexts
    extra.update(blocked=timed.blocked, cache=timing.cache, stop_reason=timed.stop_reason,
                 noise=relative_noise(timed.times_ms), timing_s=timed.elapsed_s, retakes=timed.retakes,
                 recovery_s=timed.recovery_s, max_sm_clock_mhz=max_clock, nvml=monitor.unavailable or "ok")
    return timed.times_ms + timed.retaken_ms, worst(*pooled.checks), extra, per_sample


def _clock_columns(batch_readings: list, max_clock_mhz: float, fraction: float) -> dict:
    """Per sample: the worst NVML reading of its batch, and the throttle flag."""
    worst_of = [nvml.worst(readings) for readings in batch_readings]
    return {"sm_clock_mhz": [r.sm_clock_mhz for r in worst_of],
            "mem_clock_mhz": [r.mem_clock_mhz for r in worst_of],
            "temperature_c": [r.temperature_c for r in worst_of],
            "power_w": [r.power_w for r in worst_of],
            "clock_event_reasons": [nvml.reason_names(r.reasons) for r in worst_of],
            "throttled": [nvml.throttled(r.sm_clock_mhz, max_clock_mhz, fraction) for r in worst_of]}


def _measure_cpu(variant, shape, a, b, verifier, binary, timing: Timing):
    M, N, K = shape
    c = np.full((M, N), POISON, dtype=np.float32)
    if variant.backend == "c":
        lib = ctypes.CDLL(str(binary))
        fn = getattr(lib, variant.kernel)
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
    first = verifier.on_host(c)
    if not first.ok:
        return [], first, extra
    criterion, times = Criterion.from_timing(timing), []
    start = time.perf_counter()
    while not (reason := criterion.stop(times, time.perf_counter() - start)):
        t0 = time.perf_counter()
        run()
        times.append((time.perf_counter() - t0) * 1e3)
    extra.update(stop_reason=reason, noise=relative_noise(times), timing_s=time.perf_counter() - start)
    return times, worst(first, verifier.on_host(c)), extra


def measure(variant: Variant, shape: Shape, seed: int, a: np.ndarray, b: np.ndarray, binary, timing: Timing,
            checking: Checking, harness=None, session=None, reference=None, pooled=None) -> pd.DataFrame:
    """Verify and time one variant; one row per timed sample.

    binary: the variant's cubin or shared library, built for a's dtype;
    timing, checking: the study's settings for both;
    harness: the cubin of gpu/harness.cu (GPU variants);
    session: a GpuSession to measure in (one is opened if None);
    reference: what the result is checked against (see Verifier): a
    DeviceReference made in `session`, a HostReference, or None for
    Freivalds' method;
    pooled: for a GPU variant, the measurement's `Pooled` state, where it
    spans several CUDA contexts (this call is its next one): the rows are
    those of its contexts so far.
    """
    dtype = str(a.dtype)
    if dtype not in variant.dtypes:
        raise StudyError(f"{variant.id} does not run {dtype} (its dtypes: {list(variant.dtypes)})")
    precision = variant.precision
    if precision.rounds_inputs and isinstance(reference, HostReference):
        raise StudyError(f"{variant.id}: a {precision.label} result is checked against the product of its rounded "
                         "inputs, which a CPU reference file is not; check it on the GPU (check: gpu)")
    if reference is None:   # Freivalds' check multiplies A and B itself, as the kernels read them (a
        a, b = data.rounded(a, b, precision)   # DeviceReference rounds its own); only past full checks
    verifier = Verifier(reference, a, b, seed, checking, precision)
    if variant.is_gpu:
        times, result, extra, per_sample = _measure_gpu(variant, shape, a, b, verifier, binary, harness, timing,
                                                        session, pooled)
    else:
        per_sample = None
        with host.blas_threads():
            times, result, extra = _measure_cpu(variant, shape, a, b, verifier, binary, timing)
    extra.update(verifier.facts())
    return _rows(variant, shape, seed, dtype, times, result, extra, per_sample)


def counted(rows: pd.DataFrame) -> pd.DataFrame:
    """The samples that count: all but those of batches taken again because the GPU throttled."""
    return rows[~rows["retaken"].fillna(False).astype(bool)] if "retaken" in rows else rows


def describe(rows: pd.DataFrame) -> str:
    """One line for the log: the check, the samples, the median, why timing stopped, what was taken again."""
    r = rows.iloc[0]
    if not r["verified"]:
        return (f"VERIFICATION FAILED ({r['check']}): {r['bad_elements']} wrong, "
                f"{r['unwritten_elements']} never written, margin {r['margin']:.3g} (error over bound)")
    ok = counted(rows)
    text = (f"verified ({r['check']}, margin {r['margin']:.3g}), {len(ok)} samples, median "
            f"{ok['time_ms'].median():.4f} ms, {ok['gflops'].median():,.1f} GFLOP/s")
    if "stop_reason" in rows:
        text += f", stopped on {r['stop_reason']} (noise {r['noise']:.2%})"
        if "throttled" in rows and ok["throttled"].eq(True).any():
            text += f", {int(ok['throttled'].eq(True).sum())} throttled"
        if len(ok) < len(rows):
            text += f", {len(rows) - len(ok)} re-taken in {int(r['retakes'])} batches"
    return text
