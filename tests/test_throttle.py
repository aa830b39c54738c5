"""Throttled batches taken again, and the energy of a sustained run, on NVML readings recorded on the H100.

tests/data/nvml_trace_h100_*.csv: `python -m matmulstudy.tools.powertrace VARIANT --size N --seconds S` on
an NVIDIA H100 80GB HBM3 (driver 580.159.04, 700 W), 2026-11-23: the variant launched back to
back, NVML read every ~2 ms. cuBLAS SGEMM at 8192 holds 1950-1980 MHz; step 17 (FP32) at 8192 holds 1980 MHz
for half a second and then meets the power cap; step 29 (TF32) meets it at once, at 4096 and at 8192. The
energy counter moves every 100 ms.
"""

import math

import numpy as np
import pandas as pd
import pytest

from conftest import ROOT
from matmulstudy.gpu.nvml import Reading
from matmulstudy.gpu.timer import TICK_JITTER_S, BackToBack, Sustained, TimedSamples
from matmulstudy.measure.bench import Pooled, counted
from matmulstudy.measure.energy import energy_columns
from matmulstudy.measure.criterion import Retake
from matmulstudy.report import results

H100 = Retake(max_clock_mhz=1980.0, fraction=0.9, recovery_s=0.1, max_retakes=20)


def trace(name: str) -> pd.DataFrame:
    return pd.read_csv(ROOT / "tests" / "data" / f"nvml_trace_h100_{name}.csv")


def readings(df: pd.DataFrame, start_s: float, end_s: float) -> list[Reading]:
    """The readings NVML gave while a batch ran from start_s to end_s of the trace."""
    window = df[(df.time_s >= start_s) & (df.time_s < end_s)]
    return [Reading(sm_clock_mhz=r.sm_clock_mhz, power_w=r.power_w, energy_mj=r.energy_mj, time_s=r.time_s)
            for r in window.itertuples()]


def batches(df: pd.DataFrame, seconds: float, start_s: float = 0.0):
    """The trace cut into batches `seconds` long."""
    end = df.time_s.iloc[-1]
    return [readings(df, t, t + seconds) for t in np.arange(start_s, end - seconds, seconds)]


def test_batches_at_full_clock_all_count():
    out, cut = TimedSamples(), batches(trace("cublas_8192"), 0.2)
    for batch in cut:
        assert not out.add([14.5] * 13, batch, H100)
    assert out.retakes == 0 and not out.retaken_ms and len(out.times_ms) == 13 * len(cut) and out.recovery_s == 0


def test_a_batch_that_met_the_power_cap_is_taken_again_then_counted_flagged_throttled():
    """Step 29 at 8192 throttles in every batch: 20 are taken again, each after a 0.1 s pause, and kept
    aside; from the 21st the batches count (the GPU cannot hold its clock here), with their readings."""
    out = TimedSamples()
    again = [out.add([3.0] * 4, batch, H100) for batch in batches(trace("gpu_wgmma_grouped_8192"), 0.15)]
    assert again[:20] == [True] * 20 and not any(again[20:]) and len(again) > 22
    assert out.retakes == 20 and len(out.retaken_ms) == 80 and out.recovery_s == pytest.approx(2.0)
    assert len(out.times_ms) == 4 * (len(again) - 20)
    assert all(H100.throttled(r) for r in out.batch_readings)   # counted, and still throttled: flagged so


def test_the_fp32_step_at_8192_throttles_only_once_the_cap_is_reached():
    df = trace("gpu_hybrid_stream_k_8192")
    assert not H100.throttled(readings(df, 0.0, 0.5))                      # 1965-1980 MHz
    assert H100.throttled(readings(df, 0.75, 1.0))                         # down to 1665 MHz
    assert min(r.sm_clock_mhz for r in readings(df, 0.75, 1.0)) == 1665


def test_a_reading_without_a_clock_never_throttles_and_a_retake_halves_the_batch():
    assert not H100.throttled([Reading(), Reading(power_w=700.0)])
    assert not H100.again([Reading(sm_clock_mhz=1000.0)], retakes=20)   # past max_retakes: counted
    assert H100.again([Reading(sm_clock_mhz=1781.0)], retakes=0) and not H100.again([Reading(sm_clock_mhz=1782.0)], 0)
    assert [Retake.next_batch(n) for n in (64, 3, 1)] == [32, 1, 1]
    assert not TimedSamples().add([1.0], [Reading(sm_clock_mhz=100.0)], retake=None)   # no policy: counted


