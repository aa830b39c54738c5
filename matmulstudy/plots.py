"""The report's figures, drawn with seaborn from a study's tables.

Each function draws one figure of a Study (its tables and its own registry)
into stem.png and stem.svg; matmulstudy.figures lists them. Every figure
takes the order, labels and colours of the variants from the study's
registry, shows medians with the interquartile range of the samples, and
marks measurements that failed verification instead of plotting them.
"""

from __future__ import annotations

import inspect
import math
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams["svg.hashsalt"] = "matmulstudy"   # the same ids in every SVG: re-rendering changes no byte
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.colors  # noqa: E402
import matplotlib.patches  # noqa: E402
import matplotlib.ticker  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from .counters import with_derived  # noqa: E402
from .registry import PRECISIONS, Registry  # noqa: E402
from .results import at_size, failure_kind, fraction_of_cublas  # noqa: E402
from .sanitize import is_clean  # noqa: E402
from .study import Study  # noqa: E402

IQR = ("pi", 50)   # seaborn: the middle 50% of the samples
ARITHMETIC = {"fp32": "FP32 on the CUDA cores", "tf32": "TF32 on the tensor cores"}   # a panel per precision


BASELINE_COLOURS = {("c", "fp32"): "#b8860b", ("numpy", "fp32"): "#666666", ("cublas", "fp32"): "black",
                    ("cublas", "tf32"): "#4b0082"}
# one qualitative palette per chapter, in the registry's order of chapters: the seeds' steps take
# tab10 without its grey (the baselines use grey), the next chapters others with distinct hues; Set1
# without its red (red marks a slower step's label and a failure) and its yellow (white labels on it)
CHAPTER_PALETTES = ("tab10", "Dark2", "Set1", "Set2")
_LEFT_OUT = {("tab10", 7), ("Set1", 0), ("Set1", 5)}


def palette(registry: Registry) -> dict[str, tuple]:
    """One colour per variant title, fixed by the registry's chapters and order.

    Each chapter's steps take its palette's colours in order, so neighbouring
    steps always differ and chapters read apart; a chapter with more steps
    than its palette has colours gets as many evenly spaced hues. The
    baselines and references have fixed colours of their own.
    """
    out = {}
    for i, chapter in enumerate(registry.chapters):
        steps = registry.steps(chapter)
        name = CHAPTER_PALETTES[i % len(CHAPTER_PALETTES)]
        colours = [c for j, c in enumerate(sns.color_palette(name)) if (name, j) not in _LEFT_OUT]
        if len(steps) > len(colours):
            colours = sns.color_palette("husl", len(steps))
        out.update({v.title: colours[j] for j, v in enumerate(steps)})
    out.update({v.title: BASELINE_COLOURS.get((v.backend, v.precision), "dimgrey")
                for v in registry.values() if not v.is_step})
    return out


def _titles(df: pd.DataFrame, registry: Registry) -> list[str]:
    present = set(df["variant"])
    return [v.title for v in registry.values() if v.id in present]


def _save(fig, stem: Path) -> list[Path]:
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = [stem.with_suffix(".png"), stem.with_suffix(".svg")]
    fig.savefig(paths[0], dpi=150, bbox_inches="tight")
    fig.savefig(paths[1], bbox_inches="tight", metadata={"Date": None})   # same tables, same bytes
    plt.close(fig)
    return paths


def _plain_log_ticks(axis):
    """Decades only, written as plain numbers (0.01, 1, 1,000) that never collide."""
    axis.set_major_locator(matplotlib.ticker.LogLocator(base=10, numticks=12))
    axis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    axis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.10g}"))


def _mark_failures(ax, failed: pd.DataFrame, x: str, y_frac: float = 0.04):
    """Red crosses at the bottom of the axes where a measurement failed, each with its variant and how."""
    if failed.empty:
        return
    ax.scatter(failed[x], [y_frac] * len(failed), transform=ax.get_xaxis_transform(),
               marker="x", color="red", s=60, zorder=5, label="failed (failures.txt says why)")
    for _, r in failed.iterrows():
        ax.annotate(f"{r['variant']}: {failure_kind(r.to_frame().T)}", (r[x], y_frac),
                    xycoords=("data", "axes fraction"), color="red", fontsize=8, xytext=(6, -3),
                    textcoords="offset points")


