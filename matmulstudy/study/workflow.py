"""The workflow's side of a study: what the Snakefile learns when it starts, the inputs and targets of its
rules. workflow/rules/common.smk makes one StudyRun and the rule files ask it; they hold no logic of their
own (report/ending.py writes the lines that end a run).

At start, the config is validated against the schema and the registry, the label and the nvcc target are
resolved (from the GPU where they are `auto`), and the variants this GPU cannot run (a registry `needs` its
architecture lacks: mma.sync before sm_80, wgmma and TMA off Hopper) are set aside with the reason:
neither built nor run, and named in skipped.csv and on the page. Any problem stops the run there, in one
line. Nothing here imports pandas or Matplotlib: a run starts without them.
"""

from __future__ import annotations

import dataclasses
import re

from ..errors import StudyError
from ..gpu import host
from . import paths, plan
from .registry import Registry, load_registry
from .settings import validate


def linting(argv: list[str]) -> bool:
    """Whether Snakemake was asked to lint (it reads the rules and runs nothing: no GPU is asked anything)."""
    return any(arg == "--lint" or arg.startswith("--lint=") for arg in argv)


def skipped_words(rows) -> str:
    """Variants held back from a GPU, grouped by why: (title, is_step, reason) each -> 'needs sm_90a (...): 19,
    20; needs sm_80 or newer: 18, cuBLAS ...', a step named by its number."""
    by_reason = {}
    for title, is_step, why in rows:
        by_reason.setdefault(str(why).split(";")[0], []).append(title.split()[0] if is_step else title)
    return "; ".join(f"{why}: {', '.join(names)}" for why, names in by_reason.items())


def dry_run(argv: list[str]) -> bool:
    """Whether Snakemake was asked for a dry run (-n, also among other short flags such as -np)."""
    return any(arg in ("--dry-run", "--dryrun") or re.fullmatch(r"-[a-zA-Z]*n[a-zA-Z]*", arg) for arg in argv)


def _label_and_arch(given, uses_gpu: bool, lint: bool) -> tuple[str, str | None]:
    label, arch = given.label, given.arch
    if lint:
        return (label if label != "auto" else "lint"), (arch if arch != "auto" else "sm_90")
    if uses_gpu and arch != "auto":
        host.check_arch(arch)   # a wrong arch is said first, GPU or not
    if label == "auto" or (uses_gpu and arch == "auto"):
        try:
            gpu = host.visible_gpu()
        except StudyError as err:
            unset = [key for key, auto in (("label", label == "auto"),
                                           ("arch (e.g. sm_90)", uses_gpu and arch == "auto")) if auto]
            raise StudyError(f"{err}; set {' and '.join(unset)} in the config or run on a machine with a GPU") \
                from None
        if label == "auto":
            label = host.gpu_label(gpu["name"])
        if arch == "auto":
            arch = host.arch_of(gpu["compute_capability"])
            if uses_gpu:
                host.check_arch(arch)   # the GPU's own (a given one is checked above)
    return label, (arch if uses_gpu else None)


