"""How far two studies of the same GPU agree: the run-to-run reproducibility.

    python -m matmulstudy.compare reports/h100 reports/h100-repeat --out reports/h100/repeat.csv

For every variant, dtype and shape measured (and verified) in both, the
ratio of the second study's median time to the first's. Both studies must
come from one GPU model; their summaries are read, nothing is re-measured.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

from .errors import StudyError

KEYS = ["dtype", "variant", "M", "N", "K"]


def agreement(first: pd.DataFrame, second: pd.DataFrame) -> pd.DataFrame:
    """One row per measurement in both summaries: medians and their ratio - 1."""
    cols = KEYS + ["median_ms"]
    a = first[first["verified"]][cols]
    b = second[second["verified"]][cols]
    out = a.merge(b, on=KEYS, suffixes=("_first", "_second"))
    out["difference"] = out["median_ms_second"] / out["median_ms_first"] - 1
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("first", type=Path, help="a study's folder, e.g. reports/h100")
    p.add_argument("second", type=Path, help="the same study run again, e.g. reports/h100-repeat")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    names = []
    for folder in (args.first, args.second):
        with open(folder / "gpu.json") as fh:
            names.append(json.load(fh).get("gpu_name"))
    if names[0] != names[1]:
        raise StudyError(f"the studies ran on different GPUs ({names[0]}, {names[1]}): nothing to compare")
    out = agreement(pd.read_csv(args.first / "summary.csv"), pd.read_csv(args.second / "summary.csv"))
    out.to_csv(args.out, index=False)
    big = out[out[["M", "N", "K"]].min(axis=1) >= 1024]
    worst = big.loc[big["difference"].abs().idxmax()] if not big.empty else None
    print(f"{len(out)} measurements in both; sizes >= 1024: largest difference "
          + (f"{worst['difference']:+.2%} ({worst['variant']} {worst['dtype']} "
             f"{worst['M']}x{worst['N']}x{worst['K']})" if worst is not None else "none"))


if __name__ == "__main__":
    try:
        main()
    except StudyError as err:
        raise SystemExit(f"error: {err}") from None
