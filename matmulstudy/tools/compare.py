"""How far two studies of the same GPU agree: the run-to-run reproducibility, or what a change of the code
moved.

    python -m matmulstudy.tools.compare reports/h100 reports/h100-repeat --out reports/h100/repeat.csv
    python -m matmulstudy.tools.compare <the study before> reports/h100 --out reports/h100/before.csv

For every variant, dtype and shape measured (and verified) in both, the
ratio of the second study's median time to the first's and, where both
folders hold their samples (samples.csv.gz), each study's fastest and slowest
sample and whether those two ranges overlap: a median that moved although
both studies sampled the same spread of times is a kernel with two modes
(times that cluster at two values), not a harness that drifted. Both
studies must come from one GPU model; nothing is re-measured.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

from ..errors import StudyError
from ..report.results import read_results
from ..study.paths import STUDY_FILES

KEYS = ["dtype", "variant", "M", "N", "K"]


def agreement(first: pd.DataFrame, second: pd.DataFrame,
              first_samples: pd.DataFrame | None = None, second_samples: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per measurement in both summaries: medians and their ratio - 1, and whether the second median
    lies inside the first study's interquartile range (where its summary has the quartiles).

    With both studies' samples (their samples.csv.gz), also each one's fastest
    and slowest sample and `ranges_overlap`.
    """
    cols = KEYS + ["median_ms"]
    quartiles = [c for c in ("q1_ms", "q3_ms") if c in first]
    a = first[first["verified"]][cols + quartiles]
    b = second[second["verified"]][cols]
    out = a.merge(b, on=KEYS, suffixes=("_first", "_second"))
    out["difference"] = out["median_ms_second"] / out["median_ms_first"] - 1
    if len(quartiles) == 2:   # the second median inside the first study's interquartile range
        out["within_first_iqr"] = out["median_ms_second"].between(out["q1_ms"], out["q3_ms"])
        out = out.drop(columns=quartiles)
    if first_samples is not None and second_samples is not None:
        ranges = sample_range(first_samples).merge(sample_range(second_samples), on=KEYS,
                                                   suffixes=("_first", "_second"))
        out = out.merge(ranges, on=KEYS, how="left")
        out["ranges_overlap"] = (out[["fastest_ms_first", "fastest_ms_second"]].max(axis=1)
                                 <= out[["slowest_ms_first", "slowest_ms_second"]].min(axis=1))
    return out


def sample_range(samples: pd.DataFrame) -> pd.DataFrame:
    """The fastest and slowest timed sample of each verified measurement."""
    timed = samples[samples["verified"].astype(bool)].groupby(KEYS)["time_ms"]
    return pd.DataFrame({"fastest_ms": timed.min(), "slowest_ms": timed.max()}).reset_index()


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
    samples = [folder / STUDY_FILES["results"] for folder in (args.first, args.second)]
    out = agreement(pd.read_csv(args.first / "summary.csv"), pd.read_csv(args.second / "summary.csv"),
                    *([read_results(f) for f in samples] if all(f.exists() for f in samples) else []))
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