def size_sweep(study: Study, stem: Path) -> list[Path]:
    """GFLOP/s against size, every variant: square sizes left, other shapes right."""
    sns.set_theme(style="whitegrid", context="notebook")
    registry, gpu = study.registry, study.gpu["gpu_name"]
    pal = palette(registry)
    df = study.results[study.results["dtype"] == "float32"]
    order = _titles(df, registry)
    square = df[(df.M == df.N) & (df.N == df.K)]
    other = df[~((df.M == df.N) & (df.N == df.K))].copy()
    ncols = 2 if not other.empty else 1
    fig, axes = plt.subplots(1, ncols, figsize=(7.5 * ncols, 5.2), squeeze=False,
                             gridspec_kw={"width_ratios": [3, 2][:ncols]})
    ax = axes[0, 0]
    ok = square[square["verified"]]
    sns.lineplot(data=ok, x="M", y="gflops", hue="title", hue_order=order, palette=pal,
                 estimator="median", errorbar=IQR, marker="o", ax=ax)
    _mark_failures(ax, square[~square["verified"]].drop_duplicates(["variant", "M"]), "M")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    _plain_log_ticks(ax.yaxis)
    sizes = sorted(square["M"].unique())
    ax.set_xticks(sizes, [str(s) for s in sizes])
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.set_xlabel("matrix size n (M = N = K), log2 scale")
    ax.set_ylabel("GFLOP/s (2·M·N·K / time), log scale")
    ax.set_title("Square matrices")
    handles, labels = ax.get_legend_handles_labels()
    ax.get_legend().remove()

    if ncols == 2:
        ax = axes[0, 1]
        other["shape"] = other["M"].astype(str) + "×" + other["N"].astype(str) + "×" + other["K"].astype(str)
        shapes = list(dict.fromkeys(other.sort_values(["M", "N", "K"])["shape"]))
        # points, not bars: a bar's length means nothing on a log axis
        sns.pointplot(data=other[other["verified"]], y="shape", x="gflops", hue="title", order=shapes,
                      hue_order=order, palette=pal, estimator="median", errorbar=IQR, dodge=0.6,
                      linestyle="none", markers="o", ax=ax, legend=False)
        bad = other[~other["verified"]].drop_duplicates(["variant", "shape"])
        for _, r in bad.iterrows():
            ax.annotate(f"{r['variant']}: {failure_kind(r.to_frame().T)}", (0.02, shapes.index(r['shape'])),
                        xycoords=("axes fraction", "data"), color="red", fontsize=8)
        ax.set_xscale("log")
        _plain_log_ticks(ax.xaxis)
        ax.set_xlabel("GFLOP/s, log scale")
        ax.set_ylabel("shape M×N×K")
        ax.set_title("Non-square shapes")
    fig.suptitle(f"Matrix multiplication, float32, on {gpu}: median of the timed runs, "
                 "band/bars = interquartile range", fontsize=11)
    rows = math.ceil(len(labels) / 4)
    fig.tight_layout(rect=(0, 0.03 + 0.055 * rows, 1, 1))
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 4), frameon=False, fontsize=10)
    return _save(fig, stem)


