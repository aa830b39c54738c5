"""The Snakemake workflow as a user runs it: DAG, config errors, CPU-only study."""

import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from functools import partial
from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import ROOT, fresh_copy, snakemake, svg_words
from matmulstudy.report.results import read_results
from matmulstudy.errors import StudyError
from matmulstudy.study import snapshot
from matmulstudy.study.plan import bench_jobs, builds, reference_kind
from matmulstudy.study.settings import validate


def job_counts(stdout: str) -> dict[str, int]:
    table = stdout.split("Job stats:")[1].split("total")[0]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", table, re.M)}


@pytest.mark.parametrize("ncu", [False, True])
def test_dry_run_builds_the_expected_dag(tmp_path, default_config, registry, ncu):
    proc = snakemake("-n", "--directory", str(tmp_path), "--configfile", str(ROOT / "config/config.yaml"),
                     "--config", "label=h100", "arch=sm_90", f"ncu={str(ncu).lower()}")
    assert proc.returncode == 0, proc.stderr
    settings = validate(dict(default_config, ncu=ncu), registry)
    n_inputs = len(settings.sweep()) * len(settings.seeds) * len(settings.dtypes)
    built = builds(settings, registry)
    cuda_builds = [(v, d) for v, d in built if v.backend == "cuda"]
    counts = job_counts(proc.stdout)
    measured = [registry[v] for v in settings.variants]
    headline = {v.precision for v in measured if v.is_gpu and v.is_step} & {
        v.precision for v in measured if v.role == "reference"}
    assert len(headline) >= 5   # FP32, TF32, BF16 and FP8's two
    expected = {
        "query_gpu": 1,
        "compile_harness": 1,
        "compile_kernel": len(cuda_builds),        # each with its SASS read in the same job
        "compile_library": len(built) - len(cuda_builds),
        "make_inputs": n_inputs,   # no make_reference job: a study with a GPU makes its references there
        "measure_variant": len(bench_jobs(settings, registry)),
        "measure_energy": 1,       # every GPU variant's sustained run, after every timed one
        "measure_headline": len(headline),   # a job per precision: its best step and reference in rounds
        "gather_headline": 1,
        "collect_results": 1,
        "plot_report": 1,
        "all": 1,
    }
    shown_at = [(v, registry.step_before(v.id)) for v in registry.values() if v.shown_at]
    if ncu:   # every GPU variant at ncu_size; a step with shown_at, and the step before, at that size too
        expected["profile_kernel"] = sum(v.is_gpu for v in registry.values()) + 2 * len(shown_at)
    assert counts == expected
    for v, before in shown_at:
        for vid in (v.id, before.id):
            assert (f"results/h100/ncu/{vid}_{v.shown_at}x{v.shown_at}x{v.shown_at}.json" in proc.stdout) == ncu
    # every element, every shape
    assert all(reference_kind(s, settings.checking, True) == "gpu" for s in settings.sweep())
    assert len(cuda_builds) == sum(len(v.dtypes) for v in registry.values() if v.backend == "cuda")
    assert "results/h100/build/int32/gpu_tiled.cubin" in proc.stdout
    assert "reports/h100/figures/progression.png" in proc.stdout
    assert "reports/h100/figures/progression_int32.svg" in proc.stdout
    assert ("results/h100/ncu/gpu_outer_4096x4096x4096.json" in proc.stdout) == ncu


def test_tuning_comes_before_the_build_of_every_variant_with_a_search_space(tmp_path, default_config, registry):
    proc = snakemake("-n", "--directory", str(tmp_path), "--configfile", str(ROOT / "config/config.yaml"),
                     "--config", "label=h100", "arch=sm_90", "tune=true")
    assert proc.returncode == 0, proc.stderr
    tuned = [v for v in registry.values() if v.search]
    assert job_counts(proc.stdout)["tune_variant"] == len(tuned)
    for v in tuned:   # the study's kernel is built from the choice, and the table is a result of the study
        assert f"input: results/h100/tuning/{v.id}.json, " in proc.stdout
    assert "reports/h100/tuning.csv" in proc.stdout
    plain = snakemake("-n", "--directory", str(tmp_path), "--configfile", str(ROOT / "config/config.yaml"),
                      "--config", "label=h100", "arch=sm_90")
    assert "tune_variant" not in job_counts(plain.stdout) and "results/h100/tuning/" not in plain.stdout


