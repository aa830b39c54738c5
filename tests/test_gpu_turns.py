"""The test suite's own rule for the GPU (conftest.py): under pytest-xdist, a timed GPU test has the GPU to itself."""

import subprocess
import sys

from conftest import ROOT

SUITE_CONFTEST = f"""
import importlib.util
spec = importlib.util.spec_from_file_location("project_conftest", {str(ROOT / "tests" / "conftest.py")!r})
project = importlib.util.module_from_spec(spec)
spec.loader.exec_module(project)
one_gpu_test_at_a_time = project.one_gpu_test_at_a_time
"""

GPU_TEST = """
import time
import pytest

@pytest.mark.gpu{timed}
def test_on_the_gpu(tmp_path_factory):
    shared = tmp_path_factory.getbasetemp().parent
    start = time.monotonic()
    (shared / "{name}.started").touch()
    if {wait_for!r}:   # an untimed test waits (up to 20 s) until the other untimed one is in too
        deadline = start + 20
        while not (shared / "{wait_for}.started").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (shared / "{wait_for}.started").exists(), "the other untimed GPU test never ran beside this one"
    time.sleep(1.0)
    with open(shared / "spans.txt", "a") as fh:
        fh.write(f"{name} {{start}} {{time.monotonic()}}\\n")
"""


def test_a_timed_gpu_test_has_the_gpu_to_itself_and_the_others_share_it(tmp_path):
    """Three files, one GPU test each: `--dist loadfile` sends them to three workers. The two untimed tests share
    the lock, so each finds the other running (with the lock taken alone, the second waits for the first, and the
    first gives up waiting for it); the timed one takes the lock alone, so it overlaps neither."""
    (tmp_path / "conftest.py").write_text(SUITE_CONFTEST)
    tests = {"timed": ("\n@pytest.mark.timed", ""), "check_a": ("", "check_b"), "check_b": ("", "check_a")}
    for name, (timed, wait_for) in tests.items():
        (tmp_path / f"test_{name}.py").write_text(GPU_TEST.format(name=name, timed=timed, wait_for=wait_for))
    base = tmp_path / "base"   # the workers' temporary folders go under it, and their lock file and spans in it
    base.mkdir()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "3", "--dist",
                           "loadfile", "--basetemp", str(base), "-o", "markers=gpu\ntimed", str(tmp_path)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    spans = {name: (float(a), float(b)) for name, a, b in
             (line.split() for line in (base / "spans.txt").read_text().splitlines())}
    assert sorted(spans) == sorted(tests), spans
    for other in ("check_a", "check_b"):
        assert spans["timed"][1] <= spans[other][0] or spans[other][1] <= spans["timed"][0], spans
