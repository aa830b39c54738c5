"""The figure across GPUs: every committed study's progression side by side."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import matplotlib.ticker
import numpy as np
import pandas as pd
import seaborn as sns

from ... import precisions
from ..committed import Study
from ..results import at_size
from .style import mark_chapters, placeholder, save


def by_gpu(studies: list[Study], size: int, stem: Path, precision: precisions.Precision) -> list[Path]:
    """The progression of one precision's steps on every GPU side by side: a row per step (its reference last),
    a bar per GPU, each as a fraction of that GPU's reference in the precision (cuBLAS FP32 for the CUDA cores'
    steps, cuBLAS in the precision for the tensor cores'), labelled with its GFLOP/s. The bars lie across the
    page: upright, 50 steps made a figure whose words were a pixel or two high at the README's width.

    Each study is drawn with its own registry: its steps, then its reference; a step that only some studies
    have is a bar in those. Two studies of one GPU model are told apart by their folders' names.
    """
    names = [study.gpu["gpu_name"] for study in studies]
    gpus = [f"{n} ({st.label})" if names.count(n) > 1 else n for n, st in zip(names, studies)]
    column = _by_gpu_column(studies, gpus, size, precision)
    if column is None:
        return placeholder(f"no {precision.adjective} ({precision.label}) steps in any study", stem)
    sns.set_theme(style="whitegrid", context="notebook")
    colours = dict(zip(gpus, sns.color_palette("Set2", len(gpus))))
    df, order, chapters, _ = column
    hues = [g for g in gpus if g in set(df["gpu"])]
    fig, ax = plt.subplots(figsize=(10, 0.26 * len(order) * max(2, len(hues)) + 2.2), layout="constrained")
    sns.barplot(data=df, y="title", x="frac_of_cublas", hue="gpu", order=order, hue_order=hues, orient="h",
                palette=colours, ax=ax, errorbar=None)
    rows, share = {t: i for i, t in enumerate(order)}, 0.8 / len(hues)   # seaborn's dodged bars: 0.8 a row
    for r in df[df["title"].isin(rows)].itertuples():   # each bar: its GFLOP/s and share, past its end
        if pd.isna(r.frac_of_cublas):
            continue
        y = rows[r.title] - 0.4 + (hues.index(r.gpu) + 0.5) * share
        ax.annotate(f"{r.median_gflops:,.0f} GFLOP/s ({r.frac_of_cublas:.0%})", (r.frac_of_cublas, y), xytext=(4, 0),
                    textcoords="offset points", va="center", fontsize=9, zorder=5,
                    bbox=dict(boxstyle="square,pad=0.1", facecolor="white", edgecolor="none", alpha=0.85))
    ax.axvline(1.0, color="black", linestyle="--", linewidth=1)
    ax.set_xlim(0, max(1.0, df["frac_of_cublas"].max()) * 1.55)   # room for the longest bar's label
    ax.xaxis.set_major_formatter(matplotlib.ticker.PercentFormatter(1.0))
    ax.set_xlabel(f"median GFLOP/s as a fraction of that GPU's {precision.reference_name}")
    ax.set_ylabel("")
    mark_chapters(ax, chapters, across=True)
    handles, labels = ax.get_legend_handles_labels()
    ax.get_legend().remove()
    fig.legend(handles, labels, fontsize=9, loc="outside lower center", ncol=len(hues), frameon=False)
    fig.suptitle(f"{precision.arithmetic}, every step on each GPU, {size}×{size}×{size}, float32 inputs,\nagainst "
                 f"{precision.reference_name} on the same GPU", fontsize=11)
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