def test_each_sample_keeps_the_context_it_was_taken_in_counted_or_taken_again():
    out = TimedSamples()
    out.add([1.0] * 3, [Reading(sm_clock_mhz=1980.0)], H100)
    out.context = 1
    assert out.add([1.2] * 2, [Reading(sm_clock_mhz=1500.0)], H100)   # throttled: taken again, in context 1
    out.add([1.1] * 2, [Reading(sm_clock_mhz=1980.0)], H100)
    assert out.contexts == [0, 0, 0, 1, 1] and out.retaken_contexts == [1, 1] and out.retakes == 1


def sustained_from(name: str, start_s: float, window_s: float) -> Sustained:
    """A sustained run cut from a trace as the timer cuts it: from one tick of the energy counter to the first
    tick at least `window_s` later (a tick's jitter allowed); the launches interpolated between the trace's
    finished counts."""
    df = trace(name)
    ticks = df[df.energy_mj.diff() > 0]
    first = ticks[ticks.time_s >= start_s].iloc[0]
    last = ticks[ticks.time_s >= first.time_s + window_s - TICK_JITTER_S].iloc[0]
    done = np.interp([first.time_s, last.time_s], df.time_s, df.launches_done)
    return Sustained(launches=done[1] - done[0], seconds=last.time_s - first.time_s,
                     joules=(last.energy_mj - first.energy_mj) / 1e3,
                     readings=readings(df, first.time_s, last.time_s + 1e-9))


def test_the_energy_of_a_sustained_run_is_read_between_two_ticks_of_the_counter():
    """Step 29 at 8192 back to back: about 700 W, 2.3-2.4 J a launch (the trace's own summary: 2.35 J, 690 W
    over 4 s), at the clock the power cap left it (its timed launches: 2.9 ms at 1980 MHz)."""
    flop = 2 * 8192**3
    run = sustained_from("gpu_wgmma_grouped_8192", 1.0, 0.2)
    assert 0.17 < run.seconds < 0.25 and run.joules == pytest.approx(run.seconds * 690, rel=0.08)
    cols = energy_columns(run, flop, burst_ms=2.9, max_clock_mhz=1980.0)
    assert cols["energy_note"] == "" and cols["sustained_busy"] == 1.0   # slower, as its clock says
    assert cols["mean_power_w"] == pytest.approx(run.joules / run.seconds)
    assert cols["joules_per_launch"] == pytest.approx(run.joules / run.launches) and 2.0 < cols["joules_per_launch"] < 2.7
    assert cols["gflop_per_joule"] == pytest.approx(flop / 1e9 / cols["joules_per_launch"])
    assert cols["sustained_gflops"] == pytest.approx(run.launches * flop / run.seconds / 1e9)
    assert 1300 <= cols["sustained_min_sm_clock_mhz"] <= cols["sustained_median_sm_clock_mhz"] < 1782


def test_energy_is_na_with_the_reason_where_it_would_not_be_the_kernels():
    """A run much slower than its clock allows left the GPU waiting for the host: its energy would be idle."""
    run = sustained_from("cublas_8192", 1.0, 0.2)   # ~21 ms a launch back to back, at 1950-1980 MHz
    assert energy_columns(run, 2 * 8192**3, burst_ms=21.3, max_clock_mhz=1980.0)["energy_note"] == ""
    cols = energy_columns(run, 2 * 8192**3, burst_ms=8.0, max_clock_mhz=1980.0)   # as if it took 8 ms alone
    assert cols["energy_note"].startswith("launch-bound") and "joules_per_launch" not in cols
    assert cols["sustained_busy"] == pytest.approx(8.0 * 1980 / cols["sustained_median_sm_clock_mhz"] / run.launch_ms)
    blind = Sustained(launches=100.0, seconds=0.2, joules=None, note="NVML's total-energy counter: Not Supported")
    assert energy_columns(blind, 1, burst_ms=2.0, max_clock_mhz=1980.0)["energy_note"] == \
        "NVML's total-energy counter: Not Supported"


class FakeEvent:
    """A CUDA event recorded at GPU time `at_s`."""

    def __init__(self, at_s: float):
        self.at_s = at_s

    def time_till(self, other: "FakeEvent") -> float:
        return (other.at_s - self.at_s) * 1e3


