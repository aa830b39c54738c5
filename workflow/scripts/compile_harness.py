# Build the harness's blocking kernel (matmulstudy/harness.cu).
from pathlib import Path

from matmulstudy import build, rulescript


def main(snakemake, log):
    build.build_harness(snakemake.params.arch, Path(snakemake.output[0]), log)


rulescript.run(snakemake, main)
