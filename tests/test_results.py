"""Collecting, summarising and plotting a results table (no GPU needed)."""

import re

import numpy as np
import pandas as pd
import pytest

from matmulstudy.report import plots, results
from matmulstudy.report.results import at_size, slower_beyond_spread
from matmulstudy.errors import StudyError
from matmulstudy.study.registry import Registry
from matmulstudy.report.committed import Study
from matmulstudy.precisions import PRECISIONS

GPU = {"gpu_name": "Test GPU", "fp32_peak_gflops": 60000.0, "sm_count": 100, "max_sm_clock_mhz": 2441.40625,
       "tf32_flop_per_clock_per_sm": 2048, "tf32_peak_gflops": 500000.0}


def fixture_rows(registry, sizes=(256, 1024, 4096), shapes=((1537, 3001, 997),), fail=("gpu_tiled", 1024)):
    """A small results table of the collected form, with one failed measurement."""
    speed = {"cpu_naive": 1, "numpy": 500, "cublas": 45000, "gpu_tiled_coalesced": 2000}
    rng = np.random.default_rng(0)
    rows = []
    for vid, v in registry.items():
        speed.setdefault(vid, 3000 + 1000 * v.order)
        for shape in [(n, n, n) for n in sizes] + list(shapes):
            if not v.runs_on(shape):
                continue
            flop = 2 * np.prod(shape, dtype=float)
            ok = (vid, shape[0]) != fail
            for s in range(5 if ok else 1):
                t = flop / (speed[vid] * 1e9) * 1e3 * (1 + 0.02 * rng.standard_normal()) if ok else np.nan
                rows.append({"variant": vid, "dtype": "float32", "title": v.title,
                             "M": shape[0], "N": shape[1], "K": shape[2],
                             "seed": 0, "sample": s, "time_ms": t, "gflops": flop / (t * 1e-3) / 1e9,
                             "verified": ok, "backend": v.backend, "max_error": 1e-7 if ok else np.nan,
                             "tolerance": 1e-5, "bad_elements": 0 if ok else 12, "unwritten_elements": 0,
                             "device": "Test GPU" if v.is_gpu else "Test CPU", "precision": v.precision.id})
                if v.is_gpu and ok:   # NVML: the third sample of each ran at a lowered clock
                    rows[-1].update(sm_clock_mhz=1700.0 if s == 2 else 1980.0, throttled=s == 2,
                                    noise=0.004, stop_reason="noise", check="full")
    return pd.DataFrame(rows)


def test_summary_uses_median_and_iqr_of_verified_samples(registry):
    df = fixture_rows(registry)
    s = results.summary(df, registry)
    row = s[(s.variant == "cublas") & (s.M == 4096)].iloc[0]
    ok = df[(df.variant == "cublas") & (df.M == 4096)]
    assert row.median_gflops == pytest.approx(ok.gflops.median())
    assert row.q1_gflops == pytest.approx(ok.gflops.quantile(0.25))
    failed = s[(s.variant == "gpu_tiled") & (s.M == 1024)].iloc[0]
    assert list(s.columns[:6]) == ["dtype", "variant", "title", "M", "N", "K"]
    assert not failed.verified and failed.samples == 0 and np.isnan(failed.median_gflops)


def test_summary_counts_throttled_samples_and_gives_fractions(registry):
    s = results.summary(fixture_rows(registry), registry, GPU).set_index(["variant", "M"])
    tiled = s.loc[("gpu_tiled", 4096)]
    assert tiled.throttled_samples == 1 and tiled.clock_unknown_samples == 0 and tiled.min_sm_clock_mhz == 1700
    assert tiled.stop_reason == "noise" and tiled.noise == 0.004
    assert tiled.frac_of_cublas == pytest.approx(tiled.median_gflops / s.loc[("cublas", 4096)].median_gflops)
    assert tiled.frac_of_fp32_peak == pytest.approx(tiled.median_gflops / GPU["fp32_peak_gflops"])
    assert s.loc[("cublas", 4096)].frac_of_cublas == pytest.approx(1.0)
    tf32 = s.loc[("cublas_tf32", 4096)]
    assert tf32.precision == "tf32" and np.isnan(tf32.frac_of_fp32_peak)   # another precision's peak
    assert np.isnan(s.loc[("numpy", 4096)].throttled_samples)               # CPU: no clocks recorded


