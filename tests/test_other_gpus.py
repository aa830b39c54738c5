"""A study on a GPU other than Hopper, with no GPU at hand: the compute capability given as the study's arch
(as `--config arch=sm_86` does where the GPU is not visible), and the pages and figures of such a study drawn
from the committed H100 study's tables, cut to what that GPU runs.

Most students run the study on an RTX or an A100, not an H100: the plan must say at once what such a GPU cannot
run and why, and every page and figure must say what was left out."""

import json
import shutil

import pandas as pd
import pytest

from conftest import ROOT, snakemake, svg_words
from matmulstudy.report import pages
from matmulstudy.report.committed import Study
from matmulstudy.report.figures import FIGURES, family
from matmulstudy.report.results import read_results, write_results
from matmulstudy.study import snapshot
from matmulstudy.study.run import StudyRun

# compute capability -> a GPU of it and its board power limit (W), as NVML gives it
GPUS = {"sm_75": ("Tesla T4", 70.0), "sm_80": ("NVIDIA A100-SXM4-40GB", 400.0),
        "sm_86": ("NVIDIA GeForce RTX 3090", 350.0), "sm_89": ("NVIDIA L4", 72.0)}
HOPPER_ONLY = "needs sm_90a (instructions of that architecture only)"


def plan(registry, default_config, arch) -> StudyRun:
    return StudyRun(registry, {**default_config, "label": f"fake-{arch}", "arch": arch})


@pytest.mark.parametrize("arch", GPUS)
def test_the_plan_runs_what_the_gpu_has_and_holds_back_the_rest_with_the_reason(registry, default_config, arch):
    run = plan(registry, default_config, arch)
    ampere = arch != "sm_75"
    for v in registry.values():
        if v.needs and v.needs.endswith("a"):   # wgmma and TMA: Hopper's alone
            assert run.skipped.get(v.id, "").startswith(HOPPER_ONLY), v.id
        elif v.needs == "sm_80":   # mma.sync with TF32 and BF16, cp.async, the references' tensor cores
            assert (v.id in run.skipped) != ampere, v.id
            assert ampere or run.skipped[v.id].startswith("needs sm_80 or newer"), v.id
        elif v.needs == "sm_89":   # FP8 tensor cores (cuBLASLt's FP8 reference): Ada's and Hopper's
            assert (v.id in run.skipped) != (arch == "sm_89"), v.id
            assert arch == "sm_89" or run.skipped[v.id].startswith("needs sm_89 or newer"), v.id
        else:
            assert v.id not in run.skipped, v.id
    ran = set(run.settings.variants)
    assert not ran & set(run.skipped)
    assert {"gpu_naive", "gpu_hybrid_stream_k", "cublas"} <= ran   # the seeds, the FP32 chapter, its reference
    # the references a GPU has: cuBLAS TF32 and BF16 on the tensor cores of Ampere and newer only
    assert ({"cublas_tf32", "cublas_bf16"} <= ran) == ampere
    assert ("gpu_mma_tf32" in ran) == ampere and ("gpu_mma_bf16" in ran) == ampere
    assert not any(registry[v].needs == "sm_90a" for v in ran)


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["sm_75", "sm_86"])
def test_a_dry_run_and_build_say_what_is_held_back_before_any_job(tmp_path, arch):
    """Said as the run starts (not only at its end): in `snakemake -n` and in `snakemake build` alike."""
    for target in ([], ["build"]):
        proc = snakemake("-n", *target, "--config", f"label=fake-{arch}", f"arch={arch}", cwd=ROOT)
        assert proc.returncode == 0, proc.stderr[-2000:]
        note = [line for line in proc.stderr.splitlines() if line.startswith("note: ")]
        assert len(note) == 1 and f"not built or run for {arch}" in note[0], proc.stderr[-2000:]
        assert ("cuBLAS TF32 (tensor cores)" in note[0]) == (arch == "sm_75")
        assert f"{HOPPER_ONLY}: 25, 26" in note[0]
        assert "results/fake-" not in proc.stdout or "gpu_wgmma_tma.cubin" not in proc.stdout


def fake_study(folder, registry, default_config, arch):
    """reports/<fake>/: the committed H100 study's tables as a study on `arch` would have them: its GPU's name,
    compute capability and power limit; no row of a variant that GPU cannot run; skipped.csv saying why."""
    src = ROOT / "reports" / "h100"
    folder.mkdir(parents=True)
    for name in ("summary.csv", "hardware.csv", "registry.yaml", "config.yaml", "headline.csv", "energy.csv"):
        shutil.copy(src / name, folder / name)
    held_back = plan(registry, default_config, arch).skipped
    name, limit = GPUS[arch]
    gpu = json.loads((src / "gpu.json").read_text())
    gpu.update(gpu_name=name, compute_capability=arch[3] + "." + arch[4], power_limit_w=limit)
    (folder / "gpu.json").write_text(json.dumps(gpu))
    samples = read_results(src / "samples.csv.gz")
    write_results(samples[~samples["variant"].isin(held_back)].assign(gpu=name, device=name), folder / "samples.csv.gz")
    for table in ("summary.csv", "hardware.csv", "headline.csv", "energy.csv"):
        df = pd.read_csv(folder / table)
        key = "variant" if "variant" in df else "step"
        df[~df[key].isin(held_back)].to_csv(folder / table, index=False)
    own = snapshot.read_registry(src)
    pd.DataFrame([{"variant": v, "title": own[v].title, "reason": why} for v, why in held_back.items() if v in own],
                 columns=["variant", "title", "reason"]).to_csv(folder / "skipped.csv", index=False)
    return Study.load(folder)


@pytest.mark.parametrize("arch", GPUS)
def test_the_page_says_what_was_skipped_and_the_gpus_own_power_cap(tmp_path, registry, default_config, arch):
    study = fake_study(tmp_path / "reports" / f"fake-{arch}", registry, default_config, arch)
    page = pages.study_page(study)
    name, limit = GPUS[arch]
    assert "## Skipped on this GPU" in page and "needs sm_90a" in page
    assert ("cuBLAS TF32 (tensor cores) (`cublas_tf32`): needs sm_80 or newer" in page) == (arch == "sm_75")
    if "## The headline ratios, in rounds" in page:
        assert f"the clock the {limit:,.0f} W cap leaves" in page
    assert "700 W" not in page


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["sm_75", "sm_86"])
def test_every_figure_names_what_the_gpu_did_not_run(tmp_path, registry, default_config, arch):
    study = fake_study(tmp_path / "reports" / f"fake-{arch}", registry, default_config, arch)
    note = study.skipped_note
    assert note and "19, 20, 21" in note   # the committed study's numbers
    first = [next(f for f in FIGURES if family(f) == kind) for kind in dict.fromkeys(map(family, FIGURES))]
    for figure in first:   # a figure of each kind (the note is every figure's: style.save writes it)
        figure.draw(study, study.folder / "figures" / figure.name)
        words = " ".join(svg_words(study.folder / "figures" / f"{figure.name}.svg").split())
        assert "Not run on this GPU" in words and "needs sm_90a" in words, figure.name
        assert ("needs sm_80 or newer: 28, 29, 30, 31, 18, 32, cuBLAS TF32 (tensor cores)" in words) == \
            (arch == "sm_75"), figure.name
    power = (study.folder / "figures" / f"power_{registry.steps()[0].chapter}.svg").read_text()
    assert f"power limit {GPUS[arch][1]:.0f} W" in power and "700 W" not in power
