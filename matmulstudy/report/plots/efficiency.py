"""The figures of efficiency: each variant as a fraction of its reference and of the peak, and each step
under the roof of its precision."""

from __future__ import annotations

from pathlib import Path

import matplotlib.colors
import matplotlib.pyplot as plt
import matplotlib.ticker
import numpy as np
import pandas as pd
import seaborn as sns

from ... import precisions
from ..committed import Study
from ..results import at_size, fraction_of_cublas
from .style import (freeze_layout, group_close, note_below, palette, place_labels, placeholder, plain_log_ticks,
                    point_label, save, shape_label, titles)


def efficiency(study: Study, stem: Path, chapter: str) -> list[Path]:
    """Heatmaps of one chapter's steps and their reference, per shape: each median as a fraction of cuBLAS in the
    chapter's precision (above), and of that precision's peak (below)."""
    missing = study.chapter_missing(chapter)
    if not study.gpu.get("fp32_peak_gflops"):
        missing = "no GPU in this study: no cuBLAS or peak to compare with"
    if missing:
        return placeholder(missing, stem)
    sns.set_theme(style="white", context="notebook")
    registry, gpu, summary = study.registry, study.gpu, study.summary
    precision = registry.chapters[chapter].precision
    reference = registry.reference(precision)
    s = summary[(summary["dtype"] == "float32") & summary["variant"].isin(
        [v.id for v in registry.steps(chapter)] + [getattr(reference, "id", None)])]
    s = s.assign(frac_of_cublas=fraction_of_cublas(s, registry),   # as this code defines it, for older studies too
                 frac_of_peak=s["median_gflops"] / gpu[precision.peak_key] if gpu.get(precision.peak_key) else np.nan,
                 shape=[shape_label(*t) for t in zip(s.M, s.N, s.K)], flop=2.0 * s.M * s.N * s.K).sort_values("flop")
    shapes = list(dict.fromkeys(s["shape"]))
    rows = titles(s, registry)
    panels = [("frac_of_cublas", f"of {precision.reference_name}, same shape"),
              ("frac_of_peak", f"of the GPU's {precision.label} peak")]
    height = max(2.6, 0.3 * len(rows) + 1.6)   # a chapter of one step: room for the colour bar's ticks
    fig, axes = plt.subplots(2, 1, figsize=(10, 2 * height + 0.8), layout="constrained")
    # log10 of the fraction, diverging at 1 (white): below it red, above it blue, so 89% and 219% read apart
    norm = matplotlib.colors.TwoSlopeNorm(vmin=-3.0, vcenter=0.0, vmax=np.log10(5.0))
    ticks = [0.001, 0.01, 0.1, 0.5, 1.0, 2.0, 5.0]
    failed = s[~s["verified"].astype(bool)].pivot_table(index="title", columns="shape", values="samples",
                                                         aggfunc="first").reindex(index=rows, columns=shapes)
    for ax, (col, title) in zip(axes, panels):
        table = s.pivot_table(index="title", columns="shape", values=col, aggfunc="first", dropna=False)
        table = table.reindex(index=rows, columns=shapes)
        labels = table.map(lambda v: "" if pd.isna(v) else (f"{v:.0%}" if v >= 0.095 else f"{v:.1%}"
                                                             if v >= 0.001 else "<0.1%"))
        shade = np.log10(table.astype(float).clip(lower=1e-3, upper=5.0))
        sns.heatmap(shade, ax=ax, cmap="RdBu", norm=norm, annot=labels, fmt="", annot_kws={"fontsize": 9},
                    cbar=False, linewidths=0.5, linecolor="lightgrey")
        for i, j in zip(*np.nonzero(failed.notna().to_numpy())):   # seaborn leaves empty cells unlabelled
            ax.text(j + 0.5, i + 0.5, "failed", ha="center", va="center", color="red", fontsize=9,
                    fontweight="bold")
        ax.set_title(title, fontsize=11)
        ax.set_xlabel("size n (M = N = K) or shape M×N×K")
        ax.set_ylabel("")
        ax.tick_params(axis="x", labelrotation=30, labelsize=9)
        ax.tick_params(axis="y", labelsize=9)
        for label in ax.get_xticklabels():
            label.set_ha("right")
    bar = fig.colorbar(axes[0].collections[0], ax=axes, ticks=np.log10(ticks), shrink=0.8,   # one for both panels
                       label="fraction (log colour scale, white at 100%; past 500% one colour)")
    bar.set_ticklabels([f"{t:.1%}" if t < 0.01 else f"{t:.0%}" for t in ticks])
    fig.suptitle(f"Efficiency of {registry.chapters[chapter].title}, float32 inputs, on {gpu['gpu_name']}:\n"
                 "median GFLOP/s over the reference (empty: not measured)", fontsize=11)
    return save(fig, stem)


