"""Draw every figure and the progression notes of one study from its tables.

The `report` rule calls this; so can anyone with the committed results and
no GPU:  python -m matmulstudy.render reports/h100 --size 4096
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

from . import explain, plots
from .registry import load_registry


def render(report: Path, size: int) -> list[Path]:
    """reports/<gpu>/{results,hardware}.csv + gpu.json -> figures/ and progression.md."""
    registry = load_registry()
    df = pd.read_csv(report / "results.csv")
    hw = pd.read_csv(report / "hardware.csv")
    with open(report / "gpu.json") as fh:
        gpu = json.load(fh)
    gpu["gpu_name"] = gpu.get("gpu_name") or "no GPU (CPU variants only)"
    figures = report / "figures"
    paths = plots.size_sweep(df, registry, gpu["gpu_name"], figures / "size_sweep")
    paths += plots.progression(df, registry, gpu, size, figures / "progression")
    if "int32" in set(df["dtype"]):
        paths += plots.progression(df, registry, gpu, size, figures / "progression_int32", dtype="int32")
    paths += plots.hardware(hw, registry, gpu["gpu_name"], figures / "hardware")
    notes = report / "progression.md"
    notes.write_text(explain.markdown(explain.progression_table(df, hw, registry, size), gpu["gpu_name"], size))
    return paths + [notes]


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("report", type=Path, help="a study's folder, e.g. reports/h100")
    p.add_argument("--size", type=int, default=4096, help="size of the progression chart (default 4096)")
    args = p.parse_args(argv)
    for path in render(args.report, args.size):
        print(path)


if __name__ == "__main__":
    main()
