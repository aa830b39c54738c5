"""Where a result comes from: the code, the config, the machine, the time.

Every results row carries these facts, so that a table can say which commit
and which config produced it, and two tables from different GPUs or commits
are never merged without anyone noticing (results.collect refuses).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import platform
import socket
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def git_state(root: Path = ROOT) -> dict:
    """The project's commit, and whether its tracked files differ from it.

    The study's own outputs (reports/) are left out of "dirty": the run
    writes them itself. A copy of the tree without .git (a cluster's staging
    area, say) can name its commit in MATMULSTUDY_GIT_COMMIT.
    """
    def git(*args):
        proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
        return proc.stdout.strip() if proc.returncode == 0 else None
    commit = git("rev-parse", "HEAD")
    if commit is None:
        return {"git_commit": os.environ.get("MATMULSTUDY_GIT_COMMIT", "unknown"), "git_dirty": None}
    changes = git("status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)reports")
    return {"git_commit": commit, "git_dirty": bool(changes)}


def config_hash(cfg: dict) -> str:
    """A short hash of the validated config (key order does not matter)."""
    text = json.dumps(cfg, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def run_facts(cfg: dict) -> dict:
    """The facts of one measurement job that do not depend on the device."""
    return {**git_state(), "config_hash": config_hash(cfg), "host": socket.gethostname(),
            "python": platform.python_version(),
            "timestamp": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
