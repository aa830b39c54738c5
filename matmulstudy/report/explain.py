"""The progression as a table with its reasons (on each GPU's summary page).

For each GPU step at the reference size: its speed, its speedup over the
step before, and the hardware facts that explain it. A step slower than
the one before beyond their measured spread (results.slower_beyond_spread)
is said to be slower, with the facts that moved against it;
no step is dropped or reordered. A step whose registry entry says which
counters show its change (`shows`) gets a line with them, before and after,
and whether they moved the way the step says.
"""

from __future__ import annotations

import pandas as pd

from .. import precisions
from ..measure.sanitize import is_clean
from ..study.counters import ANY_SIZE, COUNTERS, ENERGY, with_derived
from ..study.registry import Registry
from ..study.shapes import Shape
from .results import at_size, slower_beyond_spread

# Counters of one kind of unit's arithmetic: a table of that unit's steps shows them, and they explain only
# that unit's steps (an FP32 step's tensor pipe is idle, and its 0.9% moving to 0.7% says nothing of it).
UNIT_ONLY = {"hmma": "tensor core", "hgmma": "tensor core", "tensor_pipe_pct": "tensor core",
             "tensor_idle_cycles_per_tile": "tensor core",
             "instructions_per_hgmma": "tensor core", "fma_per_lds": "CUDA core", "instructions_per_fma": "CUDA core",
             "bar_per_kffma": "CUDA core", "reuse_per_ffma": "CUDA core"}
# The columns of the progression table, in its order: (label, format, True if a larger value is worse); a
# tensor-core chapter's first say which instructions did the arithmetic, in place of FFMA per LDS.
FACTS = {c: (COUNTERS[c][0], COUNTERS[c][2], COUNTERS[c][3])
         for c in ("hmma", "hgmma", "tensor_pipe_pct", "global_ld_sectors_per_request", "bank_conflicts_per_shared_ld",
                   "fma_per_lds", "occupancy", "achieved_occupancy_pct", "dram_throughput_pct", "registers",
                   "flop_per_byte")}
UNIT_FACTS = {unit: {c: f for c, f in FACTS.items() if UNIT_ONLY.get(c, unit) == unit}
              for unit in ("CUDA core", "tensor core")}
# Last, where the study measured them: the step back to back at the power cap (its rate, power, GFLOP per joule).
ENERGY_FACTS = {c: (COUNTERS[c][1], COUNTERS[c][2], COUNTERS[c][3]) for c in ENERGY}


# How busy the FMA pipe and the issue slots were, and what it drew back to back: what a slower step is, not why
# (left out of its reasons).
OUTCOMES = ("fma_pipe_pct", "issue_active_pct") + ENERGY


def progression_table(df: pd.DataFrame, hw: pd.DataFrame, registry: Registry, size: int,
                      precision: precisions.Precision = precisions.BASE, summary: pd.DataFrame | None = None,
                      counters_at: pd.DataFrame | None = None) -> pd.DataFrame:
    """The steps of one precision's chapters (the base precision's, or another's) at `size`, with their
    facts; `df`: the samples that count; from `summary`, where it has them, the energy phase's; from
    `counters_at` (counters_at.csv), a step's named counters at its own size (`shown_at`)."""
    at = at_size(df, size, verified=True)
    steps = registry.steps(precision=precision)
    at = at[at["variant"].isin([v.id for v in steps])]
    samples = dict(tuple(at.groupby("variant")["gflops"]))
    med = at.groupby("variant")["gflops"].median()
    hw = with_derived(hw[hw["dtype"] == "float32"]).set_index("variant")
    energy = {}
    if summary is not None and set(ENERGY) <= set(summary.columns):
        energy = at_size(summary, size, verified=True).set_index("variant")[list(ENERGY)].to_dict("index")
    rows = []
    for v in steps:
        if v.id not in med:
            continue
        row = {"step": v.title, "variant": v.id, "gflops": med[v.id]}
        for col in list(COUNTERS) + ["sanitizer"]:
            if col in hw.columns and v.id in hw.index:
                row[col] = hw.at[v.id, col]
        row.update(energy.get(v.id, {}))
        rows.append(row)
    table = pd.DataFrame(rows, columns=["step", "variant", "gflops"] if not rows else None)
    table["shows"] = table["variant"].map(lambda v: registry[v].shows)
    table["shown_at"] = table["variant"].map(lambda v: registry[v].shown_at and Shape(*[registry[v].shown_at] * 3).tag)
    table["at_values"] = table["variant"].map(lambda v: shown_at_values(registry, counters_at, v))
    table["source"] = table["variant"].map(lambda v: registry[v].source)
    table["speedup"] = table["gflops"] / table["gflops"].shift(1)
    table["slower"] = [i > 0 and slower_beyond_spread(samples[v], samples[table["variant"].iloc[i - 1]])
                       for i, v in enumerate(table["variant"])]
    return table


