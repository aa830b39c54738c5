"""The study's configuration: validation with one-line errors, and the grid."""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

import jsonschema
import yaml

from .errors import StudyError
from .registry import Variant

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "workflow" / "schemas" / "config.schema.yaml"
INDEX_LIMIT = 2**31  # the kernels index with 32-bit ints


class Shape(NamedTuple):
    M: int
    N: int
    K: int

    @property
    def tag(self) -> str:
        return f"{self.M}x{self.N}x{self.K}"

    @property
    def flop(self) -> int:
        return 2 * self.M * self.N * self.K

    @property
    def is_square(self) -> bool:
        return self.M == self.N == self.K

    @classmethod
    def parse(cls, tag: str) -> "Shape":
        m = re.fullmatch(r"(\d+)x(\d+)x(\d+)", tag)
        if not m:
            raise StudyError(f"shape '{tag}' is not of the form MxNxK")
        return cls(*map(int, m.groups()))


def _describe(error: jsonschema.ValidationError, schema: dict) -> str:
    path = list(error.absolute_path)
    if error.validator == "additionalProperties" and not path:
        known = sorted(schema["properties"])
        extra = sorted(set(error.instance) - set(known))
        return f"config: unknown key {', '.join(map(repr, extra))}; allowed keys: {', '.join(known)}"
    if error.validator == "required" and not path:
        missing = re.search(r"'([^']+)'", error.message)
        return f"config: missing key {missing.group(0) if missing else error.message}; see config/config.yaml for every key"
    key = path[0]
    where = key + "".join(f"[{p}]" for p in path[1:])
    allowed = schema["properties"].get(key, {}).get("description", error.message)
    return f"config: {where} = {error.instance!r} is not allowed; expected {allowed}"


def _from_command_line(value, schema: dict):
    """Values given as `snakemake --config key=value` arrive as strings, or lists
    of strings ('sizes=[64,128]' -> ['64', '128']); read them as YAML where the
    schema wants a number, a boolean or a list. Anything else is left for the
    schema to judge."""
    kind = schema.get("type")
    kinds = set(kind) if isinstance(kind, list) else {kind}
    if isinstance(value, str) and kinds & {"integer", "number", "boolean", "array", "null"}:
        try:
            value = yaml.safe_load(value)
        except yaml.YAMLError:
            return value
    if isinstance(value, list) and "array" in kinds:
        return [_from_command_line(v, schema.get("items", {})) for v in value]
    return value


def validate(cfg: dict, registry: dict[str, Variant], schema_path: Path = SCHEMA_PATH) -> dict:
    """Check the config against the schema and the registry.

    Returns the config with 'variants' expanded to a list of ids in the
    registry's order. Raises StudyError naming the key, the value and what is
    allowed.
    """
    with open(schema_path) as fh:
        schema = yaml.safe_load(fh)
    cfg = {key: _from_command_line(value, schema["properties"].get(key, {})) for key, value in cfg.items()}
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(cfg),
                    key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    if errors:
        raise StudyError(_describe(errors[0], schema))

    wanted = list(registry) if cfg["variants"] == "all" else cfg["variants"]
    for vid in wanted:
        if vid not in registry:
            raise StudyError(f"config: variants contains unknown variant '{vid}'; known: {', '.join(registry)}")
    cfg["variants"] = [vid for vid in registry if vid in wanted]

    if cfg["reference_size"] not in cfg["sizes"]:
        raise StudyError(f"config: reference_size = {cfg['reference_size']} is not allowed; expected one of sizes {cfg['sizes']}")
    if cfg["ncu"] and cfg["ncu_size"] not in cfg["sizes"]:
        raise StudyError(f"config: ncu_size = {cfg['ncu_size']} is not allowed; expected one of sizes {cfg['sizes']}")
    if cfg["max_samples"] < cfg["min_samples"]:
        raise StudyError(f"config: max_samples = {cfg['max_samples']} is not allowed; expected at least "
                         f"min_samples ({cfg['min_samples']})")
    if not cfg["sizes"] and not cfg["shapes"]:
        raise StudyError("config: sizes and shapes are both empty; give at least one size")
    for shape in shapes(cfg):
        M, N, K = shape
        if max(M * K, K * N, M * N) >= INDEX_LIMIT:
            raise StudyError(f"config: shape {shape.tag} is too large: a matrix of it has >= 2^31 elements, "
                             "past the kernels' 32-bit indexing; use smaller sizes")
    return cfg


def shapes(cfg: dict) -> list[Shape]:
    """Square sizes and explicit shapes, without repeats, smallest first."""
    out = {Shape(n, n, n) for n in cfg["sizes"]} | {Shape(*s) for s in cfg["shapes"]}
    return sorted(out, key=lambda s: (s.flop, s))


def full_check(shape: Shape, cfg: dict) -> bool:
    """Whether a shape is checked element by element (else by Freivalds' method, where the config asks)."""
    limit = cfg["full_check_max_size"]
    return limit is None or shape.M * shape.N * shape.K <= limit**3


def check_method(shape: Shape, cfg: dict, uses_gpu: bool) -> str:
    """How results on a shape are checked: 'gpu' (every element, reference by cuBLAS DGEMM),
    'cpu' (every element, NumPy's float64 reference: CPU-only studies) or 'freivalds'."""
    if not full_check(shape, cfg):
        return "freivalds"
    return "gpu" if uses_gpu else "cpu"


def runs_on(variant: Variant, shape: Shape, cfg: dict) -> bool:
    """Whether the study measures this variant on this shape."""
    if variant.id == "cpu_naive":
        return max(shape) <= cfg["cpu_naive_max_size"]
    return True


def measurements(cfg: dict, registry: dict[str, Variant]) -> list[tuple[Variant, Shape, int, str]]:
    """Every (variant, shape, seed, dtype) the study measures."""
    return [(registry[vid], shape, seed, dtype)
            for dtype in cfg["dtypes"]
            for vid in cfg["variants"]
            if dtype in registry[vid].dtypes
            for shape in shapes(cfg)
            if runs_on(registry[vid], shape, cfg)
            for seed in cfg["seeds"]]


def builds(cfg: dict, registry: dict[str, Variant]) -> list[tuple[Variant, str]]:
    """Every (variant, dtype) the study compiles."""
    pairs = dict.fromkeys((v.id, d) for v, _, _, d in measurements(cfg, registry) if v.is_built)
    return sorted(((registry[vid], d) for vid, d in pairs), key=lambda vd: (vd[0].order, vd[1]))


def bench_jobs(cfg: dict, registry: dict[str, Variant]) -> list[tuple[Variant, str, int, list[Shape]]]:
    """One bench job per (variant, dtype, seed): it measures every shape of it.

    One process, one CUDA context, one cuBLAS handle for the whole sweep of a
    variant; a job's shapes come smallest first.
    """
    jobs: dict[tuple[str, str, int], list[Shape]] = {}
    for v, shape, seed, dtype in measurements(cfg, registry):
        jobs.setdefault((v.id, dtype, seed), []).append(shape)
    return [(registry[vid], dtype, seed, shapes) for (vid, dtype, seed), shapes in jobs.items()]