def roofline(study: Study, stem: Path, chapter: str) -> list[Path]:
    """One chapter's steps and their reference at their arithmetic intensity, under the measured bandwidth and
    the peak of the chapter's precision.

    Two intensities per step where both are known, joined by a line: the
    seed's model, flop per byte loaded from global memory (hollow), and flop
    per byte actually read from DRAM, measured by ncu on one launch at this
    size (filled): the distance between them is what the caches saved.
    """
    missing = study.chapter_missing(chapter)
    if not study.gpu.get("fp32_peak_gflops"):
        missing = "no GPU in this study: no peak or bandwidth to draw a roof with"
    precision = study.registry.chapters[chapter].precision if not missing else None
    points = [] if missing else _roofline_points(study, precision, chapter)
    if missing or not points or not study.gpu.get(precision.peak_key):
        return placeholder(missing or f"no point of this chapter under a roof: no {precision.label} peak, or no "
                           "intensity known", stem)
    sns.set_theme(style="whitegrid", context="notebook")
    fig, ax = plt.subplots(figsize=(10, 6.5), layout="constrained")
    labels, hollow, above = _roofline_panel(ax, study, precision, points)
    ax.set_title(f"Roofline of {study.registry.chapters[chapter].title} at {study.size}×{study.size}×{study.size}, "
                 f"float32 inputs,\non {study.gpu['gpu_name']}: {precision.arithmetic}", fontsize=11)
    freeze_layout(fig)
    place_labels(ax, group_close(ax, labels), fontsize=9, others=hollow)   # where the points lie, once laid out
    if above:
        note_below(fig, "Above the roof by the seed's model (hollow): " + ", ".join(above) + ". The model counts "
                   "every load as DRAM traffic; the caches serve most of them (filled: the DRAM bytes ncu measured).")
    return save(fig, stem)


def _roofline_points(study: Study, precision: precisions.Precision, chapter: str) -> list:
    """(variant, GFLOP/s, model intensity, measured intensity) of one chapter's steps and its precision's
    reference."""
    mine = {v.id for v in study.registry.steps(chapter)} | {getattr(study.registry.reference(precision), "id", None)}
    at = at_size(study.summary, study.size, verified=True)
    hw = study.hardware[study.hardware["dtype"] == "float32"].set_index("variant")
    flop = 2.0 * study.size**3
    points = []
    for v in study.registry.values():
        if v.id not in mine or v.id not in set(at["variant"]):
            continue
        measured = None
        if "dram_bytes_read" in hw and v.id in hw.index and pd.notna(hw.at[v.id, "dram_bytes_read"]) \
                and str(hw.at[v.id, "ncu_shape"]) == f"{study.size}x{study.size}x{study.size}":
            measured = flop / float(hw.at[v.id, "dram_bytes_read"])
        if measured or v.flop_per_byte:
            points.append((v, at.loc[at.variant == v.id, "median_gflops"].iloc[0], v.flop_per_byte, measured))
    return points


