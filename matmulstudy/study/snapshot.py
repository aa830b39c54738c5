"""What a study was measured with, kept beside its tables: registry.yaml and config.yaml.

collect writes both into reports/<label>/: the registry entries of the
variants the study measured, as they were (with the chapters), and the
validated settings. Everything that reads a committed study (the figures,
the pages, the comparison across GPUs, the checks of committed results)
reads these, never the live kernels/registry.yaml or config/config.yaml, so
a step added to the registry later changes no committed study.

Studies measured before snapshots existed are given theirs by
tools/snapshot.py.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from ..errors import StudyError
from .paths import STUDY_FILES
from .registry import Registry, load_registry
from .settings import Settings

REGISTRY_FILE, CONFIG_FILE = STUDY_FILES["registry"], STUDY_FILES["config"]


def write(folder: Path, registry: Registry, settings: Settings, note: str = "") -> None:
    """registry.yaml (the measured variants' entries, as they were) and config.yaml (the settings)."""
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
