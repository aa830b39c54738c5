"""The committed H100 study, checked from its results files (no GPU needed).

These are measured numbers, produced by `snakemake --cores 1 --config
ncu=true` on an NVIDIA H100 80GB HBM3 and committed under reports/h100/;
the targets are the ones the study was asked to meet on that GPU.
"""

import pandas as pd
import pytest

from conftest import ROOT

REPORT = ROOT / "reports" / "h100"
SIZES = {256, 512, 1024, 2048, 4096, 8192}


@pytest.fixture(scope="module")
def results():
    return pd.read_csv(REPORT / "results.csv")


@pytest.fixture(scope="module")
def hardware():
    return pd.read_csv(REPORT / "hardware.csv").set_index(["variant", "dtype"])


def median_gflops(results, variant, n=4096, dtype="float32"):
    at = results[(results.variant == variant) & (results.dtype == dtype)
                 & (results.M == n) & (results.N == n) & (results.K == n)]
    assert len(at) > 0, f"{variant} {dtype} was not measured at {n}"
    return at["gflops"].median()


def test_the_study_ran_on_an_h100(results):
    assert set(results["gpu"]) == {"NVIDIA H100 80GB HBM3"}
    assert set(results.loc[results.backend.isin(["cuda", "cublas"]), "device"]) == {"NVIDIA H100 80GB HBM3"}


def test_every_result_verified(results):
    assert results["verified"].all()
    assert (REPORT / "failures.txt").read_text() == ""
    assert (results.loc[results.dtype == "int32", "max_error"] == 0).all()


def test_every_variant_at_every_size(results, registry):
    square = results[(results.M == results.N) & (results.N == results.K)]
    for v in registry.values():
        for dtype in v.dtypes:
            sizes = set(square.loc[(square.variant == v.id) & (square.dtype == dtype), "M"])
            assert sizes == ({256, 512} if v.id == "cpu_naive" else SIZES), (v.id, dtype)
            if v.id != "cpu_naive":   # capped at 512: no non-square shape
                mine = results[(results.variant == v.id) & (results.dtype == dtype)]
                assert (mine.M != mine.N).any(), (v.id, dtype)


def test_gpu_launches_were_timed_behind_the_blocking_kernel(results):
    gpu = results[results.backend.isin(["cuda", "cublas"])]
    assert gpu["blocked"].astype(bool).all()


def test_cublas_fp32_matches_the_independent_figure(results):
    assert median_gflops(results, "cublas") == pytest.approx(50_800, rel=0.05)


def test_seed_kernels_reach_90_percent_of_their_standalone_speed(results):
    assert median_gflops(results, "gpu_naive") >= 4_800
    assert median_gflops(results, "gpu_tiled") >= 7_300


def test_best_seed_step_reaches_15_tflops(results, registry):
    best = max(median_gflops(results, v.id) for v in registry.values() if v.backend == "cuda")
    assert best >= 15_000


def test_counters_show_what_each_fix_claims(hardware):
    f = "float32"
    sectors = hardware["global_ld_sectors_per_request"]
    conflicts = hardware["bank_conflicts_per_shared_ld"]
    fma_per_lds = hardware["fma_per_lds"]
    assert sectors["gpu_tiled_coalesced", f] < sectors["gpu_tiled_uncoalesced", f]   # step 3 coalesces
    assert conflicts["gpu_tiled", f] < conflicts["gpu_tiled_coalesced", f]           # step 4 removes conflicts
    assert fma_per_lds["gpu_outer", f] > fma_per_lds["gpu_tiled", f]                 # step 5: one smem operand
    assert hardware["ncu_shape"].dropna().unique().tolist() == ["4096x4096x4096"]


def test_slower_steps_are_reported_with_their_reason(results, registry):
    notes = (REPORT / "progression.md").read_text()
    for v in registry.values():
        if v.backend == "cuda":
            assert f"| {v.title} |" in notes
    steps = [v.id for v in registry.values() if v.backend == "cuda"]
    speeds = [median_gflops(results, s) for s in steps]
    slower = [registry[s].title for s, before, now in zip(steps[1:], speeds, speeds[1:]) if now < before]
    section = notes.split("## Steps slower than the one before")[1]
    for title in slower:
        assert f"**{title}** is slower than" in section
    assert section.count("is slower than") == len(slower)


def test_figures_are_committed():
    for name in ("size_sweep", "progression", "progression_int32", "hardware"):
        for ext in ("png", "svg"):
            assert (REPORT / "figures" / f"{name}.{ext}").stat().st_size > 10_000
