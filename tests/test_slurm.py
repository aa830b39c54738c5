"""The cluster path, for real: a single-node Slurm on localhost, started by the test.

munged, slurmctld and slurmd from Debian's packages (slurmctld slurmd munge
slurm-client), configured here: proctrack/linuxproc, task/none, no
accounting database (so the executor asks squeue, and MinJobAge keeps
finished jobs visible to it), a job-completion log as Slurm's own record,
and one node named after this host with a GPU it does not have (GRES
gpu:h100 on /dev/null) so that GPU requests can be accepted and checked.

Everything is the test's own, so that two runs of it share a host: ports
the kernel hands out free, a configuration (SLURM_CONF), key, sockets,
state and logs in its temporary folder, nothing written anywhere else. The
executor's job step clears SLURM_CONF before it calls srun inside a job, so
the test puts first on PATH an srun that sets it again (where Slurm is
installed for real, its slurm.conf is where srun looks by default). The
daemons run in the foreground as children of the test's process, each set
to be sent SIGTERM when that process ends (prctl PR_SET_PDEATHSIG): an
interrupted or killed test leaves none behind. Needs root (SlurmUser=root).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib.util
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from conftest import ROOT, snakemake_command
from matmulstudy.report.results import read_results

pytestmark = pytest.mark.slow

DAEMONS = {"munged": "/usr/sbin/munged", "slurmctld": "/usr/sbin/slurmctld", "slurmd": "/usr/sbin/slurmd"}
PR_SET_PDEATHSIG = 1


def readme_cluster_command() -> list[str]:
    """The snakemake line of the README's cluster section, as written there."""
    text = (ROOT / "README.md").read_text().split("<!-- cluster-command -->")[1].split("```")[1]
    line = next(ln for ln in text.splitlines() if ln.startswith("snakemake "))
    return shlex.split(line)[1:]


def profile_groups() -> dict[str, str]:
    """rule -> the group the Slurm profile puts it in."""
    with open(ROOT / "profiles" / "slurm" / "config.yaml") as fh:
        return dict(g.split("=") for g in yaml.safe_load(fh)["groups"])


# The README's command, plus what its section says a cluster without an
# accounting database needs, this node's cores, and a quicker first poll.
PROFILE_ARGS = readme_cluster_command() + [
    "--slurm-status-command", "squeue", "--slurm-no-account",
    "--cores", "1", "--slurm-init-seconds-before-status-checks", "1"]
LABEL = "h100"   # the README command's label


def _missing() -> str | None:
    absent = [name for name, path in DAEMONS.items() if not os.path.exists(path)]
    if absent or not shutil.which("sbatch"):
        return f"Slurm is not installed ({', '.join(absent) or 'sbatch'} missing): " \
               "apt-get install slurmctld slurmd munge slurm-client"
    if os.geteuid() != 0:
        return "the single-node Slurm of this test runs its daemons as root"
    if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
        return "snakemake-executor-plugin-slurm is not installed (pip install -e '.[test]')"
    return None


def _free_ports(n: int) -> list[int]:
    """n TCP ports the kernel has just handed out as free (held open together, so n different ones)."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for sock in socks:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in socks]
    finally:
        for sock in socks:
            sock.close()


def _config(tmp: Path, host: str, ports: list[int]) -> str:
    return f"""ClusterName=matmulstudy-test
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ports[0]}
SlurmdPort={ports[1]}
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


