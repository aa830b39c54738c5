"""The progression as a table with its reasons (on each GPU's summary page).

For each GPU step at the reference size: its speed, its speedup over the
step before, and the hardware facts that explain it. A step slower than
the one before is said to be slower, with the facts that moved against it;
no step is dropped or reordered.
"""

from __future__ import annotations

import pandas as pd

from .registry import Registry
from .results import at_size
from .sanitize import is_clean

# fact column -> (label, format, True if a larger value is worse)
FACTS = {
    "global_ld_sectors_per_request": ("global-load sectors/request (ncu)", "{:.2f}", True),
    "bank_conflicts_per_shared_ld": ("bank conflicts per shared load (ncu)", "{:.2f}", True),
    "fma_per_lds": ("FFMA per LDS (SASS main loop)", "{:.2f}", False),
    "occupancy": ("theoretical occupancy", "{:.0%}", False),
    "achieved_occupancy_pct": ("achieved occupancy % (ncu)", "{:.1f}", False),
    "dram_throughput_pct": ("DRAM throughput % of peak (ncu)", "{:.1f}", None),
    "registers": ("registers/thread", "{:.0f}", None),
    "flop_per_byte": ("flop per global byte (seed's ratio)", "{:.2f}", False),
}


def progression_table(df: pd.DataFrame, hw: pd.DataFrame, registry: Registry, size: int) -> pd.DataFrame:
    at = at_size(df, size, verified=True)
    at = at[at["variant"].map(lambda v: registry[v].is_step)]
    med = at.groupby("variant")["gflops"].median()
    hw = hw[hw["dtype"] == "float32"].set_index("variant")
    rows = []
    for v in registry.values():
        if not v.is_step or v.id not in med:
            continue
        row = {"step": v.title, "variant": v.id, "gflops": med[v.id]}
        for col in list(FACTS) + ["sanitizer"]:
            if col in hw.columns and v.id in hw.index:
                row[col] = hw.at[v.id, col]
        rows.append(row)
    table = pd.DataFrame(rows, columns=["step", "variant", "gflops"] if not rows else None)
    table["speedup"] = table["gflops"] / table["gflops"].shift(1)
    return table


def slower_steps(table: pd.DataFrame) -> list[str]:
    """A sentence per step slower than its predecessor, naming what moved against it."""
    notes = []
    for i in range(1, len(table)):
        now, before = table.iloc[i], table.iloc[i - 1]
        if not now["speedup"] < 1:
            continue
        moved = []
        for col, (label, fmt, worse_if_larger) in FACTS.items():
            if col not in table or worse_if_larger is None or pd.isna(now[col]) or pd.isna(before[col]):
                continue
            got_worse = now[col] > before[col] if worse_if_larger else now[col] < before[col]
            if got_worse and abs(now[col] - before[col]) > 0.05 * max(abs(before[col]), 1e-9):
                moved.append(f"{label} {fmt.format(before[col])} -> {fmt.format(now[col])}")
        why = "; ".join(moved) if moved else "none of the recorded counters moved against it"
        notes.append(f"**{now['step']}** is slower than **{before['step']}** (×{now['speedup']:.2f}): {why}.")
    return notes


def markdown(table: pd.DataFrame, gpu_name: str, size: int, level: int = 1) -> str:
    """The table and the notes on slower steps; `level`: the heading's level."""
    cols = [c for c in FACTS if c in table]
    text_cols = ["sanitizer"] if "sanitizer" in table else []
    head = ["step", "GFLOP/s", "speedup"] + [FACTS[c][0] for c in cols] + ["compute-sanitizer"] * len(text_cols)
    lines = [f"{'#' * level} Optimisation progression at {size}×{size}×{size}, float32, on {gpu_name}", "",
             "Median of the timed launches; speedup over the step before. Counters marked ncu are "
             "Nsight Compute's, for one launch (see hardware.csv for the size).", "",
             "| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for _, r in table.iterrows():
        cells = [r["step"], f"{r['gflops']:,.0f}", "" if pd.isna(r["speedup"]) else f"×{r['speedup']:.2f}"]
        cells += ["" if pd.isna(r[c]) else FACTS[c][1].format(r[c]) for c in cols]
        cells += ["" if pd.isna(r[c]) else (str(r[c]) if is_clean(r[c]) else f"**{r[c]}**") for c in text_cols]
        lines.append("| " + " | ".join(cells) + " |")
    notes = slower_steps(table)
    lines += ["", f"{'#' * (level + 1)} Steps slower than the one before", ""]
    lines += [f"- {n}" for n in notes] if notes else ["Every step is faster than the one before."]
    return "\n".join(lines) + "\n"