def test_ncu_time_is_set_beside_the_median(registry):
    summ = results.summary(fixture_rows(registry), registry, GPU)
    med = summ[(summ.variant == "gpu_naive") & (summ.M == 4096)].median_ms.iloc[0]
    hw = pd.DataFrame([{"variant": "gpu_naive", "dtype": "float32", "ncu_shape": "4096x4096x4096",
                        "ncu_time_ns": med * 1.02e6}])
    out = results.ncu_agreement(hw, summ)
    assert out.ncu_vs_median.iloc[0] == pytest.approx(0.02)


def test_failures_are_listed(registry):
    lines = results.failures(fixture_rows(registry))
    assert lines == ["gpu_tiled float32 1024x1024x1024 seed 0: 12 wrong element(s), 0 never written, "
                     "max error nan > 1e-05"]


def test_a_finished_study_ends_on_its_verdict_not_on_a_pandas_warning(tmp_path, monkeypatch):
    """A study's last lines (pipeline/ending.py) read its samples: read in chunks, the committed H100 table's
    mixed columns gave pandas' DtypeWarning as the study's last words before its verdict."""
    import shutil
    import types
    import warnings
    from pathlib import Path
    from matmulstudy.pipeline import ending
    study = Path(__file__).resolve().parents[1] / "reports" / "h100"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "reports" / "probe").mkdir(parents=True)
    for name in ("samples.csv.gz", "measured_with.csv"):
        shutil.copy(study / name, tmp_path / "reports" / "probe" / name)
    said = []
    monkeypatch.setattr("atexit.register", lambda *args, **kwargs: said.append(args))
    with warnings.catch_warnings():
        warnings.simplefilter("error", pd.errors.DtypeWarning)
        probe = types.SimpleNamespace(run=types.SimpleNamespace(label="probe"), resource_reports=lambda label: [])
        ending.end_of_success(probe)
    assert said and said[-1][1] == "Every result verified; tables and figures in reports/probe/"


def test_a_run_that_measured_nothing_does_not_speak_for_the_study(tmp_path, monkeypatch):
    """`snakemake build` (or a finished study run again) writes no table: its last line must not be the verdict
    of the study found in reports/, which it did not measure."""
    import os
    import types
    from matmulstudy.pipeline import ending
    monkeypatch.chdir(tmp_path)
    table = tmp_path / "reports" / "probe" / "samples.csv.gz"
    table.parent.mkdir(parents=True)
    table.write_bytes(b"")
    os.utime(table, (1000.0, 1000.0))
    said = []
    monkeypatch.setattr("atexit.register", lambda *args, **kwargs: said.append(args))
    run = types.SimpleNamespace(run=types.SimpleNamespace(label="probe"), resource_reports=lambda label: [])
    ending.end_of_success(run, since=2000.0)
    assert said[-1][1] == "Nothing measured in this run: the tables in reports/probe/ are those of an earlier run"
    table.unlink()
    ending.end_of_success(run, since=2000.0)
    assert said[-1][1] == "Nothing measured in this run"


def test_collect_refuses_results_from_two_gpus(tmp_path, registry):
    df = fixture_rows(registry).drop(columns="title")
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    df[df.variant == "gpu_naive"].to_csv(a, index=False)
    other = df[df.variant == "cublas"].copy()
    other["device"] = "Another GPU"
    other.to_csv(b, index=False)
    with pytest.raises(StudyError, match="different GPUs"):
        results.collect([a, b], None, registry)
    merged = results.collect([a], None, registry)
    assert (merged["gpu"] == "Test GPU").all() and "title" in merged


def fixture_study(registry, folder, hardware=None) -> Study:
    df = fixture_rows(registry)
    hw = hardware if hardware is not None else pd.DataFrame(columns=["variant", "dtype"])
    return Study(folder, df, results.summary(df, registry, GPU), hw, GPU, registry, {}, 4096)