def progression(study: Study, stem: Path, dtype: str = "float32", precision: str = "fp32") -> list[Path]:
    """The optimisation progression at the study's size: a bar per step of the chapters of one precision
    (FP32, or the tensor cores' TF32), in order.

    Each bar carries its median and its speedup over the step before; a
    step slower than the one before is written in red (the hardware table
    says why). float32 also gets the reference of that precision (cuBLAS
    FP32 or cuBLAS TF32) and, for FP32, the FP32 peak as lines. A step that
    compute-sanitizer found problems in is marked on its bar.
    """
    registry, gpu, size, df = study.registry, study.gpu, study.size, study.results
    hw = study.hardware
    hazards = set(hw.loc[~hw["sanitizer"].map(is_clean), "variant"]) if "sanitizer" in hw else set()
    sns.set_theme(style="whitegrid", context="notebook")
    pal = palette(registry)
    at = at_size(df, size, dtype)
    steps = study.steps_only(at, precision)
    cpu = study.cpu_only
    if cpu:   # a study without a GPU: its CPU variants are the bars
        steps = at
    order = _titles(steps, registry)
    fig, ax = plt.subplots(figsize=(max(11, 1.25 * len(order) + 3), 6))
    ok = steps[steps["verified"]]
    sns.barplot(data=ok, x="title", y="gflops", order=order, hue="title", hue_order=order,
                palette=pal, estimator="median", errorbar=IQR, capsize=0.2, ax=ax, legend=False)
    medians = ok.groupby("title")["gflops"].median()
    upper = ok.groupby("title")["gflops"].quantile(0.75)
    hazard_titles = {registry[v].title for v in hazards}
    lines = []
    reference = registry.reference(precision)
    ref = at[(at["variant"] == getattr(reference, "id", None)) & at["verified"]]["gflops"]
    if dtype == "float32" and not ref.empty:
        lines.append((ref.median(), f"{reference.title}: {ref.median():,.0f}", "black", "--"))
    if dtype == "float32" and precision == "fp32" and gpu.get("fp32_peak_gflops"):
        peak = gpu["fp32_peak_gflops"]
        lines.append((peak, f"FP32 peak: {peak:,.0f}", "grey", ":"))
    if dtype == "float32" and precision == "tf32" and gpu.get("tf32_peak_gflops"):
        peak = gpu["tf32_peak_gflops"]
        lines.append((peak, f"TF32 dense peak: {peak:,.0f} ({gpu['sm_count']} SMs × "
                            f"{gpu['tf32_flop_per_clock_per_sm']} flop/clock × {gpu['max_sm_clock_mhz']:.0f} MHz)",
                      "grey", ":"))
    top = max([upper.max() if not upper.empty else 0] + [v for v, *_ in lines])
    previous = None
    for i, title in enumerate(order):
        if title not in medians:
            ax.annotate(failure_kind(steps[steps["title"] == title]).replace(" ", "\n"), (i, 0), ha="center",
                        va="bottom", color="red", xytext=(0, 3), textcoords="offset points", fontsize=9)
            previous = None
            continue
        text, colour = (f"{medians[title]:,.0f}" if medians[title] >= 100 else f"{medians[title]:.3g}"), "black"
        if previous is not None:
            speedup = medians[title] / previous
            text += f"\n×{speedup:.2f}" + (" slower" if speedup < 1 else "")
            colour = "red" if speedup < 1 else "black"
        if any(upper[title] <= value <= upper[title] + 0.15 * top for value, *_ in lines):
            # a line would cross the label above the bar: the label goes inside the bar's top instead
            ax.annotate(text, (i, medians[title]), ha="center", va="top", xytext=(0, -4),
                        textcoords="offset points", fontsize=9, fontweight="bold",
                        color="white" if colour == "black" else "mistyrose")
        else:
            ax.annotate(text, (i, upper[title]), ha="center", va="bottom", xytext=(0, 4),
                        textcoords="offset points", fontsize=9, color=colour)
        if title in hazard_titles:
            ax.annotate("sanitizer:\nhazards", (i, 0), ha="center", va="bottom", xytext=(0, 3),
                        textcoords="offset points", fontsize=8, color="red", fontweight="bold")
        previous = medians[title]
    for value, label, colour, style in lines:
        ax.axhline(value, color=colour, linestyle=style, linewidth=1.5)
        ax.annotate(label, (0.0, value), xycoords=("axes fraction", "data"), ha="left", va="bottom",
                    fontsize=9, color=colour, xytext=(3, 2), textcoords="offset points")
    ax.set_ylim(0, top * 1.15)
    if not cpu:
        _mark_chapters(ax, [registry.chapters[registry[v].chapter].title
                            for v in steps.drop_duplicates("variant")["variant"]])
    ax.set_xlabel("")
    unit = "GFLOP/s" if dtype == "float32" else "G int32 ops/s"
    ax.set_ylabel(f"{unit} (median; bars: interquartile range)")
    ax.tick_params(axis="x", labelrotation=25)
    for label in ax.get_xticklabels():
        label.set_ha("right")
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}"))
    if cpu:
        ax.set_title(f"The CPU variants, {size}×{size}×{size} {dtype} (no GPU in this study)\n"
                     "label: median and speedup over the one before", fontsize=11)
    else:
        arithmetic = "" if precision == "fp32" else f" in, {precision.upper()} tensor-core arithmetic"
        ax.set_title(f"Optimisation progression, {size}×{size}×{size} {dtype}{arithmetic}, on {gpu['gpu_name']}\n"
                     "label: median and speedup over the step before", fontsize=11)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.text(0.01, 0.01, "Red: slower than the one before." if cpu else
             "Red: slower than the step before. Why: the summary page and figures/hardware.png (the counters each "
             "step names: bank conflicts, stalls, occupancy, FFMA per LDS, ...).", fontsize=9, color="dimgrey")
    return _save(fig, stem)