def _die_with_parent():
    """In the child, before exec: be sent SIGTERM when the process that started it ends, however it ends."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")


def start_daemon(argv: list[str], log: Path, env: dict | None = None) -> subprocess.Popen:
    """A daemon in the foreground, as a child of this process that ends with it."""
    with open(log, "ab") as out:
        return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=env, preexec_fn=_die_with_parent)


def start_munged(tmp: Path) -> subprocess.Popen:
    key = tmp / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    proc = start_daemon([DAEMONS["munged"], "--foreground", "--force", f"--socket={tmp}/munge.socket",
                         f"--key-file={key}", f"--pid-file={tmp}/munged.pid", f"--log-file={tmp}/munged.log",
                         f"--seed-file={tmp}/munge.seed"], tmp / "munged.out")
    for _ in range(100):
        if (tmp / "munge.socket").exists():
            return proc
        time.sleep(0.05)
    raise RuntimeError(f"munged did not open its socket; see {tmp}/munged.log")


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    """A running single-node Slurm of this test's own; yields its folder (logs, job-completion record)."""
    reason = _missing()
    if reason:
        pytest.skip(reason)
    tmp = tmp_path_factory.mktemp("slurm")
    for sub in ("state", "spool", "bin"):
        (tmp / sub).mkdir()
    host = socket.gethostname().split(".")[0]
    conf = tmp / "slurm.conf"
    conf.write_text(_config(tmp, host, _free_ports(2)))
    (tmp / "gres.conf").write_text(f"NodeName={host} Name=gpu Type=h100 File=/dev/null\n")
    srun = tmp / "bin" / "srun"
    srun.write_text(f'#!/bin/sh\nSLURM_CONF={conf} exec {shutil.which("srun")} "$@"\n')
    srun.chmod(0o755)
    saved = {k: os.environ.get(k) for k in ("SLURM_CONF", "PATH")}
    os.environ["SLURM_CONF"] = str(conf)
    os.environ["PATH"] = f"{tmp / 'bin'}{os.pathsep}{os.environ['PATH']}"
    daemons = []
    try:
        daemons.append(start_munged(tmp))
        daemons.append(start_daemon([DAEMONS["slurmctld"], "-D", "-f", str(conf)], tmp / "slurmctld.out"))
        daemons.append(start_daemon([DAEMONS["slurmd"], "-D", "-f", str(conf)], tmp / "slurmd.out"))
        for _ in range(300):
            state = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True).stdout.strip()
            if state == "idle":
                break
            if any(d.poll() is not None for d in daemons):
                pytest.fail(f"a Slurm daemon of the test exited; see the logs in {tmp}")
            time.sleep(0.2)
        else:
            pytest.fail(f"the test's Slurm node never became idle (sinfo: {state!r}); see {tmp}/slurmctld.log")
        yield tmp
    finally:
        for proc in reversed(daemons):
            proc.terminate()
        for proc in reversed(daemons):
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _study(dest: Path, **overrides) -> dict:
    with open(ROOT / ".test" / "config" / "config.yaml") as fh:
        cfg = yaml.safe_load(fh)
    cfg.update(overrides)
    (dest / "config").mkdir(parents=True)
    with open(dest / "config" / "config.yaml", "w") as fh:
        yaml.safe_dump(cfg, fh)
    return cfg


def _jobs(slurm: Path, run_id: str) -> list[dict]:
    """Slurm's own record of every job one Snakemake run submitted (Slurm's job name is the run's ID): the
    job-completion log, with scontrol's detail."""
    records = []
    for line in (slurm / "jobcomp.log").read_text().splitlines():
        rec = dict(f.split("=", 1) for f in line.split() if "=" in f)
        if rec.get("Name") != run_id:
            continue
        detail = subprocess.run(["scontrol", "show", "job", rec["JobId"]], capture_output=True, text=True).stdout
        rec["detail"] = detail
        records.append(rec)
    return records


class Run:
    """A Snakemake run started in the background, its output in files (no pipe to fill up)."""

    def __init__(self, folder: Path, *args):
        self.folder = folder
        self.out, self.err = folder.with_suffix(".out"), folder.with_suffix(".err")
        with open(self.out, "w") as out, open(self.err, "w") as err:
            self.proc = subprocess.Popen(snakemake_command(*args, "--directory", str(folder)), cwd=ROOT,
                                         stdout=out, stderr=err, stdin=subprocess.DEVNULL)

    def wait(self, timeout=600) -> tuple[int, str, str]:
        """(exit status, stdout, stderr), once it has ended."""
        code = self.proc.wait(timeout=timeout)
        return code, self.out.read_text(), self.err.read_text()

    def slurm_run_id(self) -> str:
        found = re.search(r"SLURM run ID: (\S+)", self.out.read_text() + self.err.read_text())
        assert found, "the executor did not print its run ID"
        return found.group(1)


SMALL = {"sizes": [16], "shapes": [], "reference_size": 16}   # every rule of the study, fewest jobs


@pytest.fixture(scope="module")
def runs(slurm, tmp_path_factory):
    """The three runs the tests check, started together so that their waits on Slurm overlap: the CPU-only
    study through Slurm and locally, and a GPU study through Slurm."""
    root = tmp_path_factory.mktemp("runs")
    _study(root / "cpu_slurm", **SMALL)
    _study(root / "cpu_local", **SMALL)
    _study(root / "gpu_slurm", **SMALL, variants=["numpy", "gpu_naive"])
    started = {"cpu_slurm": Run(root / "cpu_slurm", *PROFILE_ARGS),
               "cpu_local": Run(root / "cpu_local", "--cores", "1", "--config", f"label={LABEL}"),
               "gpu_slurm": Run(root / "gpu_slurm", *PROFILE_ARGS)}
    try:
        yield started
    finally:
        for run in started.values():
            if run.proc.poll() is None:
                run.proc.terminate()
                run.proc.wait(timeout=60)