@pytest.mark.parametrize("override, message", [
    ("sizez=[1]", "error: config: unknown key 'sizez'; allowed keys:"),
    ("tolerance=-2", "error: config: tolerance = -2 is not allowed; expected a number > 0"),
    ("variants=[gpu_nope]", "error: config: variants contains unknown variant 'gpu_nope'"),
    ("arch=sm_12", "error: config: arch = sm_12 is older than sm_70, which the harness needs"),
    ("shapes=[[1200000,16,16]]", "needs a grid of 1 x 75,000 blocks for gpu_naive"),
])
def test_bad_config_stops_the_run_in_one_line(tmp_path, override, message):
    proc = snakemake("-n", "--directory", str(tmp_path), "--configfile", str(ROOT / "config/config.yaml"),
                     "--config", "label=x", "arch=sm_90", override)
    assert proc.returncode != 0
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_malformed_config_file_stops_the_run_naming_its_line(tmp_path):
    (tmp_path / "config").mkdir()
    (tmp_path / "config/config.yaml").write_text("label: x\narch: sm_90\nsizes: [256, 512\nseeds: [0]\n")
    proc = snakemake("-n", "--directory", str(tmp_path))
    assert proc.returncode != 0
    assert proc.stderr.strip().splitlines()[-1].startswith("error: config file config/config.yaml, line 4, column")
    assert "Traceback" not in proc.stderr


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="this machine has a GPU driver")
@pytest.mark.parametrize("config, wanted", [
    ([], "set label and arch (e.g. sm_90) in the config"),              # the default config: both auto
    (["label=mine"], "set arch (e.g. sm_90) in the config"),            # a label given (as .test's): arch alone
    (["arch=sm_90"], "set label in the config"),
    (["arch=sm_12"], "error: config: arch = sm_12 is older than sm_70"),  # a wrong arch first, GPU or not
])
def test_auto_label_without_gpu_says_what_to_do(tmp_path, config, wanted):
    proc = snakemake("-n", "--directory", str(tmp_path), "--configfile", str(ROOT / "config/config.yaml"),
                     *(["--config", *config] if config else []))
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert wanted in last
    if "sm_12" not in wanted:
        assert last.startswith("error: no GPU is visible: nvidia-smi was not found")
    assert "Traceback" not in proc.stderr


