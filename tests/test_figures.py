"""Every figure legible where it is shown: the check (report/plots/legible.py), tried on figures laid out
wrong, and the committed files within their limits. The committed figures themselves are drawn again, checked
and compared byte for byte by the probe's render (tests/test_report.py's `rendered`)."""

import os
import subprocess
import sys

import matplotlib.pyplot as plt
import pytest
from PIL import Image

from conftest import ROOT
from matmulstudy.report import render
from matmulstudy.report.figures import FIGURES
from matmulstudy.report.plots import legible

COMMITTED = render.studies_in(ROOT / "reports")
TALLEST_PNG = 2400        # pixels: a figure taller than this is one to split per chapter
STUDY_BYTES = 10_000_000  # a committed study, figures, pages and tables together


@pytest.mark.parametrize("folder", COMMITTED, ids=lambda f: f.name)
def test_a_committed_study_holds_its_figures_and_no_other(folder):
    """Each figure of the table, in each of its forms, and nothing stale (a figure renamed or split per chapter).
    That each is legible and is what its tables draw, byte for byte, the probe's render checks
    (tests/test_report.py's `rendered`: an IllegibleFigure stops it)."""
    expected = {f"{f.name}.{ext}" for f in FIGURES for ext in f.files}
    assert sorted(p.name for p in (folder / "figures").iterdir()) == sorted(expected)


def _title_over_a_panel():
    fig, axes = plt.subplots(2, 1, figsize=(8, 6))
    for ax, name in zip(axes, ("first panel", "second panel")):
        ax.plot([0, 1], [0, 1])
        ax.set_title(name)
    fig.tight_layout()
    return fig


def test_a_title_moved_onto_a_panel_is_found():
    """The check of a figure finds what a reader would see: the figure's title drawn over the first panel's (as
    size_sweep's was), a text off the saved canvas, a word too small at the page's width; and nothing in a figure
    laid out apart."""
    fig = _title_over_a_panel()
    assert legible.problems(fig) == []
    fig.canvas.draw()
    panel = fig.axes[0].title.get_window_extent()   # the figure's title where the first panel's is
    fig.suptitle("the figure's title", x=(panel.x0 + panel.x1) / 2 / fig.bbox.width, y=panel.y0 / fig.bbox.height,
                 va="bottom")
    found = legible.problems(fig)
    assert found == ["'first panel' overlaps 'the figure's title'"]
    plt.close(fig)

    fig = _title_over_a_panel()
    fig.axes[1].annotate("cut off by its axes", (0.9, 0.5), xycoords="axes fraction", annotation_clip=False,
                         clip_on=True)
    fig.axes[0].set_xlabel("tiny", fontsize=4)
    found = legible.problems(fig)
    assert any("'cut off by its axes' leaves its clip box" in p for p in found), found
    assert any(p.startswith("'tiny' is") for p in found), found
    plt.close(fig)


def test_a_figure_wider_than_the_page_is_judged_at_the_page_width():
    """A 20-inch figure is shown at 900 pixels: its 10-point words are 6 pixels high there, too small; the same
    words in a 10-inch figure are legible."""
    for width, small in ((20, True), (10, False)):
        fig, ax = plt.subplots(figsize=(width, 4))
        ax.set_title("ten points")
        ax.title.set_fontsize(10)
        assert any(p.startswith("'ten points' is") for p in legible.problems(fig)) == small, width
        plt.close(fig)


@pytest.mark.parametrize("folder", [*COMMITTED, ROOT / "reports"], ids=lambda f: f.name)
def test_a_committed_study_is_light_and_its_pngs_not_too_tall(folder):
    pngs = sorted(folder.rglob("*.png"))
    assert [(p.name, Image.open(p).height) for p in pngs if Image.open(p).height > TALLEST_PNG] == []
    if folder != ROOT / "reports":
        assert sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) <= STUDY_BYTES


def test_the_renders_warning_filter_stops_a_render_at_an_illegible_figure(tmp_path):
    """The probe's render runs with PYTHONWARNINGS set to test_report.py's LEGIBLE: an illegible figure saved there
    raises (its warning's first words and base class are what the filter names), a legible one does not."""
    from test_report import LEGIBLE
    draw = ("import sys, pathlib, matplotlib.pyplot as plt; from matmulstudy.report.plots import style; "
            "fig, ax = plt.subplots(figsize=(8, 3)); ax.set_title('a title', fontsize=float(sys.argv[1])); "
            f"style.save(fig, pathlib.Path({str(tmp_path / 'x')!r}))")
    for size, fails in (("3", True), ("11", False)):
        proc = subprocess.run([sys.executable, "-c", draw, size], capture_output=True, text=True, timeout=120,
                              env={**os.environ, "PYTHONWARNINGS": LEGIBLE}, cwd=ROOT)
        assert (proc.returncode != 0) == fails and ("IllegibleFigure: illegible figure x:" in proc.stderr) == fails, \
            proc.stderr[-500:]