def test_report_renders_from_a_results_fixture(tmp_path, registry):
    study = fixture_study(registry, tmp_path)
    seeds = registry["gpu_tiled"].chapter   # the chapter of the fixture's failed measurement
    paths = plots.size_sweep(study, tmp_path / "size_sweep", seeds)
    paths += plots.progression(study, tmp_path / "progression")
    paths += plots.chapter_progression(study, tmp_path / "progression_tf32", PRECISIONS["tf32"])
    for p in paths:
        assert p.stat().st_size > 5000
    svg = (tmp_path / "progression.svg").read_text()
    for v in registry.values():   # the FP32 steps as bars, the FP32 reference as a line
        assert (v.title in svg) == ((v.is_step and v.precision.id == "fp32") or v == registry.reference(PRECISIONS["fp32"])), v.id
    assert f"{registry.reference().title}: " in svg and "FP32 peak" in svg
    tf32 = (tmp_path / "progression_tf32.svg").read_text()   # the tensor cores' chapter against cuBLAS TF32
    for v in registry.values():
        assert (v.title in tf32) == ((v.is_step and v.precision.id == "tf32") or v == registry.reference(PRECISIONS["tf32"])), v.id
    assert "FP32 peak" not in tf32 and "TF32 tensor-core arithmetic" in tf32
    assert "TF32 dense peak: 500,000 (100 SMs × 2048 flop/clock × 2441 MHz)" in tf32
    assert re.search(r"×0\.3\d slower", svg)   # step 3 of the fixture runs at a third of step 2
    assert len(re.findall(r"×\d\.\d\d slower", svg)) == 1
    assert "verification failed" in (tmp_path / "size_sweep.svg").read_text()


def test_the_size_sweep_draws_a_figure_per_chapter(tmp_path, registry, monkeypatch):
    """A figure per chapter (its steps, with the baselines and its references for scale), the square sizes above
    at least 3 inches tall: in one panel the registry's 36 variants shared about 20 colours. No two variants
    share both colour and marker (a chapter of 14 steps took hues that repeated), and the other shapes give each
    variant a row of its own, labelled in course order (19 variants' points, 0.6 of a row apart, fell on each
    other)."""
    import matplotlib.pyplot as plt
    from matmulstudy.report.plots import samples
    seen = []

    def keep(fig, stem):
        square, other = fig.axes
        seen.append({"height": square.get_position().height * fig.get_figheight(), "title": square.get_title(),
                     "rows": [t.get_text() for t in other.get_yticklabels()],
                     "legend": [t.get_text() for t in other.get_legend().get_texts()],
                     "lines": {(line.get_color(), line.get_marker()) for line in square.get_lines()
                               if line.get_marker() not in (None, "None", "")},
                     "drawn": len(square.get_legend_handles_labels()[1])})
        plt.close(fig)
        return []
    monkeypatch.setattr(samples, "save", keep)
    study = fixture_study(registry, tmp_path)
    chapters = list(registry.chapters.values())
    for chapter in chapters:
        plots.size_sweep(study, tmp_path / "size_sweep", chapter.id)
    assert len(seen) == len(chapters) and min(s["height"] for s in seen) >= 3.0, [s["height"] for s in seen]
    assert all(s["title"].startswith(f"{c.title}, float32") for s, c in zip(seen, chapters))
    shapes = {f"{m}×{n}×{k}" for m, n, k in zip(study.results.M, study.results.N, study.results.K)
              if not m == n == k}
    for chapter, s in zip(chapters, seen):
        shown = set(registry[v].title for v in study.chapter_rows(study.summary, chapter.id, context=True)["variant"])
        assert set(s["rows"]) == shown                                                   # every variant a row
        assert s["rows"] == [registry[v].title for v in sorted(registry, key=registry.course.get)
                             if registry[v].title in shown]                              # in course order
        assert {t for t in s["legend"] if not t.startswith("failed")} == shapes
        assert len(s["lines"]) >= s["drawn"] - s["legend"].count("failed (failures.txt says why)")   # apart
    assert "failed (failures.txt says why)" in seen[0]["legend"]   # the fixture's failed measurement


def test_the_progression_is_no_strip_at_the_readmes_width(tmp_path, registry, monkeypatch):
    """Issue 26: the FP32 progression (20 steps) was 4.7 times as wide as high, 190 pixels high in the README;
    issue 77: at 23 inches wide its words were 5 pixels high there. Its bars lie across the page now: the figure
    is no wider than a page shows unscaled-ish (10 inches), and taller than wide for 20 steps."""
    import importlib
    import matplotlib.pyplot as plt
    progression = importlib.import_module("matmulstudy.report.plots.progression")   # the module, not its function
    sizes = []

    def keep(fig, stem, png=False):
        sizes.append((fig.get_figwidth(), fig.get_figheight(), png))
        plt.close(fig)
        return []
    monkeypatch.setattr(progression, "save", keep)
    plots.progression(fixture_study(registry, tmp_path), tmp_path / "progression")
    (width, height, png), = sizes
    assert len(registry.steps(precision=PRECISIONS["fp32"])) >= 20 and width <= 10 and height >= width, (width, height)
    assert png   # the README's hero: a PNG too


