# Build the native launcher that compute-sanitizer runs (matmulstudy/gpu/launch.cu).
from pathlib import Path

from matmulstudy.measure import sanitize
from matmulstudy.pipeline import rulescript


def main(snakemake, log):
    sanitize.build_launcher(Path(snakemake.output[0]), log)


rulescript.run(snakemake, main)
