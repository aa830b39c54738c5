# Build one variant (nvcc or gcc), with its tuned defines where the study tunes it, and record
# its resource report.
import json
from pathlib import Path

from matmulstudy import build, registry, rulescript


def main(snakemake, log):
    variant = registry.load_registry()[snakemake.wildcards.variant]
    if snakemake.input.get("chosen"):   # the study tunes it: the chosen candidate's defines
        with open(snakemake.input.chosen) as fh:
            variant = variant.with_defines(json.load(fh))
        print(f"tuned defines: {variant.defines}", file=log)
    build.build(variant, Path(snakemake.output.binary), Path(snakemake.output.resources),
                snakemake.params.arch, log, dtype=snakemake.wildcards.dtype)


rulescript.run(snakemake, main)