def test_steps_of_several_chapters_are_drawn_in_their_chapters(tmp_path, registry):
    """A second chapter: its steps get the next palette, and the progression a divider and the titles."""
    raw = {**registry.raw, "chapters": registry.raw["chapters"] + [{"id": "later", "title": "a later chapter"}]}
    entries = [dict(e) for e in registry.raw["variants"]]
    fp32 = {c.id for c in registry.chapters.values() if c.precision.id == "fp32"}   # "later" computes in FP32
    steps = [e for e in entries
             if e.get("role", "step") == "step" and e["backend"] == "cuda" and e["chapter"] in fp32]
    for e in steps[len(steps) // 2:]:
        e["chapter"] = "later"
    two = Registry.from_entries({**raw, "variants": entries}, check_files=False)   # drawn, not built
    colours = plots.palette(two)
    first, later = two.steps(two.steps()[0].chapter), two.steps("later")
    assert colours[first[0].title] != colours[later[0].title]
    plots.progression(fixture_study(two, tmp_path), tmp_path / "progression")
    svg = (tmp_path / "progression.svg").read_text()
    assert "a later chapter" in svg and two.chapters[first[0].chapter].title in svg


def test_palette_scales_to_any_number_of_steps(registry):
    first = registry.steps()[0]
    entries = [dict(registry.raw_entry(first.id), id=f"step_{i}", title=f"step {i}", kernel=first.kernel)
               for i in range(40)]
    many = Registry.from_entries({**registry.raw, "variants": entries})
    colours = plots.palette(many)
    assert len(set(colours.values())) == 40


def test_a_chapters_variants_that_come_close_in_colour_differ_in_marker(registry):
    """The size sweep draws a chapter's steps with the baselines and references: where two of them have colours
    that come close (a chapter of more steps than its palette has colours takes evenly spaced hues, and 14 of
    them put pinks beside pinks), their markers differ."""
    import matplotlib.colors
    colours, marks = plots.palette(registry), plots.markers(registry)
    context = [v.title for v in registry.values() if not v.is_step]
    pairs = 0
    for chapter in registry.chapters:
        shown = [v.title for v in registry.steps(chapter)] + context
        rgb = {t: np.array(matplotlib.colors.to_rgb(colours[t])) for t in shown}
        close = [(a, b) for i, a in enumerate(shown) for b in shown[i + 1:]
                 if np.abs(rgb[a] - rgb[b]).max() < 0.25]
        pairs += len(close)
        assert all(marks[a] != marks[b] for a, b in close), [(a, b) for a, b in close if marks[a] == marks[b]]
    assert pairs   # the test means something: the real registry has such pairs


def test_the_page_sets_one_technique_in_several_precisions_side_by_side(tmp_path, registry):
    """A row per technique that steps of two precisions apply (the registry's `technique`), each cell the step
    and its rate against its own precision's cuBLAS; a study whose registry names no technique has no table."""
    from matmulstudy.report import pages
    study = fixture_study(registry, tmp_path)
    lines = pages.technique_table(study)
    shared = {}
    for v in registry.steps():
        if v.technique:
            shared.setdefault(v.technique, set()).add(v.precision)
    techniques = [t for t, ps in shared.items() if len(ps) > 1]
    assert lines[0] == "## One technique, several precisions" and len(techniques) >= 6
    rows = [line for line in lines if line.startswith("| ") and not line.startswith(("| technique", "| ---"))]
    assert [row.split(" | ")[0][2:] for row in rows] == sorted(techniques, key=lambda t: min(
        registry.course[v.id] for v in registry.steps() if v.technique == t))
    persistent = [v for v in registry.steps() if v.technique == "persistent tiles, C by TMA"]
    row = next(r for r in rows if r.startswith("| persistent tiles, C by TMA |"))
    at = study.summary[(study.summary.M == study.size) & (study.summary.N == study.size)
                       & (study.summary.K == study.size)].set_index("variant")["frac_of_cublas"]
    for v in persistent:
        number = v.title.split()[0]
        assert (f"{number}: {at[v.id]:.1%}" if v.id in at and at[v.id] == at[v.id] else number) in row
    bare = Registry.from_entries({**registry.raw, "variants": [
        {k: x for k, x in registry.raw_entry(v).items() if k != "technique"} for v in registry]})
    assert pages.technique_table(fixture_study(bare, tmp_path)) == []


def test_hardware_figure_renders_with_and_without_ncu(tmp_path, registry):
    rows = [{"variant": v.id, "dtype": "float32", "fma_per_lds": 1.0 + v.order, "occupancy": 0.5,
             "flop_per_byte": v.flop_per_byte, "global_ld_sectors_per_request": 4.0,
             "bank_conflicts_per_shared_ld": 0.1, "achieved_occupancy_pct": 40.0, "dram_throughput_pct": 10.0}
            for v in registry.steps()]
    hw = pd.DataFrame(rows)
    first = registry.steps()[0].chapter
    paths = plots.hardware(fixture_study(registry, tmp_path, hw), tmp_path / "hw", first)
    assert "global-load sectors" in (tmp_path / "hw.svg").read_text()
    bare = hw.drop(columns=["global_ld_sectors_per_request", "bank_conflicts_per_shared_ld",
                            "achieved_occupancy_pct", "dram_throughput_pct"])
    paths += plots.hardware(fixture_study(registry, tmp_path, bare), tmp_path / "hw_bare", first)
    assert "global-load sectors" not in (tmp_path / "hw_bare.svg").read_text()
    for p in paths:
        assert p.stat().st_size > 5000


def test_collect_refuses_results_from_two_commits_or_two_gpus_of_one_model(tmp_path, registry):
    df = fixture_rows(registry).drop(columns="title")
    df["git_commit"], df["gpu_uuid"] = "aaa", "GPU-1"
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    df[df.variant == "gpu_naive"].to_csv(a, index=False)
    later = df[df.variant == "cublas"].copy()
    later["git_commit"] = "bbb"
    later.to_csv(b, index=False)
    with pytest.raises(StudyError, match=r"different commits: (aaa|bbb) \(\d+ samples\), (aaa|bbb)"):
        results.collect([a, b], None, registry)
    later["git_commit"], later["gpu_uuid"] = "aaa", "GPU-2"   # same model name, another card
    later.to_csv(b, index=False)
    with pytest.raises(StudyError, match="different GPUs"):
        results.collect([a, b], None, registry)


def test_two_studies_are_compared_measurement_by_measurement(registry):
    from matmulstudy.tools.compare import agreement
    first = results.summary(fixture_rows(registry), registry, GPU)
    second = first.copy()
    second["median_ms"] *= 1.01
    out = agreement(first, second)
    assert len(out) == first["verified"].sum()
    assert np.allclose(out["difference"], 0.01)


def test_two_studies_whose_samples_overlap_are_told_from_two_that_drifted_apart(registry):
    """A median that moved while both studies sampled the same spread (a kernel with two clusters of times)
    against one whose every sample moved."""
    from matmulstudy.tools.compare import agreement
    rows = fixture_rows(registry)
    first, second = rows.copy(), rows.copy()
    second["time_ms"] *= 1.5   # every sample slower: the ranges cannot overlap
    clustered = (first["variant"] == "cublas") & (first["sample"] == 0)
    second.loc[clustered, "time_ms"] = first.loc[clustered, "time_ms"]   # one sample of each in the old cluster
    out = agreement(results.summary(first, registry, GPU), results.summary(second, registry, GPU), first, second)
    assert out.loc[out.variant == "cublas", "ranges_overlap"].all()
    assert not out.loc[out.variant != "cublas", "ranges_overlap"].any()
    assert (out["fastest_ms_first"] <= out["median_ms_first"]).all()
    assert (out["slowest_ms_second"] >= out["median_ms_second"]).all()


def test_each_step_is_a_fraction_of_cublas_in_its_own_precision(registry):
    """A TF32 step against cuBLAS TF32, an FP32 step against cuBLAS FP32: never a TF32 step as a multiple
    of FP32's cuBLAS."""
    s = results.summary(fixture_rows(registry), registry, GPU)
    at = s[(s.M == 4096) & s.verified].set_index("variant")["median_gflops"]
    frac = s[(s.M == 4096) & s.verified].set_index("variant")["frac_of_cublas"]
    for v in registry.steps():
        reference = registry.reference(v.precision)
        assert frac[v.id] == pytest.approx(at[v.id] / at[reference.id]), v.id
    assert frac[registry.reference(PRECISIONS["tf32"]).id] == pytest.approx(1.0)
    assert any(v.precision.id == "tf32" for v in registry.steps())   # the registry has a TF32 chapter to check


def test_a_step_skipped_on_this_gpu_is_named_with_its_reason(tmp_path, registry):
    """skipped.csv (collect_results: what the GPU cannot run) on the page and in the TF32 figure's note."""
    from matmulstudy.report import pages
    tf32 = [v for v in registry.steps() if v.precision.id == "tf32"]
    reason = "needs sm_80 or newer; this study builds for sm_75"
    pd.DataFrame([{"variant": v.id, "title": v.title, "reason": reason} for v in tf32]).to_csv(
        tmp_path / "skipped.csv", index=False)
    rows = fixture_rows(registry)
    rows = rows[~rows["variant"].isin([v.id for v in tf32])]
    study = Study(tmp_path, rows, results.summary(rows, registry, GPU), pd.DataFrame(columns=["variant", "dtype"]),
                  GPU, registry, {}, 4096)
    page = pages.study_page(study)
    section = page.split("## Skipped on this GPU")[1].split("##")[0]
    assert all(f"{v.title} (`{v.id}`): {reason}" in section for v in tf32)
    plots.chapter_progression(study, tmp_path / "tf32", PRECISIONS["tf32"])
    assert "skipped on this GPU" in (tmp_path / "tf32.svg").read_text()


def test_the_power_figure_draws_each_gpu_variants_sustained_run_under_the_power_limit(tmp_path, registry):
    """Each GPU variant's sustained run at the progression's size: its speed against its power, the limit drawn;
    a launch-bound one is left out and counted; a study without energy says so."""
    study = fixture_study(registry, tmp_path)
    gpu_rows = study.summary["variant"].map(lambda v: registry[v].is_gpu) & study.summary["verified"]
    s = study.summary.assign(sustained_gflops=study.summary["median_gflops"].where(gpu_rows) * 0.9,
                             mean_power_w=np.where(gpu_rows, 650.0, np.nan), energy_note="")
    s.loc[(s["variant"] == "cublas") & (s["M"] == 4096), "mean_power_w"] = np.nan   # as if launch-bound
    s["gflop_per_joule"] = s["sustained_gflops"] / s["mean_power_w"]
    drawn = Study(tmp_path, study.results, s, study.hardware, {**GPU, "power_limit_w": 700.0}, registry, {}, 4096)
    first = registry.steps()[0].chapter   # a chapter of FP32 steps, with cuBLAS FP32 beside them
    plots.power(drawn, tmp_path / "power", first)
    svg = (tmp_path / "power.svg").read_text()
    assert "power limit 700 W" in svg and "(1 launch-bound: no energy)" in svg and "GFLOP/J" in svg
    steps = drawn.chapter_rows(at_size(s, 4096, verified=True), first, context=True)
    shown = steps[steps["mean_power_w"].notna()]
    assert len(shown) > 1 and all(registry[v].title in svg for v in shown["variant"])
    plots.power(study, tmp_path / "none", first)
    assert "measured before the energy phase" in (tmp_path / "none.svg").read_text()


def test_a_step_is_slower_only_beyond_both_steps_spread():
    """Issue 26: step 27 at 362,506 against 362,628 GFLOP/s, 0.38% noise, was listed as slower (×1.00)."""
    before = pd.Series([362_000.0, 362_400, 362_628, 362_900, 363_300])
    within = pd.Series([361_900.0, 362_300, 362_506, 362_700, 363_100])   # its quartiles overlap the other's
    below = pd.Series([355_000.0, 355_500, 356_000, 356_500, 357_000])    # its upper quartile under the other's lower
    assert not slower_beyond_spread(within, before)
    assert slower_beyond_spread(below, before)
    assert not slower_beyond_spread(before, below)
