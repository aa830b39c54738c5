"""The study's configuration: validation with one-line errors, and the typed settings.

validate() checks config/config.yaml (or any dict of its keys, from the file
or the command line) against workflow/schemas/config.schema.yaml and the
registry, and returns a frozen Settings: the measurement code takes it, or
the part it needs (Timing, Checking), and never reads a config dict. Equal
settings hash equal however they were given (Settings.hash, the
config_hash of every results row).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import jsonschema
import yaml

from ..errors import StudyError
from .paths import CONFIG_PATH, SCHEMA_PATH
from .registry import Registry, load_registry
from .shapes import Shape

INDEX_LIMIT = 2**31  # the kernels index with 32-bit ints
MAX_GRID = (2**31 - 1, 65535)   # CUDA's largest grid in x and in y


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


@dataclass(frozen=True)
class Timing:
    """How a verified variant is timed (measure/criterion.py, gpu/timer.py): its burst samples, the batches
    taken again where the GPU throttled, its sustained run for the energy, and the headline rounds."""
    warmup: int
    cache: str
    min_samples: int
    max_samples: int
    max_noise: float
    max_time_s: float
    throttle_fraction: float
    throttle_recovery_s: float = 0.0
    max_retakes: int = 0
    min_time_s: float = 0.0          # seconds of samples before the noise may stop the timing (nvbench's --min-time)
    placements: int = 1              # copies of the operands the timed launches take in turn (measure/bench.py)
    contexts: int = 1                # CUDA contexts, one after another, a measurement's samples are taken in
    contexts_below_ms: float = math.inf   # ... where its launch takes less than this; one context otherwise
    energy_window_s: float = 0.0
    headline_rounds: int = 0         # the headline ratios in rounds (measure/headline.py)
    headline_window_s: float = 0.5


# For a shape that is only checked (the fault suite, devbench's ragged shapes): the least timing
# measure() allows after a verified result.
CHECK_ONLY = Timing(warmup=0, cache="hot", min_samples=2, max_samples=2, max_noise=1.0, max_time_s=0.1,
                    throttle_fraction=0.9)


@dataclass(frozen=True)
class Checking:
    """How a result is checked (measure/verify.py): tolerance, the bound's tau; and Freivalds' option."""
    tolerance: float
    full_check_max_size: int | None
    freivalds_vectors: int


# Config keys of the optional stages: not part of Settings.hash (see there).
OPTIONAL_STAGE_KEYS = frozenset({"ncu", "ncu_size", "sanitizer", "sanitizer_shapes", "tune", "tune_size", "tune_budget_s"})


@dataclass(frozen=True)
class Settings:
    """The validated config: every key of config/config.yaml, typed; `variants` in the registry's order."""
    label: str
    arch: str
    variants: tuple[str, ...]
    dtypes: tuple[str, ...]
    sizes: tuple[int, ...]
    shapes: tuple[Shape, ...]
    reference_size: int
    seeds: tuple[int, ...]
    timing: Timing
    checking: Checking
    sanitizer: bool
    sanitizer_shapes: tuple[Shape, ...]
    tune: bool
    tune_size: int
    tune_budget_s: float
    ncu: bool
    ncu_size: int

    def as_config(self) -> dict:
        """The settings as config keys (what config.yaml would say to give exactly these)."""
        out = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, (Timing, Checking)):
                out.update(asdict(value))
            elif isinstance(value, tuple):
                out[f.name] = [list(x) if isinstance(x, tuple) else x for x in value]
            else:
                out[f.name] = value
        return out

    @property
    def hash(self) -> str:
        """A short hash of the settings that shape the measurements: equal settings, equal hash, whatever
        form they were given in. The optional stages' switches (ncu, sanitizer, tune and theirs) are left
        out, so that turning one on for a finished study runs that stage only (a tuned variant is still
        measured again: its build changes)."""
        text = json.dumps({k: v for k, v in self.as_config().items() if k not in OPTIONAL_STAGE_KEYS}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    def sweep(self) -> list[Shape]:
        """The shapes measured: square sizes and explicit shapes, without repeats, smallest first."""
        out = {Shape(n, n, n) for n in self.sizes} | set(self.shapes)
        return sorted(out, key=lambda s: (s.flop, s))


def read_config_file(path) -> dict:
    """A YAML config file, or StudyError naming the file, the line and the column of what is wrong."""
    try:
        with open(path) as fh:
            data = yaml.safe_load(fh)
    except OSError as err:
        raise StudyError(f"config file {path}: {err.strerror}") from None
    except yaml.YAMLError as err:
        mark, start = getattr(err, "problem_mark", None), getattr(err, "context_mark", None)
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        # where the parser found it, and where what it was reading began (a missing ] is found lines later)
        context = (f" ({err.context} that starts at line {start.line + 1}, column {start.column + 1})"
                   if getattr(err, "context", None) and start else "")
        raise StudyError(f"config file {path}{where}: {getattr(err, 'problem', None) or err}{context}; "
                         "fix the YAML there") from None
    if data is None:
        raise StudyError(f"config file {path} holds no settings (it is empty, or comments only); every key is "
                         "required: start from the repository's config/config.yaml")
    if not isinstance(data, dict):
        raise StudyError(f"config file {path}: expected keys and values (a YAML mapping), found {type(data).__name__}")
    return data


def read_schema(schema_path: Path = SCHEMA_PATH) -> dict:
    with open(schema_path) as fh:
        return yaml.safe_load(fh)


def validate(cfg: dict, registry: Registry, schema_path: Path = SCHEMA_PATH) -> Settings:
    """Check the config against the schema and the registry; the typed settings.

    Raises StudyError naming the key, the value and what is allowed.
    """
    schema = read_schema(schema_path)
    cfg = {key: _from_command_line(value, schema["properties"].get(key, {})) for key, value in cfg.items()}
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(cfg),
                    key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    if errors:
        raise StudyError(_describe(errors[0], schema))

    wanted = list(registry) if cfg["variants"] == "all" else cfg["variants"]
    for vid in wanted:
        if vid not in registry:
            raise StudyError(f"config: variants contains {registry.unknown(vid)}")
        if registry[vid].missing_file:
            raise StudyError(f"{registry[vid].missing_file}; restore it, or leave {vid} out of variants")
    if cfg["reference_size"] not in cfg["sizes"]:
        raise StudyError(f"config: reference_size = {cfg['reference_size']} is not allowed; expected one of sizes "
                         f"{cfg['sizes']} (with --config sizes=[...], give reference_size=N, one of them, too)")
    if cfg["ncu"] and cfg["ncu_size"] not in cfg["sizes"]:
        raise StudyError(f"config: ncu_size = {cfg['ncu_size']} is not allowed; expected one of sizes {cfg['sizes']}")
    if cfg["max_samples"] < cfg["min_samples"]:
        raise StudyError(f"config: max_samples = {cfg['max_samples']} is not allowed; expected at least "
                         f"min_samples ({cfg['min_samples']})")
    if not cfg["sizes"] and not cfg["shapes"]:
        raise StudyError("config: sizes and shapes are both empty; give at least one size")
    timing = Timing(**{f.name: cfg[f.name] for f in fields(Timing)})
    checking = Checking(**{f.name: cfg[f.name] for f in fields(Checking)})
    settings = Settings(
        label=cfg["label"], arch=cfg["arch"], variants=tuple(vid for vid in registry if vid in wanted),
        dtypes=tuple(cfg["dtypes"]), sizes=tuple(cfg["sizes"]), shapes=tuple(Shape(*s) for s in cfg["shapes"]),
        reference_size=cfg["reference_size"], seeds=tuple(cfg["seeds"]), timing=timing, checking=checking,
        sanitizer=cfg["sanitizer"], sanitizer_shapes=tuple(Shape(*s) for s in cfg["sanitizer_shapes"]),
        tune=cfg["tune"], tune_size=cfg["tune_size"], tune_budget_s=cfg["tune_budget_s"],
        ncu=cfg["ncu"], ncu_size=cfg["ncu_size"])
    for shape in settings.sweep():
        M, N, K = shape
        if max(M * K, K * N, M * N) >= INDEX_LIMIT:
            raise StudyError(f"config: shape {shape.tag} is too large: a matrix of it has >= 2^31 elements, "
                             "past the kernels' 32-bit indexing; use smaller sizes")
        for vid in settings.variants:
            v = registry[vid]
            if v.backend != "cuda" or not v.runs_on(shape):
                continue
            x, y, _ = v.launch_grid(M, N, sms=1)   # a grid of the kernel's own grows with the tiles, not the SMs
            if y > MAX_GRID[1] or x > MAX_GRID[0]:
                raise StudyError(f"config: shape {shape.tag} needs a grid of {x:,} x {y:,} blocks for {vid} (tiles "
                                 f"of {v.tile[0]} x {v.tile[1]}), past CUDA's {MAX_GRID[0]:,} x {MAX_GRID[1]:,}; "
                                 f"use a smaller {'M' if y > MAX_GRID[1] else 'N'} or leave {vid} out of variants")
    return settings


def default_settings(registry: Registry | None = None) -> Settings:
    """The default study's settings (config/config.yaml): what the tools outside the workflow check with."""
    with open(CONFIG_PATH) as fh:
        return validate(yaml.safe_load(fh), registry or load_registry())
