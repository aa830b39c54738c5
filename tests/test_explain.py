"""What the summary page and the hardware figure say about each step's counters (no GPU needed)."""

import html
import math
import re
import warnings

import matplotlib
import pandas as pd
import pytest

from matmulstudy.report import explain, plots
from matmulstudy.study.counters import COUNTERS, with_derived
from matmulstudy.errors import StudyError
from matmulstudy.study.registry import Registry

from test_results import fixture_study


def _table(rows):
    base = {"gflops": 1.0, "speedup": math.nan, "slower": False, "shows": (), "source": "a source"}
    return pd.DataFrame([{**base, "step": f"step {i}", "variant": f"v{i}", **r} for i, r in enumerate(rows)])


def test_a_steps_counters_are_shown_before_and_after_and_a_wrong_way_is_flagged():
    table = _table([
        {"stall_barrier": 0.50, "l2_hit_pct": 80.0},
        {"speedup": 1.2, "stall_barrier": 0.30, "l2_hit_pct": 70.0,
         "shows": (("stall_barrier", "lower"), ("l2_hit_pct", "higher"))},
        {"speedup": 1.1, "shows": (("sm_balance", "higher"),)},
    ])
    first, second = explain.shown_changes(table)
    assert "barrier stall (ncu) 0.50 -> 0.30;" in first and "(**not" not in first.split(";")[0]
    assert "L2 hit rate % (ncu) 80.0 -> 70.0 (**not higher**)" in first
    assert first.startswith("**step 1** (a source; ×1.20 over step 0)")
    assert "not measured (ncu off)" in second   # no column: said, not left out
    page = explain.markdown(table, "Test GPU", 4096)
    assert "What each step changes, and the counters that show it" in page
    assert "| step | GFLOP/s | barrier | L2 hit % |" in page


def test_a_study_whose_steps_name_no_counters_gets_no_such_section():
    page = explain.markdown(_table([{}, {"speedup": 2.0}]), "Test GPU", 4096)
    assert "counters that show it" not in page


def test_barriers_and_instructions_per_fma_are_derived_from_the_sass_counts():
    hw = with_derived(pd.DataFrame({"bar": [1, 2, 0], "fma": [512, 1024, 0], "loop_instructions": [696, 1273, 9]}))
    assert hw["bar_per_kffma"].tolist()[:2] == pytest.approx([1000 / 512, 2000 / 1024])
    assert hw["instructions_per_fma"].tolist()[:2] == pytest.approx([696 / 512, 1273 / 1024])
    assert hw[["bar_per_kffma", "instructions_per_fma"]].iloc[2].isna().all()   # no FMA: no ratio


def test_a_slower_step_is_not_explained_by_a_change_below_the_printed_precision():
    table = _table([{"bank_conflicts_per_shared_ld": 0.0001},
                    {"speedup": 0.9, "slower": True, "bank_conflicts_per_shared_ld": 0.0004}])
    (note,) = explain.slower_steps(table)
    assert "none of the recorded counters moved against it" in note
    # a counter of another unit's arithmetic explains nothing: an FP32 step's idle tensor pipe, busy or idle
    idle = _table([{"tensor_pipe_pct": 0.9, "tensor_idle_cycles_per_tile": 100_278, "stall_barrier": 5.0},
                   {"speedup": 0.6, "slower": True, "tensor_pipe_pct": 0.6, "tensor_idle_cycles_per_tile": 108_652,
                    "stall_barrier": 18.0}])
    (note,) = explain.slower_steps(idle)
    assert "barrier stall (ncu) 5.00 -> 18.00" in note and "tensor" not in note
    (note,) = explain.slower_steps(idle, "tensor core")
    assert "tensor pipe busy % (ncu) 0.9 -> 0.6" in note
    within = _table([{}, {"speedup": 0.99, "slower": False}])   # a lower median within the two steps' spread
    assert explain.slower_steps(within) == []
    assert "No step runs slower than the one before." in explain.markdown(within, "Test GPU", 4096)


def _with_shows(registry, shows, vid="gpu_tiled"):
    entries = [dict(e, shows=shows) if e["id"] == vid else dict(e) for e in registry.raw["variants"]]
    return {**registry.raw, "variants": entries}


