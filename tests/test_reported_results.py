"""The committed H100 study, checked from its results file (no GPU needed).

These are measured numbers, produced by `snakemake --cores 1` on an NVIDIA
H100 80GB HBM3 and committed under reports/h100/; the targets are the ones
the study was asked to meet on that GPU.
"""

import pandas as pd
import pytest

from conftest import ROOT

REPORT = ROOT / "reports" / "h100"


@pytest.fixture(scope="module")
def results():
    return pd.read_csv(REPORT / "results.csv")


def median_gflops(results, variant, n=4096):
    at = results[(results.variant == variant) & (results.M == n) & (results.N == n) & (results.K == n)]
    assert len(at) > 0, f"{variant} was not measured at {n}"
    return at["gflops"].median()


def test_the_study_ran_on_an_h100(results):
    assert set(results["gpu"]) == {"NVIDIA H100 80GB HBM3"}
    assert set(results.loc[results.backend.isin(["cuda", "cublas"]), "device"]) == {"NVIDIA H100 80GB HBM3"}


def test_every_result_verified(results):
    assert results["verified"].all()
    assert (REPORT / "failures.txt").read_text() == ""


def test_every_variant_at_every_size(results, registry):
    square = results[(results.M == results.N) & (results.N == results.K)]
    for vid in registry:
        sizes = set(square.loc[square.variant == vid, "M"])
        expected = {256, 512} if vid == "cpu_naive" else {256, 512, 1024, 2048, 4096, 8192}
        assert sizes == expected, vid
    assert (results.M != results.N).any()


def test_gpu_launches_were_timed_behind_the_blocking_kernel(results):
    gpu = results[results.backend.isin(["cuda", "cublas"])]
    assert gpu["blocked"].astype(bool).all()


def test_cublas_fp32_matches_the_independent_figure(results):
    assert median_gflops(results, "cublas") == pytest.approx(50_800, rel=0.05)


def test_seed_kernels_reach_90_percent_of_their_standalone_speed(results):
    assert median_gflops(results, "gpu_naive") >= 4_800
    assert median_gflops(results, "gpu_tiled") >= 7_300
