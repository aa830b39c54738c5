# Each precision's best step at the reference size and its reference, in alternating rounds at the headline's
# shapes: burst and sustained, every result checked again.
import pandas as pd

from matmulstudy.gpu.session import GpuSession
from matmulstudy.measure import build, data, energy, headline
from matmulstudy.study import rulescript
from matmulstudy.study.registry import load_registry
from matmulstudy.study.shapes import Shape


def main(snakemake, log):
    registry, p = load_registry(), snakemake.params
    medians = energy.timed_medians(snakemake.input.timed)
    pairs = headline.best_steps(medians, registry, p.reference_size)
    print(f"best steps (and those within {headline.TIE:.0%}) and references at {p.reference_size}: {pairs}",
          file=log, flush=True)
    tables = []
    with GpuSession() as gpu:
        for problem in p.problems:
            named = {vid for sides in pairs.values() for vid in sides}
            variants = [(build.built_variant(registry[vid], binary) if binary else registry[vid], binary,
                         medians[vid, problem["dtype"], problem["shape"]])
                        for vid, binary in problem["variants"]
                        if vid in named and (vid, problem["dtype"], problem["shape"]) in medians]
            measured = {v.id for v, _, _ in variants}
            here = {precision: sides for precision, sides in pairs.items() if set(sides) <= measured}
            one = energy.Problem(Shape.parse(problem["shape"]), problem["dtype"], problem["seed"],
                                 data.load(problem["a"]), data.load(problem["b"]), tuple(variants))
            tables.append(headline.measure(gpu, snakemake.input.harness, one, here, p.timing.headline_rounds,
                                           p.timing, p.timing.headline_window_s, p.checking, log))
    out = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=headline.FIRST)
    out.to_csv(snakemake.output[0], index=False)


rulescript.run(snakemake, main)
