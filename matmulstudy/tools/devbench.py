"""One call to develop kernels by: build, verify on ragged shapes, time, print a short table.

    python -m matmulstudy.tools.devbench --chapter beyond --out devbench.csv
    python -m matmulstudy.tools.devbench gpu_warptile gpu_double_buffer --time 4096 --check 17x33x65
    python -m matmulstudy.tools.devbench --chapter tensor --time 4096,8192 --energy 0.2
    python -m matmulstudy.tools.devbench gpu_wgmma_bf16_grouped gpu_wgmma_bf16_grouped:GROUP=16 cublas_bf16 \
        --time 4096 --rounds 4
    python -m matmulstudy.tools.devbench gpu_wgmma_bf16_one_copy cublas_bf16 --rounds 2 --fit-k \
        --time 4096x4096x1024,4096x4096x2048,4096x4096x4096,4096x4096x8192

Every variant named (or every step of the chapter, with the chapter's
reference) is built for the GPU at hand, checked element by element on the
ragged shapes (K = 1, odd K, an odd number of K-slices, M or N not a multiple
of 4, rows that do not start on 16 bytes, more than one 128 x 256 block
tile, more than one group of tile rows), then timed on the timing shapes as
the study times them, each against the same GPU reference, with the lowest
SM clock NVML read and the number of throttled samples. The study's numbers
come from the workflow; this is the short loop between two of its runs
(6fbf69a:notes/beyond_the_seeds.md and 6fbf69a:notes/tensor_cores.md keep what each version
was predicted to do and did). With --rounds R, the timed shapes are timed R
times, every variant once a round in turn, so that a ratio is taken between
neighbours in time (near the power cap a GPU's clock moves between them).
A variant named ID:NAME=VALUE[:NAME=VALUE] is ID built with those defines
changed (a candidate, measured beside the registry's); ID:CLOCK_TRACE=1, for
a TMA + wgmma step, also gives the SM clock its blocks ran at in the timed
launches (launch_mhz: kernels/sm90/block_clock.cuh), which NVML's min_mhz,
sampled between launches too, is not, and the share of a block's cycles
spent storing C (epilogue_pct: the time its tensor work waits). With --fit-k (timed
shapes of one M x N at several K), each variant's time is also fitted by a
straight line over K: its slope is the main loop's cost, its intercept what
a launch spends outside the main loop (C going out, the tiles' starts, the
launch), so two kernels' gap splits into the two (6fbf69a:notes/bf16.md, "timed
over K").
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import StudyError
from ..gpu import host
from ..gpu.launch import WORKSPACES
from ..measure import bench, build, data, energy
from ..measure.devicecheck import References, workspace
from ..study.registry import load_registry
from ..study.settings import CHECK_ONLY, Timing, default_settings
from ..study.shapes import Shape

CHECK_SHAPES = "1x1x1,17x33x65,200x72x40,131x259x1,31x1x4097,513x257x129,1537x3001x997,2600x520x36"
TIMING = Timing(warmup=3, cache="cold", min_samples=10, max_samples=50, max_noise=0.005, max_time_s=1.0,
                throttle_fraction=0.9, throttle_recovery_s=0.1, max_retakes=20, min_time_s=0.05,
                placements=4)   # as the study's config: with one, a queued step's time was its module's luck


def _shapes(text: str) -> list[Shape]:
    out = []
    for tag in filter(None, text.replace(" ", "").split(",")):
        out.append(Shape(*(int(x) for x in tag.split("x"))) if "x" in tag else Shape(*(int(tag),) * 3))
    return out


def candidate(registry, name: str):
    """The variant `name` names: a registry id, or ID:NAME=VALUE[:NAME=VALUE...], ID with those defines changed
    or added (a header's default overridden; `name` is its id, for the table)."""
    vid, *changes = name.split(":")
    if vid not in registry:
        raise StudyError(registry.unknown(vid))
    if not changes:
        return registry[vid]
    v = registry[vid]
    defines = dict(v.defines)
    for change in changes:
        key, _, value = change.partition("=")
        if not (key.isidentifier() and key.isupper()) or not value.lstrip("-").isdigit():
            raise StudyError(f"{name}: {change} is not NAME=INTEGER (a define such as {sorted(defines)[0]}=...)")
        defines[key] = int(value)
    return dataclasses.replace(v, id=name, defines=defines)


def run(variant_ids: list[str], check_shapes: list[Shape], time_shapes: list[Shape], arch: str,
        energy_window_s: float = 0.0, rounds: int = 1) -> pd.DataFrame:
    """Every variant built, checked on the check shapes, timed on the time shapes (`rounds` times, each
    variant once a round); with `energy_window_s`, then each GPU variant's sustained run and energy on the
    time shapes (measure/energy.py), after every timing, as the study runs them."""
    registry, checking = load_registry(), default_settings().checking
    variants = [candidate(registry, v) for v in variant_ids]
    rows = []
    with workspace(arch, io.StringIO()) as (gpu, tmp, harness):
        cubins = {}
        for v in variants:
            if v.is_built:
                cubins[v.id] = tmp / f"{v.id}.cubin"
                report = build.build(v, cubins[v.id], tmp / f"{v.id}.json", v.target(arch), io.StringIO())
                print(f"{v.id}: {report['registers']} registers, {report['shared_bytes'] + report['dynamic_shared_bytes']} B shared, "
                      f"{report['spill_store_bytes'] + report['spill_load_bytes']} B spilled", flush=True)
        for shape in [s for s in check_shapes if s not in time_shapes] + time_shapes:
            timed = shape in time_shapes
            a, b = data.make_inputs(shape, 0)
            with References(gpu, harness, a, b) as references:
                for round_ in range(1, 1 + (rounds if timed else 1)):
                    for v in variants:
                        reference = references[v.precision]
                        timing = TIMING if timed else CHECK_ONLY
                        res = bench.measure(v, shape, 0, a, b, cubins.get(v.id), timing, checking, harness=harness,
                                            session=gpu, reference=reference)
                        r, ok = res.iloc[0], bench.counted(res)
                        rows.append({"variant": v.id, "shape": shape.tag, "round": round_, "timed": timed,
                                     "verified": bool(r["verified"]), "margin": r["margin"],
                                     "bad": int(r["bad_elements"]),
                                     **(_timed_columns(res, ok) if timed and r["verified"] else {}),
                                     **(block_clocks(gpu, v, cubins.get(v.id), timing.placements) if timed else {})})
        if energy_window_s > 0:
            burst = {(r["variant"], r["shape"]): r.get("median_ms") for r in rows if r["timed"] and r["round"] == 1}
            sustained = [_sustained(gpu, harness, shape, [(v, cubins.get(v.id), burst[v.id, shape.tag])
                                                          for v in variants if v.is_gpu and burst[v.id, shape.tag]],
                                    energy_window_s, checking) for shape in time_shapes]
    df = pd.DataFrame(rows)
    if energy_window_s > 0:
        df = df.merge(pd.concat(sustained, ignore_index=True), on=["variant", "shape"], how="left")
    precision_of = {v.id: v.precision for v in variants}
    for precision in set(precision_of.values()):
        ref = registry.reference(precision)
        if ref is not None and ref.id in set(df["variant"]):   # within each round: neighbours in time
            base = df[(df.variant == ref.id) & df["timed"]].set_index(["shape", "round"])["gflops"]
            mine = df["variant"].map(lambda vid: precision_of[vid] == precision)
            keys = pd.MultiIndex.from_frame(df.loc[mine, ["shape", "round"]])
            df.loc[mine, "of_reference"] = df.loc[mine, "gflops"].to_numpy() / base.reindex(keys).to_numpy()
    return df


def fit_k_shapes(shapes: list[Shape]) -> None:
    """--fit-k's shapes: one M x N at two K or more, or a StudyError saying so (before anything runs)."""
    if len({(s.M, s.N) for s in shapes}) != 1 or len({s.K for s in shapes}) < 2:
        raise StudyError("--fit-k needs timed shapes of one M x N at two K or more, e.g. --time "
                         f"4096x4096x1024,4096x4096x4096; got {','.join(s.tag for s in shapes)}")


def fit_over_k(df: pd.DataFrame) -> pd.DataFrame:
    """Each variant's time over K (its median over rounds at each K of the timed, verified shapes), fitted by a
    straight line: the main loop's microseconds per 1024 k, the rest of a launch in microseconds (the line at
    K = 0), and the largest distance of a measured K from the line."""
    t = df[df["timed"] & df["verified"]].copy()
    t["K"] = t["shape"].map(lambda tag: Shape.parse(tag).K)
    rows = []
    for vid, g in t.groupby("variant", sort=False):
        ms = g.groupby("K")["median_ms"].median()
        if len(ms) < 2:
            raise StudyError(f"--fit-k: {vid} was timed at one K only ({ms.index[0]})")
        slope, intercept = np.polyfit(ms.index.to_numpy(float), ms.to_numpy(float), 1)
        residual = ms.to_numpy(float) - (slope * ms.index.to_numpy(float) + intercept)
        rows.append({"variant": vid, "us_per_1024_k": slope * 1024e3, "rest_us": intercept * 1e3,
                     "max_residual_us": float(np.abs(residual).max() * 1e3)})
    return pd.DataFrame(rows)


CLOCK_FIELDS = 6   # each block's row of kernels/sm90/workspace.cuh's block_clock
CLOCKS_AT = 8      # where block_clock lies in the workspace: after the ticket, on 8 bytes


def block_clocks(gpu, variant, cubin, placements: int) -> dict:
    """Where the variant is built with CLOCK_TRACE (a candidate ID:CLOCK_TRACE=1; kernels/sm90/block_clock.cuh),
    from the last launch of each of the measurement's launchers (a workspace each, kernels/sm90/workspace.cuh, on
    a module a placement): the SM clock each block ran at, cycles over global-timer nanoseconds, as the median and
    the lowest over the blocks, in MHz; and the share of its cycles a block spent storing C, with the cycles a
    tile's store took (medians over the blocks). Each workspace's clocks are zeroed after, for the next
    measurement. Elsewhere nothing."""
    if "CLOCK_TRACE" not in variant.defines or cubin is None or not variant.tensor_maps:
        return {}
    copies = gpu.held("module copies")
    paths = [cubin] + ([copies.path(cubin, c) for c in range(1, placements)] if copies else [])
    blocks = []
    for address, nbytes in (space for path in paths for space in gpu.held((WORKSPACES, str(path))) or []):
        clocks = np.empty((nbytes - CLOCKS_AT) // 8, np.uint64)
        gpu.cuda.memcpy_dtoh(clocks, address + CLOCKS_AT)
        gpu.cuda.memset_d8(address + CLOCKS_AT, 0, nbytes - CLOCKS_AT)
        # start cycles, end cycles, start ns, end ns, epilogue cycles, tiles stored (block_clock.cuh)
        clocks = clocks.reshape(-1, CLOCK_FIELDS).astype(np.int64)
        blocks.append(clocks[clocks[:, 3] > clocks[:, 2]])
    ran = np.concatenate(blocks) if blocks else np.empty((0, CLOCK_FIELDS), np.int64)
    if not len(ran):
        return {}
    cycles = ran[:, 1] - ran[:, 0]
    mhz = cycles / (ran[:, 3] - ran[:, 2]) * 1e3
    stored = ran[:, 5] > 0
    return {"launch_mhz": float(np.median(mhz)), "launch_mhz_min": float(np.min(mhz)),
            "epilogue_pct": float(np.median(ran[:, 4] / cycles) * 100),
            "epilogue_cycles_per_tile": float(np.median(ran[stored, 4] / ran[stored, 5])) if stored.any()
            else float("nan")}


def _timed_columns(res: pd.DataFrame, ok: pd.DataFrame) -> dict:
    """A timed shape's burst median (re-taken batches aside), its clock and throttling."""
    return {"median_ms": ok["time_ms"].median(), "gflops": ok["gflops"].median(),
            "min_mhz": pd.to_numeric(ok["sm_clock_mhz"], errors="coerce").min(),
            "throttled": int(ok["throttled"].eq(True).sum()), "retaken": len(res) - len(ok)}


def _sustained(gpu, harness, shape: Shape, variants: list, window_s: float, checking) -> pd.DataFrame:
    """The GPU variants' sustained runs on one shape: the rate, clock, power and GFLOP per joule."""
    a, b = data.make_inputs(shape, 0)
    table = energy.measure(gpu, harness, [energy.Problem(shape, "float32", 0, a, b, tuple(variants))], window_s,
                           checking)
    columns = {"sustained_gflops": "sustained", "sustained_median_sm_clock_mhz": "sustained_mhz",
               "mean_power_w": "watts", "gflop_per_joule": "gflop_per_j", "energy_note": "energy_note"}
    out = table.assign(shape=shape.tag).rename(columns=columns)
    return out[["variant", "shape"] + [c for c in columns.values() if c in out]]


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("variants", nargs="*", help="variant ids (default: the chapter's steps)")
    p.add_argument("--chapter", help="every step of this chapter, and its precision's reference")
    p.add_argument("--check", default=CHECK_SHAPES, help="shapes verified (MxNxK or n, comma-separated)")
    p.add_argument("--time", default="4096,8192,2048,1537x3001x997", help="shapes verified and timed")
    p.add_argument("--energy", type=float, default=0.0, metavar="SECONDS",
                   help="then each GPU variant's sustained run and energy on the timed shapes, this long at least")
    p.add_argument("--rounds", type=int, default=1, help="times each timed shape is timed, variants in turn")
    p.add_argument("--fit-k", action="store_true",
                   help="fit each variant's time over K (timed shapes of one M x N at two K or more)")
    p.add_argument("--arch", default="auto")
    p.add_argument("--out", type=Path)
    args = p.parse_args(argv)
    try:
        registry = load_registry()
        ids = list(args.variants)
        if args.chapter:
            steps = registry.steps(args.chapter)
            if not steps:
                raise StudyError(f"no steps in chapter '{args.chapter}'; chapters: {list(registry.chapters)}")
            ids += [v.id for v in steps] + [registry.reference(steps[0].precision).id]
        if not ids:
            raise StudyError("name variants or a --chapter")
        if args.rounds < 1:
            raise StudyError(f"--rounds is 1 or more, not {args.rounds}")
        if args.fit_k:
            fit_k_shapes(_shapes(args.time))
        gpu = host.visible_gpu()
        print(f"{gpu['name']}, UUID {gpu['uuid']}", flush=True)   # what the figures below were measured on
        arch = host.arch_of(gpu["compute_capability"]) if args.arch == "auto" else args.arch
        df = run(list(dict.fromkeys(ids)), _shapes(args.check), _shapes(args.time), arch, args.energy, args.rounds)
    except StudyError as err:
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(1) from None
    if args.out:
        df.assign(gpu_uuid=gpu["uuid"]).to_csv(args.out, index=False)
    failed = df[~df["verified"]]
    print(df[~df["timed"]].groupby("variant", sort=False)
          .agg(shapes=("shape", "size"), verified=("verified", "all"), worst_margin=("margin", "max")).to_string())
    print(df[df["timed"]].drop(columns=["timed", "bad"]).to_string(index=False, float_format="{:,.3f}".format))
    if len(failed):
        print(f"\nFAILED: {failed[['variant', 'shape', 'margin', 'bad']].to_string(index=False)}")
        raise SystemExit(1)
    if args.fit_k:
        print(fit_over_k(df).to_string(index=False, float_format="{:,.3f}".format))


if __name__ == "__main__":
    main()
