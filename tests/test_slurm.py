"""The cluster path, for real: a single-node Slurm on localhost, started by the test.

munged, slurmctld and slurmd from Debian's packages (slurmctld slurmd munge
slurm-client), configured here: proctrack/linuxproc, task/none, no
accounting database (so the executor asks squeue, and MinJobAge keeps
finished jobs visible to it), a job-completion log as Slurm's own record,
and one node named after this host with a GPU it does not have (GRES
gpu:h100 on /dev/null) so that GPU requests can be accepted and checked.
Slurm reads /etc/slurm/slurm.conf from inside its jobs (the executor clears
SLURM_CONF for them), so the test writes it there, only where none exists,
and removes it and stops every daemon it started afterwards. Needs root.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
import socket
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from conftest import ROOT, snakemake

pytestmark = pytest.mark.slow

DAEMONS = {"munged": "/usr/sbin/munged", "slurmctld": "/usr/sbin/slurmctld", "slurmd": "/usr/sbin/slurmd"}
ETC = Path("/etc/slurm")
MARK = "# written by matmulstudy's tests/test_slurm.py"


def readme_cluster_command() -> list[str]:
    """The snakemake line of the README's cluster section, as written there."""
    text = (ROOT / "README.md").read_text().split("<!-- cluster-command -->")[1].split("```")[1]
    line = next(ln for ln in text.splitlines() if ln.startswith("snakemake "))
    return shlex.split(line)[1:]


# The README's command, plus what its section says a cluster without an
# accounting database needs, this node's cores, and a quicker first poll.
PROFILE_ARGS = readme_cluster_command() + [
    "--slurm-status-command", "squeue", "--slurm-no-account",
    "--cores", str(min(2, os.cpu_count())), "--slurm-init-seconds-before-status-checks", "5"]
LABEL = "h100"   # the README command's label


def _missing() -> str | None:
    absent = [name for name, path in DAEMONS.items() if not os.path.exists(path)]
    if absent or not shutil.which("sbatch"):
        return f"Slurm is not installed ({', '.join(absent) or 'sbatch'} missing): " \
               "apt-get install slurmctld slurmd munge slurm-client"
    if os.geteuid() != 0:
        return "the single-node Slurm of this test runs its daemons as root"
    if (ETC / "slurm.conf").exists() and MARK not in (ETC / "slurm.conf").read_text():
        return "/etc/slurm/slurm.conf exists (a real Slurm here): not touching it"
    if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
        return "snakemake-executor-plugin-slurm is not installed (pip install -e '.[test]')"
    return None


def _config(tmp: Path, host: str) -> str:
    return f"""{MARK}
ClusterName=matmulstudy-test
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={tmp}/munge.socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation={tmp}/state
SlurmdSpoolDir={tmp}/spool
SlurmctldPidFile={tmp}/slurmctld.pid
SlurmdPidFile={tmp}/slurmd.pid
SlurmctldLogFile={tmp}/slurmctld.log
SlurmdLogFile={tmp}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MinJobAge=1800
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc={tmp}/jobcomp.log
GresTypes=gpu
NodeName={host} NodeAddr=127.0.0.1 CPUs={os.cpu_count()} RealMemory=16000 Gres=gpu:h100:1 State=UNKNOWN
PartitionName=gpu Nodes={host} Default=YES MaxTime=INFINITE State=UP
"""


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    """A running single-node Slurm; yields its folder (logs, job-completion record)."""
    reason = _missing()
    if reason:
        pytest.skip(reason)
    tmp = tmp_path_factory.mktemp("slurm")
    for sub in ("state", "spool"):
        (tmp / sub).mkdir()
    host = socket.gethostname().split(".")[0]
    key = tmp / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    ETC.mkdir(parents=True, exist_ok=True)
    (ETC / "slurm.conf").write_text(_config(tmp, host))
    (ETC / "gres.conf").write_text(f"{MARK}\nNodeName={host} Name=gpu Type=h100 File=/dev/null\n")
    started = []
    try:
        subprocess.run([DAEMONS["munged"], "--force", f"--socket={tmp}/munge.socket", f"--key-file={key}",
                        f"--pid-file={tmp}/munged.pid", f"--log-file={tmp}/munged.log",
                        f"--seed-file={tmp}/munge.seed"], check=True)
        started.append(tmp / "munged.pid")
        subprocess.run([DAEMONS["slurmctld"]], check=True)
        started.append(tmp / "slurmctld.pid")
        subprocess.run([DAEMONS["slurmd"]], check=True)
        started.append(tmp / "slurmd.pid")
        for _ in range(60):
            state = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True).stdout.strip()
            if state == "idle":
                break
            time.sleep(1)
        else:
            pytest.fail(f"the test's Slurm node never became idle (sinfo: {state!r}); see {tmp}/slurmctld.log")
        yield tmp
    finally:
        for pidfile in reversed(started):
            try:
                os.kill(int(pidfile.read_text()), 15)
            except (OSError, ValueError):
                pass
        time.sleep(1)
        for name in ("slurm.conf", "gres.conf"):
            path = ETC / name
            if path.exists() and MARK in path.read_text():
                path.unlink()


