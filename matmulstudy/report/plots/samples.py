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


def size_sweep(study: Study, stem: Path, chapter: str) -> list[Path]:
    """GFLOP/s against size, for one chapter's steps with the baselines and references for scale: square sizes
    above, other shapes below.

    A chapter of 14 steps has more variants than a palette has colours that read apart: each variant is drawn
    with a marker of its own as well (style.markers). Below, each variant has a row of its own and each shape a
    grey of its own, so that no two variants' points fall on each other; each row's label, with its variant's
    line and marker, is the key of the panel above too."""
    missing = study.chapter_missing(chapter)
    if missing:
        return placeholder(missing, stem)
    sns.set_theme(style="whitegrid", context="notebook")
    registry, gpu = study.registry, study.gpu["gpu_name"]
    pal, marks = palette(registry), markers(registry)
    df = study.counted[study.counted["dtype"] == "float32"]
    shown = study.chapter_rows(df, chapter, context=True)
    order = titles(shown, registry)
    other = not shown[~_square(shown)].empty
    fig, axes = plt.subplots(1 + other, 1, figsize=(10, 4.8 + other * (0.27 * len(order) + 1.6)), squeeze=False,
                             layout="constrained", height_ratios=[4.8] + [0.27 * len(order) + 1.6] * other)
    _sweep_square(axes[0, 0], shown[_square(shown)], order, pal, marks)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    axes[0, 0].get_legend().remove()
    failed = [(h, t) for h, t in zip(handles, labels) if t not in order]   # the red crosses' entry
    if other:
        _sweep_other(axes[1, 0], shown[~_square(shown)], order, pal, marks)
        axes[1, 0].set_title("other shapes, a row per variant (its line and marker as above)", fontsize=11)
        axes[1, 0].legend(*map(list, zip(*([(h, t) for h, t in zip(*axes[1, 0].get_legend_handles_labels())]
                                           + failed))), title="shape M×N×K", fontsize=9, title_fontsize=9,
                          loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    else:   # no other shapes: the variants' key beside the square sizes
        axes[0, 0].legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False, fontsize=9)
    axes[0, 0].set_title(f"{study.chapter_title(chapter)}, float32, on {gpu}:\nmedian of the timed runs (band and "
                         "bars: interquartile range)", fontsize=11)
    return save(fig, stem)


def _square(df: pd.DataFrame) -> pd.Series:
    return (df["M"] == df["N"]) & (df["N"] == df["K"])


def _sweep_square(ax, square: pd.DataFrame, order: list[str], pal: dict, marks: dict) -> None:
    """GFLOP/s against the square size n, a line per variant (`order`: the titles in the legend's order)."""
    sns.lineplot(data=square[square["verified"]], x="M", y="gflops", hue="title", hue_order=order, palette=pal,
                 style="title", style_order=order, markers=marks, dashes=False, estimator="median",
                 errorbar=IQR, markersize=6, ax=ax)
    mark_failures(ax, square[~square["verified"]].drop_duplicates(["variant", "M"]), "M")
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


def _sweep_other(ax, other: pd.DataFrame, order: list[str], pal: dict, marks: dict) -> None:
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
    bad = other[~other["verified"]].drop_duplicates(["variant", "M", "N", "K"])
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


