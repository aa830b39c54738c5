"""The figure of the energy phase: each GPU variant back to back, its speed against the power it draws."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import matplotlib.ticker
import numpy as np
import seaborn as sns

from ... import precisions
from ..committed import Study
from ..results import at_size
from .style import palette, place_labels, placeholder, plain_log_ticks, point_label, save

LARGEST = 8192   # the size at the power cap, drawn beside the progression's where the study has it
MARKERS = ("o", "s", "D", "^")   # a marker per precision, in the table's order
MARKER_NAMES = {"o": "circles", "s": "squares", "D": "diamonds", "^": "triangles"}


def power(study: Study, stem: Path) -> list[Path]:
    """Each GPU variant run back to back (the energy phase, at the power cap): its sustained GFLOP/s against
    the whole GPU's mean power, at the progression's size and at 8192, with the GPU's power limit and lines
    of equal GFLOP per joule (diagonals on these log-log axes). Launch-bound runs (their energy would be idle)
    are left out and counted."""
    s = study.summary
    if "mean_power_w" not in s or s["mean_power_w"].isna().all():
        why = ("no energy in this study: measured before the energy phase (energy.csv)" if "mean_power_w" not in s
               else "no energy in this study: " + "; ".join(sorted(set(s["energy_note"].dropna()) - {""})))
        return placeholder(why, stem)
    sns.set_theme(style="whitegrid", context="notebook")
    registry, gpu, pal = study.registry, study.gpu, palette(study.registry)
    sizes = [study.size] + [LARGEST] * bool(LARGEST != study.size and (s["M"] == LARGEST).any())
    fig, axes = plt.subplots(1, len(sizes), figsize=(7.5 * len(sizes), 6.5), squeeze=False, sharey=True)
    limit = gpu.get("power_limit_w")
    to_label = {}
    for ax, size in zip(axes[0], sizes):
        at = at_size(s, size, verified=True)
        at = at[at["variant"].map(lambda v: registry[v].is_gpu)]
        drawn = at[at["mean_power_w"].notna()]
        for marker, p in zip(MARKERS, precisions.TABLE):
            for r in drawn[drawn["precision"] == p.id].itertuples():
                v = registry[r.variant]
                ax.scatter([r.mean_power_w], [r.sustained_gflops], s=60, marker=marker, color=pal[v.title],
                           edgecolor="black", linewidth=0.5, zorder=5, label=v.title)
                to_label.setdefault(ax, []).append((r.mean_power_w, r.sustained_gflops,
                                                    point_label(v.title, v.is_step)))
        ax.set_xscale("log")
        ax.set_yscale("log")
        x_low, x_high = min(drawn["mean_power_w"].min(), limit or np.inf) / 1.3, max(drawn["mean_power_w"].max(), limit or 0) * 1.3
        y_low, y_high = drawn["sustained_gflops"].min() / 2, drawn["sustained_gflops"].max() * 2
        watts = np.array([x_low, x_high])
        for efficiency in (1, 10, 100, 1000, 10000):   # GFLOP/s = GFLOP/J x W: a diagonal
            if y_low < efficiency * x_high and efficiency * x_low < y_high:
                ax.plot(watts, efficiency * watts, color="grey", linestyle=":", linewidth=1)
                x = min(x_high / 1.15, y_high / 2.5 / efficiency)   # inside the axes, under the title
                x, ha = (x, "right") if x > x_low * 1.5 else (x_low * 1.05, "left")   # else where it comes in
                ax.annotate(f"{efficiency:,} GFLOP/J", (x, efficiency * x), fontsize=8, color="dimgrey",
                            ha=ha, va="bottom", rotation=35)
        ax.set_xlim(x_low, x_high)
        ax.set_ylim(y_low, y_high)
        plain_log_ticks(ax.yaxis)
        ax.xaxis.set_major_locator(matplotlib.ticker.FixedLocator([100, 200, 300, 400, 500, 700, 1000]))
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}"))
        if limit:
            ax.axvline(limit, color="red", linestyle="--", linewidth=1.5)
            ax.annotate(f"power limit {limit:.0f} W", (limit, 0.03), xycoords=("data", "axes fraction"), ha="right",
                        va="bottom", rotation=90, fontsize=9, color="red", xytext=(-3, 0), textcoords="offset points")
        ax.set_xlabel("the GPU's mean power back to back, W (log scale)")
        ax.set_ylabel("GFLOP/s back to back, log scale" if ax is axes[0, 0] else "")
        left_out = len(at) - len(drawn)
        ax.set_title(f"{size}×{size}×{size}" + (f" ({left_out} launch-bound: no energy)" if left_out else ""),
                     fontsize=11)
    handles, labels = axes[0, -1].get_legend_handles_labels()   # every variant once, in the registry's order
    order = {v.title: v.order for v in registry.values()}
    ranked = sorted(dict(zip(labels, handles)).items(), key=lambda item: order[item[0]])
    axes[0, -1].legend([h for _, h in ranked], [t for t, _ in ranked], fontsize=8, loc="upper left",
                       bbox_to_anchor=(1.01, 1), frameon=False, title_fontsize=8,
                       title="; ".join(f"{MARKER_NAMES[m]}: {p.label}" for m, p in zip(MARKERS, precisions.TABLE)
                                       if (s["precision"] == p.id).any()))   # the precisions this study has
    fig.suptitle(f"Each GPU variant back to back at the power cap, float32 inputs, on {gpu['gpu_name']}\n"
                 "speed against power from NVML's energy counter (label: step number); dotted: equal GFLOP per joule",
                 fontsize=11)
    fig.tight_layout()
    for ax, points in to_label.items():   # where the points lie is known once the axes are laid out
        place_labels(ax, points)
    return save(fig, stem)
