"""Shared fixtures; tests marked `gpu` are skipped, with the reason, without one."""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@functools.cache
def gpu_unavailable_reason() -> str | None:
    """Why no GPU test can run here, or None if a GPU is usable."""
    from matmulstudy.errors import StudyError
    from matmulstudy.gpu import require_pycuda
    try:
        require_pycuda()
    except StudyError as err:
        return str(err)
    return None


def pytest_collection_modifyitems(config, items):
    reason = None
    for item in items:
        if "gpu" in item.keywords:
            reason = reason or gpu_unavailable_reason()
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def registry():
    from matmulstudy.registry import load_registry
    return load_registry()


@pytest.fixture(scope="session")
def default_config():
    import yaml
    with open(ROOT / "config" / "config.yaml") as fh:
        return yaml.safe_load(fh)


def snakemake(*args, cwd=ROOT, timeout=600, snakefile=ROOT / "Snakefile"):
    """Run the workflow's Snakemake as a user would; returns the process."""
    exe = shutil.which("snakemake") or str(Path(sys.executable).parent / "snakemake")
    return subprocess.run([exe, "--snakefile", str(snakefile), *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)
