# Seeded A and B for one shape and seed.
from pathlib import Path

from matmulstudy import data, rulescript
from matmulstudy.config import Shape


def main(snakemake, log):
    shape = Shape.parse(snakemake.wildcards.shape)
    seed = int(snakemake.wildcards.seed)
    dtype = snakemake.wildcards.dtype
    data.save_inputs(shape, seed, Path(snakemake.output.a), Path(snakemake.output.b), dtype)
    print(f"A {shape.M}x{shape.K}, B {shape.K}x{shape.N}, {dtype}, seed {seed}")


rulescript.run(snakemake, main)
