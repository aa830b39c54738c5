"""What a study was measured with, kept beside its tables: registry.yaml, config.yaml and kernels.tar.gz.

collect writes them into reports/<label>/: the registry entries of the
variants the study measured, as they were (with the chapters), the
validated settings, and the source of every built variant with the files
it includes (kernels.tar.gz, its paths as under the repository's kernels/:
the step pages show the code that changed from them). One archive, not
loose copies: a study's copies were a third of the tree's lines, found
twice over by every search of the code, and the same bytes written again
make the same archive (sorted, no times, no owners). Everything that reads a committed
study (the figures, the pages, the comparison across GPUs, the checks of
committed results) reads these, never the live kernels/registry.yaml or
config/config.yaml, so a step added to the registry later changes no
committed study.

Studies measured before snapshots existed are given theirs by
tools/snapshot.py.
"""

from __future__ import annotations

import functools
import gzip
import io
import posixpath
import re
import tarfile
from pathlib import Path

import yaml

from ..errors import StudyError
from .paths import KERNELS_DIR, STUDY_FILES
from .registry import Registry, load_registry
from .settings import Settings

REGISTRY_FILE, CONFIG_FILE = STUDY_FILES["registry"], STUDY_FILES["config"]
KERNELS = "kernels.tar.gz"   # the study's copy of its kernels' sources
_INCLUDE = re.compile(r'^\s*#include\s+"([^"]+)"', re.M)


def kernel_sources(registry: Registry, read) -> dict[str, str]:
    """{path under kernels/: text} of every built variant's file and, recursively, the files it includes by
    a quoted #include; `read(path)` gives a file's text (today's, or a commit's: tools/snapshot.py)."""
    return dict(sorted(with_includes([registry.raw_entry(v.id)["file"] for v in registry.values() if v.is_built],
                                     read).items()))


def with_includes(paths: list[str], read) -> dict[str, str]:
    """{path: text} of these files and, recursively, the files they include by a quoted #include, each once,
    nearest first (the files themselves, then what they include, and so on); `read(path)` gives a file's text,
    or None where there is none (its includes are then none)."""
    sources, todo = {}, list(paths)
    while todo:
        path = todo.pop(0)
        if path not in sources:
            sources[path] = read(path)
            todo += includes(path, sources[path] or "")
    return sources


def includes(path: str, text: str) -> list[str]:
    """The files a kernel file (at `path` under kernels/) includes by a quoted #include, as paths under kernels/."""
    base = posixpath.dirname(path)
    return [posixpath.normpath(posixpath.join(base, name)) for name in _INCLUDE.findall(text)]


def write_kernels(folder: Path, sources: dict[str, str]) -> None:
    """The study's kernels.tar.gz: exactly these files, in order of their paths, with no time or owner in it."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(sources):
            data = sources[path].encode()
            info = tarfile.TarInfo(path)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    with open(Path(folder) / KERNELS, "wb") as out, gzip.GzipFile(fileobj=out, mode="wb", mtime=0,
                                                                   filename="") as packed:
        packed.write(raw.getvalue())
    _archive.cache_clear()


def read_kernel(folder: Path, path: str) -> str | None:
    """A file of the study's kernels.tar.gz (a path under kernels/), or None where the study kept none."""
    return _archive(Path(folder).resolve()).get(path)


def kept_kernels(folder: Path) -> dict[str, str]:
    """{path under kernels/: text} of every file the study kept."""
    return dict(_archive(Path(folder).resolve()))


@functools.lru_cache(maxsize=8)
def _archive(folder: Path) -> dict[str, str]:
    file = folder / KERNELS
    if not file.is_file():
        return {}
    with tarfile.open(file, mode="r:gz") as tar:
        return {m.name: tar.extractfile(m).read().decode() for m in tar.getmembers() if m.isfile()}


def write(folder: Path, registry: Registry, settings: Settings, note: str = "", read=None) -> None:
    """registry.yaml (the measured variants' entries, as they were), config.yaml (the settings) and
    kernels.tar.gz (their sources: `read(path)` gives a file's text, today's under kernels/ unless given)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    measured = registry.subset(settings.variants)
    head = f"# {note}\n" if note else ""
    (folder / REGISTRY_FILE).write_text(
        f"{head}# The registry entries this study was measured with (kernels/registry.yaml at the time).\n"
        + yaml.safe_dump(measured.raw, sort_keys=False, allow_unicode=True))
    (folder / CONFIG_FILE).write_text(
        f"{head}# config_hash: {settings.hash}\n# The validated settings this study was measured with.\n"
        + yaml.safe_dump(settings.as_config(), sort_keys=False))
    write_kernels(folder, kernel_sources(measured, read or (lambda path: (KERNELS_DIR / path).read_text())))


def read_registry(folder: Path) -> Registry:
    """The study's own registry (its kernel files need not exist any more)."""
    path = Path(folder) / REGISTRY_FILE
    if not path.exists():
        raise StudyError(f"{folder} has no {REGISTRY_FILE}: give it one with "
                         f"`python -m matmulstudy.tools.snapshot {folder}`")
    return load_registry(path, check_files=False)


def read_config(folder: Path) -> dict:
    """The study's own settings, as config keys (a plain dict: not validated against today's schema)."""
    path = Path(folder) / CONFIG_FILE
    if not path.exists():
        return {}
    with open(path) as fh:
        return yaml.safe_load(fh) or {}