def _mark_chapters(ax, chapters: list[str], top: bool = True) -> None:
    """Where the bars (one per step, in order; `chapters` gives each bar's chapter title) pass from one chapter
    to the next: a divider, and with `top` each chapter's title over its bars. Nothing for one chapter."""
    if len(set(chapters)) < 2:
        return
    start = 0
    for i in range(1, len(chapters) + 1):
        if i == len(chapters) or chapters[i] != chapters[start]:
            if i < len(chapters):
                ax.axvline(i - 0.5, color="dimgrey", linestyle="--", linewidth=1)
            if top:
                ax.annotate(chapters[start], ((start + i - 1) / 2, 0.985), xycoords=("data", "axes fraction"),
                            ha="center", va="top", fontsize=9, color="dimgrey", fontstyle="italic")
            start = i


def progression_tf32(study: Study, stem: Path) -> list[Path]:
    """The tensor-core chapter's progression (TF32 arithmetic), against cuBLAS TF32, where the study has it."""
    if study.cpu_only or study.steps_only(study.summary, "tf32").empty:
        skipped = study.optional("skipped.csv")
        why = ("; skipped on this GPU: " + "; ".join(f"{r.title}: {r.reason}" for r in skipped.itertuples()
                                                      if study.registry[r.variant].precision == "tf32")
               if skipped is not None and len(skipped) else "")
        return placeholder("no tensor-core (TF32) steps in this study" + why, stem)
    return progression(study, stem, precision="tf32")


def progression_int32(study: Study, stem: Path) -> list[Path]:
    """The progression of seed 003's int32 mode, where the study has one."""
    dtypes = sorted(set(study.results["dtype"]))
    if "int32" not in dtypes:
        return placeholder(f"no int32 measurements in this study (dtypes: {dtypes})", stem)
    return progression(study, stem, dtype="int32")


def hardware(study: Study, stem: Path) -> list[Path]:
    """Per step: FMA per shared load, occupancy, and the ncu counters if present."""
    sns.set_theme(style="whitegrid", context="notebook")
    registry, gpu_name = study.registry, study.gpu["gpu_name"]
    pal = palette(registry)
    hw = with_derived(study.hardware)
    hw = study.steps_only(hw[hw["dtype"] == "float32"]).copy()
    hw["title"] = hw["variant"].map(lambda v: registry[v].title)
    hw = hw.sort_values("variant", key=lambda s: s.map(lambda v: registry[v].order))
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
                  ("fma_pipe_pct", "FMA pipe busy, %\n(ncu)"),
                  ("stall_long_scoreboard", "long-scoreboard stall (global loads),\nwarps per issued instr. (ncu)"),
                  ("stall_short_scoreboard", "short-scoreboard stall (shared loads),\nwarps per issued instr. (ncu)"),
                  ("stall_barrier", "barrier stall,\nwarps per issued instr. (ncu)"),
                  ("stall_dispatch", "dispatch stall,\nwarps per issued instr. (ncu)"),
                  ("sm_balance", "SM balance: mean SM's active\ncycles / the busiest's (ncu)")]
    panels = [p for p in panels if p[0] in hw and hw[p[0]].notna().any()]
    panels += [p for p in ncu_panels if p[0] in hw and hw[p[0]].notna().any()]
    ncols = 6 if len(panels) > 8 else min(4, len(panels))
    nrows = math.ceil(len(panels) / ncols)
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
            ax.bar_label(container, fmt="%.3g", fontsize=8, padding=2)
        for y, value in enumerate(hw[col]):   # a step without the counter says so, not an empty row
            if pd.isna(value):
                ax.text(0, y, " n/a", va="center", ha="left", fontsize=8, color="0.4")
        ax.margins(x=0.25)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    fig.suptitle(f"What explains each step, on {gpu_name} (float32; ncu at one size where measured)", fontsize=12)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.45 / fig.get_figheight()))   # the title above the panels' titles
    return _save(fig, stem)


def placeholder(text: str, stem: Path) -> list[Path]:
    """A figure that says why there is nothing to draw (the report's list of figures stays fixed)."""
    lines = textwrap.wrap(text, 90)
    fig, ax = plt.subplots(figsize=(7.5, 1.2 + 0.25 * len(lines)))
    ax.axis("off")
    ax.text(0.5, 0.5, "\n".join(lines), ha="center", va="center", fontsize=10)
    return _save(fig, stem)


