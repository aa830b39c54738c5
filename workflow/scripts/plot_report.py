# Draw one study's figures, summary page and caption facts from its tables.
from pathlib import Path

from matmulstudy.report import render
from matmulstudy.study import rulescript


def main(snakemake, log):
    for path in render.render(Path(snakemake.input.results).parent):
        print(path)


rulescript.run(snakemake, main)
