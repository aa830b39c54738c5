"""The registry of variants: kernels/registry.yaml, the one list of the study.

Besides the variants it names the roles the rest of the code asks for, so
that no variant id appears in the package's logic:

chapters   the parts of the progression, in order (the seeds' steps, then
           the chapters beyond them), each with the precision its steps
           compute in; a step belongs to one, and colours and figure groups
           follow them
role       step (a kernel of a chapter), reference (the library each step of
           its precision is measured against: "fraction of cuBLAS"), or
           cpu_baseline
max_size   the largest M, N or K a variant runs (a CPU triple loop is O(n^3))

A committed study keeps the entries it was measured with (registry.yaml
beside its tables); Registry.from_entries reads those without the kernel
files.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Mapping
from pathlib import Path

import yaml

from .. import precisions
from ..errors import StudyError
from .counters import COUNTERS, DIRECTIONS
from .expressions import eval_expr, holds
from .paths import KERNELS_DIR, REGISTRY_PATH
from .variant import BUILT_BACKENDS, GPU_BACKENDS, Chapter, Search, Variant

BACKENDS = ("c", "numpy", "cuda", "cublas")
ROLES = ("step", "reference", "cpu_baseline")
BASELINES = "baselines"   # the folder of the kernels that are no step (a step's is its chapter's)
_KEYS = {"id", "backend", "file", "kernel", "title", "source", "defines", "block", "tile", "grid",
         "flop_per_byte", "dtypes", "precision", "role", "chapter", "max_size", "search", "shows", "needs",
         "tensor_maps", "cluster", "align_rows", "launch_number", "launches", "technique", "was", "shown_at",
         "builds_on"}
# Read in the snapshots of studies measured before the kernels exported their shared memory (gpu/cubin.py),
# and nothing else: a formula of the defines that the registry gave then.
_SNAPSHOT_KEYS = {"shared"}
_CHAPTER_KEYS = {"id", "title", "precision"}
DTYPES = {"float32": "float", "int32": "int"}   # dtype -> the kernels' ELEM

def _parse_was(was) -> tuple[str, ...]:
    """A step's numbers before the course was renumbered, oldest first: one, or a list."""
    return () if was is None else tuple(str(n) for n in (was if isinstance(was, list) else [was]))