def timing(study: Study, stem: Path, chapter: str) -> list[Path]:
    """Every timed sample of one chapter's steps (and their cuBLAS references) at the study's size, as its deviation
    from the variant's median: the noise, visible (the samples of batches taken again where the GPU throttled,
    apart: kept, not counted in the median).

    The axis is linear, so that a spread of 0.01% and one of 2% look as far apart as they are (a symmetric log
    axis drew them alike); it spans what nearly all samples need, and the few beyond it are drawn at its edge as
    arrows and counted in their row's note."""
    missing = study.chapter_missing(chapter)
    if missing:
        return placeholder(missing, stem)
    sns.set_theme(style="whitegrid", context="notebook")
    registry, gpu_name, size = study.registry, study.gpu["gpu_name"], study.size
    at = study.chapter_rows(at_size(study.results, size, verified=True), chapter, context=True)
    if not study.cpu_only:   # a CPU baseline's noise (9% for NumPy) would set the axis of the GPU's (0.1%)
        at = at[study.on_gpu(at)]
    at = at.copy()
    if at.empty:
        return placeholder(f"no verified measurement of this chapter at {size}×{size}×{size}", stem)
    order = titles(at, registry)
    retaken = at["retaken"].fillna(False).astype(bool) if "retaken" in at else pd.Series(False, index=at.index)
    median = at[~retaken].groupby("variant")["time_ms"].median()
    at["deviation_pct"] = (at["time_ms"] / at["variant"].map(median) - 1) * 100
    flagged = at["throttled"].astype(str).eq("True") if "throttled" in at else pd.Series(False, index=at.index)
    at["sample kind"] = np.where(flagged, THROTTLED, "timed sample")
    at.loc[retaken, "sample kind"] = RETAKEN
    kinds = {kind: colour for kind, colour in (("timed sample", "#1f77b4"), (THROTTLED, "red"), (RETAKEN, "orange"))
             if at["sample kind"].eq(kind).any()}   # only the kinds this study has
    reach = max(0.2, 1.2 * float(at["deviation_pct"].abs().quantile(0.99)))   # the axis: ± what 99% need
    beyond = at["deviation_pct"].abs() > reach
    at["drawn_pct"] = at["deviation_pct"].clip(-reach, reach)
    fig, ax = plt.subplots(figsize=(10, 0.42 * len(order) + 2.2), layout="constrained")
    # the quartile boxes drawn by Matplotlib itself: seaborn's boxplot passes `vert`, which Matplotlib 3.11
    # deprecates and 3.13 removes (`orientation` replaces it, from 3.10)
    horizontal = ({"orientation": "horizontal"} if "orientation" in inspect.signature(ax.boxplot).parameters
                  else {"vert": False})
    ax.boxplot([at.loc[(at["title"] == t) & ~retaken, "deviation_pct"].to_numpy() for t in order],
               positions=range(len(order)), widths=0.6, showfliers=False, medianprops={"color": "black"}, **horizontal)
    np.random.seed(0)   # seaborn's jitter: the same points on every render
    sns.stripplot(data=at[~beyond], y="title", x="drawn_pct", order=order, hue="sample kind", hue_order=list(kinds),
                  palette=kinds, size=3, alpha=0.6, jitter=0.25, ax=ax)
    rows = {t: i for i, t in enumerate(order)}
    for sign, marker in ((1, ">"), (-1, "<")):   # the samples past the axis, at its edge
        out = at[beyond & (np.sign(at["deviation_pct"]) == sign)]
        ax.scatter([sign * reach] * len(out), out["title"].map(rows), marker=marker, s=30, color="black",
                   clip_on=False, zorder=5)
    for collection in ax.collections:   # thousands of points: one picture in the SVG, its words stay words
        collection.set_rasterized(True)
    ax.set_yticks(range(len(order)), order)   # Matplotlib's boxes numbered the rows: the titles again
    ax.set_ylim(len(order) - 0.5, -0.5)
    ax.set_xlim(-reach * 1.04, reach * 1.04)
    ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(4, symmetric=True))   # a narrow axis: its labels apart
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:+.2g}%"))
    per = at[~retaken].groupby("title").agg(n=("time_ms", "size"), noise=("noise", "first"),
                                            why=("stop_reason", "first"))
    again, past = at[retaken].groupby("title").size(), at[beyond].groupby("title").size()
    notes = []
    for title in order:
        r = per.loc[title]
        extra = (f", +{again[title]} taken again" if title in again else "") + \
            (f", {past[title]} past the axis" if title in past else "")
        notes.append(f"n={r.n}{extra}; IQR/median {r.noise:.2%}; stopped: {STOPPED.get(r.why, r.why)}")
    right = ax.secondary_yaxis("right")
    right.set_yticks(range(len(order)), notes, fontsize=9)
    right.tick_params(length=0)
    ax.set_xlabel(f"time relative to the variant's median, % (arrows: samples beyond ±{reach:.2g}%)")
    ax.set_ylabel("")
    ax.set_title(f"Every timed sample at {size}×{size}×{size}, float32, on {gpu_name}: "
                 f"{study.chapter_title(chapter)}\n"
                 "(box: quartiles; whiskers: 1.5 IQR)", fontsize=11)
    handles, labels = ax.get_legend_handles_labels()
    if ax.get_legend() is not None:
        ax.get_legend().remove()
    if len(kinds) > 1:   # which dots are which, under the axis (one kind of dot needs no legend)
        fig.legend(handles, labels, loc="outside lower center", ncol=len(kinds), fontsize=9, frameon=False)
    return save(fig, stem)


