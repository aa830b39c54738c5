"""The harness on the GPU: adaptive timing, cold/hot, the three checks, TF32, bandwidth (GPU only)."""

import dataclasses

import pytest

from matmulstudy.measure import bench, data
from matmulstudy.study.settings import Timing, default_settings
from matmulstudy.study.shapes import Shape

pytestmark = [pytest.mark.gpu, pytest.mark.timed]

BASE = Timing(warmup=2, cache="cold", min_samples=5, max_samples=5000, max_noise=0.005, max_time_s=1.0,
              throttle_fraction=0.9)
CHECK = default_settings().checking


def run(registry, gpu_builds, shape, check="gpu", variant="gpu_tiled", **timing):
    """Measure one variant; check: 'gpu' (every element on the GPU), 'cpu' (on the host) or 'freivalds'."""
    from matmulstudy.measure.devicecheck import DeviceReference
    from matmulstudy.gpu.session import GpuSession
    a, b = data.make_inputs(shape, 3)
    with GpuSession() as gpu:
        reference = {"gpu": lambda: DeviceReference(gpu, gpu_builds["harness"], a, b),
                     "cpu": lambda: bench.HostReference(*data.reference(a, b)), "freivalds": lambda: None}[check]()
        rows = bench.measure(registry[variant], shape, 3, a, b, gpu_builds.get((variant, "float32")),
                             dataclasses.replace(BASE, **timing), CHECK, harness=gpu_builds["harness"], session=gpu,
                             reference=reference)
        if check == "gpu":
            reference.close()
    return rows


def test_quiet_kernel_stops_on_noise_at_the_minimum(registry, gpu_builds):
    rows = run(registry, gpu_builds, Shape(1024, 1024, 1024), max_noise=0.5)
    assert rows["stop_reason"].eq("noise").all() and len(rows) == BASE.min_samples
    assert rows["noise"].iloc[0] <= 0.5 and rows["cache"].eq("cold").all()


def test_a_short_kernel_is_sampled_until_its_times_add_up_to_the_minimum(registry, gpu_builds):
    rows = run(registry, gpu_builds, Shape(256, 256, 256), max_noise=0.5, min_time_s=0.02)
    assert rows["stop_reason"].eq("noise").all() and len(rows) > BASE.min_samples
    assert 20.0 <= rows["time_ms"].sum() < 20.0 + 2 * rows["time_ms"].max() * 64


def test_the_timed_launches_take_every_placement_in_turn_and_each_is_verified(registry, gpu_builds):
    for check in ("gpu", "cpu"):
        rows = run(registry, gpu_builds, Shape(300, 200, 100), check=check, placements=3, min_samples=7,
                   max_samples=7)
        assert rows["verified"].all() and rows["placements"].eq(3).all() and len(rows) == 7
    tiled = registry["gpu_tiled"]
    half = type(tiled)(**{**tiled.__dict__, "tile_expr": ("TILE*2", "TILE")})   # grid for half the rows
    a, b = data.make_inputs(Shape(512, 256, 128), 1)
    bad = bench.measure(half, Shape(512, 256, 128), 1, a, b, gpu_builds["gpu_tiled", "float32"],
                        dataclasses.replace(BASE, placements=3), CHECK, harness=gpu_builds["harness"])
    assert not bad["verified"].any() and bad["unwritten_elements"].iloc[0] == 256 * 256


