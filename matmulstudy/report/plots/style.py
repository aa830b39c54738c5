"""What every figure shares: Matplotlib set up to write the same bytes on every render, the colours of
the variants, and the small helpers the figures draw with."""

from __future__ import annotations

import contextlib
import io
import re
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams["svg.hashsalt"] = "matmulstudy"   # the same ids in every SVG: re-rendering changes no byte
matplotlib.rcParams["svg.fonttype"] = "none"   # words as text, not glyph outlines: searchable, and lighter
# every figure laid out, checked and saved at the PNG's resolution: at another, a layout fixed once (a legend
# outside the axes, a note under them) would be drawn elsewhere in the file than where it was checked
matplotlib.rcParams["figure.dpi"] = matplotlib.rcParams["savefig.dpi"] = 120
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402
import matplotlib.transforms  # noqa: E402
from matplotlib.font_manager import FontProperties  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402
from PIL import Image  # noqa: E402

from ...study.registry import Registry  # noqa: E402
from ..results import failure_kind  # noqa: E402
from .legible import warn_if_illegible  # noqa: E402

IQR = ("pi", 50)   # seaborn: the middle 50% of the samples

CPU_COLOURS = {"c": "#b8860b", "numpy": "#666666"}   # the CPU baselines; each cuBLAS reference: its precision's
# one qualitative palette per chapter, in the registry's order of chapters: the seeds' steps take
# tab10 without its grey (the baselines use grey), the next chapters others with distinct hues; Set1
# without its red (red marks a slower step's label and a failure) and its yellow (white labels on it)
CHAPTER_PALETTES = ("tab10", "Dark2", "Set1", "Set2")
_LEFT_OUT = {("tab10", 7), ("Set1", 0), ("Set1", 5)}


