"""The figure of the energy phase: each GPU variant back to back, its speed against the power it draws."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from ..committed import Study
from ..results import at_size
from .style import (freeze_layout, group_close, guide_label, palette, place_labels, placeholder, plain_log_ticks,
                    point_label, save)

LARGEST = 8192   # the size at the power cap, drawn beside the progression's where the study has it


def power(study: Study, stem: Path, chapter: str) -> list[Path]:
    """One chapter's steps and their reference run back to back (the energy phase, at the power cap): the
    sustained GFLOP/s against the whole GPU's mean power, at the progression's size and at 8192, with the
    GPU's power limit and lines of equal GFLOP per joule (diagonals on these log-log axes). Launch-bound runs
    (their energy would be idle) are left out and counted."""
    s = study.summary
    missing = study.chapter_missing(chapter)
    if not missing and ("mean_power_w" not in s or s["mean_power_w"].isna().all()):
        missing = ("no energy in this study: measured before the energy phase (energy.csv)" if "mean_power_w" not in s
                   else "no energy in this study: " + "; ".join(sorted(set(s["energy_note"].dropna()) - {""})))
    if missing:
        return placeholder(missing, stem)
    registry, gpu, pal = study.registry, study.gpu, palette(study.registry)
    precision = registry.chapters[chapter].precision
    reference = getattr(registry.reference(precision), "id", None)
    sizes = [study.size] + [LARGEST] * bool(LARGEST != study.size and (s["M"] == LARGEST).any())
    mine = pd.concat([at_size(s, size, verified=True) for size in sizes])
    mine = mine[mine["variant"].isin([v.id for v in registry.steps(chapter)] + [reference])]
    if mine["mean_power_w"].isna().all():
        return placeholder(f"no energy of this chapter at {' or '.join(f'{n}³' for n in sizes)}", stem)
    sns.set_theme(style="whitegrid", context="notebook")
    fig, row = plt.subplots(1, len(sizes), figsize=(10, 5.2), squeeze=False, sharex=True, sharey=True,
                            layout="constrained")
    row = row[0]
    limit = gpu.get("power_limit_w")
    order = {registry[vid].title: rank for vid, rank in registry.course.items()}
    to_label, guides = {}, {}   # the points' labels, and the guides' (drawn once the axes are laid out)
    powers, speeds = mine["mean_power_w"].dropna(), mine.loc[mine["mean_power_w"].notna(), "sustained_gflops"]
    x_low, x_high = min(powers.min(), limit or np.inf) / 1.12, max(powers.max(), limit or 0) * 1.12
    y_low, y_high = speeds.min() / 1.6, speeds.max() * 1.6
    for ax, size in zip(row, sizes):
        at = mine[mine["M"] == size]
        drawn = at[at["mean_power_w"].notna()]
        for r in drawn.itertuples():
            v = registry[r.variant]
            ax.scatter([r.mean_power_w], [r.sustained_gflops], s=60, color=pal[v.title], edgecolor="black",
                       linewidth=0.5, zorder=5, label=v.title)
            to_label.setdefault(ax, []).append((r.mean_power_w, r.sustained_gflops, point_label(v.title, v.is_step)))
        ax.set_xscale("log")
        ax.set_yscale("log")
        for efficiency in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000):   # GFLOP/s = GFLOP/J x W
            if y_low < efficiency * x_high and efficiency * x_low < y_high:
                ends = ((x_low, efficiency * x_low), (x_high, efficiency * x_high))
                line, = ax.plot(*zip(*ends), color="grey", linestyle=":", linewidth=1, zorder=1)
                guides.setdefault(ax, []).append((f"{efficiency:,} GFLOP/J", ends, line, dict(
                    fontsize=9, color="dimgrey", ha="center", va="bottom", rotation_mode="anchor")))
        ax.set_xlim(x_low, x_high)
        ax.set_ylim(y_low, y_high)
        if limit:
            ax.axvline(limit, color="red", linestyle="--", linewidth=1.5, zorder=2)
        ax.set_xlabel("the GPU's mean power, W (log scale)")
        ax.set_ylabel(f"{precision.label}: GFLOP/s back to back, log scale" if ax is row[0] else "")
        left_out = len(at) - len(drawn)
        ax.set_title(f"{size}×{size}×{size}" + (f" ({left_out} launch-bound: no energy)" if left_out else ""),
                     fontsize=11)
    plain_log_ticks(row[0].yaxis)
    plain_log_ticks(row[0].xaxis)   # from the GPU's own range of power, whatever its limit
    handles, labels = [], []
    for ax in row:   # every variant once, in the registry's order
        h, l = ax.get_legend_handles_labels()
        handles, labels = handles + h, labels + l
    ranked = sorted(dict(zip(labels, handles)).items(), key=lambda item: order[item[0]])
    fig.legend([h for _, h in ranked], [t for t, _ in ranked], fontsize=9, loc="outside lower center",
               frameon=False, ncol=2)
    fig.suptitle(f"{registry.chapters[chapter].title} back to back at the power cap, float32 inputs, on "
                 f"{gpu['gpu_name']}:\nspeed against power from NVML's energy counter (label: step number); dotted: "
                 "equal GFLOP per joule", fontsize=11)
    freeze_layout(fig)
    for ax, points in to_label.items():   # where the points lie is known once the axes are laid out
        points = group_close(ax, points)
        drawn = [limit_label(ax, limit, points)] if limit else []
        for text, ends, line, style in guides.get(ax, []):
            (x0, y0), (x1, y1) = ax.transData.transform(ends)   # along its line, which is straight on the screen
            label = guide_label(ax, text, *ends, points + outline(ax, drawn),
                                rotation=np.degrees(np.arctan2(y1 - y0, x1 - x0)), **style)
            if label is None:
                line.remove()   # a line with no room for its label is left out, not left unnamed
            drawn.append(label)
        place_labels(ax, points, fontsize=9, avoid=tuple(d for d in drawn if d is not None))
    return save(fig, stem)


def limit_label(ax, limit: float, points: list):
    """The power limit's label, written up its line just left of it, from the lowest place where it passes
    beside no point (else where it passes beside the fewest)."""
    label = ax.annotate(f"power limit {limit:.0f} W", (limit, 0.02), xycoords=("data", "axes fraction"), ha="left",
                        va="bottom", rotation=90, rotation_mode="anchor", fontsize=9, color="red", xytext=(-3, 0),
                        textcoords="offset points")
    extent, box = label.get_window_extent(ax.figure.canvas.get_renderer()), ax.get_window_extent()
    screen = ax.transData.transform([(x, y) for x, y, *_ in points])
    line_x = ax.transData.transform((limit, 1))[0]
    beside = screen[(screen[:, 0] > line_x - extent.width - 12) & (screen[:, 0] < line_x + 8)][:, 1]
    starts = np.linspace(box.y0 + 0.02 * box.height, box.y1 - extent.height - 4, 20)
    crowded = [int(((beside > y - 8) & (beside < y + extent.height + 8)).sum()) for y in starts]
    label.xy = (limit, (starts[int(np.argmin(crowded))] - box.y0) / box.height)
    return label


def outline(ax, texts: list) -> list:
    """Points (data coordinates) along each drawn text's box, for the next guide's label to keep clear of."""
    renderer, to_data = ax.figure.canvas.get_renderer(), ax.transData.inverted()
    points = []
    for text in texts:
        if text is not None:
            box = text.get_window_extent(renderer)
            grid = [(x, y) for x in np.linspace(box.x0, box.x1, 6) for y in np.linspace(box.y0, box.y1, 6)]
            points += [(*to_data.transform(xy), "") for xy in grid]
    return points