@pytest.mark.parametrize("shows, vid, message", [
    ({"stall_nope": "lower"}, "gpu_tiled", "shows names 'stall_nope', which is not a counter"),
    ({"stall_barrier": "down"}, "gpu_tiled", "'down' must be one of ['lower', 'higher']"),
    ({"stall_barrier": "lower"}, "cublas", "shows is {counter: lower or higher}, on a step"),
    ([], "gpu_tiled", "shows is {counter: lower or higher}, on a step"),
])
def test_a_bad_shows_entry_is_named(registry, shows, vid, message):
    with pytest.raises(StudyError, match=re.escape(message)):
        Registry.from_entries(_with_shows(registry, shows, vid))


def test_every_step_of_the_registry_names_counters_known_to_the_page(registry):
    for v in registry.values():
        assert all(c in COUNTERS for c, _ in v.shows), v.id
    assert all(v.shows for v in registry.steps("beyond")), "every step beyond the seeds says what shows it"


def test_the_hardware_figure_says_n_a_where_a_step_has_no_such_counter(tmp_path, registry):
    steps = [v.id for v in registry.steps() if v.is_gpu]
    hw = pd.DataFrame({"variant": steps, "dtype": "float32", "occupancy": 0.5,
                       "fma_per_lds": [math.nan] + [4.0] * (len(steps) - 1), "flop_per_byte": 1.0,
                       "stall_barrier": 0.25})
    plots.hardware(fixture_study(registry, tmp_path, hw), tmp_path / "hardware", registry.steps()[0].chapter)
    svg = (tmp_path / "hardware.svg").read_text()
    assert svg.count(" n/a") == 1 and "theoretical occupancy, %" in svg and "barrier stall" in svg


def test_the_timing_figure_uses_no_matplotlib_option_deprecated_for_removal(tmp_path, registry):
    with warnings.catch_warnings():
        warnings.simplefilter("error", matplotlib.MatplotlibDeprecationWarning)   # vert= is removed in 3.13
        plots.timing(fixture_study(registry, tmp_path), tmp_path / "timing", registry.steps()[0].chapter)
    svg = (tmp_path / "timing.svg").read_text()
    assert registry.steps()[0].title in svg   # the rows keep their titles, not the boxes' numbers


def test_a_step_above_the_roof_by_the_seeds_model_is_explained_on_the_roofline(tmp_path, registry):
    study = fixture_study(registry, tmp_path)
    study.gpu = {**study.gpu, "copy_bandwidth_gbs": 100.0}   # a roof low enough for the naive step to pass it
    plots.roofline(study, tmp_path / "roofline", registry["gpu_naive"].chapter)
    svg = (tmp_path / "roofline.svg").read_text()
    assert "Above the roof by the seed's model" in svg and registry["gpu_naive"].title in svg


def test_the_timing_figure_names_its_dots_only_where_there_are_two_kinds_and_says_why_timing_stopped(tmp_path,
                                                                                                     registry):
    """Issue 26: the legend floated above the title, named throttled samples in a CPU-only study, and 'stopped:
    noise' said nothing to a newcomer."""
    first = registry.steps()[0]

    def texts(study, name):   # the SVG's texts, each as drawn
        plots.timing(study, tmp_path / name, first.chapter)
        svg = (tmp_path / f"{name}.svg").read_text()
        return [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]
    study = fixture_study(registry, tmp_path)
    study.results["throttled"], study.results["retaken"] = False, False
    plain = texts(study, "plain")
    assert any("stopped: noise under target" in t for t in plain) and not any("stopped: noise," in t for t in plain)
    assert "timed sample" not in plain and not any("throttled" in t for t in plain)   # one kind of dot: no legend
    at = study.results.index[(study.results["M"] == study.size) & (study.results["N"] == study.size)
                             & (study.results["variant"] == first.id)]
    study.results.loc[at[:3], "retaken"] = True   # a throttled batch, taken again, at the figure's size
    mixed = texts(study, "mixed")
    assert "timed sample" in mixed and "taken again (a throttled batch: not counted)" in mixed


def test_theoretical_occupancy_is_written_as_precisely_as_the_achieved_one_beside_it():
    """Issue 26: step 24's theoretical occupancy read '12%' beside an achieved '12.5'."""
    page = explain.markdown(_table([{"occupancy": 0.5, "achieved_occupancy_pct": 48.1},
                                    {"speedup": 2.0, "occupancy": 0.125, "achieved_occupancy_pct": 12.5}]),
                            "Test GPU", 4096)
    assert "| 50.0% | 48.1 |" in page and "| 12.5% | 12.5 |" in page