def _study(dest: Path, **overrides) -> dict:
    with open(ROOT / ".test" / "config" / "config.yaml") as fh:
        cfg = yaml.safe_load(fh)
    cfg.update(overrides)
    (dest / "config").mkdir(parents=True)
    with open(dest / "config" / "config.yaml", "w") as fh:
        yaml.safe_dump(cfg, fh)
    return cfg


def _jobs(slurm: Path) -> list[dict]:
    """Slurm's own record of every job it ran: the job-completion log, with scontrol's detail."""
    records = []
    for line in (slurm / "jobcomp.log").read_text().splitlines():
        rec = dict(f.split("=", 1) for f in line.split() if "=" in f)
        detail = subprocess.run(["scontrol", "show", "job", rec["JobId"]], capture_output=True, text=True).stdout
        rec["detail"] = detail
        records.append(rec)
    return records


DETERMINISTIC = ["variant", "dtype", "M", "N", "K", "seed", "verified", "check", "max_error", "tolerance",
                 "bad_elements", "unwritten_elements"]


def test_cpu_study_through_slurm_equals_a_local_run(slurm, tmp_path):
    on_slurm, local = tmp_path / "slurm", tmp_path / "local"
    _study(on_slurm)
    _study(local)
    before = len(_jobs(slurm)) if (slurm / "jobcomp.log").exists() else 0
    proc = snakemake(*PROFILE_ARGS, "--directory", str(on_slurm), timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    ran = snakemake("--cores", "2", "--directory", str(local), "--config", f"label={LABEL}")
    assert ran.returncode == 0, ran.stderr[-3000:]

    # Slurm ran the jobs: its completion log holds one record per submitted job, all completed
    jobs = _jobs(slurm)[before:]
    assert jobs and all(j["JobState"] == "COMPLETED" for j in jobs), [j["JobState"] for j in jobs]
    comments = " ".join(j["detail"] for j in jobs)
    for rule in ("make_inputs", "make_reference", "compile_kernel", "collect_results", "plot_report"):
        assert f"rule_{rule}_" in comments or f"rule_{rule}\n" in comments, rule
    timing = [j for j in jobs if "rule_timing" in j["detail"]]
    assert len(timing) == 1, "every timed job of the study in one Slurm job"
    assert "TresPerJob=gres:gpu" not in comments   # a study without GPU variants asks for none

    # the same results as a local run, but for the times themselves
    report = f"reports/{LABEL}/results.csv"
    a, b = (pd.read_csv(d / report) for d in (on_slurm, local))
    key = ["variant", "M", "N", "K"]
    a, b = (x.drop_duplicates(key)[DETERMINISTIC].sort_values(key).reset_index(drop=True) for x in (a, b))
    pd.testing.assert_frame_equal(a, b)
    for inputs in (on_slurm / "results" / "inputs").rglob("*.npy"):
        twin = local / inputs.relative_to(on_slurm)
        assert np.array_equal(np.load(inputs), np.load(twin)), inputs
    rows = pd.read_csv(on_slurm / report)
    assert list(rows["host"].unique()) == [socket.gethostname()]   # the node is recorded
    assert rows["slurm_job_id"].notna().all() and pd.read_csv(local / report)["slurm_job_id"].isna().all()


def test_gpu_jobs_ask_slurm_for_the_labels_gpu(slurm, tmp_path):
    """A GPU study: the timed jobs go as one Slurm job with --gpus=h100:1; nothing else asks for a GPU.

    This node has no real GPU, so that job fails inside (query_gpu says so in
    one line); what is checked is what Slurm received.
    """
    _study(tmp_path, variants=["numpy", "gpu_naive", "gpu_tiled"], sizes=[16], shapes=[], reference_size=16)
    before = len(_jobs(slurm)) if (slurm / "jobcomp.log").exists() else 0
    proc = snakemake(*PROFILE_ARGS, "--directory", str(tmp_path), timeout=900)
    assert proc.returncode != 0   # no GPU here
    jobs = _jobs(slurm)[before:]
    timing = [j for j in jobs if "rule_timing" in j["detail"]]
    others = [j for j in jobs if "rule_timing" not in j["detail"]]
    assert len(timing) == 1 and "TresPerJob=gres:gpu:h100:1" in timing[0]["detail"]
    assert others and not any("gres:gpu" in j["detail"] for j in others)
    assert any("rule_compile_" in j["detail"] for j in others)   # nvcc builds run on CPU-only jobs
    log = (tmp_path / "logs" / "query_gpu" / "h100.log").read_text()
    assert log.startswith("error: no usable GPU:")
