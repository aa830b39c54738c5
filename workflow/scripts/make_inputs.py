# Seeded A and B for one shape and seed; none for a GPU study whose GPU was found unusable.
import os
from pathlib import Path

from matmulstudy.errors import StudyError
from matmulstudy.gpu import host
from matmulstudy.measure import data
from matmulstudy.study import paths
from matmulstudy.pipeline import rulescript
from matmulstudy.study.shapes import Shape


def main(snakemake, log):
    label = os.environ.get(paths.STUDY_LABEL_ENV, "")   # the GPU study this job runs for ("" for a CPU one)
    gpu_log = paths.GPU_LOG.format(label=label)
    why = label and not os.path.exists(paths.GPU_FACTS.format(label=label)) and host.gpu_failure(gpu_log)
    if why:
        raise StudyError(f"not generated: this GPU study's GPU is not usable ({gpu_log}: {why})")
    shape = Shape.parse(snakemake.wildcards.shape)
    seed = int(snakemake.wildcards.seed)
    dtype = snakemake.wildcards.dtype
    data.save_inputs(shape, seed, Path(snakemake.output.a), Path(snakemake.output.b), dtype)
    print(f"A {shape.M}x{shape.K}, B {shape.K}x{shape.N}, {dtype}, seed {seed}")


rulescript.run(snakemake, main)