def _shape_label(M, N, K) -> str:
    return str(M) if M == N == K else f"{M}×{N}×{K}"


def efficiency(study: Study, stem: Path) -> list[Path]:
    """Heatmaps: each variant's median as a fraction of cuBLAS FP32 and of the FP32 peak, per shape."""
    if not study.gpu.get("fp32_peak_gflops"):
        return placeholder("no GPU in this study: no cuBLAS or peak to compare with", stem)
    sns.set_theme(style="white", context="notebook")
    registry, gpu_name, summary = study.registry, study.gpu["gpu_name"], study.summary
    s = summary[summary["dtype"] == "float32"].sort_values(["M", "N", "K"], key=lambda c: c.astype(int))
    s = s.assign(frac_of_cublas=fraction_of_cublas(s, registry))   # as this code defines it, for older studies too
    s = s.assign(shape=[_shape_label(*t) for t in zip(s.M, s.N, s.K)],
                 flop=2.0 * s.M * s.N * s.K).sort_values("flop")
    shapes = list(dict.fromkeys(s["shape"]))
    rows = _titles(s, registry)
    panels = [("frac_of_cublas", "of cuBLAS in the same precision (TF32 steps: cuBLAS TF32), same shape"),
              ("frac_of_fp32_peak", "of the GPU's FP32 peak")]
    fig, axes = plt.subplots(1, 2, figsize=(2.2 + 1.15 * len(shapes) * 2 + 4, 0.55 * len(rows) + 2.4),
                             sharey=True)
    norm = matplotlib.colors.LogNorm(vmin=1e-3, vmax=1.0, clip=True)
    for ax, (col, title) in zip(axes, panels):
        table = s.pivot_table(index="title", columns="shape", values=col, aggfunc="first", dropna=False)
        table = table.reindex(index=rows, columns=shapes)
        failed = s[~s["verified"].astype(bool)].pivot_table(index="title", columns="shape", values="samples",
                                                             aggfunc="first").reindex(index=rows, columns=shapes)
        labels = table.map(lambda v: "" if pd.isna(v) else (f"{v:.0%}" if v >= 0.095 else f"{v:.1%}"
                                                             if v >= 0.001 else "<0.1%"))
        sns.heatmap(table.astype(float), ax=ax, cmap="viridis", norm=norm, annot=labels, fmt="",
                    annot_kws={"fontsize": 10}, cbar=ax is axes[-1], linewidths=0.5, linecolor="white",
                    cbar_kws={"label": "fraction (log colour scale; ≥ 1 same colour)"})
        for i, j in zip(*np.nonzero(failed.notna().to_numpy())):   # seaborn leaves empty cells unlabelled
            ax.text(j + 0.5, i + 0.5, "failed", ha="center", va="center", color="red", fontsize=10,
                    fontweight="bold")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("size n (M = N = K) or shape M×N×K")
        ax.set_ylabel("")
        ax.tick_params(axis="x", labelrotation=30)
        for label in ax.get_xticklabels():
            label.set_ha("right")
    fig.suptitle(f"Efficiency of each variant, float32, on {gpu_name} (median GFLOP/s over the reference); "
                 "empty: another precision's peak, or not measured", fontsize=10)
    fig.tight_layout()
    return _save(fig, stem)


def roofline(study: Study, stem: Path) -> list[Path]:
    """Each GPU variant at its arithmetic intensity, under the measured bandwidth and the peak of its
    precision: the FP32 steps and cuBLAS FP32 under the FP32 peak, and where the study has tensor-core
    steps, a second panel with them and cuBLAS TF32 under the dense TF32 peak.

    Two intensities per step where both are known, joined by a line: the
    seed's model, flop per byte loaded from global memory (hollow), and flop
    per byte actually read from DRAM, measured by ncu on one launch at this
    size (filled): the distance between them is what the caches saved.
    """
    if not study.gpu.get("fp32_peak_gflops"):
        return placeholder("no GPU in this study: no peak or bandwidth to draw a roof with", stem)
    sns.set_theme(style="whitegrid", context="notebook")
    gpu, size = study.gpu, study.size
    panels = [(p, points) for p in PRECISIONS if gpu.get(f"{p}_peak_gflops")
              and (points := _roofline_points(study, p)) and (p == "fp32" or study.steps_only(study.summary, p).size)]
    fig, axes = plt.subplots(len(panels), 1, figsize=(13, 7.5 * len(panels)), squeeze=False)
    for ax, (precision, points) in zip(axes[:, 0], panels):
        _roofline_panel(ax, study, precision, points)
    fig.suptitle(f"Roofline at {size}×{size}×{size}, float32 inputs, on {gpu['gpu_name']}", fontsize=12)
    fig.tight_layout()
    return _save(fig, stem)


