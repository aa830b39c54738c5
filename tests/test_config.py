"""The config is checked before any job, with one-line messages."""

import copy
import re
import shutil

import pytest

from matmulstudy.study.plan import bench_jobs, full_check, measurements
from matmulstudy.study.registry import Registry
from matmulstudy.study.settings import read_config_file, validate
from matmulstudy.study.shapes import Shape
from matmulstudy.errors import StudyError
from matmulstudy.gpu.host import check_arch


def test_default_config_is_valid(default_config, registry):
    settings = validate(default_config, registry)
    assert settings.variants == tuple(registry)
    sizes = [s.M for s in settings.sweep() if s.is_square]
    assert min(sizes) == 256 and max(sizes) == 8192
    assert any(not s.is_square for s in settings.sweep())


def test_settings_are_frozen_and_hash_equal_however_given(default_config, registry):
    """The same settings from the YAML file and from command-line strings hash equal."""
    import dataclasses
    from_file = validate(default_config, registry)
    from_command_line = validate(dict(default_config, sizes=[str(n) for n in default_config["sizes"]],
                                      ncu=str(default_config["ncu"]).lower(), tolerance=str(default_config["tolerance"]),
                                      variants=list(registry)), registry)
    assert from_file == from_command_line and from_file.hash == from_command_line.hash
    assert len(from_file.hash) == 12
    assert validate(dict(default_config, seeds=[1]), registry).hash != from_file.hash
    with pytest.raises(dataclasses.FrozenInstanceError):
        from_file.label = "other"
    assert validate(from_file.as_config(), registry) == from_file   # what the snapshot keeps gives them back


@pytest.mark.parametrize("key, value, expected", [
    ("sizez", [1], "unknown key 'sizez'; allowed keys:"),
    ("sizes", [256, "big"], "sizes[1] = 'big' is not allowed; expected a list of distinct integers >= 1"),
    ("sizes", [0], "sizes[0] = 0 is not allowed"),
    ("shapes", [[1, 2]], "shapes[0] = [1, 2] is not allowed; expected a list of [M, N, K] triples"),
    ("arch", "hopper", "arch = 'hopper' is not allowed; expected 'auto' (read from the GPU) or an nvcc target"),
    ("tolerance", -1, "tolerance = -1 is not allowed; expected a number > 0"),
    ("seeds", [], "seeds = [] is not allowed"),
    ("variants", ["xyz"], "variants contains unknown variant 'xyz'; none of its"),
    ("variants", ["xyz"], "ids is close (kernels/registry.yaml lists them)"),
    ("variants", ["gpu_wgmma_bf16_queud"], "variants contains unknown variant 'gpu_wgmma_bf16_queud'; did you mean "
                                           "'gpu_wgmma_bf16_queued'"),
    ("reference_size", 4000, "reference_size = 4000 is not allowed; expected one of sizes"),
    ("sizes", [4096, 65536], "shape 65536x65536x65536 is too large"),
    ("cache", "warm", "cache = 'warm' is not allowed; expected cold (L2 flushed before every timed launch) or hot"),
    ("max_noise", 0, "max_noise = 0 is not allowed; expected a number > 0"),
    ("max_samples", 5, "max_samples = 5 is not allowed; expected at least min_samples (10)"),
    ("min_time_s", -0.1, "min_time_s = -0.1 is not allowed; expected seconds >= 0"),
    ("placements", 0, "placements = 0 is not allowed; expected an integer >= 1"),
    ("contexts", 0, "contexts = 0 is not allowed; expected an integer >= 1"),
    ("contexts_below_ms", 0, "contexts_below_ms = 0 is not allowed; expected a number > 0"),
    ("throttle_fraction", 1.5, "throttle_fraction = 1.5 is not allowed; expected a number in (0, 1]"),
    ("freivalds_vectors", 0, "freivalds_vectors = 0 is not allowed; expected an integer >= 1"),
])
def test_bad_config_names_key_value_and_what_is_allowed(default_config, registry, key, value, expected):
    cfg = copy.deepcopy(default_config)
    cfg[key] = value
    with pytest.raises(StudyError) as err:
        validate(cfg, registry)
    message = str(err.value)
    assert expected in message
    assert "\n" not in message


def test_missing_key_is_named(default_config, registry):
    cfg = copy.deepcopy(default_config)
    del cfg["min_samples"]
    with pytest.raises(StudyError, match="missing key 'min_samples'"):
        validate(cfg, registry)


def test_variants_follow_registry_order(default_config, registry):
    last, first = list(registry)[-1], list(registry)[0]
    cfg = dict(default_config, variants=[last, first])
    assert validate(cfg, registry).variants == (first, last)


def test_a_size_cap_from_the_registry_holds_a_variant_below_it(default_config, registry):
    settings = validate(default_config, registry)
    for v in registry.values():
        measured = {s for u, s, _, d in measurements(settings, registry) if u.id == v.id and d == "float32"}
        assert measured == {s for s in settings.sweep() if v.max_size is None or max(s) <= v.max_size}, v.id
    assert any(v.max_size for v in registry.values())   # the CPU triple loop has one


def test_one_bench_job_per_variant_dtype_and_seed_covers_its_shapes(default_config, registry):
    settings = validate(default_config, registry)
    jobs = bench_jobs(settings, registry)
    assert len(jobs) == len({(v.id, d, seed) for v, _, seed, d in measurements(settings, registry)})
    assert sum(len(shapes_) for *_, shapes_ in jobs) == len(measurements(settings, registry))
    uncapped = [s for v, d, _, s in jobs if v.max_size is None][0]
    assert uncapped == settings.sweep()   # smallest first


