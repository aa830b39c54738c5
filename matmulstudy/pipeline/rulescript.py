"""Glue for the rule scripts in workflow/scripts/: logging and one-line errors."""

from __future__ import annotations

import os
import sys
import time
import traceback
from contextlib import redirect_stderr, redirect_stdout

from ..errors import StudyError


def warn(message: str) -> None:
    """One line in the job's log and on the terminal, for a failure the job records and survives."""
    print(f"error: {message}", flush=True)
    print(f"error: {message}", file=sys.__stderr__, flush=True)


def process_age_s() -> float | None:
    """Seconds since this process started (Linux's /proc), or None elsewhere."""
    try:
        with open("/proc/self/stat") as fh:
            ticks = int(fh.read().rsplit(")", 1)[1].split()[19])   # field 22: start, in clock ticks after boot
        with open("/proc/uptime") as fh:
            return float(fh.read().split()[0]) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


PROFILE = "MATMULSTUDY_PROFILE"   # set (to anything): each job's work is profiled (development, not the study)


def run(snakemake, body) -> None:
    """Call ``body(snakemake, log)`` with its output going to the job's log, and end the log with where the
    job's time went: from the process's start to the rule's work (Python, imports, Snakemake's preamble), and
    the work. With MATMULSTUDY_PROFILE in the environment the work runs under cProfile: its statistics go
    beside the log (<log>.prof) and the log ends with the calls that took longest, cumulatively.

    A StudyError ends the job with its one-line message, in the log and on
    the terminal; anything else is a bug and leaves its traceback in the log.
    """
    before = process_age_s()
    start = time.perf_counter()
    with open(snakemake.log[0], "w") as log, redirect_stdout(log), redirect_stderr(log):
        try:
            if os.environ.get(PROFILE):
                _profiled(body, snakemake, log)
            else:
                body(snakemake, log)
            if before is not None:
                print(f"job time: {before:.2f} s from the process's start to the rule's work, "
                      f"{time.perf_counter() - start:.2f} s of work", file=log)
        except StudyError as err:
            warn(str(err))
            raise SystemExit(1) from None
        except Exception:
            traceback.print_exc()
            raise


def _profiled(body, snakemake, log) -> None:
    """body(snakemake, log) under cProfile; the statistics in <log>.prof, the 25 longest calls in the log."""
    import cProfile
    import pstats

    profile = cProfile.Profile()
    try:
        profile.runcall(body, snakemake, log)
    finally:
        profile.dump_stats(f"{snakemake.log[0]}.prof")
        print(f"--- {PROFILE}: the longest calls, cumulatively ({snakemake.log[0]}.prof has them all)", file=log)
        pstats.Stats(profile, stream=log).sort_stats("cumulative").print_stats(25)
