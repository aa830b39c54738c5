"""Draw every figure and page of the studies from their committed tables (no GPU needed).

The `plot_report` rules call this; so can anyone with the committed results:

    python -m matmulstudy.report.render reports/h100     # one GPU's figures and summary page
    python -m matmulstudy.report.render --all reports    # every GPU, and the comparison across them
    python -m matmulstudy.report.render reports/h100 --only size_sweep   # some figures, and the pages

Each study is drawn with its own registry and config (committed.py), never
the live ones.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
from pathlib import Path

from . import pages, plots, steps
from .. import precisions
from .committed import DEFAULT_SIZE, Study, check_folder, studies_in
from .figures import FIGURES, family
from .study_facts import provenance_rst
from ..errors import StudyError
from ..study.registry import load_registry


def render(report: Path, size: int | None = None, only: list[str] | None = None, workers: int = 1) -> list[Path]:
    """reports/<gpu>/ tables -> figures/ (those named in `only`, or all), README.md and provenance.rst.

    With several `workers`, the figures are drawn side by side, each in a process of its own forked from
    this one before it reads the study (the same bytes as one after another: no figure depends on what
    another left in Matplotlib's state; tests/test_report.py checks it). The hardware figure alone takes a
    quarter of the time of all of them."""
    check_folder(report)   # before any worker starts
    names = [f.name for f in FIGURES if only is None or f.name in only or family(f) in only]
    if workers > 1 and len(names) > 1:
        with multiprocessing.get_context("fork").Pool(min(workers, len(names)), maxtasksperchild=1) as pool:
            drawn = pool.starmap(_draw, [(report, size, name) for name in names], chunksize=1)
        study = Study.load(report, size)
    else:
        study = Study.load(report, size)
        drawn = [_draw(report, size, name, study) for name in names]
    paths = [path for figure in drawn for path in figure]
    if only is None:
        remove_others(Path(report) / "figures", paths)
    page, rst = Path(report) / "README.md", Path(report) / "provenance.rst"
    written = [path for path, text in ((page, pages.study_page(study)), (rst, provenance_rst(study)))
               if write_changed(path, text)]
    return paths + written + write_step_pages(study)


def write_changed(path: Path, text: str) -> bool:
    """Write `text` to `path` unless the file holds it already (its time then stays: a page that did not change is
    not rewritten by a render of one figure); whether it wrote."""
    if path.is_file() and path.read_text() == text:
        return False
    path.write_text(text)
    return True


def remove_others(folder: Path, kept: list[Path]) -> None:
    """Every file of `folder` but those just written: a figure no longer drawn (renamed, split per chapter, a
    form no longer written) goes."""
    for old in sorted(folder.iterdir()):
        if old not in kept:
            old.unlink()


def _draw(report: Path, size: int | None, name: str, study: Study | None = None) -> list[Path]:
    """One figure of the study at `report` (read here, unless given)."""
    study = study or Study.load(report, size)
    figure = next(f for f in FIGURES if f.name == name)
    return figure.draw(study, Path(report) / "figures" / name)


def write_step_pages(study: Study) -> list[Path]:
    """steps/: a page per step (steps.py), the folder's other pages removed; those written (write_changed)."""
    folder = study.folder / steps.FOLDER
    made = steps.step_pages(study) if not study.cpu_only else {}
    for old in folder.glob("*.md"):
        if old.name not in made:
            old.unlink()
    if made:
        folder.mkdir(exist_ok=True)
    return [folder / name for name, text in made.items() if write_changed(folder / name, text)]


def render_gpus(reports: list[Path], out: Path, size: int = DEFAULT_SIZE) -> list[Path]:
    """Every GPU's study side by side: out/figures/progression_by_gpu_<precision>.svg and out/README.md."""
    studies = [Study.load(r) for r in reports]
    paths = [path for p in precisions.TABLE
             for path in plots.by_gpu(studies, size, Path(out) / "figures" / f"progression_by_gpu_{p.id}", p)]
    remove_others(Path(out) / "figures", paths)
    index = Path(out) / "README.md"
    index.write_text(pages.index_page(studies, size, load_registry(check_files=False)))
    return paths + [index]


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("report", type=Path, help="a study's folder (reports/h100), or with --all the reports folder")
    p.add_argument("--all", action="store_true", help="render every study under it and the cross-GPU page")
    p.add_argument("--size", type=int, help="size of the progression chart (default: the study's reference_size)")
    p.add_argument("--workers", type=int, default=1, help="figures drawn side by side (default: one at a time)")
    p.add_argument("--only", nargs="+", metavar="FIGURE",
                   choices=list(dict.fromkeys([f.name for f in FIGURES] + [family(f) for f in FIGURES])),
                   help="draw these figures alone, or every chapter's of a figure per chapter (size_sweep); the "
                        "pages are written in full")
    args = p.parse_args(argv)
    folders = studies_in(args.report) if args.all else [args.report]
    try:
        paths = [path for folder in folders for path in render(folder, args.size, args.only, args.workers)]
        if args.all:
            paths += render_gpus(folders, args.report, args.size or DEFAULT_SIZE)
    except StudyError as err:
        sys.exit(f"error: {err}")
    for path in paths:
        print(path)


if __name__ == "__main__":
    main()
