# Gather every measuring job into the study's tidy tables, and keep what it was measured with.
import json
from pathlib import Path

import pandas as pd

from matmulstudy.report import results
from matmulstudy.study import snapshot
from matmulstudy.pipeline import rulescript
from matmulstudy.study.registry import load_registry


def main(snakemake, log):
    reg = load_registry()
    gpu = snakemake.input.gpu[0] if snakemake.input.gpu else None
    df = results.collect(snakemake.input.bench, gpu, reg)
    results.write_results(df, snakemake.output.results)   # and measured_with.csv beside it
    info = {"gpu_name": None, "note": "CPU variants only"}
    if gpu:
        with open(gpu) as fh:
            info = json.load(fh)
    energy = None
    if snakemake.input.energy:   # every GPU variant's sustained run and energy, kept beside the summary
        energy = pd.read_csv(snakemake.input.energy[0])
        energy.to_csv(snakemake.output.energy, index=False)
    if snakemake.input.headline:   # each precision's best step and its reference, in rounds
        pd.read_csv(snakemake.input.headline[0]).to_csv(snakemake.output.headline, index=False)
    summ = results.with_energy(results.summary(df, reg, info if gpu else None), energy, reg,
                               snakemake.params.why_no_energy)
    summ.to_csv(snakemake.output.summary, index=False)
    sanitizer = None
    if snakemake.input.sanitizer:
        sanitizer = pd.concat([pd.read_csv(p) for p in snakemake.input.sanitizer], ignore_index=True)
        sanitizer.to_csv(snakemake.output.sanitizer, index=False)
    if snakemake.input.tuning:   # every candidate of every tuned variant
        pd.concat([pd.read_csv(p) for p in snakemake.input.tuning], ignore_index=True).to_csv(
            snakemake.output.tuning, index=False)
    n = snakemake.params.settings.ncu_size   # every variant's counters at ncu_size; a step's shown_at apart
    at_ncu_size = [p for p in snakemake.input.ncu if Path(p).stem.endswith(f"_{n}x{n}x{n}")]
    if hasattr(snakemake.output, "counters_at"):
        results.counters_at([p for p in snakemake.input.ncu if p not in at_ncu_size]).to_csv(
            snakemake.output.counters_at, index=False)
    hw = results.hardware_table(snakemake.input.resources, snakemake.input.sass, at_ncu_size,
                                info if gpu else None, sanitizer)
    results.ncu_agreement(hw, summ).to_csv(snakemake.output.hardware, index=False)
    with open(snakemake.output.gpu, "w") as fh:   # the report's facts, kept with the results
        json.dump(info, fh, indent=2)
    snapshot.write(Path(snakemake.output.config).parent, reg, snakemake.params.settings)
    skipped = pd.DataFrame([{"variant": v, "title": reg[v].title, "reason": why}
                            for v, why in snakemake.params.skipped.items()], columns=["variant", "title", "reason"])
    skipped.to_csv(snakemake.output.skipped, index=False)   # what this GPU cannot run, and why
    for line in results.write_failures(df, snakemake.output.failures):
        print(f"FAILED: {line}")
    print(f"{len(df)} samples from {len(snakemake.input.bench)} measurements")


rulescript.run(snakemake, main)
