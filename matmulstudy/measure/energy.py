"""The energy of every step: each GPU variant run back to back, in a phase of its own after every timed one.

The timed (burst) samples are short batches, each launch with a cold L2:
the GPU keeps its highest clock through them, as nvbench and Nsight Compute
measure. A long run is another regime: on the H100 a tensor-core step at
4096 meets the 700 W cap within a quarter of a second of running back to
back, its SM clock down to about 1530 MHz. This phase measures that regime
for every GPU variant at the reference size and the largest (the headline's
shapes), and the energy it draws:

- launches back to back, L2 warm, two chunks of ~5 ms queued ahead of the
  one running (gpu/timer.py's Timer.sustain), until NVML's total-energy
  counter has ticked twice at least `energy_window_s` apart (it ticks every
  100 ms on the H100: a window between two ticks holds whole ticks only);
- the sustained rate (GFLOP/s), timed by the CUDA events that close the
  chunks seen finished inside the window (whole launches, GPU time: the host
  sees a chunk finish only when it polls), joules per launch, the whole
  GPU's mean power over the window, GFLOP per joule, and the SM clock NVML
  read meanwhile;
- the output of the last launch checked element by element against the
  float64 reference, as every timed result is: a wrong result has no row.

It runs after every timed measurement because its heat would lower the next
variant's clock (measured on the H100: run inside each measurement, it left
the next tensor-core step's burst clock at 1800 MHz, 4% under its committed rate).
Energy is n/a, with the reason, where NVML has no counter, where the counter
did not move, or where the host could not queue launches as fast as the
kernel ran them (a launch-bound run: the GPU waited, and its energy would
be mostly idle).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..gpu import nvml
from ..gpu.timer import Timer
from ..study.settings import Checking
from ..study.shapes import Shape
from ..study.variant import Variant
from . import build, data
from .bench import counted, gpu_launch
from .devicecheck import DeviceReference, References
from .verify import POISON_BITS

KEPT_BUSY = 0.9   # a run slower than this share of what its clock allows left the GPU waiting between launches


@dataclass(frozen=True)
class Problem:
    """One shape's inputs in one dtype, and the GPU variants (with their binaries) that run it."""
    shape: Shape
    dtype: str
    seed: int
    a: np.ndarray
    b: np.ndarray
    variants: tuple   # ((Variant, binary or None, its timed median in ms), ...)


def timed_medians(paths) -> dict:
    """Each verified measurement's timed median, in ms: {(variant, dtype, shape tag): ms}."""
    medians = {}
    for path in paths:
        rows = counted(pd.read_csv(path))
        for (vid, dtype, M, N, K), g in rows[rows["verified"].astype(bool)].groupby(["variant", "dtype", "M", "N", "K"]):
            medians[vid, dtype, f"{M}x{N}x{K}"] = g["time_ms"].median()
    return medians


def load_problem(registry, problem: dict, medians: dict, only=None) -> Problem:
    """A rule's problem (StudyRun.energy_problems: a shape's input files and its variants' binaries) in
    memory: its inputs loaded, and each variant whose timed measurement verified (the others' jobs recorded
    why), as its binary was built, with its timed median (`medians`: timed_medians). `only`: these variants."""
    key = (problem["dtype"], problem["shape"])
    variants = tuple((build.built_variant(registry[vid], binary) if binary else registry[vid], binary,
                      medians[(vid, *key)])
                     for vid, binary in problem["variants"]
                     if (vid, *key) in medians and (only is None or vid in only))
    return Problem(Shape.parse(problem["shape"]), problem["dtype"], problem["seed"],
                   data.load(problem["a"]), data.load(problem["b"]), variants)


def kept_busy(sustained, burst_ms: float, max_clock_mhz: float, clock_mhz: float) -> float:
    """How busy the run kept the GPU: the time a launch takes at the run's clock (its timed median, cold L2, at
    the highest clock, scaled by the clocks' ratio) over the run's own time per launch; at most 1. Well below 1,
    the GPU waited between launches for the host, and the run's energy would be mostly idle."""
    allowed = burst_ms * max_clock_mhz / clock_mhz if clock_mhz > 0 else burst_ms
    return min(1.0, allowed / sustained.launch_ms)


