"""Shared fixtures; tests marked `gpu` are skipped, with the reason, without one."""

from __future__ import annotations

import functools
import os
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


def shared_by_workers(tmp_path_factory) -> Path:
    """The test session's temporary folder that its pytest-xdist workers share (the one above their own), or,
    without xdist, the session's own."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


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
    with open(shared_by_workers(tmp_path_factory) / "gpu.lock", "w") as lock:
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


def built_once(tmp_path_factory, name: str, make):
    """The folder that `make(folder)` builds into, and what it returned (a JSON value: paths, reports), made once
    per test session: the xdist workers share it, the first to come building while the others wait."""
    import fcntl
    import json
    base = shared_by_workers(tmp_path_factory)
    folder, made = base / name, base / name / "built.json"
    with open(base / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not made.exists():
            folder.mkdir(exist_ok=True)
            made.write_text(json.dumps(make(folder)))
    return folder, json.loads(made.read_text())


def build_variants(registry, out: Path, arch: str, unsupported=lambda v: None) -> list:
    """Every cuda variant in each of its dtypes built for `arch`, as many nvcc at once as there are cores:
    [[id, dtype, cubin, resource report, nvcc's log], ...]; cubin None where `unsupported` gives a reason."""
    import io
    from concurrent.futures import ThreadPoolExecutor

    from matmulstudy.measure import build

    def one(v, dtype):
        if unsupported(v):
            return [v.id, dtype, None, None, ""]
        log, cubin = io.StringIO(), out / f"{v.id}.{dtype}.cubin"
        report = build.build(v, cubin, out / f"{v.id}.{dtype}.json", v.target(arch), log, dtype=dtype)
        return [v.id, dtype, str(cubin), report, log.getvalue()]

    jobs = [(v, dtype) for v in registry.values() if v.backend == "cuda" for dtype in v.dtypes]
    with ThreadPoolExecutor(os.cpu_count()) as pool:
        return list(pool.map(lambda job: one(*job), jobs))


@pytest.fixture(scope="session")
def sm90_builds(registry, tmp_path_factory):
    """Every cuda variant in each of its dtypes, built once per test session for sm_90 (no GPU needed):
    {(id, dtype): (cubin, resource report, nvcc's log)}."""
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not on PATH")
    _, built = built_once(tmp_path_factory, "sm90", lambda out: build_variants(registry, out, "sm_90"))
    return {(vid, dtype): (Path(cubin), report, log) for vid, dtype, cubin, report, log in built}


@pytest.fixture(scope="session")
def gpu_builds(registry, tmp_path_factory):
    """For the GPU tests, built once per session for the GPU at hand: the harness, the
    sanitizer's launcher, and every cuda variant in each of its dtypes ({(id, dtype): cubin}) that
    this GPU can run (the others: {(id, dtype): None}, and their tests skip with the reason)."""
    import io

    from matmulstudy.gpu import host
    from matmulstudy.measure import build, sanitize
    arch = host.arch_of(host.visible_gpu()["compute_capability"])

    def make(out):
        build.build_harness(arch, out / "harness.cubin", io.StringIO())
        sanitize.build_launcher(out / "launch", io.StringIO())
        return build_variants(registry, out, arch, lambda v: v.unsupported(arch))

    out, built = built_once(tmp_path_factory, f"gpu_builds_{arch}", make)
    paths = {"arch": arch, "harness": out / "harness.cubin", "launcher": out / "launch"}
    paths.update({(vid, dtype): cubin and Path(cubin) for vid, dtype, cubin, _, _ in built})
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


def svg_words(path: Path) -> str:
    """The words a figure's SVG draws, in order, one space apart (its texts are SVG text: report/plots/style.py)."""
    import html
    import re
    return " ".join(html.unescape(w) for w in re.findall(r"<text[^>]*>([^<]*)</text>", Path(path).read_text()))
