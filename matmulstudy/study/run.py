"""A run of the study: the registry, the settings it measures with and the jobs of measurement.

At start, the config is validated against the schema and the registry, the label and the nvcc target are
resolved (from the GPU where they are `auto`), and the variants this GPU cannot run (a registry `needs` its
architecture lacks: mma.sync before sm_80, wgmma and TMA off Hopper) are set aside with the reason:
neither built nor run, and named in skipped.csv and on the page. Any problem stops the run there, in one
line. The files each stage reads and writes are the pipeline's (matmulstudy/pipeline/rules.py). Nothing here
imports numpy, pandas or Matplotlib: a run starts without them.
"""

from __future__ import annotations

import dataclasses

from .. import precisions
from ..errors import StudyError
from ..gpu import host
from . import plan
from .registry import Registry, load_registry
from .settings import validate


def skipped_words(rows) -> str:
    """Variants held back from a GPU, grouped by why: (title, is_step, reason) each -> 'needs sm_90a (...): 19,
    20; needs sm_80 or newer: 18, cuBLAS ...', a step named by its number."""
    by_reason = {}
    for title, is_step, why in rows:
        by_reason.setdefault(str(why).split(";")[0], []).append(title.split()[0] if is_step else title)
    return "; ".join(f"{why}: {', '.join(names)}" for why, names in by_reason.items())


def _label_and_arch(given, uses_gpu: bool, rules_only: bool) -> tuple[str, str | None]:
    label, arch = given.label, given.arch
    if rules_only:
        return (label if label != "auto" else "rules-only"), (arch if arch != "auto" else "sm_90")
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
    resolved), what it skips, and its jobs. `rules_only`: the run only reads the rules (Snakemake's --lint,
    --unlock, ...), so no GPU is asked for the label and arch left `auto`."""

    def __init__(self, registry: Registry, config: dict, rules_only: bool = False):
        self.registry = registry
        given = validate(config, registry)
        self.uses_gpu = any(registry[v].is_gpu for v in given.variants)   # then nvcc builds the harness too
        label, arch = _label_and_arch(given, self.uses_gpu, rules_only)
        self.skipped = {v: why for v in given.variants if (why := registry[v].unsupported(arch))}
        # what every job measures with, what provenance hashes, what the study keeps
        self.settings = dataclasses.replace(given, label=label, arch=arch, variants=type(given.variants)(
            v for v in given.variants if v not in self.skipped))
        self.variants = [registry[v] for v in self.settings.variants]
        self.tuned = [v for v in self.variants if v.search] if self.settings.tune else []   # tune_variant's
        self.jobs = {(v.id, dtype, seed): shapes   # measure_variant's: one per variant, dtype and seed
                     for v, dtype, seed, shapes in plan.bench_jobs(self.settings, registry)}

    @classmethod
    def start(cls, config: dict, rules_only: bool = False) -> "StudyRun":
        """The run the config asks for, or StudyError saying in one line what is wrong."""
        return cls(load_registry(), config, rules_only)

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

    @property
    def shown_at(self) -> bool:
        """Whether the run measures counters at a step's own size (counters_at.csv)."""
        return self.settings.ncu and any(v.shown_at for v in self.variants if v.is_gpu)

    @property
    def measures_energy(self) -> bool:
        """Whether every GPU variant runs back to back after the timed samples (the energy phase)."""
        return self.uses_gpu and self.settings.timing.energy_window_s > 0

    @property
    def why_no_energy(self) -> str:
        """energy_note of a GPU variant's summary row where the study measured no energy."""
        return f"not measured (energy_window_s: {self.settings.timing.energy_window_s:g})"

    @property
    def measures_headline(self) -> bool:
        """Whether the study has headline rounds: a GPU, rounds asked for, float32, and a reference measured."""
        return (self.uses_gpu and self.settings.timing.headline_rounds > 0 and "float32" in self.settings.dtypes
                and any(v.role == "reference" for v in self.variants))

    def headline_precisions(self) -> list[str]:
        """The precisions whose rounds the study measures (a job each): those it has a GPU step and the
        reference of."""
        return [p.id for p in precisions.TABLE
                if any(v.is_gpu and v.is_step and v.precision == p for v in self.variants)
                and getattr(self.registry.reference(p), "id", None) in {v.id for v in self.variants}]

    def headline_shapes(self) -> list[str]:
        """The reference size and the largest square size of the sweep (one, if they are the same): where the
        energy phase and the headline rounds measure."""
        sizes = sorted({self.settings.reference_size, max(self.settings.sizes)})
        return [f"{n}x{n}x{n}" for n in sizes]
