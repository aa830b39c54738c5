"""The figure of what explains each step: resources, the instruction mix and the profiler's counters."""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from ...study.counters import with_derived
from ..committed import Study
from .style import palette, placeholder, save, value_label


def hardware(study: Study, stem: Path) -> list[Path]:
    """Per step: FMA per shared load, occupancy, and the ncu counters if present."""
    sns.set_theme(style="whitegrid", context="notebook")
    registry, gpu_name = study.registry, study.gpu["gpu_name"]
    pal = palette(registry)
    hw = with_derived(study.hardware)
    hw = study.steps_only(hw[hw["dtype"] == "float32"]).copy()
    hw["title"] = hw["variant"].map(lambda v: registry[v].title)
    hw = hw.sort_values("variant", key=lambda s: s.map(registry.course))   # the course's order
    if hw.empty:
        return placeholder("no GPU steps in this study", stem)
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
    nrows = math.ceil(len(panels) / (6 if len(panels) > 8 else 4))
    ncols = math.ceil(len(panels) / nrows)   # up to six a row (four for a few panels), the rows evenly filled
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 0.26 * len(hw) * nrows + 1.6 * nrows + 0.6),
                             squeeze=False)
    for ax, (col, label) in zip(axes.flat, panels):
        sns.barplot(data=hw, y="title", x=col, hue="title", palette=pal, ax=ax, legend=False)
        ax.set_title(label, fontsize=10)
        ax.set_xlabel("")
        ax.set_ylabel("")
        if ax is not axes[ax.get_subplotspec().rowspan.start, 0]:
            ax.set_yticklabels([])
        for container in ax.containers:
            ax.bar_label(container, labels=[value_label(v) for v in container.datavalues], fontsize=8, padding=2)
        for y, value in enumerate(hw[col]):   # a step without the counter says so, not an empty row
            if pd.isna(value):
                ax.text(0, y, " n/a", va="center", ha="left", fontsize=8, color="0.4")
        ax.margins(x=0.25)
        top = 100 if "%" in label else 1 if col == "sm_balance" else None   # a percentage ends at 100, a ratio at 1
        if top is not None:   # room for the labels past it, but no tick there
            ax.set_xticks([t for t in ax.get_xticks() if 0 <= t <= min(top, ax.get_xlim()[1])])
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    height = fig.get_figheight()   # the title a fixed distance from the top, above the panels' titles
    fig.suptitle(f"What explains each step, on {gpu_name} (float32; ncu at one size where measured)", fontsize=12,
                 y=1 - 0.12 / height, va="top")
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.5 / height))
    return save(fig, stem)