def _roofline_panel(ax, study: Study, precision: precisions.Precision, points: list) -> tuple[list, list, list]:
    """One precision's roof (its peak, the measured copy bandwidth) and its variants' points; returns the labels
    to place once the figure is laid out (x, y, text), the hollow points they keep clear of (x, y), and the
    titles of the steps whose hollow point is above the roof."""
    gpu, pal = study.gpu, palette(study.registry)
    name = precision.roof
    peak, bw = gpu.get(precision.peak_key), gpu.get("copy_bandwidth_gbs")
    xs = [x for p in points for x in p[2:] if x] or [1.0]
    ys = [p[1] for p in points] or [1.0]
    ridge = peak / bw if peak and bw else None
    lo, hi = min(xs) / 3, max(xs + [ridge or 1]) * 3
    grid = np.logspace(np.log10(lo), np.log10(hi), 200)
    if ridge:
        ax.plot(grid, np.minimum(peak, bw * grid), color="black", linewidth=2,
                label=f"roof: min({name} peak {peak:,.0f} GFLOP/s,\n  measured copy bandwidth {bw / 1000:.2f} TB/s"
                      " × intensity)")
        ax.axvline(ridge, color="grey", linestyle=":", linewidth=1)
        right = ridge > np.sqrt(lo * hi)   # in the right half: its label left of the line, clear of the legend
        ax.annotate(f"ridge: {ridge:.1f} flop/byte", (ridge, peak), xytext=(-4 if right else 4, -14),
                    textcoords="offset points", fontsize=8, color="dimgrey", ha="right" if right else "left")
    above = []   # steps whose hollow point is over the roof
    labels = []  # each step's number beside its filled point (its hollow one without): the colours repeat
    hollow = []
    for v, y, model, measured in points:
        labels.append((measured or model, y, point_label(v.title, v.is_step)))
        colour = pal[v.title]
        if model and measured:
            ax.plot([model, measured], [y, y], color=colour, linewidth=1, alpha=0.6)
        if model:
            ax.scatter([model], [y], s=70, facecolor="none", edgecolor=colour, linewidth=2, zorder=5)
            hollow.append((model, y))
            if ridge and y > bw * model:   # faster than its model allows: said on the figure, below
                above.append(v.title)
        if measured:
            ax.scatter([measured], [y], s=70, color=colour, zorder=5)
        ax.scatter([], [], s=70, color=colour, label=v.title)   # one legend entry per step
    ax.scatter([], [], s=70, facecolor="none", edgecolor="grey", linewidth=2,
               label="hollow: seed's model, flop per global-memory byte")
    ax.scatter([], [], s=70, color="grey", label="filled: flop per byte read from DRAM (ncu)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(min(ys) / 3, (peak or max(ys)) * 2)
    plain_log_ticks(ax.xaxis)
    plain_log_ticks(ax.yaxis)
    ax.set_xlabel("arithmetic intensity, flop per byte (log scale)")
    ax.set_ylabel("GFLOP/s (median), log scale")
    ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    return labels, hollow, above


def best_by_size_table(study: Study) -> pd.DataFrame:
    """Each chapter's best verified step at each float32 shape of the study, as a fraction of cuBLAS in the
    chapter's precision: rows (chapter, precision, shape, M, N, K, flop, variant, frac_of_cublas), in the
    chapters' order and by each shape's flop. Empty where the study has no cuBLAS."""
    registry = study.registry
    s = study.summary[(study.summary["dtype"] == "float32") & study.summary["verified"].astype(bool)]
    s = s.assign(frac_of_cublas=fraction_of_cublas(s, registry)).dropna(subset=["frac_of_cublas"])
    rows = []
    for chapter in registry.chapters.values():
        mine = s[s["variant"].isin([v.id for v in registry.steps(chapter.id)])]
        for (M, N, K), g in mine.groupby(["M", "N", "K"]):
            best = g.loc[g["frac_of_cublas"].idxmax()]
            rows.append({"chapter": chapter.title, "precision": chapter.precision.id, "shape": shape_label(M, N, K),
                         "M": M, "N": N, "K": K, "flop": 2.0 * M * N * K, "variant": best["variant"],
                         "frac_of_cublas": best["frac_of_cublas"]})
    columns = ["chapter", "precision", "shape", "M", "N", "K", "flop", "variant", "frac_of_cublas"]
    return pd.DataFrame(rows, columns=columns)


def best_by_size(study: Study, stem: Path) -> list[Path]:
    """Where hand-written kernels win: each chapter's best step at every shape as a share of cuBLAS in its own
    precision, the shapes in order of their work, 100% drawn; each point labelled with its step's number."""
    table = best_by_size_table(study)
    if table.empty:
        return placeholder("no cuBLAS in this study: no share of it to draw", stem)
    sns.set_theme(style="whitegrid", context="notebook")
    shapes = list(dict.fromkeys(table.sort_values(["flop", "M", "N"])["shape"]))
    x = {shape: i for i, shape in enumerate(shapes)}
    chapters = list(dict.fromkeys(table["chapter"]))
    colours = dict(zip(chapters, sns.color_palette("Dark2", len(chapters))))
    precision_of = {c.title: c.precision for c in study.registry.chapters.values()}
    fig, ax = plt.subplots(figsize=(10, 6.2), layout="constrained")
    points = []   # (x, y, number, colour): the step numbers, laid out once the axes are scaled
    for chapter in chapters:
        mine = table[table["chapter"] == chapter].assign(at=lambda d: d["shape"].map(x)).sort_values("at")
        label = precisions.chapter_name(chapter, precision_of[chapter])
        ax.plot(mine["at"], mine["frac_of_cublas"] * 100, marker="o", color=colours[chapter], label=label)
        points += [(r.at, r.frac_of_cublas * 100, study.registry[r.variant].number, colours[chapter])
                   for r in mine.itertuples()]
    ax.axhline(100, color="black", linewidth=1, linestyle="--", label="cuBLAS in the chapter's precision")
    ax.set_yscale("log", base=2)
    ticks = [t for t in (6.25, 12.5, 25, 50, 100, 200, 400) if table["frac_of_cublas"].min() * 50 <= t
             <= table["frac_of_cublas"].max() * 200]
    ax.set_yticks(ticks, [f"{t:g}%" for t in ticks])
    ax.yaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.set_xlim(-0.5, len(shapes) - 0.3)
    ax.set_xticks(range(len(shapes)), shapes, rotation=30, ha="right", fontsize=9)
    ax.set_xlabel("size n (M = N = K) or shape M×N×K, in order of the work (2·M·N·K)")
    ax.set_ylabel("best step's GFLOP/s as % of cuBLAS's, log2 scale")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=9, title="best step of")
    ax.set_title(f"Each chapter's best step at every shape, on {study.gpu['gpu_name']}:\nmedians, every result "
                 "verified; the number is the step's", fontsize=11)
    freeze_layout(fig)
    _number_points(ax, points)   # after the layout: the numbers are stacked where the points finally lie
    slow = _reference_dips(study, table)
    if slow:
        note_below(fig, "Far above 100% where the reference is the slow one: " + "; ".join(slow) + ".")
    return save(fig, stem)


