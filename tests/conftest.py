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
    from matmulstudy.gpu.session import require_pycuda
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


@pytest.fixture(autouse=True)
def one_gpu_test_at_a_time(request, tmp_path_factory):
    """A timed GPU test has the GPU to itself; the other GPU tests share it. Under pytest-xdist (`-n auto`;
    pyproject's `--dist loadfile` keeps a file's tests, and its module fixtures, in one worker) the workers take
    a lock file that they share: a `timed` test takes it alone, since a timed launch beside another's launches
    would time both; a test that only checks results (the kernels' shapes, the sanitizer) takes it beside the
    others, so that the checks run side by side. (xdist's loadgroup would group by marks, but it groups nothing
    under pytest 9.2: pytest-dev/pytest-xdist#1386.)"""
    if request.node.get_closest_marker("gpu") is None:
        yield
        return
    import fcntl
    alone = request.node.get_closest_marker("timed") is not None
    with open(tmp_path_factory.getbasetemp().parent / "gpu.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        yield


@pytest.fixture(scope="session")
def registry():
    from matmulstudy.study.registry import load_registry
    return load_registry()


@pytest.fixture(scope="session")
def default_config():
    import yaml
    with open(ROOT / "config" / "config.yaml") as fh:
        return yaml.safe_load(fh)


@pytest.fixture(scope="session")
def sm90_builds(registry, tmp_path_factory):
    """Every cuda variant in each of its dtypes, built once per test session for sm_90 (no GPU needed):
    {(id, dtype): (cubin, resource report, nvcc's log)}."""
    import io

    from matmulstudy.measure import build
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not on PATH")
    out = tmp_path_factory.mktemp("sm90")
    builds = {}
    for v in registry.values():
        if v.backend == "cuda":
            for dtype in v.dtypes:
                log = io.StringIO()
                cubin = out / f"{v.id}.{dtype}.cubin"
                report = build.build(v, cubin, out / f"{v.id}.{dtype}.json", v.target("sm_90"), log, dtype=dtype)
                builds[v.id, dtype] = (cubin, report, log.getvalue())
    return builds


@pytest.fixture(scope="session")
def gpu_builds(registry, tmp_path_factory):
    """For the GPU tests, built once per session for the GPU at hand: the harness, the
    sanitizer's launcher, and every cuda variant in each of its dtypes ({(id, dtype): cubin}) that
    this GPU can run (the others: {(id, dtype): None}, and their tests skip with the reason)."""
    import io

    from matmulstudy.gpu import host
    from matmulstudy.measure import build, sanitize
    arch = host.arch_of(host.visible_gpu()["compute_capability"])
    out = tmp_path_factory.mktemp("gpu_builds")
    paths = {"arch": arch, "harness": out / "harness.cubin", "launcher": out / "launch"}
    build.build_harness(arch, paths["harness"], io.StringIO())
    sanitize.build_launcher(paths["launcher"], io.StringIO())
    for v in registry.values():
        if v.backend == "cuda":
            for dtype in v.dtypes:
                if v.unsupported(arch):
                    paths[v.id, dtype] = None
                    continue
                path = out / f"{v.id}.{dtype}.cubin"
                build.build(v, path, out / f"{v.id}.{dtype}.json", v.target(arch), io.StringIO(), dtype=dtype)
                paths[v.id, dtype] = path
    return paths


def snakemake_command(*args, snakefile=ROOT / "Snakefile") -> list[str]:
    """The command line of the workflow's Snakemake, as a user would run it."""
    exe = shutil.which("snakemake") or str(Path(sys.executable).parent / "snakemake")
    return [exe, "--snakefile", str(snakefile), *args]


def snakemake(*args, cwd=ROOT, timeout=600, snakefile=ROOT / "Snakefile", env=None):
    """Run the workflow's Snakemake as a user would; returns the process."""
    return subprocess.run(snakemake_command(*args, snakefile=snakefile), cwd=cwd,
                          capture_output=True, text=True, timeout=timeout, env=env)


def fresh_copy(dest):
    """The repository as a fresh clone of it holds it: the tracked files, and those not yet tracked
    that git does not ignore (a change under test)."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "--cached", "--others", "--exclude-standard",
                             "-z"], capture_output=True, text=True, check=True).stdout.split("\0")
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