def test_a_sustained_rate_is_timed_by_the_events_of_the_whole_chunks_inside_the_window():
    """cuBLAS FP32 at 8192 on the H100: one 21.3 ms launch a chunk, each seen finished by the host only when
    it polls, 0-12 ms late (NVML is read between polls). The window's host times hold chunks 3 to 25: their
    events say 22 launches took 22 x 21.3 ms, whatever the host's delays, where the host's view is off by
    more than half a percent; with fewer than two chunks inside, no event time."""
    run = BackToBack(None, lambda: None, launch_ms=21.3)
    assert run.per_chunk == 1
    start, late = run.finished[0][0], [0.012, 0.0, 0.009, 0.001, 0.011, 0.002] * 6
    for i in range(1, 31):
        run._finished(start + i * 0.0213 + late[i], FakeEvent(i * 0.0213))
    launches, seconds = run.timed_between(start + 0.060, start + 0.560)
    assert launches == 22 and seconds == pytest.approx(22 * 0.0213)
    assert run.timed_between(start + 0.060, start + 0.080) == (0, 0.0)
    host_view = run.between(start + 0.060, start + 0.560) / 0.5   # launches a second, by the host's times
    assert abs(host_view * 0.0213 - 1) > 0.005   # off by more than half a percent


def test_the_rate_energy_per_launch_and_gflop_per_joule_follow_the_events_and_the_power_the_window():
    """Where the events timed whole chunks: the rate is theirs; the power is the window's joules over its
    seconds (whole ticks of the counter); a launch's energy is that power over the events' time a launch."""
    flop = 2 * 8192**3
    run = Sustained(launches=23.6, seconds=0.5, joules=345.0, timed_launches=22, timed_s=22 * 0.0213)
    assert run.launch_ms == pytest.approx(21.3)
    cols = energy_columns(run, flop, burst_ms=21.3, max_clock_mhz=1980.0)
    assert cols["sustained_gflops"] == pytest.approx(flop / 21.3e-3 / 1e9) and cols["sustained_busy"] == 1.0
    assert cols["mean_power_w"] == pytest.approx(690.0)
    assert cols["joules_per_launch"] == pytest.approx(690.0 * 0.0213)
    assert cols["gflop_per_joule"] == pytest.approx(cols["sustained_gflops"] / 690.0)


def rows_of(registry, vid: str, times: list, retaken: list) -> pd.DataFrame:
    """A measurement's rows as bench writes them: some samples of batches taken again."""
    rows = pd.DataFrame({"variant": vid, "title": registry[vid].title, "dtype": "float32", "M": 64, "N": 64,
                         "K": 64, "seed": 0, "sample": range(len(times)), "verified": True, "precision": "fp32",
                         "time_ms": times, "retaken": retaken, "throttled": retaken,
                         "sm_clock_mhz": [1500.0 if r else 1980.0 for r in retaken], "max_error": 0.0,
                         "margin": 0.1, "fp32_margin": 0.1, "retakes": int(sum(retaken) > 0)})
    rows["gflops"] = 2 * 64**3 / (rows["time_ms"] * 1e-3) / 1e9
    return rows


def test_the_summary_counts_only_the_samples_that_count(registry):
    rows = rows_of(registry, "cublas", [1.0, 1.0, 1.2, 9.0, 9.0, 9.0], [False] * 3 + [True] * 3)
    assert len(counted(rows)) == 3
    s = results.summary(rows, registry).iloc[0]
    assert s["samples"] == 3 and s["retaken_samples"] == 3 and s["retakes"] == 1 and s["median_ms"] == 1.0
    assert s["throttled_samples"] == 0 and s["min_sm_clock_mhz"] == 1980.0
    old = rows.drop(columns=["retaken", "retakes"])   # a study measured before batches were taken again
    assert "retaken_samples" not in results.summary(old, registry) and results.summary(old, registry).iloc[0][
        "samples"] == 6