def test_unlock_as_the_readme_writes_it_needs_no_gpu_and_no_cores(tmp_path):
    """`snakemake --unlock`, the README's recovery after a kill: no label, arch or --cores given, on any machine.
    (It said "no GPU is visible" without a GPU, and asked for --cores where label and arch were given.)"""
    (tmp_path / ".snakemake" / "locks").mkdir(parents=True)
    (tmp_path / ".snakemake" / "locks" / "0.input.lock").write_text("a run that was killed\n")
    proc = snakemake("--unlock", "--directory", str(tmp_path), "--configfile", str(ROOT / "config/config.yaml"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Unlocked working directory" in proc.stdout + proc.stderr
    assert not any((tmp_path / ".snakemake" / "locks").glob("*"))


# The one lint the workflow keeps: it has no per-rule conda environment or container (README says why).
ENVIRONMENT_LINT = "Specify a conda environment or container for each rule."


def test_snakemake_lint_runs_without_a_gpu_and_finds_nothing_but_the_environment_lint():
    """`snakemake --lint` as a user would type it, on any machine (no label, no arch, no GPU needed)."""
    proc = snakemake("--lint")
    text = proc.stdout + proc.stderr
    sections = re.findall(r"^Lints for (.+?):\n((?:    .*\n?)+)", text, flags=re.MULTILINE)
    assert sections, text[-2000:]   # lint ran and read the rules
    found = {(where, title) for where, body in sections for title in re.findall(r"^    \* (.+?):$", body, re.M)}
    assert {title for _, title in found} == {ENVIRONMENT_LINT}, sorted(found)
    assert "no GPU is visible" not in text and "Traceback" not in text


def _study_dir(tmp_path, **overrides):
    with open(ROOT / ".test/config/config.yaml") as fh:
        cfg = yaml.safe_load(fh)
    cfg.update(overrides)
    (tmp_path / "config").mkdir()
    with open(tmp_path / "config/config.yaml", "w") as fh:
        yaml.safe_dump(cfg, fh)
    return cfg


@pytest.mark.slow
def test_cpu_only_study_runs_end_to_end_and_renders(tmp_path, registry):
    cfg = _study_dir(tmp_path)
    proc = snakemake("--cores", "2", "--directory", str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = tmp_path / "reports" / cfg["label"]
    df = read_results(report / "samples.csv.gz")
    assert df["verified"].all()
    assert set(df["variant"]) == set(cfg["variants"])
    assert (df["time_ms"] > 0).all()
    counts = df.groupby(["variant", "M", "N", "K"]).size()
    assert counts.between(cfg["min_samples"], cfg["max_samples"]).all()
    assert df["stop_reason"].isin(["noise", "time", "samples"]).all() and df["noise"].notna().all()
    big = df["M"] * df["N"] * df["K"] > cfg["full_check_max_size"] ** 3   # the option, exercised
    assert big.any() and (df.loc[big, "check"] == "freivalds").all() and (df.loc[~big, "check"] == "full").all()
    assert not (tmp_path / "results/inputs/float32/96x96x96_s0/ref.npy").exists()
    for column in ("git_commit", "git_dirty", "config_hash", "host", "python", "timestamp"):
        assert df[column].notna().all(), column
    assert df["config_hash"].nunique() == 1 and df["git_commit"].nunique() == 1
    built = df[df.backend == "c"]
    assert built["compiler"].str.startswith("gcc").all() and (built["compiler_flags"] == "-O2 -shared -fPIC").all()
    own = snapshot.read_registry(report)   # what the study was measured with, kept beside it
    assert list(own) == cfg["variants"] and snapshot.read_config(report)["label"] == cfg["label"]
    first = next(iter(registry.chapters))   # a study without a GPU draws its CPU variants with the first chapter's
    for name, ext in (("progression", "png"), ("progression", "svg"), (f"size_sweep_{first}", "svg"),
                      (f"timing_{first}", "svg"), (f"margin_{first}", "svg")):
        assert (report / "figures" / f"{name}.{ext}").stat().st_size > 1500   # a palette PNG: a few KB
    assert (report / "failures.txt").read_text() == ""
    assert "Every result verified" in proc.stderr
    # one log per job: one bench job per variant, every shape in it
    assert len(list((tmp_path / "logs" / "measure_variant").rglob("*.log"))) == len(cfg["variants"])
    # nothing to redo: an interrupted or finished study resumes where it stands
    again = snakemake("-n", "--directory", str(tmp_path))
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr
    # Snakemake's HTML report of the study, captions with the study's own facts
    html = snakemake("--cores", "1", "--directory", str(tmp_path), "--report", "report.html")
    assert html.returncode == 0, html.stderr[-2000:]
    text = (tmp_path / "report.html").read_text()
    assert "Failed verifications" in text and "1. Progression" in text
    page = (report / "README.md").read_text()
    assert "| failed verifications | 0" in page
    # a study without a GPU says so, and shows its CPU variants; nothing of a GPU's, no empty value
    for text in (page, (report / "provenance.rst").read_text()):
        assert "None" not in text and "nan" not in text and "CUDA events" not in text and "PyCUDA" not in text
    assert page.startswith("# The study's CPU variants on ") and "no GPU in this study" in page
    assert "the repository's `README.md`" in page   # a study outside the repository links nowhere wrong
    svg = (report / "figures" / "progression.svg").read_text()
    assert all(registry[v].title in svg for v in cfg["variants"]) and "×" in svg
    # the int32 figure's placeholder, in words
    words = svg_words(report / "figures" / "progression_int32.svg")
    assert "No int32 measurements in this study: it measured float32 only" in words and "[" not in words


BROKEN_C = "void cpu_broken(int M, int N, int K, const float *A, const float *B, float *C) { this is not C }\n"
WRONG_C = """void cpu_wrong(int M, int N, int K, const float *A, const float *B, float *C)
{
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float acc = 0.0f;
            for (int k = 0; k < K; ++k)
                acc += A[(long)i * K + k] * B[(long)k * N + j];
            C[(long)i * N + j] = acc * 1.01f;   /* 1% off: a wrong result */
        }
}
"""


def _copy_with_two_bad_variants(tmp_path):
    """A fresh copy of the repository whose registry has two more CPU variants, cpu_broken (its source does not
    compile) and cpu_wrong (1% off); and an empty folder for a study. Returns both."""
    repo, work = tmp_path / "repo", tmp_path / "study"
    repo.mkdir()
    fresh_copy(repo)
    (repo / "kernels" / "baselines" / "90_cpu_broken.c").write_text(BROKEN_C)
    (repo / "kernels" / "baselines" / "91_cpu_wrong.c").write_text(WRONG_C)
    entries = [{"id": vid, "backend": "c", "role": "cpu_baseline", "file": f"baselines/{n}_{vid}.c", "max_size": 512,
                "title": title, "source": "tests/test_workflow.py"}
               for vid, n, title in (("cpu_broken", 90, "CPU broken"), ("cpu_wrong", 91, "CPU wrong"))]
    with open(repo / "kernels" / "registry.yaml", "a") as fh:
        fh.write("\n" + "".join("  " + line for line in yaml.safe_dump(entries, sort_keys=False).splitlines(True)))
    work.mkdir()
    return repo, work


@pytest.mark.slow
def test_snakemake_build_fails_when_a_build_fails(tmp_path):
    """`snakemake build` (the builds alone, no study after them) exits non-zero when a variant does not build,
    and its last line names the variant and its log (it exited 0, the error in the middle of the output); the
    variants that build are built."""
    repo, work = _copy_with_two_bad_variants(tmp_path)
    cfg = _study_dir(work, variants=["cpu_naive", "cpu_broken"])
    env = {**os.environ, "PYTHONPATH": str(repo)}
    proc = snakemake("--cores", "1", "build", "--directory", str(work), cwd=repo, snakefile=repo / "Snakefile", env=env)
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: 1 build(s) failed: cpu_broken float32 (log: ")
    assert f"logs/compile_kernel/{cfg['label']}/float32/cpu_broken.so.log)" in last
    assert (work / "results" / cfg["label"] / "build" / "float32" / "cpu_naive.so").stat().st_size > 0
    # built again with the source mended: exit 0
    (repo / "kernels" / "baselines" / "90_cpu_broken.c").write_text(BROKEN_C.replace("this is not C", ""))
    again = snakemake("--cores", "1", "build", "--directory", str(work), cwd=repo, snakefile=repo / "Snakefile",
                      env=env)
    assert again.returncode == 0, again.stderr[-2000:]


@pytest.mark.slow
def test_a_change_to_the_cuda_headers_rebuilds_no_c_variant(tmp_path, registry):
    """kernels/common/ holds what the cuda kernels include; the C variants include none of it, so a change there
    leaves their builds as they are (they were built again)."""
    repo, work = tmp_path / "repo", tmp_path / "study"
    repo.mkdir()
    fresh_copy(repo)
    work.mkdir()
    cfg = _study_dir(work)
    assert "c" in {registry[v].backend for v in cfg["variants"]}
    env = {**os.environ, "PYTHONPATH": str(repo)}
    run = partial(snakemake, "--directory", str(work), cwd=repo, snakefile=repo / "Snakefile", env=env)
    assert run("--cores", "1", "build").returncode == 0
    header = repo / "kernels" / "common" / "pipeline.cuh"
    header.write_text(header.read_text() + "// a change\n")   # a new checksum, not only a new time stamp
    again = run("-n", "build")
    assert again.returncode == 0, again.stderr[-2000:]
    assert "Nothing to be done" in again.stdout + again.stderr, again.stdout[-2000:]


@pytest.mark.slow
def test_a_variant_that_fails_costs_only_itself(tmp_path):
    """The CPU-only study with two variants added to the registry: one whose source does not compile and one
    whose result is wrong. The rest is measured, collected, drawn and paged; both failures are named in
    failures.txt and the page, the failed build with its compiler error and log; the run's last line names
    them, and its exit status is non-zero."""
    repo, work = _copy_with_two_bad_variants(tmp_path)
    cfg = _study_dir(work, variants=["cpu_naive", "numpy", "cpu_broken", "cpu_wrong"])
    env = {**os.environ, "PYTHONPATH": str(repo)}
    proc = snakemake("--cores", "2", "--directory", str(work), cwd=repo, snakefile=repo / "Snakefile", env=env)
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: 2 variant(s) failed: ") and "cpu_broken float32 (build failed; log: " in last
    assert "logs/compile_kernel/cpu-test/float32/cpu_broken.so.log" in last and "cpu_wrong float32 (verification" in last
    report = work / "reports" / cfg["label"]
    df = read_results(report / "samples.csv.gz")
    assert df.loc[df.variant.isin(["cpu_naive", "numpy"]), "verified"].all()   # the rest: measured, verified
    assert not df.loc[df.variant.isin(["cpu_broken", "cpu_wrong"]), "verified"].any()
    assert df.loc[df.variant == "cpu_broken", "time_ms"].isna().all()        # never timed, never plotted
    failed = (report / "failures.txt").read_text()
    assert "cpu_broken float32" in failed and "build failed: gcc failed on" in failed and "error" in failed
    assert "cpu_wrong float32" in failed and "wrong element(s)" in failed
    page = (report / "README.md").read_text()
    assert "## Failures" in page and "build failed: gcc failed on" in page and "cpu_wrong float32" in page
    assert "| not measured (build or run failed) | " in page
    svg = svg_words(report / "figures" / f"size_sweep_{next(iter(snapshot.read_registry(report).chapters))}.svg")
    assert "cpu_broken: build failed" in svg and "cpu_wrong: verification failed" in svg
    assert (report / "figures" / "progression.png").exists()


@pytest.mark.slow
def test_a_study_interrupted_by_ctrl_c_resumes_on_the_same_command(tmp_path):
    """Ctrl-C (SIGINT to the whole process group, as a terminal sends it) part-way through the CPU-only
    study: its last line says that the same command resumes it; and the same command again finishes it, every
    result there and verified, as a clean run's."""
    cfg = _study_dir(tmp_path)
    exe = shutil.which("snakemake") or str(Path(sys.executable).parent / "snakemake")
    # Ctrl-C as a terminal's shell leaves it: where this test runs in the background (`pytest &` from a
    # script), SIGINT is ignored, and the study would inherit that and run to its end.
    run = subprocess.Popen([exe, "--snakefile", str(ROOT / "Snakefile"), "--cores", "1", "--directory",
                            str(tmp_path)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while run.poll() is None and time.monotonic() < deadline and not list((tmp_path / "results").rglob("*.npy")):
        time.sleep(0.02)
    os.killpg(run.pid, signal.SIGINT)
    _, err = run.communicate(timeout=120)
    assert run.returncode != 0, "the study ended before the interrupt: nothing was tested"
    assert err.strip().splitlines()[-1].startswith("interrupted: the same command resumes the run")
    assert not (tmp_path / "reports" / cfg["label"] / "samples.csv.gz").exists()
    again = snakemake("--cores", "1", "--directory", str(tmp_path))
    assert again.returncode == 0, again.stderr[-3000:]
    df = read_results(tmp_path / "reports" / cfg["label"] / "samples.csv.gz")
    grid = {(n, n, n) for n in cfg["sizes"]} | {tuple(s) for s in cfg["shapes"]}
    assert set(zip(df["variant"], df["M"], df["N"], df["K"])) == {(v, *s) for v in cfg["variants"] for s in grid}
    assert df["verified"].all()


def test_a_job_records_the_gpu_it_runs_on_not_the_one_the_study_found_first(tmp_path, monkeypatch):
    """A GPU job (timing, Nsight Compute, the sanitizer, the energy phase, the headline rounds) records the UUID
    of the GPU it runs on, the first that CUDA_VISIBLE_DEVICES lets it see, not gpu.json's: a study resumed on
    another machine, or its counters taken on another one, must say so. A stand-in nvidia-smi lists two GPUs."""
    from matmulstudy.gpu import host
    fake = tmp_path / "nvidia-smi"
    fake.write_text(textwrap.dedent("""\
        #!/bin/sh
        case "$*" in
          *--id=1*|*--id=GPU-two*) echo "NVIDIA H200, 9.0, GPU-two" ;;
          *--id=*) echo "NVIDIA H200, 9.0, GPU-one" ;;
          *) printf 'NVIDIA H200, 9.0, GPU-one\\nNVIDIA H200, 9.0, GPU-two\\n' ;;
        esac
        """))
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert host.running_uuid() == "GPU-one"
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1,0")
    assert host.running_uuid() == "GPU-two"
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))   # no driver: nothing claimed
    assert host.running_uuid() is None
    for script in ("measure_variant", "profile_kernel", "sanitize_kernel", "measure_energy", "measure_headline"):
        assert "host.running_uuid()" in (ROOT / "workflow" / "scripts" / f"{script}.py").read_text(), script


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="this machine has a GPU driver")
def test_without_a_driver_the_gpu_tests_and_jobs_say_so_not_pip_install():
    """With no NVIDIA driver, installing PyCUDA would not help: the reason the GPU tests skip (and query_gpu
    stops) names the driver, as the config check does."""
    from matmulstudy.gpu.session import require_pycuda
    with pytest.raises(StudyError, match=r"^no usable GPU: nvidia-smi was not found \(no NVIDIA driver on this "
                                         r"machine\)$"):
        require_pycuda()


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="this machine has a GPU driver")
def test_without_gpu_a_gpu_study_stops_before_any_job_in_one_line_and_build_runs(tmp_path):
    """Snakemake plans the study, then the run stops before its first job: no build, no input (CPU jobs would
    otherwise race query_gpu), and the reason last, with what to run instead."""
    _study_dir(tmp_path, label="nogpu", arch="sm_90", variants=["numpy", "gpu_naive"],
               sizes=[16], shapes=[], reference_size=16)
    proc = snakemake("--cores", "1", "--directory", str(tmp_path))
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert re.fullmatch(r"error: no usable GPU: nvidia-smi was not found \(no NVIDIA driver on this machine\); "
                        r"nothing was run: \d+ job\(s\) of this study need the GPU \(`snakemake build` builds "
                        r"what needs none\)", last), last
    assert "Error in rule" not in proc.stderr and len(proc.stderr.splitlines()) < 60
    assert not (tmp_path / "results").exists() and not (tmp_path / "logs").exists()
    # what needs no GPU, on its own: every kernel, its resources and its SASS instruction mix
    build = snakemake("--cores", "1", "--directory", str(tmp_path), "build")
    assert build.returncode == 0, build.stderr[-2000:]
    assert (tmp_path / "results/nogpu/build/float32/gpu_naive.sass.json").exists()
    assert not (tmp_path / "results/inputs").exists()


def test_list_overrides_on_the_command_line(tmp_path, default_config, registry):
    proc = snakemake("-n", "--directory", str(tmp_path), "--configfile", str(ROOT / "config/config.yaml"),
                     "--config", "label=mini", "arch=sm_90", "sizes=[64,128]", "shapes=[[17,33,65]]",
                     "reference_size=128", "dtypes=[float32]")
    assert proc.returncode == 0, proc.stderr
    settings = validate(dict(default_config, sizes=[64, 128], shapes=[[17, 33, 65]], reference_size=128,
                             dtypes=["float32"]), registry)
    assert job_counts(proc.stdout)["measure_variant"] == len(bench_jobs(settings, registry))


def test_ci_waits_for_the_dpkg_lock_instead_of_failing():
    """.ci/run installs the Slurm test's packages where they are missing; another install holding dpkg's lock
    makes it wait, not fail."""
    calls = re.findall(r"apt-get((?: -o \S+)*) (update|install)", (ROOT / ".ci" / "run").read_text())
    assert {verb for _, verb in calls} == {"update", "install"}
    assert all("DPkg::Lock::Timeout=" in options for options, _ in calls), calls


def test_the_workflow_starts_without_pandas_or_matplotlib():
    """Every Snakemake start (and on a cluster, two per job) imports what common.smk imports: keep those
    modules light, and leave the plotting and table libraries to the jobs that use them."""
    smk = (ROOT / "workflow" / "rules" / "common.smk").read_text()
    block = smk.split("try:\n", 1)[1].split("except ImportError", 1)[0]
    code = "import sys\n" + textwrap.dedent(block) + "\nprint(sorted({'pandas', 'matplotlib', 'seaborn', 'numpy'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("arch", ["sm_75", "sm_80"])
def test_a_gpu_without_a_steps_architecture_skips_that_step_and_runs_the_rest(tmp_path, registry, arch):
    """arch sm_75 (a Turing GPU: no TF32 mma.sync) and sm_80 (an A100: no sm_90a, so none of the Hopper
    steps with wgmma and TMA): every step that `needs` what the target lacks is neither built nor run,
    collect_results is handed the reason, and every other variant is built and measured as on sm_90."""
    needs = [v for v in registry.values() if v.unsupported(arch)]
    assert needs, f"no registry entry needs more than {arch}"
    if arch == "sm_80":
        assert {v.needs for v in needs} == {"sm_90a", "sm_89"} and len(needs) >= 4   # Hopper's and FP8's
        assert registry["gpu_mma_tf32"] not in needs
    runs = {}
    for target in (arch, "sm_90"):
        proc = snakemake("-n", "--directory", str(tmp_path), "--configfile", str(ROOT / "config/config.yaml"),
                         "--config", "label=h100", f"arch={target}")
        assert proc.returncode == 0, proc.stderr
        runs[target] = proc.stdout
    for v in needs:
        assert f"results/h100/bench/float32/{v.id}_s0.csv" not in runs[arch]
        assert f"results/h100/bench/float32/{v.id}_s0.csv" in runs["sm_90"]
    others = [v for v in registry.values() if v.is_gpu and v not in needs]
    assert all(f"results/h100/bench/float32/{v.id}_s0.csv" in runs[arch] for v in others)
    cuda = sum(len(v.dtypes) for v in needs if v.backend == "cuda")
    assert job_counts(runs[arch])["compile_kernel"] == job_counts(runs["sm_90"])["compile_kernel"] - cuda
    assert "reports/h100/skipped.csv" in runs[arch]


def test_the_energy_phase_runs_at_the_reference_size_and_the_largest(default_config, registry):
    """Every GPU variant, both dtypes, at the headline's shapes only (at every shape it took 1 min 48 s of an
    H100 study of 10 min 48 s); the headline's problems are its float32 ones."""
    from matmulstudy.pipeline.rules import RuleFiles
    from matmulstudy.study.run import StudyRun
    run = StudyRun(registry, dict(default_config, label="h100", arch="sm_90"))
    rules = RuleFiles(run)
    problems = rules.energy_problems("h100")
    assert {p["shape"] for p in problems} == {"4096x4096x4096", "8192x8192x8192"}
    assert {p["dtype"] for p in problems} == {"float32", "int32"}
    gpu = {v.id for v in run.variants if v.is_gpu and "float32" in v.dtypes}
    assert all({vid for vid, _ in p["variants"]} == gpu for p in problems if p["dtype"] == "float32")
    assert rules.headline_problems("h100") == [p for p in problems if p["dtype"] == "float32"]


def test_a_jobs_log_ends_with_its_time_and_a_profile_where_asked(tmp_path, monkeypatch):
    """rulescript.run: the job's log ends with where its time went; with MATMULSTUDY_PROFILE set, its work's
    statistics go beside the log and the log lists its longest calls (a development aid for the study's time)."""
    from types import SimpleNamespace
    from matmulstudy.pipeline import rulescript

    def work(snakemake, log):
        print("working", file=log)
        sum(range(10000))

    job = SimpleNamespace(log=[str(tmp_path / "job.log")])
    rulescript.run(job, work)
    text = (tmp_path / "job.log").read_text()
    assert text.startswith("working\n") and "job time: " in text and "s of work" in text.splitlines()[-1]
    assert not (tmp_path / "job.log.prof").exists()
    monkeypatch.setenv(rulescript.PROFILE, "1")
    rulescript.run(job, work)
    text = (tmp_path / "job.log").read_text()
    assert (tmp_path / "job.log.prof").stat().st_size > 0 and "the longest calls, cumulatively" in text
    assert "work" in text.split("the longest calls")[1]
