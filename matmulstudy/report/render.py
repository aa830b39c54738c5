"""Draw every figure and page of the studies from their committed tables (no GPU needed).

The `plot_report` rules call this; so can anyone with the committed results:

    python -m matmulstudy.report.render reports/h100     # one GPU's figures and summary page
    python -m matmulstudy.report.render --all reports    # every GPU, and the comparison across them

Each study is drawn with its own registry and config (committed.py), never
the live ones.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from . import pages, plots, steps
from .committed import DEFAULT_SIZE, Study
from .figures import FIGURES
from .study_facts import provenance_rst


def render(report: Path, size: int | None = None, only: list[str] | None = None) -> list[Path]:
    """reports/<gpu>/ tables -> figures/ (those named in `only`, or all), README.md and provenance.rst."""
    study = Study.load(report, size)
    figures = Path(report) / "figures"
    paths = [p for f in FIGURES if only is None or f.name in only for p in f.draw(study, figures / f.name)]
    page, rst = Path(report) / "README.md", Path(report) / "provenance.rst"
    page.write_text(pages.study_page(study))
    rst.write_text(provenance_rst(study))
    return paths + [page, rst] + write_step_pages(study)


def write_step_pages(study: Study) -> list[Path]:
    """steps/: a page per step (steps.py), the folder's earlier pages removed."""
    folder = study.folder / steps.FOLDER
    for old in folder.glob("*.md"):
        old.unlink()
    made = steps.step_pages(study) if not study.cpu_only else {}
    if made:
        folder.mkdir(exist_ok=True)
    for name, text in made.items():
        (folder / name).write_text(text)
    return [folder / name for name in made]


def render_gpus(reports: list[Path], out: Path, size: int = DEFAULT_SIZE) -> list[Path]:
    """Every GPU's study side by side: out/figures/progression_by_gpu.* and out/README.md."""
    studies = [Study.load(r) for r in reports]
    paths = plots.by_gpu(studies, size, Path(out) / "figures" / "progression_by_gpu")
    index = Path(out) / "README.md"
    index.write_text(pages.index_page(studies, size))
    return paths + [index]


def studies_in(folder: Path) -> list[Path]:
    """The study folders under reports/: those with a results.csv."""
    return sorted(p.parent for p in Path(folder).glob("*/results.csv"))


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("report", type=Path, help="a study's folder (reports/h100), or with --all the reports folder")
    p.add_argument("--all", action="store_true", help="render every study under it and the cross-GPU page")
    p.add_argument("--size", type=int, help="size of the progression chart (default: the study's reference_size)")
    args = p.parse_args(argv)
    folders = studies_in(args.report) if args.all else [args.report]
    paths = [path for folder in folders for path in render(folder, args.size)]
    if args.all:
        paths += render_gpus(folders, args.report, args.size or DEFAULT_SIZE)
    for path in paths:
        print(path)


if __name__ == "__main__":
    main()
