"""Every figure legible where it is shown: drawn again from each committed study's tables, checked from the
renderer's own extents (report/plots/legible.py), and the committed files within their limits."""

import warnings

import matplotlib.pyplot as plt
import pytest
from PIL import Image

from conftest import ROOT
from matmulstudy.report import render
from matmulstudy.report.committed import Study
from matmulstudy.report.figures import FIGURES
from matmulstudy.report.plots import legible
from matmulstudy.report.plots.legible import IllegibleFigure

COMMITTED = render.studies_in(ROOT / "reports")
TALLEST_PNG = 2400        # pixels: a figure taller than this is one to split per chapter
STUDY_BYTES = 10_000_000  # a committed study, figures, pages and tables together


@pytest.mark.parametrize("folder", COMMITTED, ids=lambda f: f.name)
def test_every_figure_of_a_committed_study_is_legible_at_the_width_a_page_shows_it(folder, tmp_path):
    """No two texts overlap, none is cut off, none is under 9 pixels at 900 pixels wide: IllegibleFigure, which
    every save warns with, fails the test here. Each figure drawn is also the committed one, byte for byte."""
    study = Study.load(folder)
    with warnings.catch_warnings():
        warnings.simplefilter("error", IllegibleFigure)
        drawn = [path for f in FIGURES for path in f.draw(study, tmp_path / f.name)]
    assert [p.name for p in drawn if p.read_bytes() != (folder / "figures" / p.name).read_bytes()] == []
    assert sorted(p.name for p in drawn) == sorted(p.name for p in (folder / "figures").iterdir())   # none stale


def test_the_figures_across_gpus_are_legible(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error", IllegibleFigure)
        drawn = render.render_gpus(COMMITTED, tmp_path)
    assert [p.name for p in drawn if p.suffix == ".svg" and p.read_bytes() != (ROOT / "reports" / "figures" / p.name)
            .read_bytes()] == []


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
