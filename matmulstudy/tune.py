"""Tune a variant's free parameters on the GPU at hand.

    python -m matmulstudy.tune gpu_jacket_3rows --set BX=32,64,128 --set BY=8,16,32 \\
        --size 4096 --out reports/h100/tuning.csv

Every combination of the values is built with nvcc (-D defines, the source
is never edited), verified on a ragged shape and on the timing shape, and
timed as the study times it; a combination that does not build, launch or
verify is recorded with the reason. The best verified one is what the
registry's defaults should say.
"""

from __future__ import annotations

import argparse
import io
import itertools
import sys
import tempfile
from pathlib import Path

import pandas as pd

from . import bench, build, data, host
from .config import Shape, Timing, default_settings
from .errors import StudyError
from .registry import load_registry

CHECK_SHAPE = Shape(1001, 1003, 999)   # ragged in every dimension


def tune(variant_id: str, grid: dict[str, list[int]], size: int, repetitions: int, arch: str) -> pd.DataFrame:
    from .devicecheck import DeviceReference
    from .gpu import GpuSession
    base = load_registry()[variant_id]
    timing_shape = Shape(size, size, size)
    timing = Timing(warmup=3, cache="cold", min_samples=repetitions, max_samples=repetitions, max_noise=0.005,
                    max_time_s=10.0, throttle_fraction=0.9)
    check = default_settings().check
    rows = []
    with tempfile.TemporaryDirectory() as tmp, GpuSession() as gpu:
        tmp = Path(tmp)
        harness = tmp / "harness.cubin"
        build.build_harness(arch, harness, io.StringIO())
        problems = {}   # shape -> (A, B, its reference on the GPU)
        for shape in (CHECK_SHAPE, timing_shape):
            a, b = data.make_inputs(shape, 0)
            problems[shape] = (a, b, DeviceReference(gpu, harness, a, b))
        for values in itertools.product(*grid.values()):
            defines = dict(zip(grid, values))
            row = {"variant": variant_id, "defines": " ".join(f"{k}={v}" for k, v in defines.items())}
            try:
                variant = base.with_defines(defines)
                cubin = tmp / "k.cubin"
                report = build.build(variant, cubin, tmp / "k.json", arch, io.StringIO())
                row.update(registers=report["registers"], shared_bytes=report["shared_bytes"],
                           spill_bytes=report["spill_store_bytes"] + report["spill_load_bytes"])
                for shape, (a, b, reference) in problems.items():
                    res = bench.measure(variant, shape, 0, a, b, cubin, timing, check, harness=harness,
                                        session=gpu, reference=reference)
                    if not res["verified"].all():
                        raise StudyError(f"verification failed on {shape.tag}")
                row.update(median_gflops=res["gflops"].median(), q1_gflops=res["gflops"].quantile(0.25),
                           q3_gflops=res["gflops"].quantile(0.75), status="ok")
            except Exception as err:   # a combination that cannot run is a result, not a crash
                row["status"] = f"{type(err).__name__}: {str(err).splitlines()[0][:160]}"
            rows.append(row)
            print(row, flush=True)
    return pd.DataFrame(rows).sort_values("median_gflops", ascending=False, na_position="last")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("variant")
    p.add_argument("--set", action="append", default=[], metavar="NAME=V1,V2",
                   help="values to try for one define (repeatable)")
    p.add_argument("--size", type=int, default=4096)
    p.add_argument("--repetitions", type=int, default=10)
    p.add_argument("--arch", default="auto")
    p.add_argument("--out", type=Path)
    args = p.parse_args(argv)
    try:
        grid = {}
        for item in args.set:
            name, _, values = item.partition("=")
            grid[name] = [int(v) for v in values.split(",")]
        arch = host.arch_of(host.visible_gpu()["compute_capability"]) if args.arch == "auto" else args.arch
        df = tune(args.variant, grid, args.size, args.repetitions, arch)
    except (StudyError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(1) from None
    print(df.to_string(index=False))
    if args.out:
        header = not args.out.exists()
        df.assign(size=args.size).to_csv(args.out, mode="a", header=header, index=False)


if __name__ == "__main__":
    main()
