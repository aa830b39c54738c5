# Verify, then time, one variant on one shape and seed; one row per sample,
# each with the facts of where it comes from (commit, config, GPU, compiler).
import json

from matmulstudy import bench, data, provenance, registry, rulescript
from matmulstudy.config import Shape

GPU_FACTS = {"uuid": "gpu_uuid", "compute_capability": "compute_capability",
             "driver_cuda_version": "driver_cuda_version", "pycuda_version": "pycuda_version"}


def main(snakemake, log):
    variant = registry.load_registry()[snakemake.wildcards.variant]
    shape = Shape.parse(snakemake.wildcards.shape)
    inp = snakemake.input
    rows = bench.measure(variant, shape, int(snakemake.wildcards.seed),
                         data.load(inp.a), data.load(inp.b), data.load(inp.ref), data.load(inp.scale),
                         inp.get("binary"), snakemake.params.timing, harness=inp.get("harness"))
    facts = provenance.run_facts(snakemake.config)
    if inp.get("gpu"):
        with open(inp.gpu) as fh:
            gpu = json.load(fh)
        facts.update({column: gpu.get(key) for key, column in GPU_FACTS.items()})
    if inp.get("build"):
        with open(inp.build) as fh:
            built = json.load(fh)
        facts.update(compiler=built.get("compiler"), compiler_flags=built.get("flags"))
    rows.assign(**facts).to_csv(snakemake.output[0], index=False)
    ok = rows["verified"].all()
    print(f"{variant.id} {shape.tag}: " + (
        f"verified, median {rows['time_ms'].median():.4f} ms, {rows['gflops'].median():,.1f} GFLOP/s"
        if ok else f"VERIFICATION FAILED: max error {rows['max_error'].iloc[0]:.3g}"))


rulescript.run(snakemake, main)
