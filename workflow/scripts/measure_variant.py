# Verify, then time, one variant on every shape of its job; one row per
# sample, each with the facts of where it comes from (commit, config, GPU,
# compiler).
import contextlib
import json

import pandas as pd

from matmulstudy import bench, build, data, provenance, registry, rulescript
from matmulstudy.config import Shape

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
    if inp.get("build"):
        with open(inp.build) as fh:
            built = json.load(fh)
        out.update(compiler=built.get("compiler"), compiler_flags=built.get("flags"))
    return out


def main(snakemake, log):
    inp = snakemake.input
    variant = registry.load_registry()[snakemake.wildcards.variant]
    if inp.get("binary"):   # with the defines it was built with (tuned, where the study tunes it)
        variant = build.built_variant(variant, inp.binary)
    seed = int(snakemake.wildcards.seed)
    problems = snakemake.params.problems
    frames = []
    with contextlib.ExitStack() as stack:
        session = None
        if variant.is_gpu or any(p["check"] == "gpu" for p in problems):
            from matmulstudy.gpu import GpuSession
            session = stack.enter_context(GpuSession())
        for problem in problems:
            shape = Shape.parse(problem["shape"])
            a, b = data.load(problem["a"]), data.load(problem["b"])
            with contextlib.ExitStack() as per_shape:
                reference = None
                if problem["check"] == "gpu":
                    from matmulstudy.devicecheck import DeviceReference
                    reference = per_shape.enter_context(DeviceReference(session, inp.harness, a, b))
                elif problem["check"] == "cpu":
                    reference = bench.HostReference(data.load(problem["ref"]), data.load(problem["scale"]))
                rows = bench.measure(variant, shape, seed, a, b, inp.get("binary"), snakemake.params.timing,
                                     snakemake.params.check, harness=inp.get("harness"), session=session,
                                     reference=reference)
            frames.append(rows)
            print(f"{variant.id} {shape.tag}: " + bench.describe(rows), flush=True)
    pd.concat(frames, ignore_index=True).assign(**facts(snakemake)).to_csv(snakemake.output[0], index=False)


rulescript.run(snakemake, main)