def _parse_entry(i: int, raw: dict, kernels_dir: Path, chapters: dict, check_files: bool) -> Variant:
    where = f"registry entry {i + 1}"
    if not isinstance(raw, dict) or "id" not in raw:
        raise StudyError(f"{where}: every entry needs an 'id'")
    vid = raw["id"]
    where = f"registry entry '{vid}'"
    unknown = set(raw) - _KEYS - _SNAPSHOT_KEYS
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
    role = raw.get("role", "step" if backend == "cuda" else None)
    if role not in ROLES:
        raise StudyError(f"{where}: role '{role}' is not one of {list(ROLES)} (only a cuda kernel may leave it out: "
                         "it is then a step)")
    chapter = raw.get("chapter")
    if (role == "step") != (chapter is not None) or (chapter is not None and chapter not in chapters):
        raise StudyError(f"{where}: a step names its chapter, one of {list(chapters)}, and nothing else does "
                         f"(role {role}, chapter {chapter!r})")
    max_size = raw.get("max_size")
    if max_size is not None and (not isinstance(max_size, int) or max_size < 1):
        raise StudyError(f"{where}: max_size must be an integer >= 1 (the largest M, N or K it runs)")
    path, missing_file = None, None
    kernel = raw.get("kernel", vid)
    if backend in BUILT_BACKENDS:
        if not raw.get("file"):
            raise StudyError(f"{where}: backend {backend} needs a 'file' in kernels/")
        path = Path(kernels_dir) / raw["file"]
        if check_files and not path.is_file():   # refused by a study that runs it (settings.validate), not before
            missing_file = f"{where}: file {path} does not exist"
        if not re.fullmatch(rf"\d\d_{kernel}\.(cu|c)", path.name):
            raise StudyError(f"{where}: file '{path.name}' must be named NN_{kernel}.cu (or .c)")
        folder = chapter if role == "step" else BASELINES
        if check_files and path.parent.name != folder:
            whose = "its chapter's folder" if role == "step" else "the folder of the kernels that are no step"
            raise StudyError(f"{where}: file '{raw['file']}' must lie in {folder}/, {whose} ({folder}/{path.name})")
    dtypes = tuple(raw.get("dtypes") or ("float32",))
    if not set(dtypes) <= set(DTYPES) or "float32" not in dtypes:
        raise StudyError(f"{where}: dtypes {list(dtypes)} must include float32 and be among {list(DTYPES)}")
    own = chapters[chapter].precision if chapter else precisions.BASE
    precision = precisions.PRECISIONS.get(raw.get("precision", own.id))
    cpu = [p.id for p in precisions.TABLE if p.cpu]
    if precision is None or (not precision.cpu and backend not in GPU_BACKENDS):
        raise StudyError(f"{where}: precision '{raw.get('precision')}' is not allowed; expected one of "
                         f"{list(precisions.PRECISIONS)} (anything but {', '.join(cpu)} only on the GPU)")
    if chapter and precision != own:
        raise StudyError(f"{where}: precision {precision.id} differs from its chapter's ({own.id})")
    defines = dict(raw.get("defines") or {})
    for name in defines:
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_]\w*", name):
            raise StudyError(f"{where}: define {name!r} is not a C identifier (YAML reads OFF, ON, NO, YES "
                             "as booleans: quote the name or choose another)")
    block, tile = tuple(raw.get("block") or ()), tuple(raw.get("tile") or ())
    grid = tuple(raw.get("grid") or ())
    if backend == "cuda":
        if len(block) != 2 or len(tile) != 2:
            raise StudyError(f"{where}: a cuda variant needs 'block: [x, y]' and 'tile: [rows, cols]'")
        if grid and len(grid) != 2:
            raise StudyError(f"{where}: 'grid' is [x, y], expressions of the defines, sms and tiles")
        if raw.get("cluster") is not None and (not isinstance(raw["cluster"], list) or len(raw["cluster"]) != 2):
            raise StudyError(f"{where}: 'cluster' is [x, y], blocks of a cluster")
    technique = raw.get("technique")
    if technique is not None and (role != "step" or not isinstance(technique, str) or not technique.strip()):
        raise StudyError(f"{where}: technique is a step's, a name that the steps applying one technique in "
                         f"several precisions share; got {technique!r}")
    variant = Variant(id=vid, backend=backend, title=raw["title"], source=raw["source"], order=i,
                      file=path, kernel=kernel, defines=defines, block_expr=block, tile_expr=tile,
                      grid_expr=grid, ratio_expr=raw.get("flop_per_byte"), dtypes=dtypes, precision=precision,
                      role=role, chapter=chapter, max_size=max_size, search=_parse_search(raw.get("search"), defines, where),
                      shows=_parse_shows(raw.get("shows"), role, where),
                      shown_at=_parse_shown_at(raw.get("shown_at"), raw.get("shows"), where),
                      needs=_parse_needs(raw.get("needs"), backend, where),
                      cluster_expr=tuple(raw.get("cluster") or ()),
                      missing_file=missing_file,
                      maps_expr=_parse_tensor_maps(raw.get("tensor_maps"), backend, where),
                      align_rows=_parse_align_rows(raw.get("align_rows"), raw.get("tensor_maps"), where),
                      launch_number=_parse_launch_number(raw.get("launch_number"), backend, raw.get("tensor_maps"),
                                                         where),
                      launches=_parse_launches(raw.get("launches"), kernel, backend, raw.get("tensor_maps"),
                                               raw.get("align_rows"), where),
                      technique=technique, was=_parse_was(raw.get("was")), builds_on=raw.get("builds_on"))
    if backend == "cuda":
        variant.flop_per_byte  # evaluates, or says what is wrong
        variant.tensor_maps  # boxes the copy engine takes, or says what is wrong
        if min(variant.cluster) < 1 or variant.cluster[0] * variant.cluster[1] > 8:
            raise StudyError(f"{where}: cluster {list(variant.cluster)} is not a portable cluster (1 to 8 blocks)")
        bx, by, _ = variant.block
        rows, cols = variant.tile
        if min(bx, by, rows, cols) < 1 or bx * by > 1024:
            raise StudyError(f"{where}: block {bx}x{by} / tile {rows}x{cols} is not launchable (1..1024 threads)")
        if grid and min(eval_expr(e, variant.grid_names(1, 1, 1)) for e in grid) < 1:
            raise StudyError(f"{where}: grid {list(grid)} gives no block on a GPU of one multiprocessor")
        variant.kernel_for(1, 1, 1, 1)   # its conditions are expressions of the shape, or it says what is wrong
    return variant


