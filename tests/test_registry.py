"""The registry is the one list; its geometry matches what the kernels expect."""

import re

import pytest

from matmulstudy.errors import StudyError
from matmulstudy.registry import KERNELS_DIR, eval_expr


def test_every_kernel_file_is_in_the_registry(registry):
    listed = {v.file.name for v in registry.values() if v.file}
    on_disk = {p.name for p in KERNELS_DIR.iterdir() if p.suffix in (".cu", ".c")}
    assert listed == on_disk


def test_kernel_function_is_named_after_the_variant(registry):
    for v in registry.values():
        if v.backend == "cuda":
            text = v.file.read_text()
            globals_ = re.findall(r"__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s+)?(\w+)", text)
            assert globals_ == [v.id], f"{v.file.name} defines {globals_}"


def test_grid_covers_ragged_shapes(registry):
    v = registry["gpu_tiled"]
    assert v.block == (16, 16, 1)
    assert v.grid(M=17, N=33) == (3, 2, 1)
    assert v.grid(M=1, N=1) == (1, 1, 1)
    assert v.grid(M=4096, N=64) == (4, 256, 1)


def test_defines_change_the_geometry(registry):
    v = registry["gpu_tiled"].with_defines({"TILE": 32})
    assert v.block == (32, 32, 1) and v.tile == (32, 32)
    with pytest.raises(StudyError, match="unknown define"):
        registry["gpu_tiled"].with_defines({"TILES": 8})


def test_expressions_are_arithmetic_only():
    assert eval_expr("TILE*ROWS//2", {"TILE": 16, "ROWS": 4}) == 32
    with pytest.raises(StudyError):
        eval_expr("__import__('os')", {})
    with pytest.raises(StudyError, match="not one of the defines"):
        eval_expr("WIDTH", {"TILE": 16})
