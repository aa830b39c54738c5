# Draw the study's figures from the collected table.
import json
from pathlib import Path

import pandas as pd

from matmulstudy import plots, registry, rulescript


def main(snakemake, log):
    reg = registry.load_registry()
    df = pd.read_csv(snakemake.input.results)
    with open(snakemake.input.gpu) as fh:
        gpu = json.load(fh)
    gpu["gpu_name"] = gpu.get("gpu_name") or "no GPU (CPU variants only)"
    figures = Path(snakemake.output[0]).parent
    plots.size_sweep(df, reg, gpu["gpu_name"], figures / "size_sweep")
    plots.progression(df, reg, gpu, snakemake.params.reference_size, figures / "progression")


rulescript.run(snakemake, main)
