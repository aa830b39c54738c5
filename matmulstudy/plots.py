"""The report's figures, drawn with seaborn from the tidy results table.

Every figure takes the order, labels and colours of the variants from the
registry, shows medians with the interquartile range of the samples, and
marks measurements that failed verification instead of plotting them.
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from .registry import Variant  # noqa: E402

IQR = ("pi", 50)   # seaborn: the middle 50% of the samples


BASELINE_COLOURS = {("c", "fp32"): "#b8860b", ("numpy", "fp32"): "#666666", ("cublas", "fp32"): "black",
                    ("cublas", "tf32"): "#4b0082"}


def palette(registry: dict[str, Variant]) -> dict[str, tuple]:
    """One colour per variant title, fixed by the registry's order.

    The GPU steps take tab10's colours in order (its grey left out, which
    the baselines use), so neighbouring steps always differ; the CPU
    baselines and cuBLAS have fixed colours of their own.
    """
    steps = [v for v in registry.values() if v.backend == "cuda"]
    tab10 = sns.color_palette("tab10")
    colours = [c for i, c in enumerate(tab10) if i != 7]
    if len(steps) > len(colours):
        colours = sns.color_palette("husl", len(steps))
    out = {v.title: colours[i] for i, v in enumerate(steps)}
    out.update({v.title: BASELINE_COLOURS[v.backend, v.precision] for v in registry.values() if v.backend != "cuda"})
    return out


def _titles(df: pd.DataFrame, registry: dict[str, Variant]) -> list[str]:
    present = set(df["variant"])
    return [v.title for v in registry.values() if v.id in present]


def _save(fig, stem: Path) -> list[Path]:
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = [stem.with_suffix(".png"), stem.with_suffix(".svg")]
    fig.savefig(paths[0], dpi=150, bbox_inches="tight")
    fig.savefig(paths[1], bbox_inches="tight")
    plt.close(fig)
    return paths


def _plain_log_ticks(axis):
    """Decades only, written as plain numbers (0.01, 1, 1,000) that never collide."""
    axis.set_major_locator(matplotlib.ticker.LogLocator(base=10, numticks=12))
    axis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    axis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.10g}"))


def _mark_failures(ax, failed: pd.DataFrame, x: str, y_frac: float = 0.04):
    """Red crosses at the bottom of the axes where a measurement failed."""
    if failed.empty:
        return
    ax.scatter(failed[x], [y_frac] * len(failed), transform=ax.get_xaxis_transform(),
               marker="x", color="red", s=60, zorder=5, label="verification failed")
    for r in failed.itertuples():
        ax.annotate(r.variant, (getattr(r, x), y_frac), xycoords=("data", "axes fraction"), color="red",
                    fontsize=8, xytext=(6, -3), textcoords="offset points")


def size_sweep(df: pd.DataFrame, registry: dict[str, Variant], gpu: str, stem: Path) -> list[Path]:
    """GFLOP/s against size, every variant: square sizes left, other shapes right."""
    sns.set_theme(style="whitegrid", context="notebook")
    pal = palette(registry)
    df = df[df["dtype"] == "float32"]
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
        for r in bad.itertuples():
            ax.annotate(f"{r.variant}: verification failed", (0.02, shapes.index(r.shape)),
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


def progression(df: pd.DataFrame, registry: dict[str, Variant], gpu: dict, size: int,
                stem: Path, dtype: str = "float32") -> list[Path]:
    """The optimisation progression at one size: a bar per GPU step, in order.

    Each bar carries its median and its speedup over the step before; a
    step slower than the one before is written in red (the hardware table
    says why). float32 also gets cuBLAS and the FP32 peak as lines.
    """
    sns.set_theme(style="whitegrid", context="notebook")
    pal = palette(registry)
    at = df[(df.M == size) & (df.N == size) & (df.K == size) & (df.dtype == dtype)]
    steps = at[at["backend"] == "cuda"]
    order = _titles(steps, registry)
    fig, ax = plt.subplots(figsize=(max(7.5, 1.25 * len(order) + 3), 6))
    ok = steps[steps["verified"]]
    sns.barplot(data=ok, x="title", y="gflops", order=order, hue="title", hue_order=order,
                palette=pal, estimator="median", errorbar=IQR, capsize=0.2, ax=ax, legend=False)
    medians = ok.groupby("title")["gflops"].median()
    upper = ok.groupby("title")["gflops"].quantile(0.75)
    previous = None
    for i, title in enumerate(order):
        if title not in medians:
            ax.annotate("verification\nfailed", (i, 0), ha="center", va="bottom", color="red",
                        xytext=(0, 3), textcoords="offset points", fontsize=9)
            previous = None
            continue
        text, colour = f"{medians[title]:,.0f}", "black"
        if previous is not None:
            speedup = medians[title] / previous
            text += f"\n×{speedup:.2f}" + (" slower" if speedup < 1 else "")
            colour = "red" if speedup < 1 else "black"
        ax.annotate(text, (i, upper[title]), ha="center", va="bottom", xytext=(0, 4),
                    textcoords="offset points", fontsize=9, color=colour)
        previous = medians[title]
    lines = []
    cublas = at[(at["variant"] == "cublas") & at["verified"]]["gflops"]
    if dtype == "float32" and not cublas.empty:
        lines.append((cublas.median(), f"cuBLAS FP32: {cublas.median():,.0f}", "black", "--"))
    if dtype == "float32" and gpu.get("fp32_peak_gflops"):
        peak = gpu["fp32_peak_gflops"]
        lines.append((peak, f"FP32 peak: {peak:,.0f}", "grey", ":"))
    for value, label, colour, style in lines:
        ax.axhline(value, color=colour, linestyle=style, linewidth=1.5)
        ax.annotate(label, (0.0, value), xycoords=("axes fraction", "data"), ha="left", va="bottom",
                    fontsize=9, color=colour, xytext=(3, 2), textcoords="offset points")
    top = max([upper.max() if not upper.empty else 0] + [v for v, *_ in lines])
    ax.set_ylim(0, top * 1.15)
    ax.set_xlabel("")
    unit = "GFLOP/s" if dtype == "float32" else "G int32 ops/s"
    ax.set_ylabel(f"{unit} (median; bars: interquartile range)")
    ax.tick_params(axis="x", labelrotation=25)
    for label in ax.get_xticklabels():
        label.set_ha("right")
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.set_title(f"Optimisation progression, {size}×{size}×{size} {dtype}, on {gpu['gpu_name']}\n"
                 "label: median and speedup over the step before", fontsize=11)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.text(0.01, 0.01, "Red: slower than the step before. Why: progression.md and figures/hardware.png "
             "(bank conflicts, sectors per request, occupancy, FFMA per LDS).", fontsize=9, color="dimgrey")
    return _save(fig, stem)


def hardware(hw: pd.DataFrame, registry: dict[str, Variant], gpu_name: str, stem: Path) -> list[Path]:
    """Per step: FMA per shared load, occupancy, and the ncu counters if present."""
    sns.set_theme(style="whitegrid", context="notebook")
    pal = palette(registry)
    hw = hw[(hw["dtype"] == "float32") & hw["variant"].map(lambda v: registry[v].backend == "cuda")].copy()
    hw["title"] = hw["variant"].map(lambda v: registry[v].title)
    hw = hw.sort_values("variant", key=lambda s: s.map(lambda v: registry[v].order))
    if hw.empty:
        fig, ax = plt.subplots(figsize=(6, 2))
        ax.axis("off")
        ax.text(0.5, 0.5, "no GPU steps in this study", ha="center", va="center")
        return _save(fig, stem)
    panels = [("fma_per_lds", "FFMA per shared load (LDS)\nin the main loop (SASS)"),
              ("occupancy", "theoretical occupancy\n(resident warps / max)"),
              ("flop_per_byte", "compute-to-memory ratio\n(flop per global byte, seed's)")]
    ncu_panels = [("global_ld_sectors_per_request", "global-load sectors\nper request (ncu)"),
                  ("bank_conflicts_per_shared_ld", "shared-load bank conflicts\nper instruction (ncu)"),
                  ("achieved_occupancy_pct", "achieved occupancy, %\n(ncu)"),
                  ("dram_throughput_pct", "DRAM throughput,\n% of peak (ncu)")]
    panels += [p for p in ncu_panels if p[0] in hw and hw[p[0]].notna().any()]
    ncols = 4 if len(panels) > 4 else len(panels)
    nrows = math.ceil(len(panels) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 4.2 * nrows), squeeze=False)
    for ax, (col, label) in zip(axes.flat, panels):
        sns.barplot(data=hw, y="title", x=col, hue="title", palette=pal, ax=ax, legend=False)
        ax.set_title(label, fontsize=10)
        ax.set_xlabel("")
        ax.set_ylabel("")
        if ax is not axes[ax.get_subplotspec().rowspan.start, 0]:
            ax.set_yticklabels([])
        for container in ax.containers:
            ax.bar_label(container, fmt="%.3g", fontsize=8, padding=2)
        ax.margins(x=0.25)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    fig.suptitle(f"What explains each step, on {gpu_name} (float32; ncu at one size where measured)", fontsize=11)
    fig.tight_layout()
    return _save(fig, stem)