def test_full_check_up_to_the_configured_work(default_config, registry):
    check = validate(dict(default_config, full_check_max_size=4096), registry).checking
    assert full_check(Shape(4096, 4096, 4096), check) and full_check(Shape(1537, 3001, 997), check)
    assert not full_check(Shape(8192, 8192, 8192), check) and not full_check(Shape(4096, 1024, 8192 * 4 + 1), check)
    every = validate(default_config, registry).checking
    assert every.full_check_max_size is None and full_check(Shape(8192, 8192, 8192), every)


def test_shape_tags_round_trip():
    assert Shape.parse("17x33x65") == Shape(17, 33, 65)
    assert Shape(17, 33, 65).tag == "17x33x65"
    with pytest.raises(StudyError):
        Shape.parse("17x33")


def test_command_line_strings_are_read_as_yaml(default_config, registry):
    """snakemake --config passes 'sizes=[64,128]' as ['64', '128'] and 'ncu=true' as 'true'."""
    cfg = dict(default_config, sizes=["64", "128"], shapes="[[17, 33, 65]]", reference_size="128",
               ncu="true", ncu_size="64", tolerance="8.5", variants=["gpu_naive"])
    out = validate(cfg, registry)
    assert out.sizes == (64, 128) and out.shapes == (Shape(17, 33, 65),) and out.reference_size == 128
    assert out.ncu is True and out.checking.tolerance == 8.5 and out.variants == ("gpu_naive",)
    with pytest.raises(StudyError, match="sizes\\[0\\] = 'big' is not allowed"):
        validate(dict(default_config, sizes=["big"]), registry)


def test_turning_an_optional_stage_on_keeps_the_hash(default_config, registry):
    """ncu, sanitizer or tune added to a finished study must not re-run its measurements (the hash is a
    parameter of measure_variant); a setting that changes a measurement changes the hash."""
    base = validate(default_config, registry).hash
    for key, value in (("ncu", True), ("sanitizer", True), ("tune", True), ("tune_budget_s", 10)):
        assert validate(dict(default_config, **{key: value}), registry).hash == base, key
    assert validate(dict(default_config, max_noise=0.01), registry).hash != base


def test_a_malformed_config_file_is_named_with_its_line(tmp_path):
    bad = tmp_path / "config.yaml"
    bad.write_text("label: x\nsizes: [256, 512\nseeds: [0]\n")
    with pytest.raises(StudyError, match=rf"config file {re.escape(str(bad))}, line 3, column \d+: .*fix the YAML"):
        read_config_file(bad)
    bad.write_text("- just\n- a list\n")
    with pytest.raises(StudyError, match="expected keys and values"):
        read_config_file(bad)


def test_a_missing_bracket_is_named_where_its_sequence_starts(tmp_path):
    """The parser finds a missing ] where the next key begins; the message keeps where the list began."""
    bad = tmp_path / "config.yaml"
    bad.write_text("label: x\nsizes: [256, 512\n\n# more settings\nseeds: [0]\n")
    with pytest.raises(StudyError, match=r"line 5, column \d+: .* \(while parsing a flow sequence that starts at "
                                         r"line 2, column 8\); fix the YAML there"):
        read_config_file(bad)


@pytest.mark.parametrize("text", ["", "# only a comment\n"])
def test_an_empty_config_file_is_named_as_such(tmp_path, text):
    empty = tmp_path / "config.yaml"
    empty.write_text(text)
    with pytest.raises(StudyError, match=rf"config file {re.escape(str(empty))} holds no settings \(it is empty, "
                                         r"or comments only\); every key is required"):
        read_config_file(empty)


def test_an_arch_older_than_the_harness_or_unknown_to_nvcc_is_refused():
    with pytest.raises(StudyError, match="arch = sm_12 is older than sm_70, which the harness needs"):
        check_arch("sm_12")
    if shutil.which("nvcc") is None:
        pytest.skip("no nvcc here: the list of targets it builds for is its own")
    check_arch("sm_90")
    check_arch("sm_90a")   # the arch-specific form of a target nvcc lists
    with pytest.raises(StudyError, match="arch = sm_99 is not one this nvcc builds for"):
        check_arch("sm_99")


def test_a_grid_too_tall_for_cuda_is_refused_before_any_job(default_config, registry):
    cfg = dict(default_config, sizes=[256], reference_size=256, shapes=[[1_200_000, 16, 16]])
    with pytest.raises(StudyError, match=r"shape 1200000x16x16 needs a grid of 1 x 75,000 blocks for gpu_naive "
                                         r".*past CUDA's 2,147,483,647 x 65,535; use a smaller M"):
        validate(cfg, registry)
    validate(dict(cfg, shapes=[[1_048_560, 16, 16]]), registry)   # 65,535 rows of 16: the tallest that fits


def test_a_missing_kernel_file_stops_only_a_study_that_runs_it(default_config, registry):
    """A registry entry whose source is gone (a step being written, a file renamed) is refused by the studies
    that run it, with the file named, and not by the others."""
    gone = dict(registry.raw_entry("gpu_naive"), id="gpu_gone", file="seeds/01_gpu_gone.cu", title="gone")
    with_gone = Registry.from_entries({**registry.raw, "variants": [*registry.raw["variants"], gone]})
    assert with_gone["gpu_gone"].missing_file and not with_gone["gpu_naive"].missing_file
    others = [vid for vid in with_gone if vid != "gpu_gone"]
    assert validate(dict(default_config, variants=others), with_gone).variants == tuple(others)
    for variants in (["gpu_naive", "gpu_gone"], "all"):
        with pytest.raises(StudyError, match=r"gpu_gone.*file .*seeds/01_gpu_gone\.cu does not exist; restore it, or "
                                             r"leave gpu_gone out of variants"):
            validate(dict(default_config, variants=variants), with_gone)