def palette(registry: Registry) -> dict[str, tuple]:
    """One colour per variant title, fixed by the registry's chapters and order.

    Each chapter's steps take its palette's colours in order, so neighbouring
    steps always differ and chapters read apart; a chapter with more steps
    than its palette has colours gets as many evenly spaced hues, in an
    order that puts neighbouring steps half the circle apart. The
    baselines and references have fixed colours of their own.
    """
    out = {}
    for i, chapter in enumerate(registry.chapters):
        steps = registry.steps(chapter)
        name = CHAPTER_PALETTES[i % len(CHAPTER_PALETTES)]
        colours = [c for j, c in enumerate(sns.color_palette(name)) if (name, j) not in _LEFT_OUT]
        if len(steps) > len(colours):   # evenly spaced hues, taken alternately from the circle's two halves:
            hues, half = sns.color_palette("husl", len(steps)), (len(steps) + 1) // 2   # neighbours far apart
            colours = [hues[j // 2 + (half if j % 2 else 0)] for j in range(len(steps))]
        out.update({v.title: colours[j] for j, v in enumerate(steps)})
    out.update({v.title: _fixed_colour(v) for v in registry.values() if not v.is_step})
    return out


# Markers that read apart at 6 points, for the figures whose lines share a panel (size_sweep).
MARKERS = ("o", "s", "D", "^", "v", "P", "X", "<", ">", "p", "h", "*", "d", "8", "H")


def markers(registry: Registry) -> dict[str, str]:
    """One marker per variant title: each chapter's steps take MARKERS in order, so that two steps whose colours
    come close (a chapter of more steps than its palette has colours takes evenly spaced hues) differ in marker;
    the baselines and references a circle, as their colours are their own."""
    out = {v.title: MARKERS[j % len(MARKERS)] for chapter in registry.chapters
           for j, v in enumerate(registry.steps(chapter))}
    out.update({v.title: "o" for v in registry.values() if not v.is_step})
    return out


def _fixed_colour(variant) -> str:
    """A baseline's or a reference's colour: the CPU backend's, or the precision's of a cuBLAS reference."""
    if variant.backend == "cublas":
        return variant.precision.colour
    return CPU_COLOURS.get(variant.backend, "dimgrey")


def titles(df: pd.DataFrame, registry: Registry) -> list[str]:
    present = set(df["variant"])
    return [registry[vid].title for vid in sorted(present & set(registry), key=registry.course.get)]   # course order


_FOOTNOTE: str | None = None   # a line under every figure saved while it is set (footnote())


@contextlib.contextmanager
def footnote(text: str | None):
    """While it lasts, every figure saved gets `text` under everything else in it (what the GPU skipped)."""
    global _FOOTNOTE
    before, _FOOTNOTE = _FOOTNOTE, text
    try:
        yield
    finally:
        _FOOTNOTE = before


def freeze_layout(fig) -> None:
    """Lay the figure out once (its layout engine, if any) and keep it so: every later draw, the legibility check's
    and savefig's, sees the same places."""
    fig.canvas.draw()
    fig.set_layout_engine("none")
    for legend in fig.legends:   # anchored to the figure's frame, which a tight save moves to the drawn contents'
        legend.set_bbox_to_anchor(matplotlib.transforms.Bbox.unit(), transform=fig.transFigure)


def note_below(fig, text: str) -> None:
    """`text`, wrapped to the figure's width, below the lowest thing drawn (a label, a legend, a note). The layout
    is fixed first: a layout engine would move the rest again when the file is saved, and not the text."""
    freeze_layout(fig)
    box = fig.get_tightbbox(fig.canvas.get_renderer())   # inches
    width, height = fig.get_size_inches()
    wrapped = textwrap.fill(text, width=max(40, int(box.width * 72 / (9 * 0.55))))
    fig.text(box.x0 / width, box.y0 / height - 0.1 / height, wrapped, ha="left", va="top", fontsize=9,
             color="dimgrey")


PNG_DPI = matplotlib.rcParams["figure.dpi"]   # a page-wide figure stays sharp on a screen; the studies stay light
PNG_COLOURS = 256   # a palette image: a quarter of the bytes of true colour, no visible change on flat plots


def save(fig, stem: Path, png: bool = False) -> list[Path]:
    """The figure as SVG, the one form the pages and the HTML report show (its words stay text that a search
    finds; its densest layers, thousands of points, are rasterized where drawn), and with `png` as PNG too (a
    256-colour palette, undithered: the same bytes from the same drawing), for the README's hero. Warns with
    IllegibleFigure where a text overlaps another, is cut off or too small at the width a page shows it."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = [stem.with_suffix(".svg")] + [stem.with_suffix(".png")] * png
    if _FOOTNOTE:
        note_below(fig, _FOOTNOTE)
    freeze_layout(fig)
    warn_if_illegible(fig, stem.name)
    if png:
        raster = io.BytesIO()
        fig.savefig(raster, format="png", bbox_inches="tight")
        raster.seek(0)
        with Image.open(raster) as image:
            image.convert("RGB").quantize(PNG_COLOURS, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE) \
                .save(paths[1], format="PNG", optimize=True, dpi=(PNG_DPI, PNG_DPI))
    svg = io.StringIO()
    fig.savefig(svg, format="svg", bbox_inches="tight", metadata={"Date": None})
    paths[0].write_text(steady_svg(svg.getvalue()))
    plt.close(fig)
    return paths


SVG_DECIMALS = 2   # of a point (1/72 inch): far below what a screen or a printer shows
_ATTRIBUTE = re.compile(r'="([^"]*)"')
_LONG_NUMBER = re.compile(r"-?\d+\.\d{%d,}" % (SVG_DECIMALS + 1))
_NEGATIVE_ZERO = re.compile(r"(?<![\w.])-0(?![\w.])")   # a coordinate summed to -0.0 on one render, 0 on another
_HASHED_ID = re.compile(r'id="((?:m|p|C\d+_\d+_)[0-9a-f]{10})"')


def steady_svg(text: str) -> str:
    """Matplotlib's SVG with the same bytes from the same tables on any CPU, and no bytes it does not need.

    Its coordinates carry six decimals, and the last of them depends on the
    CPU: NumPy picks its SIMD code (AVX2, AVX-512) at run time, and the
    logarithms of a log axis differ there in the last bit. Coordinates are
    rounded to SVG_DECIMALS (and a -0 written 0), and the ids Matplotlib makes by hashing
    coordinates (clip paths, markers, collections) are numbered in order of
    appearance instead. Only attribute values change: the words are left as
    they are. Each text's fonts are named once in a style sheet (the font
    Matplotlib measured first, then those of the same width or narrower),
    and the indentation and the no-op turns of upright text go: together
    a third of the bytes.
    """
    def rounded(match):
        short = f"{float(match.group()):.{SVG_DECIMALS}f}".rstrip("0").rstrip(".")
        return "0" if short == "-0" else short

    text = _ATTRIBUTE.sub(lambda m: '="' + _NEGATIVE_ZERO.sub("0", _LONG_NUMBER.sub(rounded, m.group(1))) + '"',
                          text)
    hashed = dict.fromkeys(_HASHED_ID.findall(text))
    for n, old in enumerate(hashed, 1):
        text = text.replace(old, f"{old[:-10]}x{n}")
    text = _FONTS.sub("", text)
    text = text.replace("<defs>", "<defs>\n<style>text{font-family:" + SVG_FONTS + "}</style>", 1) \
        if "<text" in text else text
    return _UPRIGHT.sub("", _INDENT.sub("\n", text))


SVG_FONTS = "'DejaVu Sans',Arial,'Liberation Sans',sans-serif"   # DejaVu: the font Matplotlib lays out with
_FONTS = re.compile(r" ?font-family: [^;\"]*;?")
_UPRIGHT = re.compile(r' transform="rotate\(0 [^"]*\)"')
_INDENT = re.compile(r"\n +")


def value_label(value) -> str:
    """A value written beside its bar, one way for every size: at most 3 significant digits, never in powers of
    ten ('<0.01' for a small non-zero value, thousands with commas); '' where there is none."""
    if pd.isna(value):
        return ""
    if value == 0:
        return "0"
    if abs(value) < 0.01:
        return "<0.01"
    return f"{value:,.0f}" if abs(value) >= 99.95 else f"{value:.3g}"   # .3g would write 999.6 as 1e+03


def plain_log_ticks(axis):
    """Decades, written as plain numbers (0.01, 1, 1,000) that never collide; 1, 2 and 5 of each decade where
    the data span less than two decades (else a panel of values from 5 to 60 had one tick, 10). Call it once
    the data are drawn: it reads the axis's limits."""
    lo, hi = axis.get_view_interval()
    subs = (1.0, 2.0, 5.0) if lo > 0 and hi / lo < 100 else (1.0,)
    axis.set_major_locator(matplotlib.ticker.LogLocator(base=10, subs=subs, numticks=12))
    axis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    axis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.10g}"))


