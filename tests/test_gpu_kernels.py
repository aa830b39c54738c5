"""Every GPU variant against the float64 reference, on ragged shapes (GPU only)."""

import functools
import io

import pytest

from matmulstudy import bench, build, data, host
from matmulstudy.config import Shape
from matmulstudy.registry import load_registry

pytestmark = pytest.mark.gpu

SHAPES = [Shape(1, 1, 1), Shape(17, 33, 65), Shape(1000, 1000, 1000), Shape(4096, 64, 1024),
          Shape(513, 257, 129), Shape(31, 1, 4097)]
CASES = [(v.id, d) for v in load_registry().values() if v.is_gpu for d in v.dtypes]
CFG = {"warmup": 1, "cache": "cold", "min_samples": 3, "max_samples": 3, "max_noise": 0.005, "max_time_s": 1.0,
       "throttle_fraction": 0.9, "tolerance": 8, "freivalds_vectors": 16}


@pytest.fixture(scope="module")
def binaries(registry, tmp_path_factory):
    """Each cuda variant built once per dtype for the GPU at hand."""
    arch = host.arch_of(host.visible_gpu()["compute_capability"])
    out = tmp_path_factory.mktemp("cubins")
    paths = {"harness": out / "harness.cubin"}
    build.build_harness(arch, paths["harness"], io.StringIO())
    for v in registry.values():
        if v.backend == "cuda":
            for dtype in v.dtypes:
                path = out / f"{v.id}.{dtype}.cubin"
                build.build(v, path, out / f"{v.id}.{dtype}.json", arch, io.StringIO(), dtype=dtype)
                paths[v.id, dtype] = path
    return paths


@functools.cache
def problem(shape, dtype):
    a, b = data.make_inputs(shape, 42, dtype)
    return (a, b, *data.reference(a, b))


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.tag)
@pytest.mark.parametrize("variant_id, dtype", CASES)
def test_gpu_variant_matches_float64_reference(registry, binaries, variant_id, dtype, shape):
    a, b, ref, scale = problem(shape, dtype)
    rows = bench.measure(registry[variant_id], shape, 42, a, b, ref, scale, binaries.get((variant_id, dtype)),
                         CFG, harness=binaries["harness"])
    assert rows["verified"].all(), rows[["max_error", "bad_elements", "unwritten_elements"]].iloc[0].to_dict()
    assert len(rows) == CFG["min_samples"] and (rows["time_ms"] > 0).all()
    assert rows["blocked"].all() and rows["cache"].eq("cold").all()
    assert rows["sm_clock_mhz"].gt(0).all(), rows["nvml"].iloc[0]   # NVML read while it ran
    if dtype == "int32":
        assert rows["max_error"].iloc[0] == 0   # exact


def test_unwritten_output_is_caught_on_the_gpu(registry, binaries):
    """A launch that covers only part of C leaves poison, and the check says so."""
    shape = Shape(64, 64, 32)
    a, b, ref, scale = problem(shape, "float32")
    naive = registry["gpu_naive"]
    short = type(naive)(**{**naive.__dict__, "tile_expr": ("BLOCK_Y*2", "BLOCK_X")})  # grid for half the rows
    rows = bench.measure(short, shape, 1, a, b, ref, scale, binaries["gpu_naive", "float32"], CFG,
                         harness=binaries["harness"])
    assert not rows["verified"].any()
    assert rows["unwritten_elements"].iloc[0] == 32 * 64


def test_int32_result_off_by_one_fails(registry, binaries):
    """Exact mode: the integer reference changed by 1 in one element is a failure."""
    shape = Shape(33, 17, 65)
    a, b, ref, scale = problem(shape, "int32")
    ref = ref.copy()
    ref[3, 4] += 1
    rows = bench.measure(registry["gpu_tiled"], shape, 1, a, b, ref, scale, binaries["gpu_tiled", "int32"], CFG,
                         harness=binaries["harness"])
    assert not rows["verified"].any() and rows["bad_elements"].iloc[0] == 1