DETERMINISTIC = ["variant", "dtype", "M", "N", "K", "seed", "verified", "check", "max_error", "tolerance",
                 "bad_elements", "unwritten_elements"]


def test_cpu_study_through_slurm_equals_a_local_run(slurm, runs):
    code, out, err = runs["cpu_slurm"].wait()
    assert code == 0, out[-2000:] + err[-3000:]
    code, _, err = runs["cpu_local"].wait()
    assert code == 0, err[-3000:]
    on_slurm, local = runs["cpu_slurm"].folder, runs["cpu_local"].folder

    # Slurm ran the jobs: its completion log holds one record per submitted job, all completed
    jobs = _jobs(slurm, runs["cpu_slurm"].slurm_run_id())
    assert jobs and all(j["JobState"] == "COMPLETED" for j in jobs), [j["JobState"] for j in jobs]
    comments = " ".join(j["detail"] for j in jobs)
    groups = profile_groups()
    for rule in ("make_inputs", "make_reference", "compile_kernel", "collect_results", "plot_report"):
        group = groups.get(rule, rule)   # the Slurm job's comment names the rule, or its group
        assert f"rule_{group}_" in comments or f"rule_{group}\n" in comments, rule
    timing = [j for j in jobs if "rule_timing" in j["detail"]]
    assert len(timing) == 1, "every timed job of the study in one Slurm job"
    assert "TresPerJob=gres:gpu" not in comments   # a study without GPU variants asks for none

    # the same results as a local run, but for the times themselves
    report = f"reports/{LABEL}/samples.csv.gz"
    a, b = (read_results(d / report) for d in (on_slurm, local))
    key = ["variant", "M", "N", "K"]
    a, b = (x.drop_duplicates(key)[DETERMINISTIC].sort_values(key).reset_index(drop=True) for x in (a, b))
    pd.testing.assert_frame_equal(a, b)
    for inputs in (on_slurm / "results" / "inputs").rglob("*.npy"):
        twin = local / inputs.relative_to(on_slurm)
        assert np.array_equal(np.load(inputs), np.load(twin)), inputs
    rows = read_results(on_slurm / report)
    assert list(rows["host"].unique()) == [socket.gethostname()]   # the node is recorded
    assert rows["slurm_job_id"].notna().all() and read_results(local / report)["slurm_job_id"].isna().all()


def test_gpu_jobs_ask_slurm_for_the_labels_gpu(slurm, runs):
    """A GPU study: the timed jobs go as one Slurm job with --gpus=h100:1; nothing else asks for a GPU.

    This node has no real GPU, so that job fails inside (query_gpu says so in
    one line); what is checked is what Slurm received.
    """
    code, _, _ = runs["gpu_slurm"].wait()
    assert code != 0   # no GPU here
    jobs = _jobs(slurm, runs["gpu_slurm"].slurm_run_id())
    timing = [j for j in jobs if "rule_timing" in j["detail"]]
    others = [j for j in jobs if "rule_timing" not in j["detail"]]
    assert len(timing) == 1 and "TresPerJob=gres:gpu:h100:1" in timing[0]["detail"]
    assert others and not any("gres:gpu" in j["detail"] for j in others)
    assert any(f"rule_{profile_groups()['compile_kernel']}" in j["detail"] for j in others)   # nvcc: CPU-only jobs
    log = (runs["gpu_slurm"].folder / "logs" / "query_gpu" / "h100.log").read_text()
    assert log.startswith("error: no usable GPU:")


def test_a_daemon_of_the_test_ends_when_the_test_is_killed(tmp_path):
    """start_daemon's children get SIGTERM when the process that started them ends, even by SIGKILL (which
    runs no cleanup): a stand-in daemon (sleep) started by a child Python that is then killed."""
    pidfile = tmp_path / "daemon.pid"
    starter = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; sys.path.insert(0, sys.argv[1]); import test_slurm as t; "
         "p = t.start_daemon(['sleep', '300'], t.Path(sys.argv[2]).with_suffix('.log')); "
         "open(sys.argv[2], 'w').write(str(p.pid)); time.sleep(300)", str(ROOT / "tests"), str(pidfile)])
    try:
        for _ in range(200):
            if pidfile.exists() and pidfile.read_text():
                break
            time.sleep(0.05)
        daemon = int(pidfile.read_text())
        assert _alive(daemon)
        starter.kill()
        starter.wait()
        for _ in range(100):
            if not _alive(daemon):
                break
            time.sleep(0.05)
        else:
            pytest.fail("the daemon outlived the process that started it")
    finally:
        starter.kill()


def _alive(pid: int) -> bool:
    """Running, or stopped; not gone and not a zombie waiting to be reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"