def energy_columns(sustained, flop: int, burst_ms: float, max_clock_mhz: float) -> dict:
    """A sustained run's rate, and its energy per launch, mean power and GFLOP per joule, or why there are none
    (energy_note)."""
    clocks = [r.sm_clock_mhz for r in sustained.readings if not np.isnan(r.sm_clock_mhz)]
    clock = float(np.median(clocks)) if clocks else np.nan
    busy = kept_busy(sustained, burst_ms, max_clock_mhz, clock if clocks else max_clock_mhz)
    out = {"sustained_gflops": flop / sustained.launch_ms / 1e6, "sustained_s": sustained.seconds,
           "sustained_busy": busy, "sustained_min_sm_clock_mhz": min(clocks, default=np.nan),
           "sustained_median_sm_clock_mhz": clock, "sustained_timed_launches": sustained.timed_launches,
           "energy_note": sustained.note}
    if busy < KEPT_BUSY:
        out["energy_note"] = (f"launch-bound: back to back a launch took {sustained.launch_ms:.3g} ms, timed alone "
                              f"{burst_ms:.3g} ms: the GPU waited between launches, and the energy would be idle")
    elif sustained.joules is not None:
        power = sustained.joules / sustained.seconds   # over the window, whose energy is whole ticks
        out.update(joules_per_launch=power * sustained.launch_ms / 1e3, mean_power_w=power,
                   gflop_per_joule=out["sustained_gflops"] / power)
    return out


def sustain_variant(gpu, harness, variant: Variant, binary, burst_ms: float, problem: Problem,
                    reference: DeviceReference, window_s: float, checking: Checking) -> dict:
    """One variant on one problem: its sustained run, then its output checked. A row of the energy table."""
    M, N, K = shape = problem.shape
    row = {"variant": variant.id, "dtype": problem.dtype, "M": M, "N": N, "K": K, "seed": problem.seed}
    with contextlib.ExitStack() as stack:
        d_c = gpu.empty(M * N * 4)
        stack.callback(gpu.release, d_c)
        launch, _ = gpu_launch(gpu, variant, binary, shape, *reference.operands, d_c)
        gpu.fill_u32(d_c, POISON_BITS, M * N)
        run = Timer.for_session(gpu, harness).sustain(launch, burst_ms, window_s, nvml.Monitor.for_session(gpu))
        gpu.synchronize()
        check = reference.verify(d_c, checking.tolerance, variant.precision)   # int32: exact, whatever the precision
    row.update(verified=check.ok, margin=check.margin)
    if not check.ok:
        return {**row, "energy_note": f"the result of the sustained run did not verify ({check.describe()})"}
    return {**row, **energy_columns(run, shape.flop, burst_ms, gpu.attribute("CLOCK_RATE") / 1000)}


def measure(gpu, harness, problems: list[Problem], window_s: float, checking: Checking, log=None) -> pd.DataFrame:
    """Every problem's variants, one sustained run each, one float64 reference a problem (one for each way
    a precision takes the inputs: devicecheck.References)."""
    rows = []
    for problem in problems:
        with References(gpu, harness, problem.a, problem.b) as references:
            for variant, binary, burst_ms in problem.variants:
                row = sustain_variant(gpu, harness, variant, binary, burst_ms, problem, references[variant.precision],
                                      window_s, checking)
                rows.append(row)
                if log is not None:
                    print(describe(row), file=log, flush=True)
    return pd.DataFrame(rows)


def describe(row: dict) -> str:
    """One line for the log."""
    head = f"{row['variant']} {row['dtype']} {row['M']}x{row['N']}x{row['K']}: "
    if "sustained_gflops" not in row:
        return head + f"n/a: {row['energy_note']}"
    text = head + f"sustained {row['sustained_gflops']:,.1f} GFLOP/s at {row['sustained_median_sm_clock_mhz']:.0f} MHz"
    if "gflop_per_joule" in row:
        return text + f", {row['mean_power_w']:.0f} W, {row['gflop_per_joule']:,.1f} GFLOP/J"
    return text + f"; energy n/a: {row['energy_note']}"