def _reference_dips(study: Study, table: pd.DataFrame, above: float = 1.5) -> list[str]:
    """Where a chapter's best step is more than `above` times its reference, what the reference runs at there
    and at the square size of the nearest work: 'at 4096×4096×4095 cuBLAS BF16 runs at 178,000 GFLOP/s, 24% of
    its 726,000 at 4096'."""
    s = study.summary[(study.summary["dtype"] == "float32") & study.summary["verified"].astype(bool)]
    out = []
    for (precision_id, shape), rows in table[table["frac_of_cublas"] > above].groupby(["precision", "shape"],
                                                                                        sort=False):
        reference = study.registry.reference(precisions.get(precision_id))
        mine = s[s["variant"] == getattr(reference, "id", None)]
        r = rows.iloc[0]
        here = mine[(mine.M == r.M) & (mine.N == r.N) & (mine.K == r.K)]["median_gflops"]
        square = mine[(mine.M == mine.N) & (mine.N == mine.K)]
        if here.empty or square.empty:
            continue
        near = square.iloc[(np.log(2.0 * square.M * square.N * square.K) - np.log(r.flop)).abs().argmin()]
        out.append(f"at {shape}, {reference.title.split(' (')[0]} runs at {here.iloc[0]:,.0f} GFLOP/s, "
                   f"{here.iloc[0] / near.median_gflops:.0%} of its {near.median_gflops:,.0f} at {near.M}")
    return out


def _number_points(ax, points: list, gap_pt: float = 10.0) -> None:
    """Each point's step number just right of it, on white over the lines; where points of one shape lie closer
    than a line of text, their numbers are stacked upwards in the points' order, a line apart, so that none
    covers another."""
    ax.figure.canvas.draw()   # the axes' scales and limits as drawn
    to_pixels, gap = ax.transData, gap_pt * ax.figure.dpi / 72
    for at in sorted({p[0] for p in points}):
        column = sorted((p for p in points if p[0] == at), key=lambda p: p[1])
        placed = -float("inf")
        for _, y, number, colour in column:
            py = to_pixels.transform((at, y))[1]
            placed = max(py, placed + gap)
            ax.annotate(number, (at, y), xytext=(6, (placed - py) * 72 / ax.figure.dpi), textcoords="offset points",
                        va="center", fontsize=9, color=colour, zorder=5,   # over the lines, on white
                        bbox={"boxstyle": "square,pad=0.05", "fc": "white", "ec": "none", "alpha": 0.9})
