"""The registry of variants: kernels/registry.yaml, the one list of the study."""

from __future__ import annotations

import ast
import operator
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .errors import StudyError

KERNELS_DIR = Path(__file__).resolve().parent.parent / "kernels"
REGISTRY_PATH = KERNELS_DIR / "registry.yaml"

BACKENDS = ("c", "numpy", "cuda", "cublas")
GPU_BACKENDS = ("cuda", "cublas")
BUILT_BACKENDS = ("c", "cuda")
_KEYS = {"id", "backend", "file", "kernel", "title", "source", "defines", "block", "tile",
         "flop_per_byte", "dtypes", "precision"}
PRECISIONS = ("fp32", "tf32")   # arithmetic of a float32 variant: full FP32, or TF32 tensor cores
DTYPES = {"float32": "float", "int32": "int"}   # dtype -> the kernels' ELEM

_OPS = {ast.Add: operator.add, ast.Sub: operator.sub,
        ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv, ast.Div: operator.truediv}


def eval_expr(expr, defines: dict, integer: bool = True):
    """Evaluate a number or an arithmetic expression of the defines.

    Only names of defines, numbers and + - * // (and / unless `integer`)
    are allowed, so a registry entry cannot run code.
    """
    if isinstance(expr, (int, float)):
        return expr

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in defines:
                raise StudyError(f"registry: '{node.id}' in '{expr}' is not one of the defines {sorted(defines)}")
            return int(defines[node.id])
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS and not (integer and isinstance(node.op, ast.Div)):
            return _OPS[type(node.op)](ev(node.left), ev(node.right))
        raise StudyError(f"registry: '{expr}' is not an integer expression of the defines (allowed: names, integers, + - * //)")

    try:
        tree = ast.parse(str(expr), mode="eval")
    except SyntaxError:
        raise StudyError(f"registry: '{expr}' is not an integer expression of the defines") from None
    return ev(tree)


