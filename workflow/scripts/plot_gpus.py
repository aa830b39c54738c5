# The progression on every GPU side by side, and the index of the studies.
from pathlib import Path

from matmulstudy.report import render
from matmulstudy.pipeline import rulescript


def main(snakemake, log):
    folders = [Path(p).parent for p in snakemake.input.summaries]
    for path in render.render_gpus(folders, Path(snakemake.output.page).parent):
        print(path)


rulescript.run(snakemake, main)
