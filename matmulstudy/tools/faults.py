"""The planted-fault suite: does the verification catch every wrong kernel, on every shape?

    python -m matmulstudy.tools.faults --out reports/h100/faults.csv

Each fault of tests/faults/faults.yaml (a kernel with one deliberate defect)
is built for the GPU at hand and run through the study's own measure/bench.py
on every shape of the suite, checked against the same GPU reference with
the same bound and tolerance as the study. Faults marked `racecheck` also
run under compute-sanitizer's racecheck. One row per fault and shape:

    fault, shape, expected (the defect can change the result there),
    check ("failed"/"passed" and its margin), racecheck, caught, by

A miss is a row expected but not caught; a false alarm, caught but not
expected. The suite passes with neither.
"""

from __future__ import annotations

import argparse
import io
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import yaml

from ..errors import StudyError
from ..gpu import host
from ..measure import bench, build, data, sanitize
from ..measure.devicecheck import References, workspace
from ..study.paths import ROOT
from ..study.registry import parse_variants
from ..study.settings import CHECK_ONLY, Checking, default_settings
from ..study.shapes import Shape
from ..study.variant import Variant

FAULTS_PATH = ROOT / "tests" / "faults" / "faults.yaml"
SEED = 0
_FAULT_KEYS = ("changes_result", "racecheck", "shapes")

# where a defect is live, by the name faults.yaml gives it
CHANGES = {
    "always": lambda shape, d: True,
    "k_tail": lambda shape, d: shape.K % int(d["TILE"]) != 0,
    "from_size": lambda shape, d: min(shape.M, shape.N) >= int(d["FROM_SIZE"]),
    "race": lambda shape, d: shape.K > int(d["TILE"]),
}


@dataclass(frozen=True)
class Fault:
    variant: Variant
    changes_result: str
    racecheck: bool
    shapes: tuple

    def live(self, shape: Shape) -> bool:
        return CHANGES[self.changes_result](shape, self.variant.defines)


def load_suite(path: Path = FAULTS_PATH, tolerance: float = 8) -> list[Fault]:
    """The faults, with TAU set to the tolerance they are checked with."""
    with open(path) as fh:
        raw = yaml.safe_load(fh)
    shapes = tuple(Shape(*s) for s in raw["shapes"])
    entries = [{k: v for k, v in f.items() if k not in _FAULT_KEYS} for f in raw["faults"]]
    variants = parse_variants(entries, Path(path).parent, str(path), chapters=raw.get("chapters"))
    faults = []
    for f, variant in zip(raw["faults"], variants.values()):
        if f.get("changes_result") not in CHANGES:
            raise StudyError(f"{path}: {variant.id}: changes_result must be one of {sorted(CHANGES)}")
        if "TAU" in variant.defines:
            variant = variant.with_defines({"TAU": tolerance})
        own = tuple(Shape(*s) for s in f["shapes"]) if f.get("shapes") else shapes
        faults.append(Fault(variant, f["changes_result"], bool(f.get("racecheck")), own))
    return faults


def run_suite(arch: str, faults: list[Fault], checking: Checking, log=sys.stdout,
              max_size: int | None = None) -> pd.DataFrame:
    """Every fault on its shapes (those with every dimension <= max_size, if given)."""
    rows = []
    with workspace(arch, log) as (gpu, tmp, harness):
        launcher = tmp / "launch"
        if any(f.racecheck for f in faults):
            sanitize.build_launcher(launcher, log)
        cubins = {}
        for f in faults:
            cubins[f.variant.id] = tmp / f"{f.variant.id}.cubin"
            build.build(f.variant, cubins[f.variant.id], tmp / f"{f.variant.id}.json", arch, log)
        shapes = sorted({s for f in faults for s in f.shapes if max_size is None or max(s) <= max_size},
                        key=lambda s: s.flop)
        for shape in shapes:
            a, b = data.make_inputs(shape, SEED)
            with References(gpu, harness, a, b) as references:
                for f in faults:
                    if shape not in f.shapes:
                        continue
                    reference = references[f.variant.precision]
                    res = bench.measure(f.variant, shape, SEED, a, b, cubins[f.variant.id], CHECK_ONLY, checking,
                                        harness=harness, session=gpu, reference=reference).iloc[0]
                    race = (sanitize.run("racecheck", launcher, cubins[f.variant.id], f.variant, shape, log)
                            if f.racecheck else None)
                    rows.append(_row(f, shape, res, race))
                    print(" ".join(f"{k}={v}" for k, v in rows[-1].items()), file=log, flush=True)
    return pd.DataFrame(rows)


def _row(f: Fault, shape: Shape, res: pd.Series, race: dict | None) -> dict:
    by_check = not bool(res["verified"])
    by_race = race is not None and not race["clean"]
    outcome = "failed" if by_check else "passed"
    check = (f"{outcome}: margin {res['margin']:.3g}, {int(res['bad_elements'])} wrong, "
             f"{int(res['unwritten_elements'])} unwritten")
    racecheck = "not run" if race is None else (
        f"{race['errors']} errors, {race['warnings']} warnings" if race["status"] == "ok" else race["status"])
    by = "+".join(name for name, hit in (("check", by_check), ("racecheck", by_race)) if hit) or "-"
    return {"fault": f.variant.id, "what": f.variant.title, "shape": shape.tag, "expected": f.live(shape),
            "check": check, "racecheck": racecheck, "caught": by_check or by_race, "by": by}


def misses(table: pd.DataFrame) -> pd.DataFrame:
    """Rows where the defect was live and nothing caught it, or where a harmless one was flagged."""
    return table[table["expected"].astype(bool) != table["caught"].astype(bool)]


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, help="write the table here (CSV)")
    p.add_argument("--arch", default="auto", help="nvcc target (default: the GPU's own)")
    p.add_argument("--max-size", type=int, help="only shapes with every dimension at most this")
    args = p.parse_args(argv)
    try:
        arch = host.arch_of(host.visible_gpu()["compute_capability"]) if args.arch == "auto" else args.arch
        checking = default_settings().checking
        table = run_suite(arch, load_suite(tolerance=checking.tolerance), checking, log=io.StringIO(),
                          max_size=args.max_size)
    except StudyError as err:
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(1) from None
    if args.out:
        table.to_csv(args.out, index=False)
    print(table.to_string(index=False))
    bad = misses(table)
    print(f"\n{len(table)} runs, {int(table['expected'].sum())} with a live defect, "
          f"{int(table['caught'].sum())} caught, {len(bad)} misses or false alarms")
    if len(bad):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