def slower_steps(table: pd.DataFrame, unit: str = precisions.BASE.unit) -> list[str]:
    """A sentence per step slower than its predecessor beyond their measured spread, naming what moved against
    it (counters of another unit's arithmetic than the steps', `unit`, left out: UNIT_ONLY)."""
    notes = []
    for i in range(1, len(table)):
        now, before = table.iloc[i], table.iloc[i - 1]
        if not now["slower"]:
            continue
        moved = []
        facts = {**UNIT_FACTS[unit], **{c: (label, fmt, worse) for c, (label, _, fmt, worse) in COUNTERS.items()
                                         if c not in OUTCOMES}}   # the table's columns first
        for col, (label, fmt, worse_if_larger) in facts.items():
            if (col not in table or worse_if_larger is None or pd.isna(now[col]) or pd.isna(before[col])
                    or UNIT_ONLY.get(col, unit) != unit):
                continue
            if fmt.format(now[col]) == fmt.format(before[col]):   # a change below the printed precision
                continue
            got_worse = now[col] > before[col] if worse_if_larger else now[col] < before[col]
            if got_worse and abs(now[col] - before[col]) > 0.05 * max(abs(before[col]), 1e-9):
                moved.append(f"{label} {fmt.format(before[col])} -> {fmt.format(now[col])}")
        why = "; ".join(moved) if moved else "none of the recorded counters moved against it"
        # within half a percent, three decimals: a step measurably slower is not "×1.00 slower"
        factor = f"{now['speedup']:.3f}" if abs(now["speedup"] - 1) < 0.005 else f"{now['speedup']:.2f}"
        notes.append(f"**{now['step']}** is slower than **{before['step']}** (×{factor}): {why}.")
    return notes


def shown_at_values(registry: Registry, counters_at: pd.DataFrame | None, vid: str) -> dict | None:
    """For a step with `shown_at`: each counter its `shows` names -> (the step before's, its own), measured at
    that size (None where not measured), but those the same at every size (ANY_SIZE: the SASS's, ptxas's), which
    the study's tables hold as for every step; None for a step whose counters are the study's, at ncu_size."""
    variant = registry[vid]
    if not variant.shown_at:
        return None
    before = registry.step_before(vid)
    rows = (pd.DataFrame(columns=["variant"]) if counters_at is None or "ncu_shape" not in counters_at
            else counters_at[counters_at["ncu_shape"].eq(Shape(*[variant.shown_at] * 3).tag)]).set_index("variant")

    def value(v, col):
        got = rows[col].get(v) if v is not None and col in rows else None
        return None if got is None or pd.isna(got) else got
    return {col: (value(before and before.id, col), value(vid, col)) for col, _ in variant.shows
            if col not in ANY_SIZE}


def _value(table: pd.DataFrame, i: int, col: str):
    return table.iloc[i][col] if col in table and not pd.isna(table.iloc[i][col]) else None


def as_said(before, now, direction: str) -> bool:
    """Whether a counter moved from `before` to `now` the way a step's entry says (`shows`: lower or higher)."""
    return now < before if direction == "lower" else now > before


def shown_changes(table: pd.DataFrame) -> list[str]:
    """A sentence per step whose entry names the counters that show its change: each counter before (the
    step before) and after, and whether it moved the way the entry says."""
    notes = []
    for i in range(1, len(table)):
        shows = table.iloc[i]["shows"] if "shows" in table else ()
        if not shows:
            continue
        parts = []
        at = table.iloc[i]["at_values"] if "at_values" in table else None
        for col, direction in shows:
            label, _, fmt, _ = COUNTERS[col]
            before, now = _value(table, i - 1, col), _value(table, i, col)
            if isinstance(at, dict) and col in at:   # measured where the step is meant to win, the step before's too
                before, now = at[col]
                label = f"{label} at {table.iloc[i]['shown_at']}"
            if before is None or now is None:
                parts.append(f"{label}: not measured" + (" (ncu off)" if "(ncu)" in label else ""))
                continue
            parts.append(f"{label} {fmt.format(before)} -> {fmt.format(now)}"
                         + ("" if as_said(before, now, direction) else f" (**not {direction}**)"))
        row = table.iloc[i]
        notes.append(f"**{row['step']}** ({row['source']}; ×{row['speedup']:.2f} over "
                     f"{table.iloc[i - 1]['step']}): " + "; ".join(parts) + ".")
    return notes


