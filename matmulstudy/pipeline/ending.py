"""The lines that end a run of the workflow, after Snakemake's own: what failed and where to read why, or
why a GPU study could not use its GPU. workflow/rules/common.smk calls these from onsuccess and onerror."""

from __future__ import annotations

import os
import sys

from ..gpu import host
from ..study import paths


INTERRUPTED = "Terminating processes on user request"   # what Snakemake logs on Ctrl-C


def _interrupted(logs) -> bool:
    """Whether Snakemake's log of this run (a path, or a list of them) records a Ctrl-C."""
    for path in [logs] if isinstance(logs, str) else list(logs or []):
        if os.path.exists(path):
            with open(path, errors="replace") as fh:
                if INTERRUPTED in fh.read():
                    return True
    return False


def end_of_error(rules, log=None) -> None:
    """After a failed run, as its very last line (printed at exit, after Snakemake's own closing lines, "At least
    one job did not complete successfully"): the reason a GPU study could not use its GPU; or, after Ctrl-C
    (Snakemake's log of the run, `log`, says so), that the same command resumes the run."""
    import atexit
    why = rules.run.uses_gpu and host.gpu_failure(paths.GPU_LOG.format(label=rules.run.label))
    if why:
        atexit.register(print, f"{why} (the study's GPU jobs did not run; `snakemake build` builds what needs "
                        "no GPU)", file=sys.stderr)
    elif _interrupted(log):
        atexit.register(print, "interrupted: the same command resumes the run (the finished jobs are kept, the "
                        "ones cut short run again)", file=sys.stderr)


def _last_line(line: str, failed: bool) -> None:
    """At exit, after Snakemake's own closing lines: `line` last; with `failed`, a non-zero exit status."""
    print(line, file=sys.stderr, flush=True)
    if failed:
        sys.stdout.flush()
        os._exit(1)


def failed_builds(rules, since: float) -> list[str]:
    """'variant dtype (log: path)' for each of the study's builds recorded as failed after `since` (a time
    stamp), in the registry's order."""
    from ..measure.build import failed_build
    return [f"{failed['variant']} {failed['dtype']} (log: {failed['log']})"
            for report in rules.resource_reports(rules.run.label)
            if os.path.exists(report) and os.path.getmtime(report) > since and (failed := failed_build(report))]


def end_of_success(rules, since: float = 0.0) -> None:
    """After a run that finished: what failed, named as the run's last line (printed at exit, after Snakemake's
    closing lines); a build or a run that failed also makes the exit status non-zero (a wrong result is
    recorded, as ever). A build that failed after the study's tables were last written (`snakemake build`,
    which makes no tables) is named on its own. A run that wrote no table after `since` (its start: `snakemake
    build`, or nothing left to do) says so, rather than speak for a study it did not measure."""
    import atexit

    from ..report.results import failed_runs, failed_summary, failures, read_results
    table, report = paths.study_file("results", rules.run.label), paths.REPORT.format(label=rules.run.label)
    written = os.path.getmtime(table) if os.path.exists(table) else 0.0
    builds = failed_builds(rules, written)
    if builds:
        atexit.register(_last_line, f"error: {len(builds)} build(s) failed: {', '.join(builds)}", True)
        return
    if not written or written < since:
        if since:
            atexit.register(print, f"Nothing measured in this run: the tables in {report}/ are those of an "
                            "earlier run" if written else "Nothing measured in this run", file=sys.stderr)
        return
    df = read_results(table)   # whole columns typed at once: no DtypeWarning as the last words
    lines = failures(df)
    if lines:
        print(f"\nFAILED: {len(lines)} measurement(s), recorded and not plotted (see {report}/failures.txt):",
              file=sys.stderr)
        for line in lines:
            print(f"  {line}", file=sys.stderr)
        atexit.register(_last_line, failed_summary(df, report), not failed_runs(df).empty)
    else:
        atexit.register(print, f"Every result verified; tables and figures in {report}/", file=sys.stderr)