def _roofline_points(study: Study, precision: str) -> list:
    """(variant, GFLOP/s, model intensity, measured intensity) of the study's GPU variants of one precision."""
    at = at_size(study.summary, study.size, verified=True)
    hw = study.hardware[study.hardware["dtype"] == "float32"].set_index("variant")
    flop = 2.0 * study.size**3
    points = []
    for v in study.registry.values():
        if not v.is_gpu or v.precision != precision or v.id not in set(at["variant"]):
            continue
        measured = None
        if "dram_bytes_read" in hw and v.id in hw.index and pd.notna(hw.at[v.id, "dram_bytes_read"]) \
                and str(hw.at[v.id, "ncu_shape"]) == f"{study.size}x{study.size}x{study.size}":
            measured = flop / float(hw.at[v.id, "dram_bytes_read"])
        if measured or v.flop_per_byte:
            points.append((v, at.loc[at.variant == v.id, "median_gflops"].iloc[0], v.flop_per_byte, measured))
    return points


def _roofline_panel(ax, study: Study, precision: str, points: list) -> None:
    """One precision's roof (its peak, the measured copy bandwidth) and its variants' points."""
    gpu, pal = study.gpu, palette(study.registry)
    name = precision.upper() + (" dense (tensor cores)" if precision == "tf32" else "")
    peak, bw = gpu.get(f"{precision}_peak_gflops"), gpu.get("copy_bandwidth_gbs")
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
        ax.annotate(f"ridge: {ridge:.1f} flop/byte", (ridge, peak), xytext=(4, -14),
                    textcoords="offset points", fontsize=8, color="dimgrey")
    above = []   # steps whose hollow point is over the roof
    for v, y, model, measured in points:
        colour = pal[v.title]
        if model and measured:
            ax.plot([model, measured], [y, y], color=colour, linewidth=1, alpha=0.6)
        if model:
            ax.scatter([model], [y], s=70, facecolor="none", edgecolor=colour, linewidth=2, zorder=5)
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
    _plain_log_ticks(ax.xaxis)
    _plain_log_ticks(ax.yaxis)
    ax.set_xlabel("arithmetic intensity, flop per byte (log scale)")
    ax.set_ylabel("GFLOP/s (median), log scale")
    ax.set_title(ARITHMETIC[precision], fontsize=11)
    ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    if above:
        ax.annotate("Above the roof by the seed's model (hollow):\n" + "\n".join(f"  {t}" for t in above)
                    + "\nThe model counts every load as DRAM\ntraffic; the caches serve most of them\n"
                    "(filled: the DRAM bytes ncu measured).", (1.02, 0.0), xycoords="axes fraction",
                    ha="left", va="bottom", fontsize=9, color="dimgrey")


