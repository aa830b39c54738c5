"""Every GPU variant against the float64 reference, on ragged shapes (GPU only)."""

import io

import pytest

from matmulstudy import bench, build, data, host
from matmulstudy.config import Shape
from matmulstudy.registry import load_registry

pytestmark = pytest.mark.gpu

SHAPES = [Shape(1, 1, 1), Shape(17, 33, 65), Shape(1000, 1000, 1000), Shape(4096, 64, 1024),
          Shape(513, 257, 129), Shape(31, 1, 4097)]
GPU_VARIANTS = [v.id for v in load_registry().values() if v.is_gpu]
CFG = {"warmup": 1, "repetitions": 3, "cpu_repetitions": 1, "tolerance": 8}


@pytest.fixture(scope="module")
def binaries(registry, tmp_path_factory):
    """Each cuda variant built once for the GPU at hand."""
    arch = host.arch_of(host.visible_gpu()["compute_capability"])
    out = tmp_path_factory.mktemp("cubins")
    paths = {"harness": out / "harness.cubin"}
    build.build_harness(arch, paths["harness"], io.StringIO())
    for v in registry.values():
        if v.backend == "cuda":
            build.build(v, out / f"{v.id}.cubin", out / f"{v.id}.json", arch, io.StringIO())
            paths[v.id] = out / f"{v.id}.cubin"
    return paths


@pytest.fixture(scope="module", params=SHAPES, ids=lambda s: s.tag)
def problem(request):
    shape = request.param
    a, b = data.make_inputs(shape, 42)
    return shape, a, b, *data.reference(a, b)


@pytest.mark.parametrize("variant_id", GPU_VARIANTS)
def test_gpu_variant_matches_float64_reference(registry, binaries, problem, variant_id):
    shape, a, b, ref, scale = problem
    rows = bench.measure(registry[variant_id], shape, 42, a, b, ref, scale, binaries.get(variant_id), CFG,
                         harness=binaries["harness"])
    assert rows["verified"].all(), rows[["max_error", "bad_elements", "unwritten_elements"]].iloc[0].to_dict()
    assert len(rows) == CFG["repetitions"] and (rows["time_ms"] > 0).all()
    assert rows["blocked"].all()


def test_unwritten_output_is_caught_on_the_gpu(registry, binaries):
    """A launch that covers only part of C leaves poison, and the check says so."""
    shape = Shape(64, 64, 32)
    a, b = data.make_inputs(shape, 1)
    ref, scale = data.reference(a, b)
    half = registry["gpu_naive"].with_defines({})  # same kernel...
    short = type(half)(**{**half.__dict__, "tile_expr": ("BLOCK_Y*2", "BLOCK_X")})  # ...grid for half the rows
    rows = bench.measure(short, shape, 1, a, b, ref, scale, binaries["gpu_naive"], CFG,
                         harness=binaries["harness"])
    assert not rows["verified"].any()
    assert rows["unwritten_elements"].iloc[0] == 32 * 64
