"""The headline ratios in rounds: who is the best step, who goes first, and how the rounds become the page's
ratio (measure/headline.py, report/headline.py). The rounds' rates here are made up to test the arithmetic;
the GPU test (test_gpu_timing.py) measures real ones."""

import numpy as np
import pandas as pd
import pytest

from matmulstudy.measure.headline import FIRST, best_steps, order
from matmulstudy.report import headline
from matmulstudy.precisions import PRECISIONS


def medians_ms(registry, size, rates):
    """{(variant, dtype, shape): ms} for these GFLOP/s at size^3."""
    flop = 2.0 * size**3
    return {(vid, "float32", f"{size}x{size}x{size}"): flop / (g * 1e9) * 1e3 for vid, g in rates.items()}


def test_the_best_step_of_each_precision_is_its_fastest_at_the_reference_size(registry):
    rates = {"gpu_deep_slices": 49_000, "gpu_hybrid_stream_k": 49_500, "gpu_stream_k": 48_000, "cublas": 52_000,
             "gpu_wgmma_pipelined": 360_000, "gpu_wgmma_grouped": 350_000, "cublas_tf32": 400_000,
             "numpy": 1_000}   # a CPU baseline is never a step
    pairs = best_steps(medians_ms(registry, 4096, rates), registry, 4096)
    assert pairs == {PRECISIONS["fp32"]: ("gpu_hybrid_stream_k", "cublas"), PRECISIONS["tf32"]: ("gpu_wgmma_pipelined", "cublas_tf32")}
    # another size's medians do not count, and a precision whose reference was not measured has no pair
    other = medians_ms(registry, 2048, {"gpu_wgmma_grouped": 1e6})
    del rates["cublas_tf32"]
    assert best_steps({**medians_ms(registry, 4096, rates), **other}, registry, 4096) == {
        PRECISIONS["fp32"]: ("gpu_hybrid_stream_k", "cublas")}


def test_rounds_alternate_who_goes_first():
    assert [order(("step", "ref"), r) for r in (1, 2, 3, 4)] == [("step", "ref"), ("ref", "step")] * 2
    assert order(("best", "close", "ref"), 2) == ("ref", "close", "best")


def test_a_step_within_a_percent_of_the_best_is_measured_beside_it(registry):
    """Two steps that close swap places from one study to the next (the H200's 22 and 23 did): both go in."""
    rates = {"gpu_hybrid_stream_k": 49_500, "cublas": 52_000, "gpu_wgmma_multicast": 370_600,
             "gpu_wgmma_grouped": 369_500, "gpu_wgmma_pipelined": 365_000, "cublas_tf32": 404_000}
    pairs = best_steps(medians_ms(registry, 4096, rates), registry, 4096)
    assert pairs == {PRECISIONS["fp32"]: ("gpu_hybrid_stream_k", "cublas"),
                     PRECISIONS["tf32"]: ("gpu_wgmma_multicast", "gpu_wgmma_grouped", "cublas_tf32")}


def test_a_ratio_the_second_study_misses_by_more_than_one_and_a_half_points_is_marked(registry):
    first, second = rounds([0.993, 0.993], regime="sustained"), rounds([0.977, 0.977], regime="sustained")
    page = "\n".join(headline.page_section(first, registry, {}, str.upper, repeat=second))
    assert "| 97.7% | -1.6 points (**not reproduced** within 1.5 points) |" in page
    assert "is marked. Back to back at the power cap" in page


