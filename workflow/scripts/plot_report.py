# Draw the study's figures and progression notes from the collected tables.
from pathlib import Path

from matmulstudy import render, rulescript


def main(snakemake, log):
    for path in render.render(Path(snakemake.input.results).parent, snakemake.params.reference_size):
        print(path)


rulescript.run(snakemake, main)
