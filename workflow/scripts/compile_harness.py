# Build the harness's kernels (matmulstudy/gpu/harness.cu): blocking the stream, flushing L2, the check.
from pathlib import Path

from matmulstudy.measure import build
from matmulstudy.pipeline import rulescript


def main(snakemake, log):
    build.build_harness(snakemake.params.arch, Path(snakemake.output[0]), log)


rulescript.run(snakemake, main)