def timing(study: Study, stem: Path) -> list[Path]:
    """Every timed sample at the study's size, as its deviation from the variant's median: the noise, visible."""
    sns.set_theme(style="whitegrid", context="notebook")
    registry, gpu_name, size = study.registry, study.gpu["gpu_name"], study.size
    at = at_size(study.results, size, verified=True).copy()
    order = _titles(at, registry)
    at["deviation_pct"] = (at["time_ms"] / at.groupby("variant")["time_ms"].transform("median") - 1) * 100
    flagged = at["throttled"].astype(str).eq("True") if "throttled" in at else pd.Series(False, index=at.index)
    at["sample kind"] = np.where(flagged, "throttled (SM clock below threshold)", "at full clock / CPU")
    fig, ax = plt.subplots(figsize=(10, 0.55 * len(order) + 2))
    # the quartile boxes drawn by Matplotlib itself: seaborn's boxplot passes `vert`, which Matplotlib 3.11
    # deprecates and 3.13 removes (`orientation` replaces it, from 3.10)
    horizontal = ({"orientation": "horizontal"} if "orientation" in inspect.signature(ax.boxplot).parameters
                  else {"vert": False})
    ax.boxplot([at.loc[at["title"] == t, "deviation_pct"].to_numpy() for t in order], positions=range(len(order)),
               widths=0.6, showfliers=False, medianprops={"color": "black"}, **horizontal)
    np.random.seed(0)   # seaborn's jitter: the same points on every render
    sns.stripplot(data=at, y="title", x="deviation_pct", order=order, hue="sample kind",
                  hue_order=["at full clock / CPU", "throttled (SM clock below threshold)"],
                  palette={"at full clock / CPU": "#1f77b4", "throttled (SM clock below threshold)": "red"},
                  size=3, alpha=0.6, jitter=0.25, ax=ax)
    ax.set_yticks(range(len(order)), order)   # Matplotlib's boxes numbered the rows: the titles again
    ax.set_ylim(len(order) - 0.5, -0.5)
    ax.set_xscale("symlog", linthresh=0.1)
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:+g}%"))
    per = at.groupby("title").agg(n=("time_ms", "size"), noise=("noise", "first"), why=("stop_reason", "first"))
    for i, title in enumerate(order):
        r = per.loc[title]
        ax.annotate(f"n={r.n}, IQR/median {r.noise:.2%}, stopped: {r.why}", (1.01, i),
                    xycoords=("axes fraction", "data"), va="center", fontsize=8)
    ax.set_xlabel("time relative to the variant's median, % (symmetric log scale, linear within ±0.1%)")
    ax.set_ylabel("")
    ax.set_title(f"Every timed sample at {size}×{size}×{size}, float32, on {gpu_name} "
                 "(box: quartiles; whiskers: 1.5 IQR)", fontsize=11)
    ax.legend(title="", fontsize=8, loc="lower left", bbox_to_anchor=(0, 1.06), ncol=2, frameon=False)
    fig.tight_layout()
    return _save(fig, stem)


def by_gpu(studies: list[Study], size: int, stem: Path) -> list[Path]:
    """The progression on every GPU side by side: GFLOP/s, and as a fraction of each GPU's cuBLAS in the
    steps' own precision. One column of panels per precision that has steps: FP32 on the CUDA cores against
    cuBLAS FP32, then TF32 on the tensor cores against cuBLAS TF32 (eight times as fast: its own GFLOP/s
    scale; the fractions share one).

    Each study is drawn with its own registry: its steps, then its reference; a step that only some studies
    have is a bar in those. Two studies of one GPU model are told apart by their folders' names.
    """
    sns.set_theme(style="whitegrid", context="notebook")
    names = [study.gpu["gpu_name"] for study in studies]
    gpus = [f"{n} ({st.label})" if names.count(n) > 1 else n for n, st in zip(names, studies)]
    colours = dict(zip(gpus, sns.color_palette("Set2", len(gpus))))
    columns = [c for c in (_by_gpu_column(studies, gpus, size, p) for p in PRECISIONS) if c is not None]
    widths = [len(order) for _, order, _, _ in columns]
    fig, axes = plt.subplots(2, len(columns), figsize=(max(9, 1.1 * sum(widths) + 3), 10), sharex="col",
                             squeeze=False, gridspec_kw={"width_ratios": widths})
    for j, (df, order, chapters, precision) in enumerate(columns):
        top, bottom = axes[0, j], axes[1, j]
        if j:
            bottom.sharey(axes[1, 0])
        hues = [g for g in gpus if g in set(df["gpu"])]
        for ax, col in ((top, "median_gflops"), (bottom, "frac_of_cublas")):
            sns.barplot(data=df, x="title", y=col, hue="gpu", order=order, hue_order=hues,
                        palette=colours, ax=ax, errorbar=None)
            for container in ax.containers:
                ax.bar_label(container, fmt="{:.0%}" if col == "frac_of_cublas" else "{:,.0f}", fontsize=7,
                             padding=2, rotation=90)
            ax.set_xlabel("")
            ax.margins(y=0.3 if ax is top else 0.2)   # room for the rotated labels under the chapter titles
            _mark_chapters(ax, chapters, top=ax is top)
            if ax.get_legend() is not None:
                ax.get_legend().remove()
        top.set_title(f"{ARITHMETIC[precision]}, against cuBLAS {precision.upper()}", fontsize=11)
        top.set_ylabel("GFLOP/s (median)" if j == 0 else "")
        bottom.set_ylabel("fraction of this GPU's cuBLAS\nin the step's precision (FP32 or TF32)" if j == 0 else "")
        top.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}"))
        bottom.axhline(1.0, color="black", linestyle="--", linewidth=1)
        bottom.yaxis.set_major_formatter(matplotlib.ticker.PercentFormatter(1.0))
        bottom.tick_params(axis="x", labelrotation=25)
        for label in bottom.get_xticklabels():
            label.set_ha("right")
    axes[0, 0].legend(handles=[matplotlib.patches.Patch(color=c, label=g) for g, c in colours.items()], title="",
                      fontsize=9, loc="upper left")
    fig.suptitle(f"From naive to cuBLAS: every step on each GPU, {size}×{size}×{size}, float32 inputs",
                 fontsize=12)
    fig.tight_layout()
    return _save(fig, stem)


