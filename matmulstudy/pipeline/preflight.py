"""What a run checks once Snakemake has planned its jobs and before the first one starts (common.smk's onstart):
that the jobs that need a GPU have one, and that every file the jobs write can be written. Either problem is
said in one line, before a build or a measurement spends its time, rather than as a job's failure later."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import StudyError


def _needs_gpu(job) -> bool:
    return bool(job.resources.get("gpu", 0))


def _unwritable(path: Path) -> Path | None:
    """The folder that stops `path` from being written (its nearest existing ancestor, where that is not
    writable), or None."""
    folder = path.parent.absolute()
    while not folder.exists():
        folder = folder.parent
    return None if os.access(folder, os.W_OK | os.X_OK) else folder


def check(jobs, local: bool) -> None:
    """StudyError, in one line, where the planned `jobs` cannot run here: a job needs the GPU and this machine has
    none usable (only where the jobs run on this machine: on a cluster the GPU is the nodes', and query_gpu says
    it there), or a folder a job writes into is not writable."""
    jobs = list(jobs)
    gpu_jobs = [job for job in jobs if _needs_gpu(job)]
    if local and gpu_jobs:
        from ..gpu.session import require_pycuda
        try:
            require_pycuda()
        except StudyError as err:
            raise StudyError(f"{err}; nothing was run: {len(gpu_jobs)} job(s) of this study need the GPU "
                             "(`snakemake build` builds what needs none)") from None
    asked = set()   # each output folder once: a study's hundreds of outputs lie in a few dozen folders
    # in the order of the rules' names and their outputs: Snakemake's own order of the jobs follows the objects'
    # hashes, which change with whatever else the process has made, and the line would name another rule
    for job in sorted(jobs, key=lambda job: (job.rule.name, [str(output) for output in job.output])):
        for output in job.output:
            parent = Path(output).parent
            if parent in asked:
                continue
            asked.add(parent)
            folder = _unwritable(Path(output))
            if folder is not None:
                raise StudyError(f"{folder} is not writable, and rule {job.rule.name} writes {output} there; "
                                 "nothing was run: give it write permission (or run the study in a copy)")