def _parse_needs(raw, backend: str, where: str) -> str | None:
    """needs: the oldest nvcc target a cuda kernel builds for (sm_80), or an arch-specific one (sm_90a); on a
    cuBLAS reference, the oldest architecture whose tensor cores its math mode runs on (sm_80 for the tensor-core
    references)."""
    if raw is None:
        return None
    if backend not in ("cuda", "cublas") or not re.fullmatch(r"sm_\d{2,3}a?", str(raw)):
        raise StudyError(f"{where}: needs is an nvcc target such as sm_80 or sm_90a, on a cuda kernel or a cuBLAS "
                         f"reference; got {raw!r}")
    return str(raw)


def _parse_align_rows(raw, maps, where: str) -> str | None:
    """align_rows: the name of the kernel in the variant's file that copies A, B and C where their rows are off
    16 bytes (gpu/launch.py); only for a kernel fed by the copy engine (tensor_maps)."""
    if raw is None:
        return None
    if not isinstance(raw, str) or not re.fullmatch(r"[A-Za-z_]\w*", raw) or not maps:
        raise StudyError(f"{where}: align_rows names the copy kernel of its file (a C identifier), on a variant "
                         "with tensor_maps")
    return raw


def _parse_launch_number(raw, backend: str, maps, where: str) -> bool:
    """launch_number: true where the kernel takes the launch's number after C (steps 15 to 17 and 19 to 23: their
    state in global memory is marked with it, kernels/common/stream_k.cuh); a cuda kernel without tensor_maps."""
    if raw is None:
        return False
    if not isinstance(raw, bool) or backend != "cuda" or maps:
        raise StudyError(f"{where}: launch_number is true or false, on a cuda kernel without tensor_maps "
                         f"(it then takes an unsigned launch number after C); got {raw!r}")
    return raw


def _parse_launches(raw, kernel: str, backend: str, maps, align_rows, where: str) -> tuple:
    """launches: [{kernel, when}, ..., {kernel}]: which kernel of its file a shape launches, the first whose
    condition (of M, N, K, sms, tiles and the defines) holds, the last one's without a condition (step 20).
    Its own kernel (the file's name) is one of them. A cuda kernel launched through PyCUDA."""
    if raw is None:
        return ()
    shape = ("launches is [{kernel: NAME, when: CONDITION}, ..., {kernel: NAME}] (the last without `when`), "
             "on a cuda kernel without tensor_maps or align_rows")
    if (backend != "cuda" or maps or align_rows or not isinstance(raw, list) or len(raw) < 2
            or not all(isinstance(e, dict) and set(e) in ({"kernel", "when"}, {"kernel"}) for e in raw)
            or "when" in raw[-1] or not all("when" in e for e in raw[:-1])):
        raise StudyError(f"{where}: {shape}")
    names = [e["kernel"] for e in raw]
    if len(set(names)) != len(names) or not all(isinstance(n, str) and re.fullmatch(r"[A-Za-z_]\w*", n)
                                                for n in names):
        raise StudyError(f"{where}: launches names each kernel once, by its C name; got {names}")
    if kernel not in names:
        raise StudyError(f"{where}: launches must name its own kernel '{kernel}' (the one its file is named after)")
    return tuple((e["kernel"], e.get("when")) for e in raw)


def _parse_tensor_maps(raw, backend: str, where: str) -> tuple:
    """tensor_maps: {A: [rows, cols], B: [rows, cols]} and maybe C: the boxes of the TMA maps a cuda kernel
    takes, in that order; a box may have a third number, the blocks of columns one copy brings (gpu/tma.py)."""
    if raw is None:
        return ()
    if (backend != "cuda" or not isinstance(raw, dict) or set(raw) not in ({"A", "B"}, {"A", "B", "C"})
            or not all(isinstance(box, list) and len(box) in (2, 3) for box in raw.values())):
        raise StudyError(f"{where}: tensor_maps is {{A: [rows, cols], B: [rows, cols]}} (and C: [rows, cols]; "
                         "a box may add [.., blocks]), on a cuda kernel")
    return tuple((name, tuple(raw[name])) for name in ("A", "B", "C") if name in raw)


