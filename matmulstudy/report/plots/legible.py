"""Whether a figure can be read where it is shown, from the renderer's own extents of every text drawn.

A page (GitHub's column for a README, the HTML report's figure view) shows a
figure at most SHOWN_WIDTH_PX wide, scaled down from its own width. Three
things make it unreadable there, and `problems` finds each:

- two texts that overlap (a title drawn over a panel's title, a note over
  a legend entry, step numbers piled on each other), tested on each text's
  box as it is turned (a label along a diagonal is a turned rectangle, not
  the upright box around it);
- a text that leaves what the saved file shows: the figure cropped to its
  drawn contents, as `save` writes it, or its own clip box;
- a text smaller than MIN_TEXT_PX once the figure is scaled to the page.

`save` (style.py) warns with IllegibleFigure when a figure has any of them;
the tests turn the warning into a failure for every committed figure.
"""

from __future__ import annotations

import warnings

import numpy as np
from matplotlib.text import Text
from matplotlib.transforms import Bbox

SHOWN_WIDTH_PX = 900   # the README's and a study page's column on GitHub; the HTML report shows 960
MIN_TEXT_PX = 9        # a label's font size once the figure is scaled to that width
SVG_PX_PER_INCH = 96   # a browser's pixels in an SVG's inch (the PNG, at 120 an inch, is never smaller)
TIGHT_PAD_INCH = 0.1   # what savefig(bbox_inches="tight") adds around the drawn contents


WARNING_START = "illegible figure"   # every warning's first words: `-W "error:illegible figure:UserWarning"`


class IllegibleFigure(UserWarning):
    """A figure with text that overlaps, is cut off, or is too small where it is shown."""


def warn_if_illegible(fig, name: str) -> None:
    found = problems(fig)
    if found:
        warnings.warn(f"{WARNING_START} {name}: " + "; ".join(found[:8]) + (f"; and {len(found) - 8} more" if len(found) > 8 else ""),
                      IllegibleFigure, stacklevel=3)


def problems(fig) -> list[str]:
    """What cannot be read in `fig` at SHOWN_WIDTH_PX: overlapping texts, texts cut off, texts too small."""
    fig.canvas.draw()   # the layout as it will be saved
    renderer = fig.canvas.get_renderer()
    texts = drawn_texts(fig)
    pad = TIGHT_PAD_INCH * fig.dpi
    saved = fig.get_tightbbox(renderer).transformed(fig.dpi_scale_trans).padded(pad)
    scale = min(1.0, SHOWN_WIDTH_PX / (saved.width / fig.dpi * SVG_PX_PER_INCH))
    found = []
    boxes = []
    for text in texts:
        box = Text.get_window_extent(text, renderer)   # the words alone (an annotation's adds its arrow)
        px = text.get_fontsize() * SVG_PX_PER_INCH / 72 * scale
        if px < MIN_TEXT_PX - 0.05:
            found.append(f"'{_short(text)}' is {px:.1f} px high at {SHOWN_WIDTH_PX} px wide (at least {MIN_TEXT_PX})")
        clip = text.get_clip_box() if text.get_clip_on() else None
        for frame, where in ((saved, "the figure"), (clip, "its clip box")):
            if frame is not None and not _inside(box, frame):
                found.append(f"'{_short(text)}' leaves {where}")
        boxes.append(_corners(text, box, renderer))
    for i, j in _overlapping(boxes):
        found.append(f"'{_short(texts[i])}' overlaps '{_short(texts[j])}'")
    return found


def drawn_texts(fig) -> list[Text]:
    """Every text the figure draws: visible, not empty, and of the tick labels only those of ticks inside the
    axis's view (Matplotlib keeps labels of ticks it does not draw)."""
    ticks, shown = set(), set()
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        for axis in ax._axis_map.values():
            for tick in axis.majorTicks + axis.minorTicks:
                ticks |= {id(tick.label1), id(tick.label2)}
            if ax.axison and axis.get_visible():   # an axes drawn without its axes ("off") draws no tick labels
                shown |= {id(label) for tick in axis._update_ticks() for label in (tick.label1, tick.label2)}
    out = []
    for text in fig.findobj(Text):
        if not text.get_visible() or not text.get_text().strip() or (id(text) in ticks and id(text) not in shown):
            continue
        if not _visible_parents(text):
            continue
        out.append(text)
    return out


def _visible_parents(text: Text) -> bool:
    """A text inside an invisible axes or legend is not drawn."""
    axes = text.axes
    return axes is None or axes.get_visible()


def _short(text: Text) -> str:
    words = " ".join(text.get_text().split())
    return words if len(words) <= 40 else words[:37] + "..."


def _inside(box: Bbox, frame: Bbox, slack: float = 1.0) -> bool:
    return (box.x0 >= frame.x0 - slack and box.y0 >= frame.y0 - slack and box.x1 <= frame.x1 + slack
            and box.y1 <= frame.y1 + slack)


def _corners(text: Text, box: Bbox, renderer) -> np.ndarray:
    """The four corners of the text's own rectangle, turned as it is drawn (display pixels)."""
    angle = np.radians(text.get_rotation())
    if abs(np.sin(angle)) < 1e-6 or abs(np.cos(angle)) < 1e-6:   # upright or on its side: the box itself
        return np.array([[box.x0, box.y0], [box.x1, box.y0], [box.x1, box.y1], [box.x0, box.y1]])
    rotation = text.get_rotation()
    text.set_rotation(0)   # the unturned box: its width and height
    upright = Text.get_window_extent(text, renderer)
    text.set_rotation(rotation)
    w, h = upright.width, upright.height
    centre = np.array([(box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2])
    along, across = np.array([np.cos(angle), np.sin(angle)]), np.array([-np.sin(angle), np.cos(angle)])
    return np.array([centre + sx * w / 2 * along + sy * h / 2 * across
                     for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))])


def _overlapping(corners: list[np.ndarray], slack: float = 0.5) -> list[tuple[int, int]]:
    """Pairs of rectangles (4 corners each) that overlap by more than `slack` pixels: their upright bounds first,
    then the separating-axis test for those that are turned."""
    if len(corners) < 2:
        return []
    lo = np.array([c.min(axis=0) for c in corners]) + slack
    hi = np.array([c.max(axis=0) for c in corners]) - slack
    meet = (lo[:, None, 0] < hi[None, :, 0]) & (lo[None, :, 0] < hi[:, None, 0]) & \
        (lo[:, None, 1] < hi[None, :, 1]) & (lo[None, :, 1] < hi[:, None, 1])
    pairs = []
    for i, j in zip(*np.nonzero(np.triu(meet, 1))):
        if _separated(corners[i], corners[j], slack):
            continue
        pairs.append((int(i), int(j)))
    return pairs


def _separated(a: np.ndarray, b: np.ndarray, slack: float) -> bool:
    """Whether a line parallel to a side of either rectangle separates them (more than `slack` apart)."""
    for poly in (a, b):
        for k in range(2):
            edge = poly[k + 1] - poly[k]
            normal = np.array([-edge[1], edge[0]]) / (np.hypot(*edge) or 1.0)
            pa, pb = a @ normal, b @ normal
            if pa.max() - slack <= pb.min() or pb.max() - slack <= pa.min():
                return True
    return False
