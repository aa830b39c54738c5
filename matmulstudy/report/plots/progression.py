"""The progression figures: a bar per step at the study's size, with the speedup over the step before,
the reference of the steps' precision and its peak."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import matplotlib.ticker
import seaborn as sns

from ... import precisions
from ...measure.sanitize import is_clean
from ..committed import Study
from ..results import at_size, failure_kind, slower_beyond_spread
from .style import IQR, mark_chapters, palette, placeholder, save, titles


def progression(study: Study, stem: Path, dtype: str = "float32",
                precision: precisions.Precision = precisions.BASE) -> list[Path]:
    """The optimisation progression at the study's size: a bar per step of the chapters of one precision
    (the base one's, or a tensor-core precision's), in order.

    Each bar carries its median and its speedup over the step before; a
    step slower than the one before beyond their measured spread is written
    in red (the hardware table says why). float32 also gets the reference
    of that precision (cuBLAS in it) and the precision's peak as lines. A
    step that compute-sanitizer found problems in is marked on its bar.
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
    # 0.85 inch a bar, 7 high, or a third of the width where more bars make it wider: at the README's width a
    # figure of 1.25 inch a bar and 6 high (4.7:1 for the FP32 chapter's 20 steps) was a strip 190 pixels high
    width = max(11, 0.85 * len(order) + 3)
    fig, ax = plt.subplots(figsize=(width, max(7, width / 3)))
    ok = steps[steps["verified"]]
    sns.barplot(data=ok, x="title", y="gflops", order=order, hue="title", hue_order=order,
                palette=pal, estimator="median", errorbar=IQR, capsize=0.2, ax=ax, legend=False)
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
            ax.annotate(failure_kind(steps[steps["title"] == title]).replace(" ", "\n"), (i, 0), ha="center",
                        va="bottom", color="red", xytext=(0, 3), textcoords="offset points", fontsize=9)
            previous = None
            continue
        text, colour = (f"{medians[title]:,.0f}" if medians[title] >= 100 else f"{medians[title]:.3g}"), "black"
        # a line would cross the label above the bar: the label goes inside the bar's top instead, where
        # "slower" takes a line of its own (beside the factor it is wider than a bar)
        inside = any(upper[title] <= value <= upper[title] + 0.15 * top for value, *_ in lines)
        if previous is not None:
            slower = slower_beyond_spread(samples[title], samples[previous])
            ratio = medians[title] / medians[previous]
            # within half a percent, two decimals would print ×1.00 for a step measurably slower: three
            text += (f"\n×{ratio:.3f}" if abs(ratio - 1) < 0.005 else f"\n×{ratio:.2f}")
            text += ("\nslower" if inside else " slower") * slower
            colour = "red" if slower else "black"
        if inside:
            # white on the bar; a slower step's on a dark red patch (pale pink on a pink bar could not be read)
            ax.annotate(text, (i, medians[title]), ha="center", va="top", xytext=(0, -4),
                        textcoords="offset points", fontsize=9, fontweight="bold", color="white",
                        bbox=None if colour == "black" else dict(boxstyle="round,pad=0.2", facecolor="darkred",
                                                                 edgecolor="none"))
        else:
            ax.annotate(text, (i, upper[title]), ha="center", va="bottom", xytext=(0, 4),
                        textcoords="offset points", fontsize=9, color=colour)
        if title in hazard_titles:
            ax.annotate("sanitizer:\nhazards", (i, 0), ha="center", va="bottom", xytext=(0, 3),
                        textcoords="offset points", fontsize=8, color="red", fontweight="bold")
        previous = title
    for value, label, colour, style in lines:
        ax.axhline(value, color=colour, linestyle=style, linewidth=1.5)
        ax.annotate(label, (0.0, value), xycoords=("axes fraction", "data"), ha="left", va="bottom",
                    fontsize=9, color=colour, xytext=(3, 2), textcoords="offset points")
    ax.set_ylim(0, top * 1.15)
    if not cpu:
        mark_chapters(ax, [registry.chapters[registry[v].chapter].title
                            for v in steps.drop_duplicates("variant")["variant"]])
    ax.set_xlabel("")
    unit = "GFLOP/s" if dtype == "float32" else "G int32 ops/s"
    ax.set_ylabel(f"{unit} (median; bars: interquartile range)")
    ax.tick_params(axis="x", labelrotation=35)
    for label in ax.get_xticklabels():
        label.set_ha("right")
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}"))
    if cpu:
        ax.set_title(f"The CPU variants, {size}×{size}×{size} {dtype} (no GPU in this study)\n"
                     "label: median and speedup over the one before", fontsize=11)
    else:
        arithmetic = "" if precision.is_base else f" in, {precision.label} {precision.adjective} arithmetic"
        ax.set_title(f"Optimisation progression, {size}×{size}×{size} {dtype}{arithmetic}, on {gpu['gpu_name']}\n"
                     "label: median and speedup over the step before", fontsize=11)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.text(0.01, 0.01, "Red: slower than the one before, beyond both interquartile ranges." if cpu else
             "Red: slower than the step before, beyond both interquartile ranges. Why: the summary page and "
             "figures/hardware.png (the counters each step names: bank conflicts, stalls, occupancy, FFMA per "
             "LDS, ...).", fontsize=9, color="dimgrey")
    return save(fig, stem)


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
