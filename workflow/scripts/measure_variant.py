# Verify, then time, one variant on every shape of its job; one row per
# sample, each with the facts of where it comes from (commit, config, GPU,
# compiler).
import contextlib
import json
import traceback

import pandas as pd

from matmulstudy.errors import StudyError
from matmulstudy.gpu import host
from matmulstudy.measure import bench, build, data
from matmulstudy.study import provenance
from matmulstudy.pipeline import rulescript
from matmulstudy.study.registry import load_registry
from matmulstudy.study.shapes import Shape

GPU_FACTS = {"uuid": "gpu_uuid", "compute_capability": "compute_capability",
             "driver_version": "driver_version", "driver_cuda_version": "driver_cuda_version",
             "pycuda_version": "pycuda_version"}


def facts(snakemake) -> dict:
    inp = snakemake.input
    out = provenance.run_facts(snakemake.params.config_hash)
    if inp.get("gpu"):
        with open(inp.gpu) as fh:
            gpu = json.load(fh)
        out.update({column: gpu.get(key) for key, column in GPU_FACTS.items()})
        # the GPU this job ran on, where nvidia-smi says: samples of another GPU than the facts' are refused
        out["gpu_uuid"] = host.running_uuid() or out["gpu_uuid"]
    if inp.get("build"):
        with open(inp.build) as fh:
            built = json.load(fh)
        out.update(compiler=built.get("compiler"), compiler_flags=built.get("flags"))
    return out


def main(snakemake, log):
    inp = snakemake.input
    variant = load_registry()[snakemake.wildcards.variant]
    seed, dtype = int(snakemake.wildcards.seed), snakemake.wildcards.dtype
    problems = snakemake.params.problems
    failed = build.failed_build(inp.build) if inp.get("build") else None
    if failed:   # nothing to run: each shape records why, and the rest of the study goes on
        rows = [bench.failure_rows(variant, Shape.parse(p["shape"]), seed, dtype,
                                   f"{failed['failed']} (log: {failed['log']})") for p in problems]
        print(f"{variant.id}: not measured: {failed['failed']}", flush=True)
        pd.concat(rows, ignore_index=True).assign(**facts(snakemake)).to_csv(snakemake.output[0], index=False)
        return
    if inp.get("binary"):   # with the defines it was built with (tuned, where the study tunes it)
        variant = build.built_variant(variant, inp.binary)
    measured = {}   # (M, N, K) -> the shape's rows
    shapes = [Shape.parse(p["shape"]) for p in problems]
    try:
        measure_all(snakemake, variant, seed, problems, measured)
    except Exception as err:   # the run failed (a StudyError, or the kernel's own: a CUDA launch error, say):
        # the shapes measured are kept, the others say why; the traceback stays in the log
        if not isinstance(err, StudyError):
            traceback.print_exc()
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        why = (f"run failed: {first if isinstance(err, StudyError) else type(err).__name__ + ': ' + first} "
               f"(log: {snakemake.log[0]})")
        measured.update({tuple(shape): bench.failure_rows(variant, shape, seed, dtype, why) for shape in shapes
                         if tuple(shape) not in measured})
        rulescript.warn(f"{variant.id} {dtype}: {why}")
    frames = [measured[tuple(shape)] for shape in shapes]
    pd.concat(frames, ignore_index=True).assign(**facts(snakemake)).to_csv(snakemake.output[0], index=False)


def measure_all(snakemake, variant, seed, problems, measured):
    """Verify and time the variant on every shape of the job, into `measured` ((M, N, K) -> its rows).

    A GPU variant is measured in `contexts` CUDA contexts one after another (bench.Pooled): every shape in
    one, then every shape again in a fresh one, each shape's samples pooled; a shape whose launch takes
    `contexts_below_ms` or more is taken in the first only (bench.Pooled.settle). `measured` holds each shape's
    rows of its contexts so far; a shape whose measurement raises leaves it (main says why), and one that
    failed its check is not measured again.
    """
    inp, timing = snakemake.input, snakemake.params.timing
    parts = timing.contexts if variant.is_gpu else 1
    pooled = {}   # (M, N, K) -> bench.Pooled
    arrays = {}   # (M, N, K) -> its A and B, read once, kept while a later context still takes the shape
    for part in range(parts):
        with contextlib.ExitStack() as stack:
            session = None
            if variant.is_gpu or any(p["check"] == "gpu" for p in problems):
                from matmulstudy.gpu.session import GpuSession
                session = stack.enter_context(GpuSession())   # a fresh CUDA context
            for problem in problems:
                shape = Shape.parse(problem["shape"])
                key = tuple(shape)
                if key in measured and (not measured[key]["verified"].iloc[0] or pooled[key].done):
                    continue   # it failed its check, or a long launch took one context: nothing more to time
                measured.pop(key, None)
                if key not in arrays:
                    arrays[key] = data.load(problem["a"]), data.load(problem["b"])
                a, b = arrays[key]
                with contextlib.ExitStack() as per_shape:
                    reference = None
                    if problem["check"] == "gpu":
                        from matmulstudy.measure.devicecheck import DeviceReference
                        reference = per_shape.enter_context(DeviceReference(session, inp.harness, a, b,
                                                                                  variant.precision))
                    elif problem["check"] == "cpu":
                        reference = bench.HostReference(data.load(problem["ref"]), data.load(problem["scale"]))
                    rows = bench.measure(variant, shape, seed, a, b, inp.get("binary"), timing,
                                         snakemake.params.checking, harness=inp.get("harness"), session=session,
                                         reference=reference,
                                         pooled=pooled.setdefault(key, bench.Pooled(parts)) if variant.is_gpu
                                         else None)
                measured[key] = rows
                if not variant.is_gpu or pooled[key].done or not rows["verified"].iloc[0]:
                    arrays.pop(key)   # no later context takes this shape: its A and B go
                    print(f"{variant.id} {shape.tag}: " + bench.describe(rows), flush=True)


rulescript.run(snakemake, main)
