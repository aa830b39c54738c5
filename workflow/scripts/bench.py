# Verify, then time, one variant on one shape and seed; one row per sample.
from matmulstudy import bench, data, registry, rulescript
from matmulstudy.config import Shape


def main(snakemake, log):
    variant = registry.load_registry()[snakemake.wildcards.variant]
    shape = Shape.parse(snakemake.wildcards.shape)
    inp = snakemake.input
    rows = bench.measure(variant, shape, int(snakemake.wildcards.seed),
                         data.load(inp.a), data.load(inp.b), data.load(inp.ref), data.load(inp.scale),
                         inp.get("binary"), snakemake.params.timing, harness=inp.get("harness"))
    rows.to_csv(snakemake.output[0], index=False)
    ok = rows["verified"].all()
    print(f"{variant.id} {shape.tag}: " + (
        f"verified, median {rows['time_ms'].median():.4f} ms, {rows['gflops'].median():,.1f} GFLOP/s"
        if ok else f"VERIFICATION FAILED: max error {rows['max_error'].iloc[0]:.3g}"))


rulescript.run(snakemake, main)
