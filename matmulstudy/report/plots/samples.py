"""The figures of the samples themselves: GFLOP/s against size, every timed sample's deviation from its
median, and each measurement's verification margin."""

from __future__ import annotations

import inspect
import itertools
from pathlib import Path

import matplotlib.pyplot as plt
import matplotlib.ticker
import numpy as np
import pandas as pd
import seaborn as sns

from ... import precisions
from ..committed import Study
from ..results import at_size, failure_kind
from .style import IQR, mark_failures, markers, palette, placeholder, plain_log_ticks, save, shape_label, titles


def size_sweep(study: Study, stem: Path) -> list[Path]:
    """GFLOP/s against size, every variant: a row of panels per chapter (its steps, with the baselines and
    references in every row for scale), square sizes left, other shapes right.

    A chapter of 14 steps has more variants than a palette has colours that read apart: each variant is drawn
    with a marker of its own as well (style.markers). Right, each variant has a row of its own and each shape a
    grey of its own, so that no two variants' points fall on each other (at 0.6 of a row apart, 19 variants of
    one chapter did); the rows' labels, each with its variant's line and marker, are the left panel's key."""
    sns.set_theme(style="whitegrid", context="notebook")
    registry, gpu = study.registry, study.gpu["gpu_name"]
    pal, marks = palette(registry), markers(registry)
    df = study.counted[study.counted["dtype"] == "float32"]
    present = set(df["variant"])
    context = [v.id for v in registry.values() if not v.is_step and v.id in present]
    rows = [(c.title, [v.id for v in registry.steps(c.id) if v.id in present]) for c in registry.chapters.values()]
    rows = [(title, ids) for title, ids in rows if ids] or [("every variant", [])]
    ncols = 2 if not df[~_square(df)].empty else 1
    height = max(4.0, 0.24 * max(len(ids) + len(context) for _, ids in rows) + 1.2)   # a row a variant, right
    width = 6.5 + (8.5 if ncols == 2 else 3.8)   # the square panel, then the other shapes' with their labels
    fig, axes = plt.subplots(len(rows), ncols, figsize=(width, height * len(rows)), squeeze=False,
                             gridspec_kw={"width_ratios": [3, 2][:ncols]})
    for row, (title, steps) in enumerate(rows):
        ids = steps + context
        shown = df[df["variant"].isin(ids)]
        order = titles(shown, registry)
        # baselines and references: every row draws them, the first marks their failures
        failing = shown if row == 0 else shown[shown["variant"].isin(steps)]
        _sweep_square(axes[row, 0], shown[_square(shown)], failing[_square(failing)], order, pal, marks)
        axes[row, 0].set_title(f"{title}: square matrices", fontsize=11)
        handles, labels = axes[row, 0].get_legend_handles_labels()
        axes[row, 0].get_legend().remove()
        if ncols == 2:
            _sweep_other(axes[row, 1], shown[~_square(shown)], failing[~_square(failing)], order, pal, marks)
            axes[row, 1].set_title(f"{title}: other shapes, a row per variant", fontsize=11)
            failed = [(h, t) for h, t in zip(handles, labels) if t not in order]   # the red crosses' entry
            handles, labels = axes[row, 1].get_legend_handles_labels()
            handles, labels = handles + [h for h, _ in failed], labels + [t for _, t in failed]
        axes[row, -1].legend(handles, labels, loc="center left", bbox_to_anchor=(1.02, 0.5), frameon=False,
                             fontsize=9, title="shape M×N×K" if ncols == 2 else None, title_fontsize=9)
    fig.suptitle(f"Matrix multiplication, float32, on {gpu}: median of the timed runs, "
                 "band/bars = interquartile range", fontsize=12)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.3 / fig.get_figheight()))   # the title above the first row's
    return save(fig, stem)


def _square(df: pd.DataFrame) -> pd.Series:
    return (df["M"] == df["N"]) & (df["N"] == df["K"])


def _sweep_square(ax, square: pd.DataFrame, failing: pd.DataFrame, order: list[str], pal: dict,
                  marks: dict) -> None:
    """GFLOP/s against the square size n, a line per variant (`order`: the titles in the legend's order)."""
    sns.lineplot(data=square[square["verified"]], x="M", y="gflops", hue="title", hue_order=order, palette=pal,
                 style="title", style_order=order, markers=marks, dashes=False, estimator="median",
                 errorbar=IQR, markersize=6, ax=ax)
    mark_failures(ax, failing[~failing["verified"]].drop_duplicates(["variant", "M"]), "M")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    plain_log_ticks(ax.yaxis)
    sizes = sorted(square["M"].unique())
    ax.set_xticks(sizes, [str(s) for s in sizes])
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.set_xlabel("matrix size n (M = N = K), log2 scale")
    ax.set_ylabel("GFLOP/s (2·M·N·K / time), log scale")