def point_label(title: str, is_step: bool) -> str:
    """A point's label: the step's number ('17', '8a'), or the reference's title up to its parenthesis, its
    library and precision ('cuBLASLt FP8 fast-accum'; FP32's: 'cuBLAS')."""
    if is_step:
        return title.split()[0]
    return "cuBLAS" if "(FP32)" in title or "SGEMM" in title else title.split(" (")[0]


LABEL_OFFSETS = [(5, 3), (5, -11), (-5, 3), (-5, -11), (5, 12), (-5, 12), (5, -20), (-5, -20), (12, -4), (-12, -4),
                 (5, 21), (-5, 21), (5, -29), (-5, -29), (22, 3), (-22, 3), (22, -11), (-22, -11)] + [
    offset for out in (32, 44, 56) for offset in ((out, 3), (-out, 3), (out, -11), (-out, -11), (5, out - 3),
                                                  (-5, out - 3), (5, -out - 8), (-5, -out - 8))]   # then further out


# Points from a point's centre that no other point's label may come closer than (a marker of area 60, the
# figures' s=60, reaches 4 to 5.5 points out, a diamond's tips the farthest), and that its own label keeps (the
# first LABEL_OFFSETS are 5 points out, beside its marker).
MARKER_CLEARANCE, OWN_CLEARANCE = 6, 4
# Points between the words of two labels: boxes that only met let two steps' numbers run together ('3643' on
# the H200's power figure of f4dcfec, when a label's width was reckoned at 0.6 of the font size a character).
LABEL_GAP = 2