class StudyRun:
    """One run of the workflow: the registry, the settings it measures with (label, arch and the variants
    resolved), what it skips, and the files each rule reads and writes."""

    def __init__(self, registry: Registry, config: dict, argv: list[str]):
        self.registry = registry
        given = validate(config, registry)
        self.uses_gpu = any(registry[v].is_gpu for v in given.variants)   # then nvcc builds the harness too
        label, arch = _label_and_arch(given, self.uses_gpu, linting(argv))
        self.skipped = {v: why for v in given.variants if (why := registry[v].unsupported(arch))}
        # what every job measures with, what provenance hashes, what the study keeps
        self.settings = dataclasses.replace(given, label=label, arch=arch, variants=type(given.variants)(
            v for v in given.variants if v not in self.skipped))
        self.variants = [registry[v] for v in self.settings.variants]
        self.tuned = [v for v in self.variants if v.search] if self.settings.tune else []   # tune_variant's
        self.jobs = {(v.id, dtype, seed): shapes   # measure_variant's: one per variant, dtype and seed
                     for v, dtype, seed, shapes in plan.bench_jobs(self.settings, registry)}

    @classmethod
    def start(cls, config: dict, argv: list[str]) -> "StudyRun":
        """The run the config asks for, or StudyError saying in one line what is wrong."""
        return cls(load_registry(), config, argv)

    @property
    def label(self) -> str:
        return self.settings.label

    def skipped_line(self) -> str | None:
        """What this GPU's study leaves out, in one line said as the run starts (a dry run and `build` too): each
        reason with the variants it holds back (a step by its number), or None where nothing is."""
        if not self.skipped:
            return None
        return (f"note: {len(self.skipped)} variant(s) not built or run for {self.settings.arch} (skipped.csv and the "
                "page say why): " + skipped_words((self.registry[vid].title, self.registry[vid].is_step, why)
                                                  for vid, why in self.skipped.items()))

    def gpu_model(self, wildcards) -> str:
        """The GPU a job asks a cluster for (resources gpu_model): the model its label names (label h100:
        --gpus=h100:1), so an h100 study lands on h100 nodes. Empty (no GPU) for a study without GPU variants."""
        return wildcards.label if self.uses_gpu else ""

    def variant_pattern(self, backends) -> str:
        """Wildcard regex of the variants of some backends (never matches if none)."""
        return "|".join(vid for vid, v in self.registry.items() if v.backend in backends) or "(?!)"

    @property
    def tuned_pattern(self) -> str:
        return "|".join(v.id for v in self.tuned) or "(?!)"

    def tuned_choice(self, label: str, variant: str) -> dict:
        """compile_kernel's extra input where the study tunes the variant: the chosen defines."""
        tuned = variant in {v.id for v in self.tuned}
        return {"chosen": paths.TUNING.format(label=label, variant=variant, ext="json")} if tuned else {}

    # --- measure_variant: one job per variant, dtype and seed ---------------------------------------------
    def bench_problems(self, variant: str, dtype: str, seed) -> list[dict]:
        """Per shape of this job: its input files, and what its results are checked against
        (plan.reference_kind): 'gpu' and 'freivalds' need only A and B, 'cpu' the float64 reference that
        make_reference makes."""
        problems = []
        for shape in self.jobs[variant, dtype, int(seed)]:
            files = paths.inputs(dtype, shape, seed)
            kind = plan.reference_kind(shape, self.settings.checking, self.uses_gpu)
            keep = ("a", "b", "ref", "scale") if kind == "cpu" else ("a", "b")
            problems.append({"shape": shape.tag, "check": kind, **{key: files[key] for key in keep}})
        return problems

    def bench_inputs(self, label: str, variant: str, dtype: str, seed) -> dict:
        v = self.registry[variant]
        problems = self.bench_problems(variant, dtype, seed)
        inputs = {"data": [path for p in problems for key, path in p.items() if key not in ("shape", "check")]}
        if v.is_built:
            inputs["binary"] = paths.binary(label, v, dtype)
            inputs["build"] = paths.binary(label, v, dtype) + ".json"
        if self.uses_gpu:   # GPU variants run on it; every variant's results are checked on it
            inputs["gpu"] = paths.GPU_FACTS.format(label=label)
            inputs["harness"] = paths.HARNESS.format(label=label)
        return inputs

    # --- what collect_results gathers -----------------------------------------------------------------------
    def samples(self, label: str) -> list[str]:
        return [paths.SAMPLES.format(label=label, dtype=dtype, variant=vid, seed=seed)
                for vid, dtype, seed in self.jobs]

    def resource_reports(self, label: str) -> list[str]:
        return [paths.binary(label, v, dtype) + ".json" for v, dtype in plan.builds(self.settings, self.registry)]

    def sass_reports(self, label: str) -> list[str]:
        return [paths.SASS.format(label=label, dtype=dtype, variant=v.id)
                for v, dtype in plan.builds(self.settings, self.registry) if v.backend == "cuda"]

    def ncu_reports(self, label: str) -> list[str]:
        """Every GPU variant's counters at ncu_size; and a step's `shown_at`, with the step before's, at that
        size too (counters_at.csv)."""
        if not self.settings.ncu:
            return []
        gpu = [v.id for v in self.variants if v.is_gpu]
        jobs = [(vid, self.settings.ncu_size) for vid in gpu]
        for v in self.variants:
            if not v.shown_at or v.id not in gpu:
                continue
            before = self.registry.step_before(v.id)
            for vid in ([before.id] if before is not None and before.id in gpu else []) + [v.id]:
                if (vid, v.shown_at) not in jobs:
                    jobs.append((vid, v.shown_at))
        return [paths.NCU.format(label=label, variant=vid, shape=f"{n}x{n}x{n}") for vid, n in jobs]

    @property
    def shown_at(self) -> bool:
        """Whether the run measures counters at a step's own size (counters_at.csv)."""
        return self.settings.ncu and any(v.shown_at for v in self.variants if v.is_gpu)

    def sanitizer_reports(self, label: str) -> list[str]:
        if not self.settings.sanitizer:
            return []
        return [paths.SANITIZER.format(label=label, variant=v.id) for v in self.variants if v.backend == "cuda"]

    def tuning_tables(self, label: str) -> list[str]:
        return [paths.TUNING.format(label=label, variant=v.id, ext="csv") for v in self.tuned]

    def gpu_facts(self, label: str) -> list[str]:
        return [paths.GPU_FACTS.format(label=label)] if self.uses_gpu else []

    # --- measure_energy: every GPU variant back to back, after every timed measurement --------------------
    @property
    def measures_energy(self) -> bool:
        return self.uses_gpu and self.settings.timing.energy_window_s > 0

    @property
    def why_no_energy(self) -> str:
        """energy_note of a GPU variant's summary row where the study measured no energy."""
        return f"not measured (energy_window_s: {self.settings.timing.energy_window_s:g})"

    def energy_problems(self, label: str) -> list[dict]:
        """Per dtype and shape the GPU variants measured (the first seed's inputs) at the headline's shapes
        (the reference size and the largest: the energy of every step where the study compares them; at
        every shape the phase took 1 min 48 s of a 10 min 48 s study on the H100): its input files, and the
        variants with their binaries."""
        seed, problems, shapes = self.settings.seeds[0], {}, self.headline_shapes()
        for v, shape, s, dtype in plan.measurements(self.settings, self.registry):
            if v.is_gpu and s == seed and shape.tag in shapes:
                files = paths.inputs(dtype, shape, seed)
                entry = problems.setdefault((dtype, shape), {"dtype": dtype, "shape": shape.tag, "seed": seed,
                                                              "a": files["a"], "b": files["b"], "variants": []})
                entry["variants"].append([v.id, paths.binary(label, v, dtype) if v.is_built else None])
        return list(problems.values())

    def energy_inputs(self, label: str) -> dict:
        """After every GPU variant's timed samples (their heat would lower the next one's clock): its inputs,
        binaries, the harness and the GPU's facts."""
        problems = self.energy_problems(label)
        gpu_jobs = [(vid, dtype, seed) for vid, dtype, seed in self.jobs if self.registry[vid].is_gpu]
        return {"timed": [paths.SAMPLES.format(label=label, dtype=d, variant=v, seed=s) for v, d, s in gpu_jobs],
                "data": sorted({p[k] for p in problems for k in ("a", "b")}),
                "binaries": sorted({b for p in problems for _, b in p["variants"] if b}),
                "gpu": paths.GPU_FACTS.format(label=label), "harness": paths.HARNESS.format(label=label)}

    # --- measure_headline: each precision's best step and its reference in rounds, after everything else ------
    @property
    def measures_headline(self) -> bool:
        """Whether the study has headline rounds: a GPU, rounds asked for, float32, and a reference measured."""
        return (self.uses_gpu and self.settings.timing.headline_rounds > 0 and "float32" in self.settings.dtypes
                and any(v.role == "reference" for v in self.variants))

    def headline_shapes(self) -> list[str]:
        """The reference size and the largest square size of the sweep (one, if they are the same)."""
        sizes = sorted({self.settings.reference_size, max(self.settings.sizes)})
        return [f"{n}x{n}x{n}" for n in sizes]

    def headline_problems(self, label: str) -> list[dict]:
        """The energy phase's problems (at the headline's shapes) in float32."""
        return [p for p in self.energy_problems(label) if p["dtype"] == "float32"]

    def headline_inputs(self, label: str) -> dict:
        """After every timed job and the energy phase (their heat would lower the rounds' clocks)."""
        inputs = self.energy_inputs(label)
        problems = self.headline_problems(label)
        inputs.update(data=sorted({p[k] for p in problems for k in ("a", "b")}),
                      binaries=sorted({b for p in problems for _, b in p["variants"] if b}))
        if self.measures_energy:
            inputs["energy"] = paths.ENERGY.format(label=label)
        return inputs

    def final_outputs(self, report_outputs: list[str]) -> list[str]:
        """The study's tables, figures and pages (`report_outputs`), and the optional stages' own outputs:
        asked for here, an ncu or sanitizer run added to a finished study runs, and collect_results then takes
        it in (Snakemake does not run a job for an input that only a job with nothing else to do would read)."""
        label, s = self.label, self.settings
        tables = [paths.study_file(key, label) for key in ("results", "summary", "hardware")]
        tables += [paths.study_file("sanitizer", label)] * s.sanitizer
        tables += [paths.study_file("tuning", label)] * bool(self.tuned)
        return tables + self.ncu_reports(label) + self.sanitizer_reports(label) + report_outputs