# The other shapes' points: a grey and a marker each, in the order of their M, N, K.
SHAPE_STYLES = (("o", "#111111"), ("s", "#6e6e6e"), ("D", "#b0b0b0"), ("^", "#3a3a3a"), ("v", "#909090"))


def _sweep_other(ax, other: pd.DataFrame, failing: pd.DataFrame, order: list[str], pal: dict, marks: dict) -> None:
    """GFLOP/s at each non-square shape: a row per variant (`order`), a point and its interquartile range per
    shape; each row's label has its variant's line and marker, as the left panel draws them."""
    shapes = sorted(set(zip(other["M"], other["N"], other["K"])))
    quartiles = (other[other["verified"]].groupby(["title", "M", "N", "K"])["gflops"]
                 .quantile([0.25, 0.5, 0.75]).unstack())
    rows = {title: i for i, title in enumerate(order)}
    offsets = np.linspace(-0.22, 0.22, len(shapes)) if len(shapes) > 1 else [0.0]
    for shape, offset, (marker, grey) in zip(shapes, offsets, itertools.cycle(SHAPE_STYLES)):
        q = quartiles[quartiles.index.droplevel("title").isin([shape])]
        y = [rows[title] + offset for title in q.index.get_level_values("title")]
        ax.errorbar(q[0.5], y, xerr=[q[0.5] - q[0.25], q[0.75] - q[0.5]], fmt=marker, color=grey, ms=4.5,
                    mec="black", mew=0.5, elinewidth=1, label=shape_label(*shape))
    bad = failing[~failing["verified"]].drop_duplicates(["variant", "M", "N", "K"])
    for _, r in bad.iterrows():
        ax.annotate(f"{shape_label(r['M'], r['N'], r['K'])}: {failure_kind(r.to_frame().T)}",
                    (0.02, rows[r["title"]]), xycoords=("axes fraction", "data"), va="center", color="red",
                    fontsize=8)
    ax.set_yticks(range(len(order)), order, fontsize=9)
    ax.set_ylim(len(order) - 0.5, -0.5)
    ax.tick_params(axis="y", pad=30)   # room for each row's key, between its label and the axes
    for title, i in rows.items():
        key = (-0.075, -0.02)
        ax.plot(key, [i, i], transform=ax.get_yaxis_transform(), color=pal[title], lw=1.5, clip_on=False)
        ax.plot(np.mean(key), i, transform=ax.get_yaxis_transform(), color=pal[title], marker=marks[title],
                ms=6, clip_on=False)
    ax.set_xscale("log")
    plain_log_ticks(ax.xaxis)
    ax.set_xlabel("GFLOP/s, log scale")
    ax.set_ylabel("")


RETAKEN = "taken again (a throttled batch: not counted)"
THROTTLED = "throttled (SM clock below the threshold)"
# Why the timing of a measurement stopped (measure/criterion.py), in words.
STOPPED = {"noise": "noise under target", "samples": "sample cap reached", "time": "time budget spent"}


