"""The figure of what explains each step: resources, the instruction mix and the profiler's counters."""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib.pyplot as plt
import matplotlib.ticker
import pandas as pd
import seaborn as sns

from ...study.counters import with_derived
from ..committed import Study
from .style import palette, placeholder, save, value_label


def hardware(study: Study, stem: Path, chapter: str) -> list[Path]:
    """Per step of one chapter: FMA per shared load, occupancy, and the ncu counters if present. A panel per
    counter, its rows the chapter's steps by number: each counter on the chapter's own scale (on one scale for
    every chapter, FP8's 63.5 FFMA per LDS squeezed the FP32 steps' 0.8 to 16 into a corner)."""
    missing = study.chapter_missing(chapter)
    hw = with_derived(study.hardware)
    hw = study.chapter_rows(hw[hw["dtype"] == "float32"], chapter).copy()
    if missing or hw.empty:
        return placeholder(missing or "no GPU steps in this study", stem)
    sns.set_theme(style="whitegrid", context="notebook")
    registry, gpu_name = study.registry, study.gpu["gpu_name"]
    pal = palette(registry)
    hw["title"] = hw["variant"].map(lambda v: registry[v].title)
    hw["number"] = hw["variant"].map(lambda v: registry[v].number)
    hw = hw.sort_values("variant", key=lambda s: s.map(registry.course))   # the course's order
    hw["occupancy_pct"] = 100 * hw["occupancy"]
    panels = [("fma_per_lds", "FFMA per shared load (LDS)\nin the main loop (SASS)"),
              ("occupancy_pct", "theoretical occupancy, %\n(resident warps / max)"),
              ("flop_per_byte", "compute-to-memory ratio\n(flop per global byte, seed's)"),
              ("reuse_per_ffma", "operands from the reuse cache\nper FFMA (SASS)"),
              ("bar_per_kffma", "barriers per 1000 FFMA\nin the main loop (SASS)"),
              ("instructions_per_fma", "main-loop instructions\nper FMA (SASS)")]
    ncu_panels = [("global_ld_sectors_per_request", "global-load sectors\nper request (ncu)"),
                  ("bank_conflicts_per_shared_ld", "shared-load bank conflicts\nper instruction (ncu)"),
                  ("achieved_occupancy_pct", "achieved occupancy, %\n(ncu)"),
                  ("dram_throughput_pct", "DRAM throughput,\n% of peak (ncu)"),
                  ("l2_hit_pct", "L2 hit rate, %\n(ncu)"),
                  ("l2_throughput_pct", "L2 throughput,\n% of peak (ncu)"),
                  ("fma_pipe_pct", "FMA pipe busy, %\n(ncu)"),
                  ("tensor_pipe_pct", "tensor pipe busy, %\n(ncu)"),
                  ("stall_long_scoreboard", "long-scoreboard stall (global loads),\nwarps per issued instr. (ncu)"),
                  ("stall_short_scoreboard", "short-scoreboard stall (shared loads),\nwarps per issued instr. (ncu)"),
                  ("stall_barrier", "barrier stall,\nwarps per issued instr. (ncu)"),
                  ("stall_dispatch", "dispatch stall,\nwarps per issued instr. (ncu)"),
                  ("sm_balance", "SM balance: mean SM's active\ncycles / the busiest's (ncu)")]
    panels = [p for p in panels if p[0] in hw and hw[p[0]].notna().any()]
    panels += [p for p in ncu_panels if p[0] in hw and hw[p[0]].notna().any()]
    ncols = 4
    nrows = math.ceil(len(panels) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(10, (0.17 * len(hw) + 0.95) * nrows + 0.6), squeeze=False,
                             layout="constrained")
    colours = {row.number: pal[row.title] for row in hw.itertuples()}
    for ax, (col, label) in zip(axes.flat, panels):
        sns.barplot(data=hw, y="number", x=col, hue="number", palette=colours, ax=ax, legend=False)
        ax.set_title(label, fontsize=9)
        ax.set_xlabel("")
        ax.set_ylabel("step" if ax is axes[ax.get_subplotspec().rowspan.start, 0] else "")
        ax.tick_params(axis="both", labelsize=9)
        for container in ax.containers:
            ax.bar_label(container, labels=[value_label(v) for v in container.datavalues], fontsize=8, padding=2)
        for y, value in enumerate(hw[col]):   # a step without the counter says so, not an empty row
            if pd.isna(value):
                ax.text(0, y, " n/a", va="center", ha="left", fontsize=8, color="0.4")
        ax.margins(x=0.3)
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(3))   # three ticks: a panel is 2.5 inches wide
        top = 100 if "%" in label else 1 if col == "sm_balance" else None   # a percentage ends at 100, a ratio at 1
        if top is not None and ax.get_xlim()[1] >= top:   # room for the labels past it, but no tick there
            ax.set_xticks([0, top / 2, top])
        elif top is not None:
            ax.set_xticks([t for t in ax.get_xticks() if 0 <= t <= ax.get_xlim()[1]])
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    fig.suptitle(f"What explains each step of {registry.chapters[chapter].title}, on {gpu_name}\n(float32 inputs; "
                 "ncu at one size where measured; rows: the steps by number)", fontsize=11)
    return save(fig, stem)