def _parse_shows(raw, role: str, where: str) -> tuple:
    """shows: {counter: lower or higher}, the counters of study/counters.py that show a step's change."""
    if raw is None:
        return ()
    if role != "step" or not isinstance(raw, dict) or not raw:
        raise StudyError(f"{where}: shows is {{counter: lower or higher}}, on a step")
    for counter, direction in raw.items():
        if counter not in COUNTERS:
            raise StudyError(f"{where}: shows names '{counter}', which is not a counter; known: {sorted(COUNTERS)}")
        if direction not in DIRECTIONS:
            raise StudyError(f"{where}: shows {counter}: '{direction}' must be one of {list(DIRECTIONS)}")
    return tuple(raw.items())


def _parse_shown_at(raw, shows, where: str) -> int | None:
    """shown_at: n, the size whose counters show the change a step's `shows` names (a step for small problems
    is judged where it is meant to win, not at the study's ncu_size)."""
    if raw is None:
        return None
    if not shows or isinstance(raw, bool) or not isinstance(raw, int) or raw < 1:
        raise StudyError(f"{where}: shown_at is a size n >= 1 (n x n x n) at which the counters that `shows` "
                         f"names are measured; got {raw!r}" + ("" if shows else " on an entry without shows"))
    return raw


def _parse_search(raw, defines: dict, where: str) -> Search | None:
    """search: {values: {DEFINE: [v, ...]}, require: [condition, ...]}; the defaults must meet the conditions."""
    if raw is None:
        return None
    if not isinstance(raw, dict) or set(raw) - {"values", "require"} or not isinstance(raw.get("values"), dict):
        raise StudyError(f"{where}: search is {{values: {{DEFINE: [values]}}, require: [conditions]}}")
    values = {}
    for name, options in raw["values"].items():
        if name not in defines:
            raise StudyError(f"{where}: search over '{name}', which is not one of its defines {sorted(defines)}")
        if not isinstance(options, list) or not options or not all(isinstance(v, int) for v in options):
            raise StudyError(f"{where}: search values of {name} must be a non-empty list of integers")
        values[name] = tuple(options)
    search = Search(values, tuple(raw.get("require") or ()))
    for condition in search.require:
        if not holds(condition, defines):
            raise StudyError(f"{where}: its defaults do not meet the search constraint {condition!r}")
    return search


def _parse_chapters(raw: list, where: str) -> dict[str, Chapter]:
    chapters = {}
    for entry in raw or []:
        if not isinstance(entry, dict) or set(entry) - _CHAPTER_KEYS or not entry.get("id") or not entry.get("title"):
            raise StudyError(f"{where}: a chapter is {{id, title, precision}} (precision {precisions.BASE.id} "
                             "unless given)")
        precision = precisions.PRECISIONS.get(entry.get("precision", precisions.BASE.id))
        if precision is None or entry["id"] in chapters:
            raise StudyError(f"{where}: chapter '{entry['id']}' repeats or has an unknown precision")
        chapters[entry["id"]] = Chapter(entry["id"], entry["title"], precision)
    return chapters