def test_a_step_that_launches_another_steps_kernel_stands_for_it(registry):
    """Step 20 launches step 19's kernel at 4096 (and 8192): the same machine code is timed once, as step 20;
    at 1537x3001x997-like shapes it would not stand for it, and step 18 (its own code) stays beside them."""
    from matmulstudy.measure.headline import stands_for
    rates = {"gpu_async_tile": 66_000, "gpu_async_stream_k": 66_400, "gpu_async_by_shape": 66_410, "cublas": 66_300}
    pairs = best_steps(medians_ms(registry, 4096, rates), registry, 4096, sms=132)
    assert pairs == {PRECISIONS["fp32"]: ("gpu_async_by_shape", "gpu_async_tile", "cublas")}
    assert best_steps(medians_ms(registry, 4096, rates), registry, 4096) == {   # no GPU facts: each its own
        PRECISIONS["fp32"]: ("gpu_async_by_shape", "gpu_async_tile", "gpu_async_stream_k", "cublas")}
    s29, s30 = registry["gpu_async_stream_k"], registry["gpu_async_by_shape"]
    assert stands_for(s30, s29, 4096, 132) and not stands_for(s29, s30, 4096, 132)
    assert not stands_for(s30, s29, 2176, 132)   # 17 x 9 tiles: between one wave and a half, its own kernel


def rounds(ratios_by_round, regime="burst", precision="tf32", size=8192, verified=True):
    """headline.csv rows: the reference at 400,000 GFLOP/s and 1980 MHz, the step at ratio x that."""
    rows = []
    for r, ratio in enumerate(ratios_by_round, 1):
        for role, vid, g, clock in (("step", "gpu_wgmma_grouped", 400_000 * ratio, 1500 + r),
                                    ("reference", "cublas_tf32", 400_000, 1980)):
            rows.append({"precision": precision, "M": size, "N": size, "K": size, "round": r, "regime": regime,
                         "position": 1, "role": role, "variant": vid, "gflops": g, "sm_clock_mhz": clock,
                         "verified": verified or role == "reference"})
    return pd.DataFrame(rows)


def test_the_ratio_is_the_median_of_the_rounds_with_their_range():
    table = pd.concat([rounds([0.839, 0.928, 0.855, 0.994]), rounds([0.90, 0.91], regime="sustained")])
    summ = headline.summary(table).set_index("regime")
    burst = summ.loc["burst"]
    assert burst["ratio"] == pytest.approx(np.median([0.839, 0.928, 0.855, 0.994]))
    assert (burst["ratio_min"], burst["ratio_max"]) == pytest.approx((0.839, 0.994))
    assert (burst["ratios"], burst["rounds"]) == (4, 4)
    assert (burst["step_clock_min"], burst["step_clock_max"], burst["reference_clock_min"]) == (1501, 1504, 1980)
    assert summ.loc["sustained", "ratio"] == pytest.approx(0.905)


def test_a_round_that_did_not_verify_gives_no_ratio_and_is_named_on_the_page(registry):
    table = pd.concat([rounds([0.9, 0.92]), rounds([0.5], verified=False).assign(round=3)])
    summ = headline.summary(table).iloc[0]
    assert (summ["ratios"], summ["rounds"]) == (2, 3) and summ["ratio"] == pytest.approx(0.91)
    page = "\n".join(headline.page_section(table, registry, {"headline_rounds": 3}, str.upper))
    assert "| TF32 | 8192×8192×8192 | burst |" in page and "**91.0%**" in page and "(2 of 3)" in page
    assert "Not verified, and left out of every ratio: gpu_wgmma_grouped 8192×8192×8192 round 3 burst" in page


def test_a_second_study_is_compared_in_points(registry):
    first, second = rounds([0.92, 0.92]), rounds([0.905, 0.905])
    both = headline.agreement(first, second).iloc[0]
    assert both["points"] == pytest.approx(-1.5)
    page = "\n".join(headline.page_section(first, registry, {}, str.upper, repeat=second))
    assert "| 90.5% | -1.5 points |" in page
    assert "Between the two studies, the ratios of a step both measured: burst within 1.5 points." in page


