"""What a run checks before its first job (matmulstudy/pipeline/preflight.py, common.smk's onstart)."""

import os
import shutil
import subprocess
from types import SimpleNamespace

import pytest

from conftest import ROOT, snakemake
from matmulstudy.errors import StudyError
from matmulstudy.pipeline import preflight


def job(rule, *outputs, gpu=0):
    return SimpleNamespace(rule=SimpleNamespace(name=rule), output=list(outputs), resources={"gpu": gpu})


def test_a_folder_that_cannot_be_written_is_named_before_any_job(tmp_path, monkeypatch):
    """The study's reports/ read-only: said at once, naming the folder and the rule, not after the measurements
    (os.access is asked; root passes every permission, so the folder is made unwritable through it)."""
    (tmp_path / "reports").mkdir()
    real = os.access
    monkeypatch.setattr(preflight.os, "access", lambda p, mode: p != tmp_path / "reports" and real(p, mode))
    jobs = [job("make_inputs", tmp_path / "results/inputs/a.npy"),
            job("collect_results", tmp_path / "reports/h100/summary.csv")]
    with pytest.raises(StudyError, match=rf"^{tmp_path}/reports is not writable, and rule collect_results writes "
                                         rf"{tmp_path}/reports/h100/summary.csv there; nothing was run"):
        preflight.check(jobs, local=True)
    preflight.check(jobs[:1], local=True)   # results/ does not exist yet: its ancestor, tmp_path, is writable


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="this machine has a GPU driver")
def test_gpu_jobs_need_a_gpu_here_but_not_where_a_cluster_runs_them(tmp_path):
    jobs = [job("compile_kernel", tmp_path / "k.cubin"), job("query_gpu", tmp_path / "gpu.json", gpu=1)]
    with pytest.raises(StudyError, match=r"^no usable GPU: .*; nothing was run: 1 job\(s\) of this study need the "
                                         r"GPU"):
        preflight.check(jobs, local=True)
    preflight.check(jobs, local=False)   # on Slurm: query_gpu says it on the GPU node
    preflight.check(jobs[:1], local=True)   # `snakemake build`: nothing needs the GPU


@pytest.mark.slow
def test_a_read_only_reports_folder_stops_the_study_before_its_first_job(tmp_path):
    """The CPU-only study with reports/ on a read-only file system (a tmpfs mounted read-only: root too is refused
    there): one line naming it, and nothing computed. Skips where this machine cannot mount one."""
    shutil.copytree(ROOT / ".test/config", tmp_path / "config")
    (tmp_path / "reports").mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro", "tmpfs", str(tmp_path / "reports")],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"a read-only tmpfs cannot be mounted here: {mounted.stderr.strip()}")
    try:
        proc = snakemake("--cores", "2", "--directory", str(tmp_path))
    finally:
        subprocess.run(["umount", str(tmp_path / "reports")], check=True)
    assert proc.returncode != 0
    assert proc.stderr.strip().splitlines()[-1] == (
        f"error: {tmp_path}/reports is not writable, and rule collect_results writes reports/cpu-test/samples.csv.gz "
        "there; nothing was run: give it write permission (or run the study in a copy)")
    assert not (tmp_path / "results").exists()
