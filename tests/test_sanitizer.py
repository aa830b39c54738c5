"""compute-sanitizer on every cuda variant (GPU), and the parsing of what it prints (CPU)."""

import io

import pytest

from matmulstudy.measure import sanitize
from matmulstudy.study.shapes import Shape
from matmulstudy.errors import StudyError
from matmulstudy.study.registry import load_registry

CLEAN = "========= COMPUTE-SANITIZER\nlaunched gpu_tiled\n========= ERROR SUMMARY: 0 errors\n"
RACE = ("========= COMPUTE-SANITIZER\n"
        "========= Error: Race reported between Write access at fault_tiled+0x1d0\n"
        "=========     and Read access at fault_tiled+0x2a0 [128 hazards]\n"
        "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n")


def test_summary_lines_are_read():
    assert sanitize.parse(CLEAN) == {"errors": 0, "warnings": 0}
    assert sanitize.parse(RACE) == {"errors": 1, "warnings": 0}
    assert sanitize.parse("the tool crashed") == {"errors": None, "warnings": 0}
    assert sanitize.first_report(RACE).startswith("Error: Race reported between Write access")


def test_missing_compute_sanitizer_says_where_it_comes_from(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    monkeypatch.setattr(sanitize.os, "access", lambda path, mode: False)   # nor in /usr/local/cuda
    with pytest.raises(StudyError, match="compute-sanitizer was not found on PATH: it comes with the CUDA toolkit"):
        sanitize.sanitizer_exe()


def test_the_verdict_names_what_was_found():
    import pandas as pd
    table = pd.DataFrame([
        {"tool": "memcheck", "variant": "a", "shape": "1x1x1", "errors": 0, "warnings": 0, "clean": True},
        {"tool": "racecheck", "variant": "b", "shape": "1x1x1", "errors": 2, "warnings": 1, "clean": False}])
    verdict = sanitize.verdict(table)
    assert verdict["a"].startswith("clean (1 tools")
    assert verdict["b"] == "racecheck on 1x1x1: 2 errors, 1 warnings"


@pytest.mark.gpu
@pytest.mark.parametrize("variant_id", [v.id for v in load_registry().values() if v.backend == "cuda"])
def test_every_cuda_variant_is_clean_under_the_four_tools(registry, gpu_builds, default_config, variant_id):
    if registry[variant_id].unsupported(gpu_builds["arch"]):
        pytest.skip(registry[variant_id].unsupported(gpu_builds["arch"]))
    shapes = [Shape(*s) for s in default_config["sanitizer_shapes"]]
    assert len(shapes) >= 2 and any(all(x % 2 for x in s) for s in shapes)
    from matmulstudy.gpu.session import GpuSession
    with GpuSession() as gpu:   # a persistent kernel's grid is a multiple of the SMs
        sms = gpu.sm_count
    table = sanitize.sanitize(registry[variant_id], gpu_builds[variant_id, "float32"], gpu_builds["launcher"],
                              shapes, io.StringIO(), sms=sms)
    assert len(table) == 4 * len(shapes) * len(registry[variant_id].kernels)   # each of its kernels at every shape
    assert set(table["kernel"]) == set(registry[variant_id].kernels)
    assert table["clean"].all(), table.to_string()
