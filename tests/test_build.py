"""Every kernel builds with nvcc for sm_90 with no spills; reports become data."""

import io
import shutil

import numpy as np
import pytest

from matmulstudy.measure import bench, build, data
from matmulstudy.study.settings import Checking, Timing
from matmulstudy.study.shapes import Shape
from matmulstudy.errors import StudyError
from matmulstudy.study.variant import Variant

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")
CHECK = Checking(tolerance=8, full_check_max_size=None, freivalds_vectors=16)

PTXAS = """\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'gpu_tiled' for 'sm_90'
ptxas info    : Function properties for gpu_tiled
    0 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 38 registers, used 1 barriers, 2048 bytes smem
ptxas info    : Compile time = 11.1 ms
ptxas info    : Compiling entry function 'other' for 'sm_90'
ptxas info    : Function properties for other
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 0 barriers
"""


def test_parse_ptxas():
    kernels = build.parse_ptxas(PTXAS)
    assert kernels["gpu_tiled"] == {"registers": 38, "barriers": 1, "shared_bytes": 2048, "stack_bytes": 0,
                                    "spill_store_bytes": 8, "spill_load_bytes": 12}
    assert kernels["other"]["shared_bytes"] == 0 and kernels["other"]["registers"] == 10


def test_every_cuda_kernel_builds_for_sm90_without_spills(registry, sm90_builds):
    assert set(sm90_builds) == {(v.id, d) for v in registry.values() if v.backend == "cuda" for d in v.dtypes}
    for (vid, dtype), (cubin, report, log) in sm90_builds.items():
        assert cubin.stat().st_size > 0
        assert report["registers"] > 0
        assert report["spill_store_bytes"] == 0 and report["spill_load_bytes"] == 0, log
        assert report["stack_bytes"] == 0, log
        assert f"-DELEM={'int' if dtype == 'int32' else 'float'}" in log
        for name, value in registry[vid].defines.items():
            assert f"-D{name}={value}" in log


def test_tiled_kernel_reports_its_shared_memory(registry, sm90_builds):
    report = sm90_builds["gpu_tiled", "float32"][1]
    tile = registry["gpu_tiled"].defines["TILE"]
    assert report["shared_bytes"] == 2 * tile * tile * 4
    assert report["barriers"] == 1


@needs_nvcc
def test_a_kernel_that_does_not_compile_fails_with_nvccs_message(registry, tmp_path):
    src = tmp_path / "09_broken.cu"
    src.write_text('extern "C" __global__ void broken(int M) { undeclared_name = M; }\n')
    v = Variant(id="broken", backend="cuda", title="t", source="s", order=9, file=src,
                block_expr=(16, 16), tile_expr=(16, 16))
    log = io.StringIO()
    with pytest.raises(StudyError, match="nvcc failed on .*09_broken.cu: .*undeclared_name"):
        build.build(v, tmp_path / "b.cubin", tmp_path / "b.json", "sm_90", log)
    assert "undeclared_name" in log.getvalue()


def test_missing_define_is_a_compile_error(registry, tmp_path):
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not on PATH")
    v = registry["gpu_tiled"]
    # its block as numbers: the registry's is an expression of the defines, which the build evaluates first
    bare = Variant(**{**v.__dict__, "defines": {}, "block_expr": (16, 16)})
    with pytest.raises(StudyError, match="TILE and ELEM come from kernels/registry.yaml"):
        build.build(bare, tmp_path / "t.cubin", tmp_path / "t.json", "sm_90", io.StringIO())


@pytest.mark.parametrize("vid, block", [("gpu_tiled", (16, 8)), ("gpu_regtile", (16, 8)),
                                        ("gpu_warptile", (128, 1)), ("gpu_fragment_pipeline", (256, 2)),
                                        ("gpu_wgmma_tma", (256, 1))])
def test_a_block_the_kernel_is_not_written_for_is_a_compile_error(registry, tmp_path, vid, block):
    """The registry's block reaches the kernel as BLOCK_DIM_X and BLOCK_DIM_Y, and the kernel static_asserts it
    against its own geometry: an entry whose block disagrees with its kernel stops at the build, not at a
    wrong result."""
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not on PATH")
    v = registry[vid]
    wrong = Variant(**{**v.__dict__, "block_expr": block})
    assert "-DBLOCK_DIM_X=%d" % block[0] in build.nvcc_command(wrong, "sm_90", tmp_path / "t.cubin")
    with pytest.raises(StudyError, match="kernels/registry.yaml's block must be"):
        build.build(wrong, tmp_path / "t.cubin", tmp_path / "t.json", v.target("sm_90"), io.StringIO())