def test_the_page_says_how_the_sustained_rates_were_timed(registry):
    """By CUDA events where the rows count the launches they timed; else, a study measured before, by the
    host's times of the chunks seen finished."""
    table = pd.concat([rounds([0.92, 0.93]), rounds([0.90, 0.91], regime="sustained")])
    page = "\n".join(headline.page_section(table.assign(timed_launches=23), registry, {}, str.upper))
    assert "its rate timed by CUDA events over the whole chunks of launches inside." in page
    page = "\n".join(headline.page_section(table, registry, {}, str.upper))
    assert "its rate from the host's times of the chunks of launches seen finished, interpolated" in page


def test_a_study_without_rounds_has_no_section(registry):
    assert headline.page_section(None, registry, {}, str) == []
    assert headline.page_section(pd.DataFrame(columns=FIRST + ["verified"]), registry, {}, str) == []


def test_two_studies_are_compared_step_by_step(registry):
    """A step both measured is compared in points; one the second did not measure names what it did."""
    first = rounds([0.867, 0.867])
    second = rounds([0.924, 0.924]).replace("gpu_wgmma_grouped", "gpu_wgmma_multicast")
    assert headline.agreement(first, second).empty
    both = pd.concat([first, rounds([0.93, 0.93]).replace("gpu_wgmma_grouped", "gpu_wgmma_multicast")
                      .query("role == 'step'")])
    summ = headline.summary(both).set_index("step")["ratio"]
    assert summ.to_dict() == pytest.approx({"gpu_wgmma_grouped": 0.867, "gpu_wgmma_multicast": 0.93})
    same = headline.agreement(both, second).set_index("step")
    assert list(same.index) == ["gpu_wgmma_multicast"] and same.at["gpu_wgmma_multicast", "points"] == \
        pytest.approx(-0.6)
    page = "\n".join(headline.page_section(first, registry, {}, str.upper, repeat=second))
    assert f"| 92.4% ({registry['gpu_wgmma_multicast'].title}) | another step |" in page


def test_a_rule_problem_loads_its_inputs_and_the_variants_that_verified(registry, tmp_path):
    """energy.load_problem, which the energy and headline rules share: the inputs read, each variant with its
    timed median, a variant without one (its measurement failed) left out, and `only` honoured."""
    from matmulstudy.measure import energy
    a, b = np.ones((3, 5), np.float32), np.ones((5, 2), np.float32)
    np.save(tmp_path / "A.npy", a)
    np.save(tmp_path / "B.npy", b)
    problem = {"dtype": "float32", "shape": "3x2x5", "seed": 0, "a": str(tmp_path / "A.npy"),
               "b": str(tmp_path / "B.npy"), "variants": [["cublas", None], ["cublas_tf32", None]]}
    medians = {("cublas", "float32", "3x2x5"): 0.01}
    one = energy.load_problem(registry, problem, medians)
    assert (one.shape.M, one.shape.N, one.shape.K) == (3, 2, 5) and (one.a == a).all() and (one.b == b).all()
    assert [(v.id, ms) for v, _, ms in one.variants] == [("cublas", 0.01)]
    assert energy.load_problem(registry, problem, medians, only={"cublas_tf32"}).variants == ()


def test_the_precisions_rounds_are_gathered_in_the_precisions_order(tmp_path):
    """A job per precision (measure_headline): gathered in precisions.TABLE's order whatever order the jobs ran
    in, and a precision whose job found no contender (its table empty) adds no row."""
    from matmulstudy.measure.headline import gather
    parts = []
    for name in ("bf16", "fp32", "tf32"):
        part = tmp_path / f"{name}.csv"
        rows = [] if name == "tf32" else [{"precision": name, "M": 4096, "round": r, "gflops": 1.0} for r in (1, 2)]
        pd.DataFrame(rows, columns=["precision", "M", "round", "gflops"]).to_csv(part, index=False)
        parts.append(part)
    table = gather(parts)
    assert list(table["precision"]) == ["fp32", "fp32", "bf16", "bf16"] and list(table["round"]) == [1, 2, 1, 2]
    assert gather([parts[2]]).empty and list(gather([parts[2]]).columns)[:2] == ["precision", "M"]
