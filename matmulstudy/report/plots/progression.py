"""The progression figures: a bar per step at the study's size, with the speedup over the step before,
the reference of the steps' precision and its peak."""

from __future__ import annotations

from pathlib import Path

import matplotlib.lines
import matplotlib.pyplot as plt
import matplotlib.ticker
import seaborn as sns

from ... import precisions
from ...measure.sanitize import is_clean
from ..committed import Study
from ..results import at_size, failure_kind, slower_beyond_spread
from .style import IQR, mark_chapters, note_below, palette, placeholder, save, titles


def progression(study: Study, stem: Path, dtype: str = "float32",
                precision: precisions.Precision = precisions.BASE) -> list[Path]:
    """The optimisation progression at the study's size: a bar per step of the chapters of one precision
    (the base one's, or a tensor-core precision's), in order, from the top down.

    The bars lie across the page, so that every step's name and number reads
    level at the README's width (upright, 24 bars of the FP32 chapters made
    a figure 23 inches wide whose words were 5 pixels high there). Each bar
    carries its median and its speedup over the step before, past its end;
    a step slower than the one before beyond their measured spread is
    written in red (the hardware figures say why). float32 also gets the
    reference of that precision (cuBLAS in it) and the precision's peak as
    lines. A step that compute-sanitizer found problems in is marked.
    """
    registry, gpu, size, df = study.registry, study.gpu, study.size, study.counted
    hw = study.hardware
    hazards = set(hw.loc[~hw["sanitizer"].map(is_clean), "variant"]) if "sanitizer" in hw else set()
    sns.set_theme(style="whitegrid", context="notebook")
    pal = palette(registry)
    at = at_size(df, size, dtype)
    steps = study.steps_only(at, precision)
    cpu = study.cpu_only
    if cpu:   # a study without a GPU: its CPU variants are the bars
        steps = at
    order = titles(steps, registry)
    fig, ax = plt.subplots(figsize=(10, 0.36 * len(order) + 2.2), layout="constrained")
    ok = steps[steps["verified"]]
    sns.barplot(data=ok, y="title", x="gflops", order=order, hue="title", hue_order=order, orient="h",
                palette=pal, estimator="median", errorbar=IQR, capsize=0.3, ax=ax, legend=False)
    samples = dict(tuple(ok.groupby("title")["gflops"]))
    medians = ok.groupby("title")["gflops"].median()
    upper = ok.groupby("title")["gflops"].quantile(0.75)
    hazard_titles = {registry[v].title for v in hazards}
    lines = []
    reference = registry.reference(precision)
    ref = at[(at["variant"] == getattr(reference, "id", None)) & at["verified"]]["gflops"]
    if dtype == "float32" and not ref.empty:
        lines.append((ref.median(), f"{reference.title}: {ref.median():,.0f}", "black", "--"))
    if dtype == "float32" and gpu.get(precision.peak_key):
        lines.append((gpu[precision.peak_key], precision.peak_label(gpu), "grey", ":"))
    top = max([upper.max() if not upper.empty else 0] + [v for v, *_ in lines])
    previous = None
    for i, title in enumerate(order):
        if title not in medians:
            ax.annotate(failure_kind(steps[steps["title"] == title]), (0, i), ha="left", va="center",
                        color="red", xytext=(4, 0), textcoords="offset points", fontsize=9)
            previous = None
            continue
        text, colour = (f"{medians[title]:,.0f}" if medians[title] >= 100 else f"{medians[title]:.3g}"), "black"
        if previous is not None:
            slower = slower_beyond_spread(samples[title], samples[previous])
            ratio = medians[title] / medians[previous]
            # within half a percent, two decimals would print ×1.00 for a step measurably slower: three
            text += (f"  ×{ratio:.3f}" if abs(ratio - 1) < 0.005 else f"  ×{ratio:.2f}") + " slower" * slower
            colour = "red" if slower else "black"
        if title in hazard_titles:
            text += "  sanitizer: hazards"
            colour = "red"
        # past the bar's end and its interquartile whisker, on white where a reference line passes under it
        ax.annotate(text, (upper[title], i), ha="left", va="center", xytext=(5, 0), textcoords="offset points",
                    fontsize=9, color=colour, fontweight="bold" if colour == "red" else "normal",
                    bbox=dict(boxstyle="square,pad=0.1", facecolor="white", edgecolor="none", alpha=0.85))
        previous = title
    for value, label, colour, style in lines:
        ax.axvline(value, color=colour, linestyle=style, linewidth=1.5)
    ax.set_xlim(0, top * 1.3)   # room for the longest bar's label past the reference lines
    if lines:   # the lines' names under the axis, a line each: at the top they covered the first bars' labels
        fig.legend(handles=[matplotlib.lines.Line2D([], [], color=c, linestyle=st, linewidth=1.5)
                            for _, _, c, st in lines], labels=[label for _, label, *_ in lines],
                   loc="outside lower left", frameon=False, fontsize=9, ncol=1)
    if not cpu:
        mark_chapters(ax, [registry.chapters[registry[v].chapter].title
                           for v in steps.drop_duplicates("variant")["variant"]], across=True)
    ax.set_ylabel("")
    unit = "GFLOP/s" if dtype == "float32" else "G int32 ops/s"
    ax.set_xlabel(f"{unit} (median; whisker: interquartile range)")
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(6))
    if cpu:
        ax.set_title(f"The CPU variants, {size}×{size}×{size} {dtype} (no GPU in this study)\n"
                     "label: median and speedup over the one before", fontsize=11)
    else:
        arithmetic = "" if precision.is_base else f", {precision.label} {precision.adjective} arithmetic"
        ax.set_title(f"Optimisation progression, {size}×{size}×{size} {dtype}{arithmetic},\non {gpu['gpu_name']}: "
                     "median and speedup over the step before", fontsize=11)
    note = ("Red: slower than the one before, beyond both interquartile ranges." if cpu else
            "Red: slower than the step before, beyond both interquartile ranges. Why: each step's page and the "
            "hardware figures (the counters each step names: bank conflicts, stalls, occupancy, FFMA per LDS, ...).")
    note_below(fig, note)
    return save(fig, stem, png=precision.is_base and dtype == "float32")


def chapter_progression(study: Study, stem: Path, precision: precisions.Precision) -> list[Path]:
    """The progression of the chapters in one precision other than the base one, against cuBLAS in it,
    where the study has them; else a figure that says why not."""
    if study.cpu_only or study.steps_only(study.summary, precision).empty:
        skipped = study.optional("skipped.csv")
        why = ("; skipped on this GPU: " + "; ".join(f"{r.title}: {r.reason}" for r in skipped.itertuples()
                                                      if study.registry[r.variant].precision == precision)
               if skipped is not None and len(skipped) else "")
        return placeholder(f"no {precision.adjective} ({precision.label}) steps in this study" + why, stem)
    return progression(study, stem, precision=precision)


def progression_int32(study: Study, stem: Path) -> list[Path]:
    """The progression of seed 003's int32 mode, where the study has one."""
    dtypes = sorted(set(study.results["dtype"]))
    if "int32" not in dtypes:
        return placeholder(f"No int32 measurements in this study: it measured {', '.join(dtypes)} only (the config's "
                           "dtypes).", stem)
    return progression(study, stem, dtype="int32")
