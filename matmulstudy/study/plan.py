"""The plan of a study's jobs, from its settings and registry: what is measured, built, and how results
on each shape are checked. The workflow asks it for its targets; nothing here runs anything."""

from __future__ import annotations

from .registry import Registry
from .settings import Checking, Settings
from .shapes import Shape
from .variant import Variant


def full_check(shape: Shape, checking: Checking) -> bool:
    """Whether a shape is checked element by element (else by Freivalds' method, where the config asks)."""
    limit = checking.full_check_max_size
    return limit is None or shape.M * shape.N * shape.K <= limit**3


def reference_kind(shape: Shape, checking: Checking, uses_gpu: bool) -> str:
    """What results on a shape are checked against: 'gpu' (every element, the reference by cuBLAS DGEMM),
    'cpu' (every element, NumPy's float64 reference: CPU-only studies) or 'freivalds' (no reference)."""
    if not full_check(shape, checking):
        return "freivalds"
    return "gpu" if uses_gpu else "cpu"


def measurements(settings: Settings, registry: Registry) -> list[tuple[Variant, Shape, int, str]]:
    """Every (variant, shape, seed, dtype) the study measures."""
    return [(registry[vid], shape, seed, dtype)
            for dtype in settings.dtypes
            for vid in settings.variants
            if dtype in registry[vid].dtypes
            for shape in settings.sweep()
            if registry[vid].runs_on(shape)
            for seed in settings.seeds]


def builds(settings: Settings, registry: Registry) -> list[tuple[Variant, str]]:
    """Every (variant, dtype) the study compiles."""
    pairs = dict.fromkeys((v.id, d) for v, _, _, d in measurements(settings, registry) if v.is_built)
    return sorted(((registry[vid], d) for vid, d in pairs), key=lambda vd: (vd[0].order, vd[1]))


def bench_jobs(settings: Settings, registry: Registry) -> list[tuple[Variant, str, int, list[Shape]]]:
    """One bench job per (variant, dtype, seed): it measures every shape of it.

    One process, one CUDA context, one cuBLAS handle for the whole sweep of a
    variant; a job's shapes come smallest first.
    """
    jobs: dict[tuple[str, str, int], list[Shape]] = {}
    for v, shape, seed, dtype in measurements(settings, registry):
        jobs.setdefault((v.id, dtype, seed), []).append(shape)
    return [(registry[vid], dtype, seed, shapes) for (vid, dtype, seed), shapes in jobs.items()]
