# One precision's best step at the reference size and its reference (the job's precision wildcard), in
# alternating rounds at the headline's shapes: burst and sustained, every result checked again.
import pandas as pd

from matmulstudy.gpu import host
from matmulstudy.gpu.session import GpuSession
from matmulstudy.measure import energy, headline
from matmulstudy.pipeline import rulescript
from matmulstudy.study.registry import load_registry


def main(snakemake, log):
    registry, p = load_registry(), snakemake.params
    medians = energy.timed_medians(snakemake.input.timed)
    tables = []
    with GpuSession() as gpu:
        contenders = {precision: sides for precision, sides in
                      headline.best_steps(medians, registry, p.reference_size, sms=gpu.sm_count).items()
                      if precision.id == snakemake.wildcards.precision}
        print(f"best steps (and those within {headline.TIE:.0%}) and references at {p.reference_size}: "
              f"{contenders}", file=log, flush=True)
        named = {vid for sides in contenders.values() for vid in sides}
        for problem in p.problems:
            one = energy.load_problem(registry, problem, medians, only=named)
            here = {precision: sides for precision, sides in contenders.items()
                    if set(sides) <= {v.id for v, _, _ in one.variants}}
            tables.append(headline.measure(gpu, snakemake.input.harness, one, here, p.timing.headline_rounds,
                                           p.timing, p.timing.headline_window_s, p.checking, log))
    out = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=headline.FIRST)
    out["gpu_uuid"] = host.running_uuid()   # where it ran: the page says so if not on the study's GPU
    out.to_csv(snakemake.output[0], index=False)


rulescript.run(snakemake, main)