def _by_gpu_column(studies: list[Study], gpus: list[str], size: int, precision: str):
    """One precision's bars for by_gpu: (the rows, the bars' titles in order, each bar's chapter title,
    the precision), or None where no study has a step in it. The fractions are of the study's own reference
    of that precision (a study measured before the TF32 chapter has cuBLAS TF32 of FP32's in its summary)."""
    frames, order, chapter_of, steps = [], [], {}, 0
    for study, gpu in zip(studies, gpus):
        registry = study.registry
        reference = registry.reference(precision)
        keep = registry.steps(precision=precision) + [reference] * (reference is not None)
        at = at_size(study.summary, size, verified=True)
        at = at[at["variant"].isin([v.id for v in keep])]
        steps += len(study.steps_only(at, precision))
        ref = at.loc[at["variant"] == getattr(reference, "id", None), "median_gflops"]
        frames.append(at.assign(gpu=gpu, frac_of_cublas=at["median_gflops"] / ref.iloc[0] if len(ref) else np.nan))
        order += [v.title for v in keep if v.id in set(at["variant"]) and v.title not in order]
        for v in keep:
            chapter_of.setdefault(v.title, registry.chapters[v.chapter].title if v.chapter else "reference")
    if not steps:
        return None
    df = pd.concat(frames, ignore_index=True)
    references = {st.registry.reference(precision).title for st in studies if st.registry.reference(precision)}
    order = [t for t in order if t not in references] + [t for t in order if t in references]   # reference last
    return df, order, [chapter_of[t] for t in order], precision


def margin(study: Study, stem: Path) -> list[Path]:
    """Each variant's check: the largest error over its bound, per shape, against the lines that matter."""
    s = study.summary[study.summary["dtype"] == "float32"]
    if "margin" not in s or s["margin"].isna().all():
        return placeholder("this study was checked before margins were recorded", stem)
    sns.set_theme(style="whitegrid", context="notebook")
    order = _titles(s, study.registry)
    s = s.assign(shape=[_shape_label(*t) for t in zip(s.M, s.N, s.K)], flop=2.0 * s.M * s.N * s.K)
    shapes = list(dict.fromkeys(s.sort_values("flop")["shape"]))
    fig, ax = plt.subplots(figsize=(10, 0.5 * len(order) + 2))
    sns.stripplot(data=s, y="title", x="margin", order=order, hue="shape", hue_order=shapes, palette="viridis",
                  size=6, jitter=0, ax=ax)
    other = s[s["precision"] != "fp32"]
    if len(other):
        ax.scatter(other["fp32_margin"], [order.index(t) for t in other["title"]], s=40, facecolor="none",
                   edgecolor="black", label="against FP32's bound", zorder=4)
    ax.axvline(0.5, color="grey", linestyle="--", linewidth=1)
    ax.axvline(1.0, color="red", linewidth=1.5)
    ax.annotate("a correct FP32 result:\nat most 0.5", (0.5, 1.0), xycoords=("data", "axes fraction"),
                ha="right", va="bottom", fontsize=8, color="dimgrey", xytext=(-3, 2), textcoords="offset points")
    ax.annotate("fails above 1", (1.0, 1.0), xycoords=("data", "axes fraction"), ha="left", va="bottom",
                fontsize=8, color="red", xytext=(3, 2), textcoords="offset points")
    ax.set_xscale("log")
    _plain_log_ticks(ax.xaxis)
    ax.set_xlabel("margin: largest |C - R| over the bound (log scale)")
    ax.set_ylabel("")
    ax.set_title(f"Verification margins, float32, on {study.gpu['gpu_name']}: every element checked, "
                 "one point per shape", fontsize=11, pad=24)
    ax.legend(title="shape", fontsize=8, title_fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    fig.tight_layout()
    return _save(fig, stem)
