# Every GPU variant of the study on every shape, back to back until NVML's energy counter has ticked twice: its
# sustained rate, energy per launch, mean power and GFLOP per joule, its output checked again.
import pandas as pd

from matmulstudy.gpu import host
from matmulstudy.gpu.session import GpuSession
from matmulstudy.measure import energy
from matmulstudy.pipeline import rulescript
from matmulstudy.study.registry import load_registry


def main(snakemake, log):
    registry, p = load_registry(), snakemake.params
    medians, tables = energy.timed_medians(snakemake.input.timed), []
    with GpuSession() as gpu:
        for problem in p.problems:   # one shape's inputs in memory at a time
            one = energy.load_problem(registry, problem, medians)
            tables.append(energy.measure(gpu, snakemake.input.harness, [one], p.window_s, p.checking, log))
    out = pd.concat(tables, ignore_index=True)
    out["gpu_uuid"] = host.running_uuid()   # where it ran: the page says so if not on the study's GPU
    out.to_csv(snakemake.output[0], index=False)


rulescript.run(snakemake, main)