def test_each_summary_row_has_its_energy_or_why_not(registry):
    rows = pd.concat([rows_of(registry, v, [1.0, 1.1], [False, False]) for v in ("numpy", "cublas", "cublas_tf32")])
    summ = results.summary(rows, registry)
    energy = pd.DataFrame([{"variant": "cublas", "dtype": "float32", "M": 64, "N": 64, "K": 64, "seed": 0,
                            "sustained_gflops": 0.4, "mean_power_w": 400.0, "gflop_per_joule": 1.25,
                            "joules_per_launch": 4e-4, "energy_note": ""}])
    out = results.with_energy(summ, energy, registry, "not measured (energy_window_s: 0)").set_index("variant")
    assert out.at["cublas", "mean_power_w"] == 400.0 and out.at["cublas", "energy_note"] == ""
    assert out.at["numpy", "energy_note"] == "a CPU variant: NVML's counter measures the GPU"
    assert out.at["cublas_tf32", "energy_note"] == "not measured (energy_window_s: 0)"
    assert math.isnan(out.at["cublas_tf32", "gflop_per_joule"])
    # a shape the energy phase did not run (it runs at the reference size and the largest) says so
    bigger = rows_of(registry, "cublas", [2.0, 2.1], [False, False]).assign(M=128, N=128, K=128)
    out = results.with_energy(results.summary(pd.concat([rows, bigger]), registry), energy, registry, "n/a")
    at = out.set_index(["variant", "M"])
    assert at.at[("cublas", 128), "energy_note"] == results.NOT_IN_ENERGY_PHASE
    assert at.at[("cublas", 64), "energy_note"] == "" and at.at[("cublas_tf32", 64), "energy_note"] == "n/a"
    none = results.with_energy(summ, None, registry, "not measured (energy_window_s: 0)")
    assert set(none["energy_note"]) == {"a CPU variant: NVML's counter measures the GPU",
                                        "not measured (energy_window_s: 0)"}


def test_the_page_says_how_batches_were_taken_again_and_how_energy_was_measured(registry, tmp_path):
    from matmulstudy.report.committed import Study
    from matmulstudy.report.pages import _regime_rows
    rows = pd.concat([rows_of(registry, "cublas", [1.0, 1.0, 9.0, 9.0], [False, False, True, True]),
                      rows_of(registry, "cublas_tf32", [1.0, 1.1], [False, False]),
                      rows_of(registry, "numpy", [5.0, 5.1], [False, False])])
    energy = pd.DataFrame([{"variant": "cublas", "dtype": "float32", "M": 64, "N": 64, "K": 64, "seed": 0,
                            "sustained_gflops": 0.4, "mean_power_w": 400.0, "gflop_per_joule": 1.25,
                            "joules_per_launch": 4e-4, "energy_note": ""},
                           {"variant": "cublas_tf32", "dtype": "float32", "M": 64, "N": 64, "K": 64, "seed": 0,
                            "sustained_gflops": 0.1, "energy_note": "launch-bound: back to back a launch took"}])
    summ = results.with_energy(results.summary(rows, registry), energy, registry, "not measured")
    config = {"throttle_fraction": 0.9, "throttle_recovery_s": 0.1, "max_retakes": 20, "energy_window_s": 0.2}
    page = "\n".join(_regime_rows(Study(tmp_path, rows, summ, pd.DataFrame(), {}, registry, config, 64)))
    assert "| batches taken again | 2 samples in 1 batch of 1 measurement:" in page
    assert "below 0.9 of the highest" in page and "after 0.1 s (at most 20 a measurement" in page
    assert "| energy |" in page and "at least 0.2 s later" in page and "1 of 2 GPU measurements; n/a: launch-bound 1" in page
    assert "back to back on every shape" in page
    # a study whose energy phase ran at some shapes (the reference size and the largest): the page names them,
    # and counts only the measurements the phase ran
    bigger = rows_of(registry, "cublas", [2.0, 2.1], [False, False]).assign(M=128, N=128, K=128)
    summ = results.with_energy(results.summary(pd.concat([rows, bigger]), registry), energy, registry, "n/a")
    page = "\n".join(_regime_rows(Study(tmp_path, rows, summ, pd.DataFrame(), {}, registry, config, 64)))
    assert "back to back at 64x64x64, L2 warm" in page and "1 of 2 GPU measurements" in page
    old = Study(tmp_path, rows, results.summary(rows.drop(columns=["retaken", "retakes"]), registry),
                pd.DataFrame(), {}, registry, {}, 64)
    assert _regime_rows(old) == []   # a study measured before either: the page as it was


def test_a_measurement_whose_launch_is_long_takes_one_context_and_a_short_one_all():
    long, short = Pooled(3), Pooled(3)
    long.settle(0.2, 0.005)          # a 200 ms launch (a naive step at 8192)
    short.settle(0.00003, 0.005)     # 30 us
    assert (long.parts, short.parts) == (1, 3) and not long.done
    long.part = 1
    assert long.done
    short.part = 1
    short.settle(0.2, 0.005)         # decided before the first context only
    assert short.parts == 3 and not short.done