def test_a_measurement_taken_in_three_contexts_pools_their_samples_and_every_check(registry, gpu_builds):
    from matmulstudy.gpu.session import GpuSession
    shape = Shape(300, 200, 100)
    a, b = data.make_inputs(shape, 3)
    timing = dataclasses.replace(BASE, placements=2, min_samples=9, max_samples=9, contexts=3)
    pooled = bench.Pooled(3)
    for part in range(3):
        with GpuSession() as gpu:   # a fresh context each time
            rows = bench.measure(registry["gpu_tiled"], shape, 3, a, b, gpu_builds["gpu_tiled", "float32"], timing,
                                 CHECK, harness=gpu_builds["harness"], session=gpu, reference=None, pooled=pooled)
    assert rows["verified"].all() and pooled.part == 3
    assert rows["context"].tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2]   # a third of the samples in each
    assert rows["stop_reason"].isin(["noise", "samples"]).all() and len(pooled.checks) == 3 * (1 + 2)   # the first placement before, both after
    assert rows["noise"].iloc[0] == pytest.approx(bench.relative_noise(rows["time_ms"]))   # of the pool
    # a launch this long (every launch is, past 1 ns) is taken in its first context only, to the whole criterion
    pooled = bench.Pooled(3)
    with GpuSession() as gpu:
        rows = bench.measure(registry["gpu_tiled"], shape, 3, a, b, gpu_builds["gpu_tiled", "float32"],
                             dataclasses.replace(timing, contexts_below_ms=1e-6), CHECK,
                             harness=gpu_builds["harness"], session=gpu, reference=None, pooled=pooled)
    assert pooled.done and pooled.parts == 1 and rows["context"].tolist() == [0] * 9 and rows["verified"].all()


def test_impossible_noise_target_stops_on_the_time_budget(registry, gpu_builds):
    rows = run(registry, gpu_builds, Shape(256, 256, 256), max_noise=1e-12, max_time_s=0.3)
    assert rows["stop_reason"].eq("time").all() and len(rows) > BASE.min_samples
    assert 0.3 <= rows["timing_s"].iloc[0] < 1.5


def test_hot_mode_is_recorded(registry, gpu_builds):
    rows = run(registry, gpu_builds, Shape(512, 512, 512), cache="hot", min_samples=20, max_samples=20)
    assert rows["cache"].eq("hot").all() and len(rows) == 20 and rows["blocked"].all()


def test_each_check_verifies_a_kernel_and_catches_unwritten_output(registry, gpu_builds):
    for check in ("gpu", "cpu", "freivalds"):
        rows = run(registry, gpu_builds, Shape(2048, 1536, 1024), check=check)
        assert rows["verified"].all() and rows["check"].eq("freivalds" if check == "freivalds" else "full").all()
    tiled = registry["gpu_tiled"]
    half = type(tiled)(**{**tiled.__dict__, "tile_expr": ("TILE*2", "TILE")})   # grid for half the rows
    a, b = data.make_inputs(Shape(512, 256, 128), 1)
    bad = bench.measure(half, Shape(512, 256, 128), 1, a, b, gpu_builds["gpu_tiled", "float32"], BASE, CHECK,
                        harness=gpu_builds["harness"])
    assert not bad["verified"].any() and bad["unwritten_elements"].iloc[0] == 256 * 256


def test_cublas_tf32_is_another_precision(registry, gpu_builds):
    """TF32 passes TF32's bound, and fails FP32's by at least 2x; FP32 cuBLAS passes FP32's with room."""
    for n in (256, 1024, 4096):
        shape = Shape(n, n, n)
        tf32 = run(registry, gpu_builds, shape, variant="cublas_tf32").iloc[0]
        fp32 = run(registry, gpu_builds, shape, variant="cublas").iloc[0]
        assert tf32["verified"] and tf32["precision"] == "tf32" and tf32["margin"] <= 1
        assert tf32["fp32_margin"] >= 2, (n, tf32["fp32_margin"])
        assert fp32["verified"] and fp32["margin"] <= 0.5


def test_copy_bandwidth_is_physical():
    from matmulstudy.gpu.facts import copy_bandwidth, device_facts
    from matmulstudy.gpu.session import GpuSession
    with GpuSession() as gpu:
        info = device_facts(gpu)
        bw = copy_bandwidth(gpu)
    assert 0.4 * info["dram_peak_gbs"] < bw["copy_bandwidth_gbs"] <= 1.02 * info["dram_peak_gbs"]
    assert bw["copy_bytes"] >= 8 * info["l2_bytes"]


