"""The headline ratios, measured in rounds: each precision's best step against its reference, alternating.

Near the 700 W cap a kernel's speed depends on the GPU's power state as
much as on its code: on the H100, four rounds of step 29 and its cuBLAS
reference at 8192, in one run, gave 84% to 99%, while the study's two
separate measurements of each sat minutes apart. A ratio is only fair when
both sides see the same state, so the headline ratios are taken apart, in
a phase after every timed and energy job (whose heat would lower their
clocks):

- for each precision with a reference, its best step: the step whose timed
  median is the highest at the reference size, and every other step within
  TIE (1%) of it (`best_steps`): two steps that close swap places from one
  study to the next, and a repeat must find the same kernel to compare; but
  a step that launches there another step's kernel, built alike (step 20
  launches step 19's at 4096 and 8192), stands for it: the same machine code
  is not timed twice;
- at the reference size and at the largest square size of the sweep;
- `rounds` rounds; the steps go first in odd rounds, the reference in even
  ones (steps-reference, reference-steps, ...), so a drift of the GPU's state
  over the run weighs on all alike;
- in a round, each side is timed as the study times it (burst:
  cold L2, batches behind the blocker, throttled batches taken again after
  a pause: bench.measure, checked before and after), then, each after a
  cool-down of COOLDOWN_S (CUTLASS's profiler guidelines ask for one
  between kernels: clocks take time to settle), run back to back until
  NVML's energy counter has ticked twice `window_s` apart (sustained: the
  clock the cap leaves, energy.sustain_variant, its output checked again);
- one row per round, regime and variant, with its SM clock: the page gives
  each regime's ratio as the median of the rounds' ratios, with their range
  (report/headline.py).
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from .. import precisions
from ..study.registry import Registry
from ..study.settings import Checking, Timing
from ..study.shapes import Shape
from . import bench, energy
from .devicecheck import References

COOLDOWN_S = 0.5   # idle before each round's burst samples and each sustained run
TIE = 0.01         # a step this close to the best (timed median, at the reference size) is measured too
FIRST = ["precision", "M", "N", "K", "round", "regime", "position", "role", "variant", "gflops", "sm_clock_mhz"]


def stands_for(later, earlier, size: int, sms: int | None) -> bool:
    """Whether step `later` launches at size^3, on a GPU of `sms` multiprocessors, step `earlier`'s kernel built
    with the same defines (its file includes the earlier one's: kernel names are unique to a file)."""
    if later.order <= earlier.order or later.defines != earlier.defines or (later.launches and sms is None):
        return False   # without the GPU's multiprocessors, a rule by shape says nothing
    return later.kernel_for(size, size, size, sms) == earlier.kernel


def best_steps(medians: dict, registry: Registry, size: int, dtype: str = "float32",
               sms: int | None = None) -> dict[precisions.Precision, tuple]:
    """{precision: (best step, [steps within TIE of it, in the registry's order,] reference)}: per precision
    whose reference was measured at size^3, the GPU step of that precision with the highest timed median GFLOP/s
    there, and those within TIE of it, less any step a later one of them stands for (`stands_for`).
    `medians`: {(variant, dtype, shape tag): ms}."""
    tag, out = f"{size}x{size}x{size}", {}
    for p in precisions.TABLE:
        reference = registry.reference(p)
        if reference is None or (reference.id, dtype, tag) not in medians:
            continue
        timed = [(medians[v.id, dtype, tag], v.id) for v in registry.steps(precision=p)
                 if v.is_gpu and (v.id, dtype, tag) in medians]
        if timed:
            fastest, best = min(timed)
            close = [vid for ms, vid in timed if vid != best and ms <= fastest * (1 + TIE)]
            steps = [registry[vid] for vid in (best, *close)]
            kept = [v.id for v in steps if not any(stands_for(w, v, size, sms) for w in steps)]
            out[p] = (*kept, reference.id)
    return out


def order(sides: tuple, round_no: int) -> tuple:
    """The order of round `round_no` (1, 2, ...): the steps first in odd rounds, the reference first (and the
    steps in reverse) in even ones."""
    return sides if round_no % 2 else sides[::-1]


def _burst_row(rows: pd.DataFrame) -> dict:
    """A burst measurement's counted samples, as one row: median time and rate, clocks, what throttled."""
    first = rows.iloc[0]
    out = {"verified": bool(first["verified"]), "margin": first.get("margin", np.nan)}
    if not out["verified"]:
        return out
    ok = bench.counted(rows)
    median_ms = float(ok["time_ms"].median())
    flop = Shape(int(first["M"]), int(first["N"]), int(first["K"])).flop
    return {**out, "time_ms": median_ms, "gflops": flop / (median_ms * 1e-3) / 1e9,
            "samples": len(ok), "sm_clock_mhz": float(ok["sm_clock_mhz"].median()),
            "min_sm_clock_mhz": float(ok["sm_clock_mhz"].min()),
            "throttled": int(ok["throttled"].eq(True).sum()), "retaken": len(rows) - len(ok)}


def _sustained_row(row: dict) -> dict:
    """energy.sustain_variant's row, in the headline's columns."""
    out = {"verified": row["verified"], "margin": row["margin"], "note": row.get("energy_note", "")}
    if "sustained_gflops" in row:
        out.update(gflops=row["sustained_gflops"], sm_clock_mhz=row["sustained_median_sm_clock_mhz"],
                   min_sm_clock_mhz=row["sustained_min_sm_clock_mhz"], mean_power_w=row.get("mean_power_w"),
                   gflop_per_joule=row.get("gflop_per_joule"), timed_launches=row.get("sustained_timed_launches"))
    return out


def measure(gpu, harness, problem: energy.Problem, contenders: dict, rounds: int, timing: Timing,
            window_s: float, checking: Checking, log=None) -> pd.DataFrame:
    """Every precision's steps and reference on one problem in `rounds` alternating rounds, burst then
    sustained. `contenders`: {precision: (step, ..., reference)} (best_steps); `problem.variants`: (Variant,
    binary, timed median ms) of every variant named there."""
    variants = {v.id: (v, binary, ms) for v, binary, ms in problem.variants}
    M, N, K = shape = problem.shape
    rows = []
    with References(gpu, harness, problem.a, problem.b) as references:
        for precision, sides in contenders.items():
            reference = references[precision]
            for round_no in range(1, rounds + 1):
                first_second = order(sides, round_no)
                time.sleep(COOLDOWN_S)
                for position, vid in enumerate(first_second, 1):
                    variant, binary, _ = variants[vid]
                    samples = bench.measure(variant, shape, problem.seed, problem.a, problem.b, binary, timing,
                                            checking, harness, session=gpu, reference=reference)
                    rows.append({"regime": "burst", "position": position, **_burst_row(samples)})
                for position, vid in enumerate(first_second, 1):
                    variant, binary, burst_ms = variants[vid]
                    time.sleep(COOLDOWN_S)
                    row = energy.sustain_variant(gpu, harness, variant, binary, burst_ms, problem, reference,
                                                 window_s, checking)
                    rows.append({"regime": "sustained", "position": position, **_sustained_row(row)})
                for row, vid in zip(rows[-2 * len(sides):], first_second * 2):
                    row.update(precision=precision.id, round=round_no, variant=vid,
                               role="reference" if vid == sides[-1] else "step",
                               dtype=problem.dtype, M=M, N=N, K=K, seed=problem.seed)
                    if log is not None:
                        print(describe(row), file=log, flush=True)
    df = pd.DataFrame(rows, columns=None if rows else FIRST)
    return df[FIRST + [c for c in df.columns if c not in FIRST]]


def describe(row: dict) -> str:
    """One line for the log."""
    head = (f"{row['precision']} {row['M']}x{row['N']}x{row['K']} round {row['round']} {row['regime']} "
            f"{row['position']}. {row['variant']}: ")
    if not row["verified"]:
        return head + f"NOT VERIFIED (margin {row['margin']:.3g})"
    if "gflops" not in row or pd.isna(row.get("gflops")):
        return head + f"n/a: {row.get('note', '')}"
    return head + f"{row['gflops']:,.1f} GFLOP/s at {row['sm_clock_mhz']:.0f} MHz"


def gather(parts: list) -> pd.DataFrame:
    """The precisions' headline tables (a job each) as one, in the precisions' order: a precision whose job found
    no contender adds no row."""
    tables = [pd.read_csv(part) for part in parts]
    tables = [t for t in tables if len(t)]
    if not tables:
        return pd.DataFrame(columns=FIRST)
    table = pd.concat(tables, ignore_index=True)
    rank = {p.id: i for i, p in enumerate(precisions.TABLE)}
    return table.sort_values("precision", key=lambda s: s.map(rank), kind="stable", ignore_index=True)