@pytest.mark.parametrize("shape", [Shape(1, 1, 1), Shape(17, 33, 65), Shape(64, 48, 40)])
def test_the_c_baseline_builds_with_gcc_and_verifies(registry, tmp_path, shape):
    v = next(v for v in registry.cpu_baselines() if v.backend == "c")
    build.build(v, tmp_path / "cpu_naive.so", tmp_path / "r.json", None, io.StringIO())
    a, b = data.make_inputs(shape, 5)
    timing = Timing(warmup=0, cache="hot", min_samples=2, max_samples=2, max_noise=0.005, max_time_s=1.0,
                    throttle_fraction=0.9)
    rows = bench.measure(v, shape, 5, a, b, tmp_path / "cpu_naive.so", timing, CHECK,
                         reference=bench.HostReference(*data.reference(a, b)))
    assert rows["verified"].all() and len(rows) == 2
    assert (rows["time_ms"] > 0).all()
    assert np.isfinite(rows["gflops"]).all()


def test_the_numpy_baseline_verifies(registry):
    shape = Shape(31, 7, 129)
    a, b = data.make_inputs(shape, 1)
    timing = Timing(warmup=0, cache="hot", min_samples=3, max_samples=50, max_noise=1e-12, max_time_s=0.05,
                    throttle_fraction=0.9)
    numpy = next(v for v in registry.cpu_baselines() if v.backend == "numpy")
    rows = bench.measure(numpy, shape, 1, a, b, None, timing, CHECK, reference=bench.HostReference(*data.reference(a, b)))
    assert rows["verified"].all() and len(rows) >= 3 and list(rows["sample"]) == list(range(len(rows)))
    assert rows["stop_reason"].iloc[0] in ("time", "samples")   # a noise of 1e-12 is never reached
    assert rows["reference"].iloc[0] == "cpu (NumPy float64)" and rows["margin"].iloc[0] <= 0.5


@needs_nvcc
def test_harness_builds(tmp_path):
    build.build_harness("sm_90", tmp_path / "harness.cubin", io.StringIO())
    assert (tmp_path / "harness.cubin").stat().st_size > 0


def test_a_build_is_launched_with_the_defines_it_was_built_with(registry, tmp_path):
    """A tuned build's geometry comes from its resource report, not from the registry's defaults."""
    import json
    v = next(v for v in registry.values() if v.search)
    other = next(c for c, why in v.search.candidates(v.defines)[1:] if why is None)
    binary = tmp_path / "k.cubin"
    (tmp_path / "k.cubin.json").write_text(json.dumps({"defines": {**v.defines, **other}}))
    built = build.built_variant(v, binary)
    assert built.defines == {**v.defines, **other} and built.id == v.id
    assert build.built_variant(v, tmp_path / "none.cubin") is v


def test_the_chosen_candidate_is_the_fastest_verified_one(registry):
    import pandas as pd
    from matmulstudy.measure import tune
    v = next(v for v in registry.values() if v.search)
    (first, _), (second, _) = [c for c in v.search.candidates(v.defines) if c[1] is None][:2]
    as_text = [" ".join(f"{k}={x}" for k, x in c.items()) for c in (first, second)]
    table = pd.DataFrame({"defines": as_text, "status": ["ok", "ok"], "median_gflops": [1.0, 2.0],
                          "chosen": [False, True]})
    assert tune.chosen_defines(table, v) == {**v.defines, **second}
    with pytest.raises(StudyError, match="no candidate verified"):
        tune.chosen_defines(table.assign(chosen=False), v)


@needs_nvcc
@pytest.mark.slow
@pytest.mark.parametrize("arch", ["sm_80", "sm_86"])
def test_every_kernel_an_ampere_gpu_runs_builds_for_it(registry, tmp_path, arch):
    """Most students run the study on an A100 (sm_80) or an RTX 30 card (sm_86): every step such a GPU runs (all
    but the registry's sm_90a ones) builds for it, in each of its dtypes. (Spills are allowed here: ptxas of CUDA
    13 spills a few bytes in steps 13 and 15 for sm_80, where their launch bounds cap the registers.)"""
    import io
    from concurrent.futures import ThreadPoolExecutor
    jobs = [(v, dtype) for v in registry.values() if v.backend == "cuda" and not v.unsupported(arch)
            for dtype in v.dtypes]
    assert {v.id for v, _ in jobs} >= {"gpu_naive", "gpu_async_epilogue", "gpu_mma_tf32", "gpu_mma_bf16"}

    def one(job):
        v, dtype = job
        return build.build(v, tmp_path / f"{v.id}.{dtype}.cubin", tmp_path / f"{v.id}.{dtype}.json", v.target(arch),
                           io.StringIO(), dtype=dtype)
    with ThreadPoolExecutor(2) as pool:   # nvcc is one process a build: two at a time on a two-core machine
        reports = list(pool.map(one, jobs))
    for (v, dtype), report in zip(jobs, reports):
        assert (tmp_path / f"{v.id}.{dtype}.cubin").stat().st_size > 0 and report["registers"] > 0, (v.id, dtype)
        assert report["arch"] == arch and f"-arch={arch}" in report["flags"], (v.id, dtype)
