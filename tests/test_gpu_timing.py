"""The harness on the GPU: adaptive timing, cold/hot, Freivalds, TF32, bandwidth (GPU only)."""

import io

import pytest

from matmulstudy import bench, build, data, host
from matmulstudy.config import Shape

pytestmark = pytest.mark.gpu

BASE = {"warmup": 2, "cache": "cold", "min_samples": 5, "max_samples": 5000, "max_noise": 0.005,
        "max_time_s": 1.0, "throttle_fraction": 0.9, "tolerance": 8,
        "freivalds_vectors": 16}


@pytest.fixture(scope="module")
def built(tmp_path_factory, registry):
    arch = host.arch_of(host.visible_gpu()["compute_capability"])
    out = tmp_path_factory.mktemp("cubins")
    build.build_harness(arch, out / "harness.cubin", io.StringIO())
    build.build(registry["gpu_tiled"], out / "tiled.cubin", out / "tiled.json", arch, io.StringIO())
    return out / "harness.cubin", out / "tiled.cubin"


def run(registry, built, shape, full=True, variant="gpu_tiled", **cfg):
    a, b = data.make_inputs(shape, 3)
    ref, scale = data.reference(a, b) if full else (None, None)
    harness, cubin = built
    return bench.measure(registry[variant], shape, 3, a, b, ref, scale, cubin if variant == "gpu_tiled" else None,
                         {**BASE, **cfg}, harness=harness)


def test_quiet_kernel_stops_on_noise_at_the_minimum(registry, built):
    rows = run(registry, built, Shape(1024, 1024, 1024), max_noise=0.5)
    assert rows["stop_reason"].eq("noise").all() and len(rows) == BASE["min_samples"]
    assert rows["noise"].iloc[0] <= 0.5 and rows["cache"].eq("cold").all()


def test_impossible_noise_target_stops_on_the_time_budget(registry, built):
    rows = run(registry, built, Shape(256, 256, 256), max_noise=1e-12, max_time_s=0.3)
    assert rows["stop_reason"].eq("time").all() and len(rows) > BASE["min_samples"]
    assert 0.3 <= rows["timing_s"].iloc[0] < 1.5


def test_hot_mode_is_recorded(registry, built):
    rows = run(registry, built, Shape(512, 512, 512), cache="hot", min_samples=20, max_samples=20)
    assert rows["cache"].eq("hot").all() and len(rows) == 20 and rows["blocked"].all()


def test_freivalds_verifies_a_kernel_and_catches_unwritten_output(registry, built):
    rows = run(registry, built, Shape(2048, 1536, 1024), full=False)
    assert rows["verified"].all() and rows["check"].eq("freivalds").all()
    tiled = registry["gpu_tiled"]
    half = type(tiled)(**{**tiled.__dict__, "tile_expr": ("TILE*2", "TILE")})   # grid for half the rows
    a, b = data.make_inputs(Shape(512, 256, 128), 1)
    bad = bench.measure(half, Shape(512, 256, 128), 1, a, b, None, None, built[1], BASE, harness=built[0])
    assert not bad["verified"].any() and bad["unwritten_elements"].iloc[0] == 256 * 256


def test_cublas_tf32_is_another_precision(registry, built):
    """TF32 passes TF32's tolerance and would fail FP32's; FP32 cuBLAS passes FP32's."""
    from matmulstudy.cublas import Cublas
    from matmulstudy.gpu import GpuSession
    from matmulstudy.verify import check
    shape = Shape(1024, 1024, 1024)
    a, b = data.make_inputs(shape, 3)
    ref, scale = data.reference(a, b)
    with GpuSession() as gpu:
        d_a, d_b, d_c = gpu.to_device(a), gpu.to_device(b), gpu.empty(shape.M * shape.N * 4)
        out = {}
        for precision in ("fp32", "tf32"):
            with Cublas(precision) as blas:
                blas.sgemm(*shape, d_a, d_b, d_c)
                gpu.synchronize()
            out[precision] = gpu.to_host(d_c, (shape.M, shape.N))
    assert check(out["fp32"], ref, scale, shape.K, 8).ok
    assert not check(out["tf32"], ref, scale, shape.K, 8).ok
    assert check(out["tf32"], ref, scale, shape.K, 8, precision="tf32").ok
    rows = run(registry, built, shape, variant="cublas_tf32")
    assert rows["verified"].all() and rows["precision"].eq("tf32").all()


def test_copy_bandwidth_is_physical():
    from matmulstudy.gpu import GpuSession
    with GpuSession() as gpu:
        info = gpu.info()
        bw = gpu.copy_bandwidth()
    assert 0.4 * info["dram_peak_gbs"] < bw["copy_bandwidth_gbs"] <= 1.02 * info["dram_peak_gbs"]
    assert bw["copy_bytes"] >= 8 * info["l2_bytes"]