@pytest.mark.parametrize("entry, message", [
    ({"shows": {"sm_balance": "higher"}, "shown_at": 0}, "shown_at is a size n >= 1"),
    ({"shows": {"sm_balance": "higher"}, "shown_at": "1024"}, "shown_at is a size n >= 1"),
    ({"shown_at": 1024}, "on an entry without shows"),
])
def test_a_bad_shown_at_is_named(registry, entry, message):
    entries = [dict(e, **entry) if e["id"] == "gpu_tiled" else dict(e) for e in registry.raw["variants"]]
    with pytest.raises(StudyError, match=re.escape(message)):
        Registry.from_entries({**registry.raw, "variants": entries})


def test_a_step_meant_for_small_problems_is_explained_by_its_counters_and_the_step_befores_at_its_size(registry):
    """A step's counters at its own size (its shown_at, in counters_at.csv), not the study's ncu_size: the
    summary's sentence and the table's values come from there, the step before's too; a study without them says
    not measured."""
    step = next(v for v in registry.steps() if v.shown_at)
    before = registry.step_before(step.id)
    n = step.shown_at
    at = pd.DataFrame({"variant": [before.id, step.id, before.id], "ncu_shape": [f"{n}x{n}x{n}"] * 2 + ["4096x4096x4096"],
                       "sm_balance": [0.25, 0.97, 0.99], "tensor_pipe_pct": [20.0, 60.0, 90.0]})
    values = explain.shown_at_values(registry, at, step.id)
    assert values["sm_balance"] == (0.25, 0.97) and set(values) == {c for c, _ in step.shows}
    table = _table([{"sm_balance": 0.99}, {"speedup": 0.7, "sm_balance": 0.98, "shows": step.shows,
                                           "shown_at": f"{n}x{n}x{n}", "at_values": values}])
    (note,) = explain.shown_changes(table)
    assert f"SM balance: mean SM's active cycles over the busiest's (ncu) at {n}x{n}x{n} 0.250 -> 0.970" in note
    assert "**not" not in note
    assert explain.shown_at_values(registry, None, step.id) == {c: (None, None) for c, _ in step.shows}
    (unmeasured,) = explain.shown_changes(_table([{}, {"shows": step.shows, "shown_at": f"{n}x{n}x{n}",
                                                        "at_values": explain.shown_at_values(registry, None, step.id)}]))
    assert "not measured" in unmeasured
    assert explain.shown_at_values(registry, at, before.id) is None   # a step without shown_at: ncu_size's


def test_a_counter_the_same_at_every_size_is_read_where_every_steps_is(registry):
    """A SASS counter named beside an Nsight Compute one by a step with `shown_at` (step 23's FFMA per LDS): not
    looked for in counters_at.csv, which holds Nsight Compute's counters only (the first study with it printed
    "not measured"), but taken from the study's tables, as for every step; the ncu counter from counters_at."""
    raw = registry.raw
    step = "gpu_async_tall_tiles"
    entries = [dict(e, shows={"fma_per_lds": "higher", "fma_pipe_pct": "higher"}) if e["id"] == step else dict(e)
               for e in raw["variants"]]
    reg = Registry.from_entries({**raw, "variants": entries})
    before = reg.step_before(step)
    at = pd.DataFrame({"variant": [before.id, step], "ncu_shape": ["1024x1024x1024"] * 2,
                       "fma_pipe_pct": [54.3, 62.5], "fma_per_lds": [99.0, 1.0]})   # never read from here
    values = explain.shown_at_values(reg, at, step)
    assert values == {"fma_pipe_pct": (54.3, 62.5)}
    table = _table([{"fma_per_lds": 10.67}, {"speedup": 1.1, "fma_per_lds": 16.0, "shows": reg[step].shows,
                                             "shown_at": "1024x1024x1024", "at_values": values}])
    (note,) = explain.shown_changes(table)
    assert "FFMA per LDS (SASS main loop) 10.67 -> 16.00" in note
    assert "FMA pipe busy % (ncu) at 1024x1024x1024 54.3 -> 62.5" in note and "**not" not in note

