# Every GPU variant of the study on every shape, back to back until NVML's energy counter has ticked twice: its
# sustained rate, energy per launch, mean power and GFLOP per joule, its output checked again.
import pandas as pd

from matmulstudy.gpu.session import GpuSession
from matmulstudy.measure import build, data, energy
from matmulstudy.study import rulescript
from matmulstudy.study.registry import load_registry
from matmulstudy.study.shapes import Shape


def main(snakemake, log):
    registry, p = load_registry(), snakemake.params
    medians, tables = energy.timed_medians(snakemake.input.timed), []
    with GpuSession() as gpu:
        for problem in p.problems:   # one shape's inputs in memory at a time
            # the variants whose timed measurement verified (the others' jobs recorded why), with its median
            variants = [(build.built_variant(registry[vid], binary) if binary else registry[vid], binary,
                         medians[vid, problem["dtype"], problem["shape"]])
                        for vid, binary in problem["variants"] if (vid, problem["dtype"], problem["shape"]) in medians]
            one = energy.Problem(Shape.parse(problem["shape"]), problem["dtype"], problem["seed"],
                                 data.load(problem["a"]), data.load(problem["b"]), tuple(variants))
            tables.append(energy.measure(gpu, snakemake.input.harness, [one], p.window_s, p.checking, log))
    pd.concat(tables, ignore_index=True).to_csv(snakemake.output[0], index=False)


rulescript.run(snakemake, main)