@dataclass(frozen=True)
class Variant:
    id: str
    backend: str
    title: str
    source: str
    order: int
    file: Path | None = None
    kernel: str = ""
    defines: dict = field(default_factory=dict)
    block_expr: tuple = ()
    tile_expr: tuple = ()
    ratio_expr: str | None = None
    dtypes: tuple = ("float32",)
    precision: str = "fp32"

    @property
    def is_gpu(self) -> bool:
        return self.backend in GPU_BACKENDS

    @property
    def is_built(self) -> bool:
        return self.backend in BUILT_BACKENDS

    def with_defines(self, overrides: dict) -> "Variant":
        """The same variant with some defines replaced (tuning, tests)."""
        unknown = set(overrides) - set(self.defines)
        if unknown:
            raise StudyError(f"variant {self.id}: unknown define(s) {sorted(unknown)}; it has {sorted(self.defines)}")
        return Variant(**{**self.__dict__, "defines": {**self.defines, **overrides}})

    @property
    def block(self) -> tuple[int, int, int]:
        x, y = (eval_expr(e, self.defines) for e in self.block_expr)
        return (x, y, 1)

    @property
    def tile(self) -> tuple[int, int]:
        rows, cols = (eval_expr(e, self.defines) for e in self.tile_expr)
        return (rows, cols)

    @property
    def flop_per_byte(self) -> float | None:
        """The seed's compute-to-memory ratio of this step (None if not given)."""
        return None if self.ratio_expr is None else float(eval_expr(self.ratio_expr, self.defines, integer=False))

    def grid(self, M: int, N: int) -> tuple[int, int, int]:
        """Blocks to cover an M x N matrix C: ceil(N/cols) x ceil(M/rows)."""
        rows, cols = self.tile
        return (-(-N // cols), -(-M // rows), 1)


def _parse_entry(i: int, raw: dict, kernels_dir: Path = KERNELS_DIR) -> Variant:
    where = f"registry entry {i + 1}"
    if not isinstance(raw, dict) or "id" not in raw:
        raise StudyError(f"{where}: every entry needs an 'id'")
    vid = raw["id"]
    where = f"registry entry '{vid}'"
    unknown = set(raw) - _KEYS
    if unknown:
        raise StudyError(f"{where}: unknown key(s) {sorted(unknown)}; allowed: {sorted(_KEYS)}")
    if not re.fullmatch(r"[a-z][a-z0-9_]*", str(vid)):
        raise StudyError(f"{where}: id must be lower-case letters, digits and _")
    backend = raw.get("backend")
    if backend not in BACKENDS:
        raise StudyError(f"{where}: backend '{backend}' is not one of {list(BACKENDS)}")
    for key in ("title", "source"):
        if not raw.get(key):
            raise StudyError(f"{where}: '{key}' is required")
    path = None
    kernel = raw.get("kernel", vid)
    if backend in BUILT_BACKENDS:
        if not raw.get("file"):
            raise StudyError(f"{where}: backend {backend} needs a 'file' in kernels/")
        path = Path(kernels_dir) / raw["file"]
        if not path.is_file():
            raise StudyError(f"{where}: file {path} does not exist")
        if not re.fullmatch(rf"\d\d_{kernel}\.(cu|c)", path.name):
            raise StudyError(f"{where}: file '{path.name}' must be named NN_{kernel}.cu (or .c)")
    dtypes = tuple(raw.get("dtypes") or ("float32",))
    if not set(dtypes) <= set(DTYPES) or "float32" not in dtypes:
        raise StudyError(f"{where}: dtypes {list(dtypes)} must include float32 and be among {list(DTYPES)}")
    precision = raw.get("precision", "fp32")
    if precision not in PRECISIONS or (precision != "fp32" and backend != "cublas"):
        raise StudyError(f"{where}: precision '{precision}' is not allowed; expected one of {list(PRECISIONS)} "
                         "(anything but fp32 only for cublas)")
    defines = dict(raw.get("defines") or {})
    for name in defines:
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_]\w*", name):
            raise StudyError(f"{where}: define {name!r} is not a C identifier (YAML reads OFF, ON, NO, YES "
                             "as booleans: quote the name or choose another)")
    block, tile = tuple(raw.get("block") or ()), tuple(raw.get("tile") or ())
    if backend == "cuda":
        if len(block) != 2 or len(tile) != 2:
            raise StudyError(f"{where}: a cuda variant needs 'block: [x, y]' and 'tile: [rows, cols]'")
    variant = Variant(id=vid, backend=backend, title=raw["title"], source=raw["source"], order=i,
                      file=path, kernel=kernel, defines=defines, block_expr=block, tile_expr=tile,
                      ratio_expr=raw.get("flop_per_byte"), dtypes=dtypes, precision=precision)
    if backend == "cuda":
        variant.flop_per_byte  # evaluates, or says what is wrong
        bx, by, _ = variant.block
        rows, cols = variant.tile
        if min(bx, by, rows, cols) < 1 or bx * by > 1024:
            raise StudyError(f"{where}: block {bx}x{by} / tile {rows}x{cols} is not launchable (1..1024 threads)")
    return variant


def parse_variants(entries: list, kernels_dir: Path = KERNELS_DIR, where: str = "registry") -> dict[str, Variant]:
    """Variants by id, in the entries' order; files are looked up in kernels_dir."""
    variants = {}
    for i, raw in enumerate(entries):
        v = _parse_entry(i, raw, kernels_dir)
        if v.id in variants:
            raise StudyError(f"{where}: variant id '{v.id}' appears twice")
        variants[v.id] = v
    return variants


def load_registry(path: Path | str = REGISTRY_PATH) -> dict[str, Variant]:
    """Variants by id, in the registry's order (the study's order)."""
    with open(path) as fh:
        data = yaml.safe_load(fh)
    entries = (data or {}).get("variants")
    if not entries:
        raise StudyError(f"{path}: no 'variants' list")
    return parse_variants(entries, Path(path).parent, str(path))