def margin(study: Study, stem: Path, chapter: str) -> list[Path]:
    """Each check of one chapter's steps (and their references): the largest error over its bound, per shape,
    against the lines that matter."""
    missing = study.chapter_missing(chapter)
    s = study.chapter_rows(study.summary[study.summary["dtype"] == "float32"], chapter, context=True)
    if missing or "margin" not in s or s["margin"].isna().all():
        return placeholder(missing or "this study was checked before margins were recorded", stem)
    sns.set_theme(style="whitegrid", context="notebook")
    order = titles(s, study.registry)
    s = s.assign(shape=[shape_label(*t) for t in zip(s.M, s.N, s.K)], flop=2.0 * s.M * s.N * s.K)
    exact = s["margin"] == 0   # every element right to the last bit: no place on a log scale, so the left edge
    positive = s.loc[s["margin"] > 0, "margin"]
    s = s.assign(margin=s["margin"].mask(exact, positive.min() / 4 if len(positive) else 1e-3))
    shapes = list(dict.fromkeys(s.sort_values("flop")["shape"]))
    fig, ax = plt.subplots(figsize=(10, 0.42 * len(order) + 2.4), layout="constrained")
    sns.stripplot(data=s, y="title", x="margin", order=order, hue="shape", hue_order=shapes, palette="viridis",
                  size=6, jitter=0, ax=ax)
    other = s[(s["precision"] != precisions.BASE.id) & s["fp32_margin"].notna()]   # none where no check measured it
    if len(other):
        ax.scatter(other["fp32_margin"], [order.index(t) for t in other["title"]], s=40, facecolor="none",
                   edgecolor="black", label=f"against {precisions.BASE.label}'s bound", zorder=4)
    ax.axvline(0.5, color="grey", linestyle="--", linewidth=1)
    ax.axvline(1.0, color="red", linewidth=1.5)
    ax.annotate("a correct FP32 result: at most 0.5", (0.5, 1.0), xycoords=("data", "axes fraction"),
                ha="right", va="bottom", fontsize=9, color="dimgrey", xytext=(-3, 2), textcoords="offset points")
    ax.annotate("fails above 1", (1.0, 1.0), xycoords=("data", "axes fraction"), ha="left", va="bottom",
                fontsize=9, color="red", xytext=(3, 2), textcoords="offset points")
    ax.set_xscale("log")
    plain_log_ticks(ax.xaxis)
    ax.set_xlabel("margin: largest |C - R| over the bound (log scale)"
                  + (f";\n{exact.sum()} exact results (margin 0) drawn at the left" if exact.any() else ""))
    ax.set_ylabel("")
    ax.set_title(f"Verification margins, float32, on {study.gpu['gpu_name']}: {study.chapter_title(chapter)}\n"
                 "every element checked, "
                 "one point per shape", fontsize=11, pad=18)
    ax.legend(title="shape", fontsize=9, title_fontsize=9, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    return save(fig, stem)
