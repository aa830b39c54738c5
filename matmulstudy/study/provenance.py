"""Where a result comes from: the code, the config, the machine, the time.

Every results row carries these facts, so that a table can say which commit
and which config produced it, and two tables from different GPUs or commits
are never merged without anyone noticing (report/results.py's collect refuses).
"""

from __future__ import annotations

import datetime
import os
import platform
import socket
import subprocess
from pathlib import Path

from .paths import ROOT


def git_state(root: Path = ROOT) -> dict:
    """The project's commit, and whether its tracked files differ from it.

    The study's own outputs (reports/) are left out of "dirty": the run
    writes them itself. A copy of the tree whose .git is missing or stale (a
    cluster's staging area, a synced copy) names its commit in
    MATMULSTUDY_GIT_COMMIT, which then wins; dirtiness is judged against that
    commit where the local git knows it, and is unknown (None) elsewhere.
    """
    def git(*args):
        try:
            proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
        except OSError:
            return None
        return proc.stdout.strip() if proc.returncode == 0 else None
    named = os.environ.get("MATMULSTUDY_GIT_COMMIT")
    commit = git("rev-parse", "--verify", "--quiet", f"{named}^{{commit}}") if named else git("rev-parse", "HEAD")
    if commit is None:
        return {"git_commit": named or "unknown", "git_dirty": None}
    changes = git("diff", "--name-only", commit, "--", ".", ":(exclude)reports")
    return {"git_commit": commit, "git_dirty": None if changes is None else bool(changes)}


def run_facts(config_hash: str) -> dict:
    """The facts of one measurement job that do not depend on the device.

    config_hash: the hash of the validated settings (Settings.hash).
    """
    return {**git_state(), "config_hash": config_hash, "host": socket.gethostname(),
            "slurm_job_id": os.environ.get("SLURM_JOB_ID"),
            "python": platform.python_version(),
            "timestamp": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
