"""Tune a variant's free parameters by hand, on the GPU at hand (the workflow's `tune: true` runs the same sweep).

    python -m matmulstudy.tools.tune gpu_double_buffer --out tuning.csv          # the registry's search space
    python -m matmulstudy.tools.tune gpu_jacket_3rows --set BX=32,64,128 --set BY=16,32

measure/tune.py says what a sweep does with each candidate.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import StudyError
from ..gpu import host
from ..measure.tune import sweep
from ..study.registry import load_registry
from ..study.settings import default_settings
from ..study.variant import Search


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("variant")
    p.add_argument("--set", action="append", default=[], metavar="NAME=V1,V2",
                   help="values to try for one define (repeatable); default: the registry's search space")
    p.add_argument("--size", type=int, default=4096)
    p.add_argument("--budget", type=float, default=600, help="seconds after which no new candidate starts")
    p.add_argument("--arch", default="auto")
    p.add_argument("--out", type=Path)
    args = p.parse_args(argv)
    try:
        variant = load_registry()[args.variant]
        if args.set:
            search = Search({name: tuple(int(v) for v in values.split(","))
                             for name, _, values in (item.partition("=") for item in args.set)})
        elif variant.search:
            search = variant.search
        else:
            raise StudyError(f"{variant.id} has no search space in the registry; give --set NAME=V1,V2")
        arch = host.arch_of(host.visible_gpu()["compute_capability"]) if args.arch == "auto" else args.arch
        df = sweep(variant, search, args.size, args.budget, arch, default_settings().checking)
    except (StudyError, ValueError, KeyError) as err:
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(1) from None
    print(df.to_string(index=False))
    if args.out:
        df.to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