class Registry(Mapping):
    """Variants by id, in the study's order, with the chapters and roles of kernels/registry.yaml."""

    def __init__(self, chapters: dict[str, Chapter], variants: dict[str, Variant], raw: dict):
        self.chapters = chapters
        self._variants = variants
        self.raw = raw   # the YAML as read: what a study's snapshot keeps

    @classmethod
    def from_entries(cls, raw: dict, kernels_dir: Path = KERNELS_DIR, where: str = "registry",
                     check_files: bool = True) -> "Registry":
        entries = (raw or {}).get("variants")
        if not entries:
            raise StudyError(f"{where}: no 'variants' list")
        chapters = _parse_chapters(raw.get("chapters"), where)
        variants = {}
        for i, entry in enumerate(entries):
            v = _parse_entry(i, entry, kernels_dir, chapters, check_files)
            if v.id in variants:
                raise StudyError(f"{where}: variant id '{v.id}' appears twice")
            variants[v.id] = v
        for v in variants.values():
            if v.builds_on is not None and (v.builds_on not in variants or not variants[v.builds_on].is_step
                                            or variants[v.builds_on].order >= v.order or not v.is_step):
                raise StudyError(f"{where}: {v.id}'s builds_on: '{v.builds_on}' is no step before it (builds_on "
                                 "names the step whose code a step changes, where that is another precision's)")
        references = [v.precision.id for v in variants.values() if v.role == "reference"]
        if len(references) != len(set(references)):
            raise StudyError(f"{where}: more than one reference for one precision ({references})")
        return cls(chapters, variants, raw)

    def __getitem__(self, vid: str) -> Variant:
        return self._variants[vid]

    def __iter__(self):
        return iter(self._variants)

    def __len__(self) -> int:
        return len(self._variants)

    def steps(self, chapter: str | None = None, precision: precisions.Precision | None = None) -> list[Variant]:
        """The steps (of one chapter, of one precision's chapters), in order."""
        return [v for v in self.values()
                if v.is_step and chapter in (None, v.chapter) and precision in (None, v.precision)]

    def step_before(self, vid: str) -> Variant | None:
        """The step whose code this one changes: the one its entry names (builds_on: step 51 promotes step 50's
        sums, another precision's), else the one before it among the steps of its precision, chapter by chapter
        (a chapter's first step follows the last of the chapter before of its precision), or None."""
        if self[vid].builds_on:
            return self[self[vid].builds_on]
        chapters = list(self.chapters)
        steps = sorted(self.steps(precision=self[vid].precision), key=lambda v: chapters.index(v.chapter))
        i = [v.id for v in steps].index(vid)
        return steps[i - 1] if i > 0 else None

    @functools.cached_property
    def course(self) -> dict[str, int]:
        """Each variant's place in the course: the baselines listed before the first step, then the chapters in
        order, each chapter's steps in the registry's order, then the rest (the references). The registry lists
        the steps in the order they were added, which interleaves the chapters; figures and tables read this."""
        chapters = list(self.chapters)
        first_step = next((v.order for v in self.values() if v.is_step), 0)
        rank = {vid: (chapters.index(v.chapter) + 1 if v.is_step else 0 if v.order < first_step else len(chapters) + 1,
                      v.order) for vid, v in self.items()}
        return {vid: i for i, vid in enumerate(sorted(rank, key=rank.get))}

    def reference(self, precision: precisions.Precision = precisions.BASE) -> Variant | None:
        """The variant every step of this precision is measured against, if the registry names one."""
        return next((v for v in self.values() if v.role == "reference" and v.precision == precision), None)

    def unknown(self, vid: str) -> str:
        """What to say of an id the registry lacks: the ids most like it, or where the ids are listed."""
        close = difflib.get_close_matches(vid, list(self), n=3, cutoff=0.6)
        hint = (f"did you mean {' or '.join(repr(c) for c in close)}?" if close else
                f"none of its {len(self)} ids is close (kernels/registry.yaml lists them)")
        return f"unknown variant '{vid}'; {hint}"

    def cpu_baselines(self) -> list[Variant]:
        return [v for v in self.values() if v.role == "cpu_baseline"]

    def raw_entry(self, vid: str) -> dict:
        """A variant's entry as the YAML gives it."""
        return next(e for e in self.raw["variants"] if e["id"] == vid)

    def subset(self, ids) -> "Registry":
        """The same registry with only these variants (the study's snapshot keeps what it measured)."""
        keep = set(ids)
        raw = {**self.raw, "variants": [e for e in self.raw["variants"] if e["id"] in keep]}
        return Registry(self.chapters, {k: v for k, v in self._variants.items() if k in keep}, raw)


def parse_variants(entries: list, kernels_dir: Path = KERNELS_DIR, where: str = "registry",
                   chapters: list | None = None) -> Registry:
    """A registry from a list of entries (and chapters); files are looked up in kernels_dir."""
    return Registry.from_entries({"chapters": chapters or [], "variants": entries}, kernels_dir, where)


# libyaml's parser where PyYAML has it: every job's process reads the registry, 0.13 s each with the pure
# Python parser on the H100 machine (~100 processes a study), 0.02 s with libyaml's
FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_registry(path: Path | str = REGISTRY_PATH, check_files: bool = True) -> Registry:
    """The registry at path: variants by id, in the registry's order (the study's order)."""
    try:
        with open(path) as fh:
            text = fh.read()
        try:
            raw = yaml.load(text, Loader=FAST_LOADER)
        except yaml.YAMLError:
            raw = yaml.safe_load(text)   # the pure parser's message, which says where, raised here
    except yaml.YAMLError as err:
        raise StudyError(f"{path}: not valid YAML ({str(err).splitlines()[0]})") from None
    return Registry.from_entries(raw, Path(path).parent if check_files else KERNELS_DIR, str(path), check_files)
