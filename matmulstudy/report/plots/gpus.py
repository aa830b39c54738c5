"""The figure across GPUs: every committed study's progression side by side."""

from __future__ import annotations

from pathlib import Path

import matplotlib.patches
import matplotlib.pyplot as plt
import matplotlib.ticker
import numpy as np
import pandas as pd
import seaborn as sns

from ... import precisions
from ..committed import Study
from ..results import at_size
from .style import mark_chapters, save


def by_gpu(studies: list[Study], size: int, stem: Path) -> list[Path]:
    """The progression on every GPU side by side: GFLOP/s, and as a fraction of each GPU's cuBLAS in the
    steps' own precision. One pair of panels, one above the other, per precision that has steps: FP32 on the
    CUDA cores against cuBLAS FP32, then each tensor-core precision against cuBLAS in it (many times as fast:
    its own GFLOP/s scale; the fractions share one).

    Each study is drawn with its own registry: its steps, then its reference; a step that only some studies
    have is a bar in those. Two studies of one GPU model are told apart by their folders' names.
    """
    sns.set_theme(style="whitegrid", context="notebook")
    names = [study.gpu["gpu_name"] for study in studies]
    gpus = [f"{n} ({st.label})" if names.count(n) > 1 else n for n, st in zip(names, studies)]
    colours = dict(zip(gpus, sns.color_palette("Set2", len(gpus))))
    columns = [c for c in (_by_gpu_column(studies, gpus, size, p) for p in precisions.TABLE) if c is not None]
    widths = [len(order) for _, order, _, _ in columns]
    # the precisions' pairs stacked, each as wide as the page: side by side, 50 bars made a strip 8,000 pixels
    # wide whose words were a pixel or two high at the README's width
    fig = plt.figure(figsize=(max(10, 0.6 * max(widths) + 3), 6.5 * len(columns)), layout="constrained")
    pairs = [sub.subplots(2, 1, sharex=True, height_ratios=[1, 1.2])
             for sub in fig.subfigures(len(columns), 1, squeeze=False)[:, 0]]   # each precision's own spacing
    axes = [ax for pair in pairs for ax in pair]
    for j, (df, order, chapters, precision) in enumerate(columns):
        top, bottom = pairs[j]
        if j:
            bottom.sharey(axes[1])
        hues = [g for g in gpus if g in set(df["gpu"])]
        for ax, col in ((top, "median_gflops"), (bottom, "frac_of_cublas")):
            # a precision that only some GPUs measured: its bars as wide as the other precisions' (seaborn
            # shares the width among the GPUs present)
            sns.barplot(data=df, x="title", y=col, hue="gpu", order=order, hue_order=hues,
                        width=0.8 * len(hues) / len(gpus), palette=colours, ax=ax, errorbar=None)
            for container in ax.containers:
                if ax is top:   # GFLOP/s: too wide to lie across a bar
                    ax.bar_label(container, fmt="{:,.0f}", fontsize=8, padding=2, rotation=90)
                    continue
                for bar, value in zip(container, container.datavalues):   # fractions: across, inside a tall bar
                    if pd.isna(value):                                    # (clear of the dashed 100% line)
                        continue
                    inside = value >= 0.3
                    ax.annotate(f"{value:.0%}", (bar.get_x() + bar.get_width() / 2, value), ha="center",
                                va="top" if inside else "bottom", xytext=(0, -3 if inside else 2), rotation=90,
                                textcoords="offset points", fontsize=8, color="white" if inside else "black")
            ax.set_xlabel("")
            # room for the bars' upright labels under the chapter titles: more for seven digits than for five
            ax.margins(y=(0.45 if df[col].max() < 1e6 else 0.65) if ax is top else 0.2)
            mark_chapters(ax, chapters, top=ax is top)
            if ax.get_legend() is not None:
                ax.get_legend().remove()
        top.set_title(f"{precision.arithmetic}, against {precision.reference_name}", fontsize=11)
        top.set_ylabel("GFLOP/s (median)")
        bottom.set_ylabel(f"fraction of this GPU's\n{precision.reference_name}")
        top.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}"))
        bottom.axhline(1.0, color="black", linestyle="--", linewidth=1)
        bottom.yaxis.set_major_formatter(matplotlib.ticker.PercentFormatter(1.0))
        bottom.tick_params(axis="x", labelrotation=25)
        for label in bottom.get_xticklabels():
            label.set_ha("right")
    axes[0].legend(handles=[matplotlib.patches.Patch(color=c, label=g) for g, c in colours.items()], title="",
                      fontsize=9, loc="upper left")
    fig.suptitle(f"From naive to cuBLAS: every step on each GPU, {size}×{size}×{size}, float32 inputs",
                 fontsize=12)
    return save(fig, stem)


def _by_gpu_column(studies: list[Study], gpus: list[str], size: int, precision: precisions.Precision):
    """One precision's bars for by_gpu: (the rows, the bars' titles in order, each bar's chapter title,
    the precision), or None where no study has a step in it. The fractions are of the study's own reference
    of that precision (a study measured before the tensor-core chapter has the fractions of every step of
    cuBLAS FP32 in its summary)."""
    # a step is named as the newest study numbers it (the course's order now): a study measured before the
    # steps were renumbered has other numbers, and its bars still stand beside the same step's on another GPU
    newest_first = sorted(studies, key=lambda st: str(st.measured[0]), reverse=True)
    title_of = {}
    for study in newest_first:
        for v in study.registry.values():
            title_of.setdefault(v.id, v.title)
    frames, order, chapter_of, steps = [], [], {}, 0
    for study, gpu in zip(studies, gpus):
        registry = study.registry
        reference = registry.reference(precision)
        keep = registry.steps(precision=precision) + [reference] * (reference is not None)
        at = at_size(study.summary, size, verified=True)
        at = at[at["variant"].isin([v.id for v in keep])]
        steps += len(study.steps_only(at, precision))
        ref = at.loc[at["variant"] == getattr(reference, "id", None), "median_gflops"]
        frames.append(at.assign(gpu=gpu, title=at["variant"].map(title_of),
                                frac_of_cublas=at["median_gflops"] / ref.iloc[0] if len(ref) else np.nan))
    for study in newest_first:
        registry, measured = study.registry, set(at_size(study.summary, size, verified=True)["variant"])
        reference = registry.reference(precision)
        for v in registry.steps(precision=precision) + [reference] * (reference is not None):
            if v.id in measured and title_of[v.id] not in order:
                order.append(title_of[v.id])
                chapter_of[title_of[v.id]] = registry.chapters[v.chapter].title if v.chapter else "reference"
    if not steps:
        return None
    df = pd.concat(frames, ignore_index=True)
    references = {title_of[st.registry.reference(precision).id] for st in studies if st.registry.reference(precision)}
    order = [t for t in order if t not in references] + [t for t in order if t in references]   # reference last
    return df, order, [chapter_of[t] for t in order], precision
