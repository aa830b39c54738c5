# Draw one study's figures (side by side, one a core given), summary page and caption facts from its tables.
from pathlib import Path

from matmulstudy.report import render
from matmulstudy.pipeline import rulescript


def main(snakemake, log):
    for path in render.render(Path(snakemake.input.results).parent, workers=snakemake.threads):
        print(path)


rulescript.run(snakemake, main)