def place_labels(ax, points: list, fontsize: float = 8, avoid: tuple = (), others: list = ()) -> None:
    """Label each point (x, y, text) beside it, at the first of LABEL_OFFSETS (points) where its text, inside the
    axes, comes near no label already placed (LABEL_GAP), no other point's marker and none of `others` (points
    with no label, (x, y); MARKER_CLEARANCE), and none of the texts in `avoid` (the axes' own guides): a cluster of
    steps (near the power limit, under a roof) stays readable. Where no place is clear, the one that comes near
    the fewest. A label that is not at a corner of its own marker gets a thin line to it. Each label's width is
    its text's, as the renderer sets it."""
    to_pt = 72 / ax.figure.dpi
    where = [tuple(xy * to_pt) for xy in ax.transData.transform([(x, y) for x, y, _ in points])]
    markers = where + [tuple(xy * to_pt) for xy in ax.transData.transform(list(others))] if others else where
    renderer, font = ax.figure.canvas.get_renderer(), FontProperties(size=fontsize)
    _, line, descent = (v * to_pt for v in renderer.get_text_width_height_descent("lp", font, ismath=False))
    placed = [tuple(v * to_pt for v in text.get_window_extent(renderer).extents) for text in avoid]
    frame = [v * to_pt for v in ax.get_window_extent(renderer).extents]

    def clashes(box, own):   # the labels and markers the box comes too close to, and 1 if it leaves the axes
        x0, y0, x1, y1 = box
        g = LABEL_GAP
        outside = x0 < frame[0] or y0 < frame[1] or x1 > frame[2] or y1 > frame[3]
        return outside + sum(x0 - g < b[2] and b[0] < x1 + g and y0 - g < b[3] and b[1] < y1 + g for b in placed) + \
            sum(x0 - m < px < x1 + m and y0 - m < py < y1 + m
                for (px, py), m in ((p, OWN_CLEARANCE if p is own else MARKER_CLEARANCE) for p in markers))

    for (x, y, text), own in sorted(zip(points, where), key=lambda item: -item[1][1]):
        w, (px, py) = renderer.get_text_width_height_descent(text, font, ismath=False)[0] * to_pt, own

        def box(dx, dy):
            left = px + dx if dx >= 0 else px + dx - w
            return (left, py + dy - descent, left + w, py + dy - descent + line)   # from the baseline
        dx, dy = min(LABEL_OFFSETS, key=lambda o: clashes(box(*o), own))   # the first clear, else the least crowded
        placed.append(box(dx, dy))
        far = (dx, dy) not in LABEL_OFFSETS[:4]   # not at a corner of its own marker: a thin line leads to it
        ax.annotate(text, (x, y), xytext=(dx, dy), textcoords="offset points", fontsize=fontsize,
                    ha="left" if dx >= 0 else "right",
                    arrowprops=dict(arrowstyle="-", lw=0.5, color="0.5", shrinkA=0, shrinkB=4) if far else None)


def group_close(ax, points: list, within: float = 2 * MARKER_CLEARANCE) -> list:
    """Points (x, y, text) whose markers lie within `within` points of each other, as one point with one label:
    their step numbers joined, runs as ranges ('38, 40-47'), at the highest of them. Eleven steps at one point
    under a roof had eleven numbers that no placement could keep apart. A label that is no step number (a
    reference's) stays a point of its own. Call it once the axes are laid out."""
    to_pt = 72 / ax.figure.dpi
    where = [tuple(xy * to_pt) for xy in ax.transData.transform([(x, y) for x, y, _ in points])] if points else []
    groups: list[list[int]] = []
    for i, (x, y, text) in enumerate(points):
        near = [g for g in groups if text[:1].isdigit() and all(points[j][2][:1].isdigit() for j in g)
                and any(np.hypot(where[i][0] - where[j][0], where[i][1] - where[j][1]) < within for j in g)]
        for g in near[1:]:   # a point that joins two groups joins them
            near[0] += g
            groups.remove(g)
        (near[0] if near else groups.append([]) or groups[-1]).append(i)
    out = []
    for g in groups:
        top = max(g, key=lambda j: where[j][1])
        out.append((points[top][0], points[top][1], _runs([points[j][2] for j in g])))
    return out


def _runs(numbers: list[str]) -> str:
    """Step numbers joined in order, consecutive whole numbers as a range: ['40', '41', '42', '38'] -> '38, 40-42'."""
    def key(n):
        digits = re.match(r"\d+", n)
        return (int(digits.group()) if digits else 0, n)
    ordered, parts = sorted(set(numbers), key=key), []
    for n in ordered:
        if parts and n.isdigit() and parts[-1][-1].isdigit() and int(n) == int(parts[-1][-1]) + 1:
            parts[-1].append(n)
        else:
            parts.append([n])
    return ", ".join(p[0] if len(p) == 1 else f"{p[0]}-{p[-1]}" if len(p) > 2 else f"{p[0]}, {p[1]}" for p in parts)