def counter_table(table: pd.DataFrame) -> list[str]:
    """The counters named by any step's `shows`, with the FMA pipe and the issue slots, for the steps from the
    one before the first such step: a markdown table (empty where no step names counters)."""
    named = {c for shows in table.get("shows", []) for c, _ in shows}
    if not named:
        return []
    first = next(i for i, shows in enumerate(table["shows"]) if shows)
    cols = [c for c in COUNTERS if c in named or c in ("fma_pipe_pct", "issue_active_pct")]
    cols = [c for c in cols if c in table and table[c].iloc[max(first - 1, 0):].notna().any()]
    head = ["step", "GFLOP/s"] + [COUNTERS[c][1] for c in cols]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for _, r in table.iloc[max(first - 1, 0):].iterrows():
        lines.append("| " + " | ".join([r["step"], f"{r['gflops']:,.0f}"]
                                       + ["" if pd.isna(r[c]) else COUNTERS[c][2].format(r[c]) for c in cols]) + " |")
    lines += ["", "Columns, in the order above: " + "; ".join(f"{COUNTERS[c][1]}: {COUNTERS[c][0]}" for c in cols) + "."]
    return lines


def markdown(table: pd.DataFrame, gpu_name: str, size: int, level: int = 1,
             precision: precisions.Precision = precisions.BASE) -> str:
    """The table and the notes on slower steps; `level`: the heading's level."""
    p, base = precision, precisions.BASE
    facts = {**UNIT_FACTS[p.unit], **ENERGY_FACTS}
    cols = [c for c in facts if c in table]
    text_cols = ["sanitizer"] if "sanitizer" in table else []
    head = ["step", "GFLOP/s", "speedup"] + [facts[c][0] for c in cols] + ["compute-sanitizer"] * len(text_cols)
    what = (p.inputs if p.is_base else
            f"the {p.unit}s' chapter, {p.inputs} in and {p.label} arithmetic (against {p.reference_name}, never "
            f"cuBLAS {base.label})")
    energy = " The last columns: the step run back to back at the power cap (NVML)." if set(ENERGY) & set(cols) else ""
    lines = [f"{'#' * level} Optimisation progression at {size}×{size}×{size}, {what}, on {gpu_name}", "",
             "Median of the timed launches; speedup over the step before. Counters marked ncu are "
             f"Nsight Compute's, for one launch (see hardware.csv for the size).{energy}", "",
             "| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for _, r in table.iterrows():
        cells = [r["step"], f"{r['gflops']:,.0f}", "" if pd.isna(r["speedup"]) else f"×{r['speedup']:.2f}"]
        cells += ["" if pd.isna(r[c]) else facts[c][1].format(r[c]) for c in cols]
        cells += ["" if pd.isna(r[c]) else (str(r[c]) if is_clean(r[c]) else f"**{r[c]}**") for c in text_cols]
        lines.append("| " + " | ".join(cells) + " |")
    notes = slower_steps(table, p.unit)
    lines += ["", f"{'#' * (level + 1)} Steps slower than the one before", "",
              "A step is slower when the upper quartile of its timed GFLOP/s lies under the lower quartile of the "
              "step before's; a smaller difference, within the two steps' spread, is not called slower.", ""]
    lines += ([f"- {n}" for n in notes] if notes else ["No step runs slower than the one before."] if len(table) > 1
              else ["This study has fewer than two steps to compare."])
    shown = shown_changes(table)
    if shown:
        lines += ["", f"{'#' * (level + 1)} What each step changes, and the counters that show it", "",
                  "Each step's registry entry names the counters that show its change and which way they "
                  "should move from the step before; here they are as measured (SASS: the main loop of the "
                  "built kernel; ncu: one launch; stalls are warps per issued instruction).", ""]
        lines += [f"- {n}" for n in shown] + [""] + counter_table(table)
    return "\n".join(lines) + "\n"
