"""Tune a variant's free parameters on the GPU at hand: what `tune: true` runs (tools/tune.py by hand).

Every combination of the search space (the registry entry's `search`, or
the --set values) is one candidate, the registry's defaults first. As Kernel
Tuner does, every candidate is recorded, whatever became of it: a
combination that breaks a constraint of the search space is skipped with the
constraint it breaks; one that does not build (a static_assert, too much
shared memory), launch or verify is recorded with the reason; the others
are checked element by element on a ragged shape and on the timing shape,
and timed there as the study times them. The sweep stops starting
candidates once its time budget is spent (recorded too). The fastest
verified candidate is the choice; the study builds with its defines
(workflow/rules/tune.smk), and every result row records them in its
compiler flags.
"""

from __future__ import annotations

import io
import sys
import time
from pathlib import Path

import pandas as pd

from ..errors import StudyError
from ..study.settings import Checking, Timing
from ..study.shapes import Shape
from ..study.variant import Search, Variant
from . import bench, build, data
from .devicecheck import DeviceReference, workspace

CHECK_SHAPE = Shape(1001, 1003, 999)   # ragged in every dimension, rows off 16 bytes
TIMING = Timing(warmup=3, cache="cold", min_samples=10, max_samples=10, max_noise=0.005, max_time_s=2.0,
                throttle_fraction=0.9, throttle_recovery_s=0.1, max_retakes=20)   # burst samples, no energy


def sweep(variant: Variant, search: Search, size: int, budget_s: float, arch: str, checking: Checking,
          timing: Timing = TIMING, log=sys.stdout) -> pd.DataFrame:
    """One row per candidate of the search space, in the order tried; `chosen` marks the fastest verified."""
    rows, start = [], time.perf_counter()
    with workspace(arch, log) as (gpu, tmp, harness):
        problems = []   # (shape, A, B, its reference on the GPU)
        for shape in (CHECK_SHAPE, Shape(size, size, size)):
            a, b = data.make_inputs(shape, 0)
            problems.append((shape, a, b, DeviceReference(gpu, harness, a, b, variant.precision)))
        for combo, invalid in search.candidates(variant.defines):
            row = {"variant": variant.id, "defines": " ".join(f"{k}={v}" for k, v in combo.items()), "size": size}
            if invalid:
                row["status"] = f"skipped: {invalid}"
            elif time.perf_counter() - start > budget_s:
                row["status"] = f"not run: the time budget ({budget_s:g} s) was spent"
            else:
                row.update(_measure(variant.with_defines(combo), problems, tmp, harness, arch, checking, timing, gpu))
            rows.append(row)
            print(" ".join(f"{k}={v}" for k, v in row.items()), file=log, flush=True)
    df = pd.DataFrame(rows)
    ok = df[df["status"] == "ok"]
    df["chosen"] = False
    if len(ok):
        df.loc[ok["median_gflops"].idxmax(), "chosen"] = True
    return df


def _measure(variant: Variant, problems, tmp: Path, harness, arch: str, checking: Checking, timing: Timing,
             gpu) -> dict:
    """Build, verify on every problem, time on the last: the candidate's columns."""
    out = {}
    try:
        name = "_".join(f"{k}{v}" for k, v in sorted(variant.defines.items()))   # one cubin a candidate:
        cubin = tmp / f"{name}.cubin"                                          # a session loads a path once
        report = build.build(variant, cubin, tmp / f"{name}.json", variant.target(arch), io.StringIO())
        out.update(registers=report["registers"], shared_bytes=report["shared_bytes"],
                   spill_bytes=report["spill_store_bytes"] + report["spill_load_bytes"])
        for shape, a, b, reference in problems:
            res = bench.measure(variant, shape, 0, a, b, cubin, timing, checking, harness=harness, session=gpu,
                                reference=reference)
            if not res["verified"].all():
                return {**out, "status": f"verification failed on {shape.tag} (margin {res['margin'].iloc[0]:.3g})"}
        gflops = bench.counted(res)["gflops"]
        out.update(median_gflops=gflops.median(), q1_gflops=gflops.quantile(0.25), q3_gflops=gflops.quantile(0.75),
                   status="ok")
    except Exception as err:   # a combination that cannot be built or launched is a result, not a crash
        out["status"] = f"failed: {type(err).__name__}: {(str(err).splitlines() or [''])[0][:200]}"
    return out


def chosen_defines(table: pd.DataFrame, variant: Variant) -> dict:
    """The defines the study builds with: the chosen candidate's over the registry's defaults."""
    best = table[table["chosen"].astype(bool)]
    if best.empty:
        raise StudyError(f"tuning {variant.id}: no candidate verified; see its tuning table")
    pairs = (item.split("=") for item in best["defines"].iloc[0].split())
    return {**variant.defines, **{k: int(v) for k, v in pairs}}
