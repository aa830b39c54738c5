"""Draw every figure and page of the studies from their committed tables (no GPU needed).

The `report` rules call this; so can anyone with the committed results:

    python -m matmulstudy.render reports/h100            # one GPU's figures and summary page
    python -m matmulstudy.render --all reports           # every GPU, and the comparison across them
"""

from __future__ import annotations

import argparse
from pathlib import Path

from . import pages, plots
from .registry import load_registry

FIGURES = list(pages.FIGURES)


def render(report: Path, size: int | None = None) -> list[Path]:
    """reports/<gpu>/ tables -> figures/, README.md (the summary page) and provenance.rst."""
    registry = load_registry()
    study = pages.Study.load(report)
    size = size or study.size
    df, gpu, figures = study.results, study.gpu, Path(report) / "figures"
    hw = study.hardware
    hazards = set(hw.loc[~hw["sanitizer"].fillna("clean").str.startswith("clean"), "variant"]) \
        if "sanitizer" in hw else set()
    paths = plots.progression(df, registry, gpu, size, figures / "progression", hazards=hazards)
    if "int32" in set(df["dtype"]):
        paths += plots.progression(df, registry, gpu, size, figures / "progression_int32", dtype="int32")
    else:
        paths += plots.placeholder(f"no int32 measurements in this study (dtypes: {sorted(set(df['dtype']))})",
                                   figures / "progression_int32")
    paths += plots.size_sweep(df, registry, gpu["gpu_name"], figures / "size_sweep")
    if gpu.get("fp32_peak_gflops"):
        paths += plots.efficiency(study.summary, registry, gpu["gpu_name"], figures / "efficiency")
        paths += plots.roofline(study.summary, study.hardware, registry, gpu, size, figures / "roofline")
    else:
        for name in ("efficiency", "roofline"):
            paths += plots.placeholder("no GPU in this study: no cuBLAS, peak or bandwidth to compare with",
                                       figures / name)
    paths += plots.hardware(study.hardware, registry, gpu["gpu_name"], figures / "hardware")
    paths += plots.timing(df, registry, gpu["gpu_name"], size, figures / "timing")
    page, rst = Path(report) / "README.md", Path(report) / "provenance.rst"
    page.write_text(pages.study_page(study, registry))
    rst.write_text(pages.provenance_rst(study))
    return paths + [page, rst]


def render_gpus(reports: list[Path], out: Path, size: int = pages.DEFAULT_SIZE) -> list[Path]:
    """Every GPU's study side by side: out/figures/progression_by_gpu.* and out/README.md."""
    studies, registry = [pages.Study.load(r) for r in reports], load_registry()
    paths = plots.by_gpu({st.label: (st.summary, st.gpu) for st in studies}, registry, size,
                         Path(out) / "figures" / "progression_by_gpu")
    index = Path(out) / "README.md"
    index.write_text(pages.index_page(studies, registry, size))
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
        paths += render_gpus(folders, args.report, args.size or pages.DEFAULT_SIZE)
    for path in paths:
        print(path)


if __name__ == "__main__":
    main()
