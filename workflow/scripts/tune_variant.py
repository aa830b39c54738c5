# Tune one variant's free parameters on this GPU: every candidate of its search space, and the choice.
import json

from matmulstudy.measure import tune
from matmulstudy.pipeline import rulescript
from matmulstudy.study.registry import load_registry


def main(snakemake, log):
    variant = load_registry()[snakemake.wildcards.variant]
    p = snakemake.params
    table = tune.sweep(variant, variant.search, p.size, p.budget_s, p.arch, p.checking, log=log)
    table.to_csv(snakemake.output.table, index=False)
    chosen = tune.chosen_defines(table, variant)
    with open(snakemake.output.chosen, "w") as fh:
        json.dump(chosen, fh, indent=2)
    best = table[table["chosen"]].iloc[0]
    print(f"chose {best['defines']}: {best['median_gflops']:,.0f} GFLOP/s at {p.size} "
          f"({(table['status'] == 'ok').sum()} of {len(table)} candidates verified and timed)")


rulescript.run(snakemake, main)
