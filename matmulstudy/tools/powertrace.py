"""A power trace: one variant run back to back for a while, NVML read every few milliseconds.

    python -m matmulstudy.tools.powertrace gpu_wgmma_grouped --size 8192 --seconds 3 --out trace.csv
    python -m matmulstudy.tools.powertrace cublas --size 4096x4096x8192 --seconds 2

The variant is verified once on the shape (every element against the GPU's
float64 reference), then launched back to back, hot, as the energy phase
runs it (gpu/timer.py's BackToBack: ~50 ms queued ahead), for `--seconds`.
Every ~2 ms NVML is read: SM clock, power, the total-energy counter,
temperature and the clock-event reasons, with the launches finished by
then. One row per reading; the last lines say what a long run gets (its
GFLOP/s, joules per launch, mean power) and how often the energy counter
moved. It shows when the power cap sets in, and the readings are the
material the throttle handling is tested with (tests/data/).
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import StudyError
from ..gpu import host, nvml
from ..gpu.timer import POLL_S, BackToBack
from ..measure import bench, build, data
from ..measure.devicecheck import DeviceReference, workspace
from ..study.registry import load_registry
from ..study.settings import CHECK_ONLY, default_settings
from ..study.shapes import Shape



def trace(variant_id: str, shape: Shape, seconds: float, arch: str) -> pd.DataFrame:
    variant = load_registry()[variant_id]
    if not variant.is_gpu:
        raise StudyError(f"{variant.id} does not run on the GPU")
    with workspace(arch, io.StringIO()) as (gpu, tmp, harness):
        cubin = None
        if variant.is_built:
            cubin = tmp / f"{variant.id}.cubin"
            build.build(variant, cubin, tmp / f"{variant.id}.json", variant.target(arch), io.StringIO())
        a, b = data.make_inputs(shape, 0)
        with DeviceReference(gpu, harness, a, b, variant.precision) as reference:
            checked = bench.measure(variant, shape, 0, a, b, cubin, CHECK_ONLY, default_settings().checking,
                                    harness=harness, session=gpu, reference=reference)
            if not checked["verified"].all():
                raise StudyError(f"{variant.id} did not verify on {shape.tag}: no trace of a wrong result")
            d_c = gpu.empty(shape.M * shape.N * 4)
            launch, _ = bench.gpu_launch(gpu, variant, cubin, shape, *reference.operands, d_c)
            return _run(gpu, launch, seconds, shape)


def _run(gpu, launch, seconds: float, shape: Shape) -> pd.DataFrame:
    """The launches back to back (the energy phase's BackToBack) for `seconds`, NVML read every ~2 ms."""
    monitor = nvml.Monitor(gpu.device.pci_bus_id())
    try:
        start, end = gpu.cuda.Event(), gpu.cuda.Event()   # one timed launch sizes the chunks
        start.record()
        launch()
        end.record()
        end.synchronize()
        run, rows, t0 = BackToBack(gpu, launch, start.time_till(end)), [], time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            run.keep_full()
            time.sleep(POLL_S)
            r = monitor.read()
            run.collect(r.time_s)
            rows.append({"time_s": r.time_s - t0, "launches_done": run.done, "sm_clock_mhz": r.sm_clock_mhz,
                         "power_w": r.power_w, "energy_mj": r.energy_mj, "temperature_c": r.temperature_c,
                         "reasons": nvml.reason_names(r.reasons)})
        run.drain()
        rows.append({**rows[-1], "time_s": time.perf_counter() - t0, "launches_done": run.done})
    finally:
        monitor.close()
    df = pd.DataFrame(rows)
    df.attrs.update(flop=shape.flop, energy_unavailable=monitor.energy_unavailable)
    return df


def summary(df: pd.DataFrame) -> str:
    """What the trace says: a long run's rate, energy per launch, mean power, and the energy counter's step."""
    span = df["time_s"].iloc[-1] - df["time_s"].iloc[0]
    launches = df["launches_done"].iloc[-1]
    gflops = launches * df.attrs["flop"] / span / 1e9
    lines = [f"{launches} launches in {span:.3f} s: {gflops:,.0f} GFLOP/s; SM clock {df['sm_clock_mhz'].min():.0f} "
             f"to {df['sm_clock_mhz'].max():.0f} MHz; power up to {df['power_w'].max():.0f} W"]
    energy = df["energy_mj"].dropna()
    if energy.empty:
        return "\n".join(lines + [f"energy: n/a ({df.attrs.get('energy_unavailable')})"])
    joules = (energy.iloc[-1] - energy.iloc[0]) / 1e3
    moved = df.loc[df["energy_mj"].diff() > 0, "time_s"]
    step = f", every {np.median(np.diff(moved)) * 1e3:.1f} ms (median)" if len(moved) > 1 else ""
    lines.append(f"energy {joules:.1f} J: {joules / launches * 1e3:.3f} mJ per launch, mean power "
                 f"{joules / span:.0f} W, {launches * df.attrs['flop'] / 1e9 / joules:,.1f} GFLOP/J; the counter "
                 f"moved {len(moved)} times{step}")
    return "\n".join(lines)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("variant")
    p.add_argument("--size", default="8192", help="n (n x n x n) or MxNxK")
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--arch", default="auto")
    p.add_argument("--out", type=Path)
    args = p.parse_args(argv)
    try:
        shape = Shape.parse(args.size) if "x" in args.size else Shape(*(int(args.size),) * 3)
        arch = host.arch_of(host.visible_gpu()["compute_capability"]) if args.arch == "auto" else args.arch
        df = trace(args.variant, shape, args.seconds, arch)
    except StudyError as err:
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(1) from None
    if args.out:
        df.to_csv(args.out, index=False)
    print(summary(df))


if __name__ == "__main__":
    main()
