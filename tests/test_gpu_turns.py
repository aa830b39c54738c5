"""The test suite's own rule for the GPU (conftest.py): under pytest-xdist, GPU tests take turns."""

import subprocess
import sys
import textwrap

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

@pytest.mark.gpu
def test_on_the_gpu(tmp_path_factory):
    start = time.monotonic()
    time.sleep(1.0)
    with open(tmp_path_factory.getbasetemp().parent / "spans.txt", "a") as fh:
        fh.write(f"{start} {time.monotonic()}\\n")
"""


def test_gpu_tests_in_two_workers_never_overlap(tmp_path):
    """Two files, one GPU test each: `--dist loadfile` sends them to two workers, and each holds the lock while it
    runs, so that the second starts once the first has ended (without the lock they ran side by side)."""
    (tmp_path / "conftest.py").write_text(SUITE_CONFTEST)
    for name in ("test_a.py", "test_b.py"):
        (tmp_path / name).write_text(textwrap.dedent(GPU_TEST))
    base = tmp_path / "base"   # the workers' temporary folders go under it, and their lock file and spans in it
    base.mkdir()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", "--dist",
                           "loadfile", "--basetemp", str(base), "-o", "markers=gpu", str(tmp_path)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    spans = sorted(tuple(map(float, line.split())) for line in (base / "spans.txt").read_text().splitlines())
    assert len(spans) == 2 and spans[0][1] <= spans[1][0], spans
