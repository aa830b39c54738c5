# Build one variant (nvcc or gcc) and record its resource report.
from pathlib import Path

from matmulstudy import build, registry, rulescript


def main(snakemake, log):
    variant = registry.load_registry()[snakemake.wildcards.variant]
    build.build(variant, Path(snakemake.output.binary), Path(snakemake.output.resources),
                snakemake.params.arch, log, dtype=snakemake.wildcards.dtype)


rulescript.run(snakemake, main)