def timing(study: Study, stem: Path) -> list[Path]:
    """Every timed sample at the study's size, as its deviation from the variant's median: the noise, visible
    (the samples of batches taken again where the GPU throttled, apart: kept, not counted in the median)."""
    sns.set_theme(style="whitegrid", context="notebook")
    registry, gpu_name, size = study.registry, study.gpu["gpu_name"], study.size
    at = at_size(study.results, size, verified=True).copy()
    order = titles(at, registry)
    retaken = at["retaken"].fillna(False).astype(bool) if "retaken" in at else pd.Series(False, index=at.index)
    median = at[~retaken].groupby("variant")["time_ms"].median()
    at["deviation_pct"] = (at["time_ms"] / at["variant"].map(median) - 1) * 100
    flagged = at["throttled"].astype(str).eq("True") if "throttled" in at else pd.Series(False, index=at.index)
    at["sample kind"] = np.where(flagged, THROTTLED, "timed sample")
    at.loc[retaken, "sample kind"] = RETAKEN
    kinds = {kind: colour for kind, colour in (("timed sample", "#1f77b4"), (THROTTLED, "red"), (RETAKEN, "orange"))
             if at["sample kind"].eq(kind).any()}   # only the kinds this study has
    fig, ax = plt.subplots(figsize=(10, 0.55 * len(order) + 2))
    # the quartile boxes drawn by Matplotlib itself: seaborn's boxplot passes `vert`, which Matplotlib 3.11
    # deprecates and 3.13 removes (`orientation` replaces it, from 3.10)
    horizontal = ({"orientation": "horizontal"} if "orientation" in inspect.signature(ax.boxplot).parameters
                  else {"vert": False})
    ax.boxplot([at.loc[(at["title"] == t) & ~retaken, "deviation_pct"].to_numpy() for t in order],
               positions=range(len(order)), widths=0.6, showfliers=False, medianprops={"color": "black"}, **horizontal)
    np.random.seed(0)   # seaborn's jitter: the same points on every render
    sns.stripplot(data=at, y="title", x="deviation_pct", order=order, hue="sample kind", hue_order=list(kinds),
                  palette=kinds, size=3, alpha=0.6, jitter=0.25, ax=ax)
    ax.set_yticks(range(len(order)), order)   # Matplotlib's boxes numbered the rows: the titles again
    ax.set_ylim(len(order) - 0.5, -0.5)
    ax.set_xscale("symlog", linthresh=0.1)
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:+g}%"))
    per = at[~retaken].groupby("title").agg(n=("time_ms", "size"), noise=("noise", "first"),
                                            why=("stop_reason", "first"))
    again = at[retaken].groupby("title").size()
    for i, title in enumerate(order):
        r = per.loc[title]
        taken = f" (+{again[title]} taken again)" if title in again else ""
        ax.annotate(f"n={r.n}{taken}, IQR/median {r.noise:.2%}, stopped: {STOPPED.get(r.why, r.why)}", (1.01, i),
                    xycoords=("axes fraction", "data"), va="center", fontsize=8)
    ax.set_xlabel("time relative to the variant's median, % (symmetric log scale, linear within ±0.1%)")
    ax.set_ylabel("")
    ax.set_title(f"Every timed sample at {size}×{size}×{size}, float32, on {gpu_name} "
                 "(box: quartiles; whiskers: 1.5 IQR)", fontsize=11)
    handles, labels = ax.get_legend_handles_labels()
    if ax.get_legend() is not None:
        ax.get_legend().remove()
    bottom = 0.0
    if len(kinds) > 1:   # which dots are which, under the axis (one kind of dot needs no legend)
        fig.legend(handles, labels, loc="lower center", ncol=len(kinds), fontsize=8, frameon=False)
        bottom = 0.4 / fig.get_figheight()
    fig.tight_layout(rect=(0, bottom, 1, 1))
    return save(fig, stem)


def margin(study: Study, stem: Path) -> list[Path]:
    """Each variant's check: the largest error over its bound, per shape, against the lines that matter."""
    s = study.summary[study.summary["dtype"] == "float32"]
    if "margin" not in s or s["margin"].isna().all():
        return placeholder("this study was checked before margins were recorded", stem)
    sns.set_theme(style="whitegrid", context="notebook")
    order = titles(s, study.registry)
    s = s.assign(shape=[shape_label(*t) for t in zip(s.M, s.N, s.K)], flop=2.0 * s.M * s.N * s.K)
    exact = s["margin"] == 0   # every element right to the last bit: no place on a log scale, so the left edge
    positive = s.loc[s["margin"] > 0, "margin"]
    s = s.assign(margin=s["margin"].mask(exact, positive.min() / 4 if len(positive) else 1e-3))
    shapes = list(dict.fromkeys(s.sort_values("flop")["shape"]))
    fig, ax = plt.subplots(figsize=(10, 0.5 * len(order) + 2))
    sns.stripplot(data=s, y="title", x="margin", order=order, hue="shape", hue_order=shapes, palette="viridis",
                  size=6, jitter=0, ax=ax)
    other = s[(s["precision"] != precisions.BASE.id) & s["fp32_margin"].notna()]   # none where no check measured it
    if len(other):
        ax.scatter(other["fp32_margin"], [order.index(t) for t in other["title"]], s=40, facecolor="none",
                   edgecolor="black", label=f"against {precisions.BASE.label}'s bound", zorder=4)
    ax.axvline(0.5, color="grey", linestyle="--", linewidth=1)
    ax.axvline(1.0, color="red", linewidth=1.5)
    ax.annotate("a correct FP32 result:\nat most 0.5", (0.5, 1.0), xycoords=("data", "axes fraction"),
                ha="right", va="bottom", fontsize=8, color="dimgrey", xytext=(-3, 2), textcoords="offset points")
    ax.annotate("fails above 1", (1.0, 1.0), xycoords=("data", "axes fraction"), ha="left", va="bottom",
                fontsize=8, color="red", xytext=(3, 2), textcoords="offset points")
    ax.set_xscale("log")
    plain_log_ticks(ax.xaxis)
    ax.set_xlabel("margin: largest |C - R| over the bound (log scale)"
                  + (f"; {exact.sum()} exact results (margin 0) drawn at the left" if exact.any() else ""))
    ax.set_ylabel("")
    ax.set_title(f"Verification margins, float32, on {study.gpu['gpu_name']}: every element checked, "
                 "one point per shape", fontsize=11, pad=24)
    ax.legend(title="shape", fontsize=8, title_fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    fig.tight_layout()
    return save(fig, stem)
