"""The files each rule of the workflow reads and writes, its wildcard patterns and resources, for one run of the
study (study/run.py's StudyRun): workflow/rules/common.smk makes one RuleFiles and the rule files ask it; they
hold no logic of their own. The path templates are study/paths.py's."""

from __future__ import annotations

import re

from ..study import paths, plan
from ..study.run import StudyRun


# Snakemake's options that read the rules and run no job: a study's label and arch need not be known for them
RULES_ONLY = ("--lint", "--unlock", "--cleanup-metadata", "--list-rules", "--list-target-rules")


def reads_rules_only(argv: list[str]) -> bool:
    """Whether Snakemake was asked for something that reads the rules and runs nothing (--lint, --unlock, ...):
    no GPU is asked anything then."""
    return any(arg.split("=")[0] in RULES_ONLY for arg in argv)


def dry_run(argv: list[str]) -> bool:
    """Whether Snakemake was asked for a dry run (-n, also among other short flags such as -np)."""
    return any(arg in ("--dry-run", "--dryrun") or re.fullmatch(r"-[a-zA-Z]*n[a-zA-Z]*", arg) for arg in argv)


class RuleFiles:
    """What each rule of one run reads and writes."""

    def __init__(self, run: StudyRun):
        self.run = run

    # --- patterns and resources ------------------------------------------------------------------------------
    def gpu_model(self, wildcards) -> str:
        """The GPU a job asks a cluster for (resources gpu_model): the model its label names (label h100:
        --gpus=h100:1), so an h100 study lands on h100 nodes. Empty (no GPU) for a study without GPU variants."""
        return wildcards.label if self.run.uses_gpu else ""

    def variant_pattern(self, backends) -> str:
        """Wildcard regex of the variants of some backends (never matches if none)."""
        return "|".join(vid for vid, v in self.run.registry.items() if v.backend in backends) or "(?!)"

    @property
    def tuned_pattern(self) -> str:
        return "|".join(v.id for v in self.run.tuned) or "(?!)"

    def tuned_choice(self, label: str, variant: str) -> dict:
        """compile_kernel's extra input where the study tunes the variant: the chosen defines."""
        tuned = variant in {v.id for v in self.run.tuned}
        return {"chosen": paths.TUNING.format(label=label, variant=variant, ext="json")} if tuned else {}

    # --- measure_variant: one job per variant, dtype and seed ---------------------------------------------
    def bench_problems(self, variant: str, dtype: str, seed) -> list[dict]:
        """Per shape of this job: its input files, and what its results are checked against
        (plan.reference_kind): 'gpu' and 'freivalds' need only A and B, 'cpu' the float64 reference that
        make_reference makes."""
        problems = []
        for shape in self.run.jobs[variant, dtype, int(seed)]:
            files = paths.inputs(dtype, shape, seed)
            kind = plan.reference_kind(shape, self.run.settings.checking, self.run.uses_gpu)
            keep = ("a", "b", "ref", "scale") if kind == "cpu" else ("a", "b")
            problems.append({"shape": shape.tag, "check": kind, **{key: files[key] for key in keep}})
        return problems

    def bench_inputs(self, label: str, variant: str, dtype: str, seed) -> dict:
        v = self.run.registry[variant]
        problems = self.bench_problems(variant, dtype, seed)
        inputs = {"data": [path for p in problems for key, path in p.items() if key not in ("shape", "check")]}
        if v.is_built:
            inputs["binary"] = paths.binary(label, v, dtype)
            inputs["build"] = paths.binary(label, v, dtype) + ".json"
        if self.run.uses_gpu:   # GPU variants run on it; every variant's results are checked on it
            inputs["gpu"] = paths.GPU_FACTS.format(label=label)
            inputs["harness"] = paths.HARNESS.format(label=label)
        return inputs

    def _builds(self) -> list:
        """(variant, dtype) of every build of the run (plan.builds)."""
        return plan.builds(self.run.settings, self.run.registry)

    # --- what collect_results gathers -----------------------------------------------------------------------
    def samples(self, label: str) -> list[str]:
        return [paths.SAMPLES.format(label=label, dtype=dtype, variant=vid, seed=seed)
                for vid, dtype, seed in self.run.jobs]

    def resource_reports(self, label: str) -> list[str]:
        return [paths.binary(label, v, dtype) + ".json" for v, dtype in self._builds()]

    def sass_reports(self, label: str) -> list[str]:
        return [paths.SASS.format(label=label, dtype=dtype, variant=v.id)
                for v, dtype in self._builds() if v.backend == "cuda"]

    def ncu_reports(self, label: str) -> list[str]:
        """Every GPU variant's counters at ncu_size; and a step's `shown_at`, with the step before's, at that
        size too (counters_at.csv)."""
        if not self.run.settings.ncu:
            return []
        gpu = [v.id for v in self.run.variants if v.is_gpu]
        jobs = [(vid, self.run.settings.ncu_size) for vid in gpu]
        for v in self.run.variants:
            if not v.shown_at or v.id not in gpu:
                continue
            before = self.run.registry.step_before(v.id)
            for vid in ([before.id] if before is not None and before.id in gpu else []) + [v.id]:
                if (vid, v.shown_at) not in jobs:
                    jobs.append((vid, v.shown_at))
        return [paths.NCU.format(label=label, variant=vid, shape=f"{n}x{n}x{n}") for vid, n in jobs]

    def sanitizer_reports(self, label: str) -> list[str]:
        if not self.run.settings.sanitizer:
            return []
        return [paths.SANITIZER.format(label=label, variant=v.id) for v in self.run.variants if v.backend == "cuda"]

    def tuning_tables(self, label: str) -> list[str]:
        return [paths.TUNING.format(label=label, variant=v.id, ext="csv") for v in self.run.tuned]

    def gpu_facts(self, label: str) -> list[str]:
        return [paths.GPU_FACTS.format(label=label)] if self.run.uses_gpu else []

    # --- measure_energy: every GPU variant back to back, after every timed measurement --------------------
    def energy_problems(self, label: str) -> list[dict]:
        """Per dtype and shape the GPU variants measured (the first seed's inputs) at the headline's shapes
        (the reference size and the largest: the energy of every step where the study compares them; at
        every shape the phase took 1 min 48 s of a 10 min 48 s study on the H100): its input files, and the
        variants with their binaries."""
        seed, problems, shapes = self.run.settings.seeds[0], {}, self.run.headline_shapes()
        for v, shape, s, dtype in plan.measurements(self.run.settings, self.run.registry):
            if v.is_gpu and s == seed and shape.tag in shapes:
                files = paths.inputs(dtype, shape, seed)
                entry = problems.setdefault((dtype, shape), {"dtype": dtype, "shape": shape.tag, "seed": seed,
                                                              "a": files["a"], "b": files["b"], "variants": []})
                entry["variants"].append([v.id, paths.binary(label, v, dtype) if v.is_built else None])
        return list(problems.values())

    def energy_inputs(self, label: str) -> dict:
        """After every GPU variant's timed samples (their heat would lower the next one's clock): its inputs,
        binaries, the harness and the GPU's facts."""
        gpu_jobs = [(vid, dtype, seed) for vid, dtype, seed in self.run.jobs if self.run.registry[vid].is_gpu]
        return {"timed": [paths.SAMPLES.format(label=label, dtype=d, variant=v, seed=s) for v, d, s in gpu_jobs],
                **_problem_files(self.energy_problems(label)),
                "gpu": paths.GPU_FACTS.format(label=label), "harness": paths.HARNESS.format(label=label)}

    # --- measure_headline: each precision's best step and its reference in rounds, after everything else ------
    def headline_problems(self, label: str) -> list[dict]:
        """The energy phase's problems (at the headline's shapes) in float32."""
        return [p for p in self.energy_problems(label) if p["dtype"] == "float32"]

    def headline_inputs(self, label: str) -> dict:
        """After every timed job and the energy phase (their heat would lower the rounds' clocks)."""
        inputs = {**self.energy_inputs(label), **_problem_files(self.headline_problems(label))}
        if self.run.measures_energy:
            inputs["energy"] = paths.ENERGY.format(label=label)
        return inputs

    def final_outputs(self, report_outputs: list[str]) -> list[str]:
        """The study's tables, figures and pages (`report_outputs`), and the optional stages' own outputs:
        asked for here, an ncu or sanitizer run added to a finished study runs, and collect_results then takes
        it in (Snakemake does not run a job for an input that only a job with nothing else to do would read)."""
        label, s = self.run.label, self.run.settings
        tables = [paths.study_file(key, label) for key in ("results", "summary", "hardware")]
        tables += [paths.study_file("sanitizer", label)] * s.sanitizer
        tables += [paths.study_file("tuning", label)] * bool(self.run.tuned)
        return tables + self.ncu_reports(label) + self.sanitizer_reports(label) + report_outputs


def _problem_files(problems: list[dict]) -> dict:
    """The inputs (A and B) and the binaries of a phase's problems (energy_problems' entries)."""
    return {"data": sorted({p[k] for p in problems for k in ("a", "b")}),
            "binaries": sorted({b for p in problems for _, b in p["variants"] if b})}
