"""Glue for the rule scripts in workflow/scripts/: logging and one-line errors."""

from __future__ import annotations

import sys
import traceback
from contextlib import redirect_stderr, redirect_stdout

from ..errors import StudyError


def warn(message: str) -> None:
    """One line in the job's log and on the terminal, for a failure the job records and survives."""
    print(f"error: {message}", flush=True)
    print(f"error: {message}", file=sys.__stderr__, flush=True)


def run(snakemake, body) -> None:
    """Call ``body(snakemake, log)`` with its output going to the job's log.

    A StudyError ends the job with its one-line message, in the log and on
    the terminal; anything else is a bug and leaves its traceback in the log.
    """
    with open(snakemake.log[0], "w") as log, redirect_stdout(log), redirect_stderr(log):
        try:
            body(snakemake, log)
        except StudyError as err:
            warn(str(err))
            raise SystemExit(1) from None
        except Exception:
            traceback.print_exc()
            raise