def guide_label(ax, text: str, start: tuple, end: tuple, points: list, **style):
    """A guide's label (a line of equal efficiency) on the straight line from `start` to `end` (data
    coordinates; straight on the screen), where the line's visible part lies farthest from every data point
    (x, y, ...), so that it hides none. Call it once the axes are laid out; None where no part is visible."""
    a, b = ax.transData.transform([start, end])
    screen = a + np.linspace(0, 1, 80)[:, None] * (b - a)
    box = ax.get_window_extent()
    renderer = ax.figure.canvas.get_renderer()
    half = renderer.get_text_width_height_descent(text, FontProperties(size=style.get("fontsize", 8)),
                                                  ismath=False)[0] * ax.figure.dpi / 72 / 2 + 6   # pixels
    along = (b - a) / (np.hypot(*(b - a)) or 1.0)   # the label's half width, along the line, stays in the axes
    inside = (screen[:, 0] > box.x0 + half * along[0]) & (screen[:, 0] < box.x1 - half * along[0]) & \
        (screen[:, 1] > box.y0 + 12 + half * abs(along[1])) & (screen[:, 1] < box.y1 - 30 - half * abs(along[1]))
    if not inside.any():
        return None
    data = ax.transData.transform([(x, y) for x, y, *_ in points]) if points else np.zeros((0, 2))
    distance = np.array([np.hypot(*(data - s).T).min() if len(data) else 0.0 for s in screen])
    best = screen[int(np.argmax(np.where(inside, distance, -1.0)))]
    return ax.annotate(text, tuple(ax.transData.inverted().transform(best)), **style)


def mark_failures(ax, failed: pd.DataFrame, x: str, y_frac: float = 0.04):
    """Red crosses at the bottom of the axes where a measurement failed, each with its variant and how."""
    if failed.empty:
        return
    ax.scatter(failed[x], [y_frac] * len(failed), transform=ax.get_xaxis_transform(),
               marker="x", color="red", s=60, zorder=5, label="failed (failures.txt says why)")
    for _, r in failed.iterrows():
        ax.annotate(f"{r['variant']}: {failure_kind(r.to_frame().T)}", (r[x], y_frac),
                    xycoords=("data", "axes fraction"), color="red", fontsize=8, xytext=(6, -3),
                    textcoords="offset points")


def mark_chapters(ax, chapters: list[str], top: bool = True, across: bool = False) -> None:
    """Where the bars (one per step, in order; `chapters` gives each bar's chapter title) pass from one chapter
    to the next: a divider, and with `top` each chapter's title at its bars (over them; with `across`, bars
    that lie across the page from the top down, at the right of its first bar). Nothing for one chapter."""
    if len(set(chapters)) < 2:
        return
    start = 0
    for i in range(1, len(chapters) + 1):
        if i == len(chapters) or chapters[i] != chapters[start]:
            if i < len(chapters):
                (ax.axhline if across else ax.axvline)(i - 0.5, color="dimgrey", linestyle="--", linewidth=1)
            if top and across:
                ax.annotate(chapters[start], (0.995, start - 0.45), xycoords=("axes fraction", "data"), ha="right",
                            va="top", fontsize=9, color="dimgrey", fontstyle="italic")
            elif top:
                ax.annotate(chapters[start], ((start + i - 1) / 2, 0.985), xycoords=("data", "axes fraction"),
                            ha="center", va="top", fontsize=9, color="dimgrey", fontstyle="italic")
            start = i


def placeholder(text: str, stem: Path) -> list[Path]:
    """A figure that says why there is nothing to draw (the report's list of figures stays fixed)."""
    lines = textwrap.wrap(text, 90)
    sns.set_theme(style="white", context="notebook")   # its own: the same bytes whatever was drawn before it
    fig, ax = plt.subplots(figsize=(7.5, 1.2 + 0.25 * len(lines)))
    ax.axis("off")
    ax.text(0.5, 0.5, "\n".join(lines), ha="center", va="center", fontsize=10)
    return save(fig, stem)


def shape_label(M, N, K) -> str:
    return str(M) if M == N == K else f"{M}×{N}×{K}"