def test_each_gpu_variant_back_to_back_draws_energy_between_two_ticks_of_the_counter(registry, gpu_builds):
    """The energy phase on a shape large enough to keep the GPU busy: every variant's run checked, its window
    between two ticks of NVML's counter (0.2 s at least), its rate near its timed one at the clock it ran at, a
    power the GPU can draw; a 256^3 cuBLAS run, which leaves the GPU waiting for the host, n/a with the reason."""
    from matmulstudy.gpu.session import GpuSession
    from matmulstudy.measure import energy
    shape, tiny = Shape(2048, 2048, 2048), Shape(256, 256, 256)
    variants = [registry[v] for v in ("gpu_hybrid_stream_k", "cublas")]
    timed = {v.id: bench.counted(run(registry, gpu_builds, shape, variant=v.id))["time_ms"].median() for v in variants}
    with GpuSession() as gpu:
        problems = [energy.Problem(shape, "float32", 0, *data.make_inputs(shape, 0),
                                   tuple((v, gpu_builds.get((v.id, "float32")), timed[v.id]) for v in variants)),
                    energy.Problem(tiny, "float32", 0, *data.make_inputs(tiny, 0),
                                   ((registry["cublas"], None, 0.008),))]
        table = energy.measure(gpu, gpu_builds["harness"], problems, 0.2, CHECK).set_index(["variant", "M"])
    for v in variants:
        row = table.loc[(v.id, 2048)]
        assert row["verified"] and row["energy_note"] == "" and 0.18 <= row["sustained_s"] < 0.5, row.to_dict()
        assert 50 < row["mean_power_w"] < 1000 and row["sustained_busy"] >= 0.9
        assert row["gflop_per_joule"] == pytest.approx(row["sustained_gflops"] / row["mean_power_w"])
        assert row["joules_per_launch"] == pytest.approx(row["mean_power_w"] * 2 * 2048**3 / 1e9
                                                         / row["sustained_gflops"], rel=1e-6)
    assert table.loc[("cublas", 256), "energy_note"].startswith("launch-bound")


def test_headline_rounds_alternate_and_check_every_result(registry, gpu_builds):
    """Two rounds of step 17, step 16 (as a step within a percent of the best would be) and cuBLAS at 2048: the
    steps first, then the reference first; each side burst then sustained, every result checked, a ratio per
    round, regime and step near the study's own."""
    from matmulstudy.gpu.session import GpuSession
    from matmulstudy.measure import energy, headline
    from matmulstudy.report.headline import summary
    shape, sides = Shape(2048, 2048, 2048), ("gpu_hybrid_stream_k", "gpu_deep_slices", "cublas")
    timed = {vid: bench.counted(run(registry, gpu_builds, shape, variant=vid))["time_ms"].median() for vid in sides}
    with GpuSession() as gpu:
        problem = energy.Problem(shape, "float32", 0, *data.make_inputs(shape, 0),
                                 tuple((registry[v], gpu_builds.get((v, "float32")), timed[v]) for v in sides))
        table = headline.measure(gpu, gpu_builds["harness"], problem, {"fp32": sides}, 2, BASE, 0.2, CHECK)
    assert len(table) == 12 and table["verified"].all() and table["gflops"].notna().all(), table
    firsts = table[table["position"] == 1].groupby("round")["variant"].unique()
    assert list(firsts[1]) == ["gpu_hybrid_stream_k"] and list(firsts[2]) == ["cublas"]
    assert set(table.loc[table["role"] == "reference", "variant"]) == {"cublas"}
    sustained = table[table["regime"] == "sustained"]
    assert (sustained["mean_power_w"] > 50).all() and sustained["gflop_per_joule"].notna().all()
    ratios = summary(table).set_index(["regime", "step"])["ratio"]
    for step in sides[:2]:
        alone = timed["cublas"] / timed[step]
        assert ratios["burst", step] == pytest.approx(alone, rel=0.05) and 0.5 < ratios["sustained", step] < 1.2
