# Build the native launcher that compute-sanitizer runs (matmulstudy/launch.cu).
from pathlib import Path

from matmulstudy import rulescript, sanitize


def main(snakemake, log):
    sanitize.build_launcher(Path(snakemake.output[0]), log)


rulescript.run(snakemake, main)
