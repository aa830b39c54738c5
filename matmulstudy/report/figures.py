"""The one table of a study's figures.

Each entry is one figure: its name (figures/<name>.svg; the progression's
also .png, for the README), the function of plots/ that draws it from a
Study (by name, with its arguments: the workflow reads this table without
importing Matplotlib), its category in Snakemake's HTML report, its caption
file (workflow/report/), and the line the summary page gives it. A figure
of a row or a panel per variant is one figure per chapter of the registry
(`<name>_<chapter>`): all of them in one made a page of 7,500 pixels whose
words were 4 pixels high at the width a page shows it. render.py draws
them, report.smk names their outputs, captions and categories, pages.py
lists them. Adding a figure is an entry here, its drawing function and its
caption; every precision but the base one (matmulstudy/precisions.py) has a
progression of its own chapters here, with one caption for them all.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .. import precisions
from ..study import paths
from ..study.registry import load_registry

if TYPE_CHECKING:   # the workflow reads this table at every start: no pandas or Matplotlib for it
    from .committed import Study


@dataclass(frozen=True)
class Figure:
    name: str
    drawn_by: str
    category: str
    caption: str
    what: str
    args: tuple = ()   # drawn_by's arguments after (study, stem)
    chapter: str | None = None   # the chapter it draws alone (its id), if it is one of a figure per chapter
    chapter_title: str = ""      # and that chapter's title
    png: bool = False   # a PNG beside the SVG (the README's hero)

    @property
    def files(self) -> tuple[str, ...]:
        return ("svg", "png") if self.png else ("svg",)

    def draw(self, study: "Study", stem: Path) -> list[Path]:
        """Draw it: figures/<name>.svg (and .png) from the study."""
        from . import plots
        from .plots.style import footnote
        with footnote(study.skipped_note):   # every figure names what the study's GPU could not run
            return getattr(plots, self.drawn_by)(study, stem, *self.args)


def _chapter_progression(p: precisions.Precision) -> Figure:
    """The progression of the chapters that compute in precision p, against cuBLAS in p."""
    return Figure(f"progression_{p.id}", "chapter_progression", "1. Progression", "progression_precision.rst",
                  f"the {p.adjective} chapter ({p.label} arithmetic) at the reference size, with {p.reference_name}",
                  (p,))


def _per_chapter(name: str, drawn_by: str, category: str, caption: str, what: str) -> tuple[Figure, ...]:
    """One figure for each chapter of the registry: <name>_<chapter id>, drawn by drawn_by(study, stem, chapter id)."""
    return tuple(Figure(f"{name}_{c.id}", drawn_by, category, caption, what, (c.id,), c.id, c.title)
                 for c in CHAPTERS)


def family(figure: Figure) -> str:
    """The figure's name without its chapter: the name its chapters' figures share."""
    return figure.name.removesuffix(f"_{figure.chapter}") if figure.chapter else figure.name


CHAPTERS = tuple(load_registry(check_files=False).chapters.values())
_EACH_ITS_OWN = [precisions.BASE.label] + [f"{p.label} for the {p.label} {p.adjective} steps" for p in precisions.others()]

FIGURES = (
    Figure("progression", "progression", "1. Progression", "progression.rst",
           f"the optimisation progression at the reference size, with cuBLAS {precisions.BASE.label} and the "
           f"{precisions.BASE.label} peak", png=True),
    Figure("progression_int32", "progression_int32", "1. Progression", "progression_int32.rst",
           "the same for seed 003's int32 mode"),
    *(_chapter_progression(p) for p in precisions.others()),
    Figure("best_by_size", "best_by_size", "2. Scaling with size", "best_by_size.rst",
           "each chapter's best step at every shape as a share of cuBLAS in its own precision: where hand-written "
           "kernels win"),
    *_per_chapter("size_sweep", "size_sweep", "2. Scaling with size", "size_sweep.rst",
                  "GFLOP/s against size for each step of a chapter, with the baselines and references, and the "
                  "interquartile range"),
    *_per_chapter("efficiency", "efficiency", "3. Efficiency", "efficiency.rst",
                  f"each step as a fraction of cuBLAS in its own precision ({', or '.join(_EACH_ITS_OWN)}) "
                  f"and of its precision's peak, per shape"),
    *_per_chapter("roofline", "roofline", "3. Efficiency", "roofline.rst",
                  "each step at its arithmetic intensity, under the measured bandwidth and the peak of its "
                  "precision"),
    *_per_chapter("power", "power", "3. Efficiency", "power.rst",
                  "each step run back to back at the power cap: its speed against the GPU's power, with the power "
                  "limit and lines of equal GFLOP per joule"),
    *_per_chapter("hardware", "hardware", "4. What explains each step", "hardware.rst",
                  "registers, occupancy, instruction mix and the ncu counters per step"),
    *_per_chapter("timing", "timing", "5. Timing noise", "timing.rst",
                  "every timed sample at the reference size, as its deviation from the median"),
    *_per_chapter("margin", "margin", "8. Verification", "margin.rst",
                  "each variant's largest error over the bound it is checked against, per shape"),
)


def report_outputs(label: str) -> list[str]:
    """What the plot_report rule writes for one study: every figure, the page, the caption facts."""
    return [paths.FIGURE.format(label=label, name=f.name, ext=ext) for f in FIGURES for ext in f.files] + [
        paths.study_file("page", label), paths.study_file("provenance", label)]


GPUS_FIGURES = [paths.GPUS_FIGURE.format(precision=p.id) for p in precisions.TABLE]   # across GPUs, one a precision
GPUS_OUTPUTS = [*GPUS_FIGURES, paths.GPUS_PAGE]
