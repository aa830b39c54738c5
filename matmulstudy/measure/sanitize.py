"""compute-sanitizer on one launch of a kernel: memcheck, initcheck, racecheck, synccheck.

Verification shows a result is right on the shapes it ran; the sanitizer
shows what a right result can hide: an out-of-bounds read that happened to
find harmless data (memcheck), a read of memory nothing wrote (initcheck),
a shared-memory race that happened to resolve in the right order
(racecheck), a barrier reached by only part of a block (synccheck).

Each tool runs gpu/launch.cu, a small native program that makes one
launch of the kernel from its cubin with the study's arguments and launch
geometry, on ragged shapes (config sanitizer_shapes); a variant that chooses
among kernels by shape (step 20) has each of them launched at every shape.
One row per tool, variant, kernel and shape: the errors (and racecheck's
warnings) the tool reported.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd

from ..errors import StudyError
from ..gpu.cubin import launch_facts
from ..study.paths import LAUNCHER_SOURCE
from ..study.shapes import Shape
from ..study.variant import Variant
from .build import run_build

TOOLS = ("memcheck", "initcheck", "racecheck", "synccheck")
TIMEOUT_S = 600


def sanitizer_exe() -> str:
    """compute-sanitizer from PATH or the CUDA toolkit, or a one-line error that says how to get it."""
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    for root in filter(None, [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]):
        for path in (Path(root) / "bin" / "compute-sanitizer",
                     Path(root) / "compute-sanitizer" / "compute-sanitizer"):
            if os.access(path, os.X_OK):
                return str(path)
    raise StudyError("compute-sanitizer was not found on PATH: it comes with the CUDA toolkit (its bin folder); "
                     "install the toolkit or add its bin folder to PATH, or set sanitizer: false")


def build_launcher(out: Path, log) -> None:
    """The native launcher (launch.cu), built by nvcc for the host; it loads any cubin."""
    out.parent.mkdir(parents=True, exist_ok=True)
    run_build(["nvcc", "-O2", "-o", str(out), str(LAUNCHER_SOURCE)], log)


def command(tool: str, launcher, cubin, variant: Variant, shape: Shape, exe: str | None = None,
            sms: int | None = None) -> list[str]:
    M, N, _ = variant.launch_shape(*shape)   # a variant with align_rows multiplies the padded problem
    grid, block = variant.launch_grid(M, N, sms), variant.block
    kernel = variant.kernel_for(*shape, sms)
    facts = launch_facts(cubin, kernel)   # the built kernel's shared memory and workspace, where it exports them
    shared = facts.shared_bytes if facts else 0
    boxes = ["x".join(map(str, box)) for box in variant.tensor_maps.values()]
    extra = [str(shared), *boxes] if shared or boxes else []
    extra += [f"pad={variant.align_rows}"] * bool(variant.align_rows)
    extra += [f"elem={variant.operand_element.bytes}"] * (bool(boxes) and variant.operand_element.bytes != 4)
    extra += [f"ws={facts.workspace_bytes}"] if facts else []
    return [exe or sanitizer_exe(), "--tool", tool, "--print-limit", "20", str(launcher), str(cubin), kernel,
            *map(str, shape), str(grid[0]), str(grid[1]), str(block[0]), str(block[1]), *extra]


_ERRORS = re.compile(r"ERROR SUMMARY: (\d+) errors?")
_RACES = re.compile(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)")


def parse(text: str) -> dict:
    """The counts in compute-sanitizer's summary lines; None where it printed none (it did not finish)."""
    errors = [int(m.group(1)) for m in _ERRORS.finditer(text)]
    races = _RACES.search(text)
    out = {"errors": max(errors) if errors else None, "warnings": 0}
    if races:
        out["errors"] = max(out["errors"] or 0, int(races.group(2)))
        out["warnings"] = int(races.group(3))
    return out


def first_report(text: str) -> str:
    """The first problem the tool described, in one line (for the table and the page)."""
    for line in text.splitlines():
        line = line.strip("= ").strip()
        if re.match(r"(Invalid|Uninitialized|Error|Warning|Race|Barrier|Program hit)", line):
            return line[:200]
    return ""


def run(tool: str, launcher, cubin, variant: Variant, shape: Shape, log, exe: str | None = None,
        sms: int | None = None) -> dict:
    """One tool on one launch; a row of the sanitizer table."""
    cmd = command(tool, launcher, cubin, variant, shape, exe, sms)
    print("$ " + " ".join(cmd), file=log, flush=True)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
        text, status = proc.stdout + proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as err:
        parts = [p.decode(errors="replace") if isinstance(p, bytes) else p for p in (err.stdout, err.stderr) if p]
        text, status = "".join(parts), f"timed out after {TIMEOUT_S} s"
    log.write(text)
    counts = parse(text)
    finished = counts["errors"] is not None and status == 0
    clean = finished and counts["errors"] == 0 and counts["warnings"] == 0
    return {"tool": tool, "variant": variant.id, "kernel": variant.kernel_for(*shape, sms), "shape": shape.tag,
            "errors": counts["errors"], "warnings": counts["warnings"], "clean": clean,
            "status": "ok" if finished else f"did not finish (exit {status})",
            "first_report": first_report(text)}


def sanitize(variant: Variant, cubin, launcher, shapes: list[Shape], log, tools=TOOLS,
             sms: int | None = None) -> pd.DataFrame:
    """Every tool on one launch of each of the variant's kernels at every shape (on a GPU of `sms`
    multiprocessors)."""
    exe = sanitizer_exe()
    return pd.DataFrame([run(tool, launcher, cubin, variant.only(kernel), shape, log, exe, sms)
                         for kernel in variant.kernels for shape in shapes for tool in tools])


def is_clean(verdict_text) -> bool:
    """Whether a verdict (hardware.csv's sanitizer column) found nothing; not run (empty) counts as clean."""
    return pd.isna(verdict_text) or str(verdict_text).startswith("clean")


def verdict(table: pd.DataFrame) -> pd.Series:
    """Per variant, one phrase for the hardware table and the page: 'clean', or what was found."""
    def one(rows):
        bad = rows[~rows["clean"].astype(bool)]
        kernels = rows["kernel"].nunique() if "kernel" in rows else 1   # tables from before step 20 was written have none
        if bad.empty:
            return (f"clean ({rows['tool'].nunique()} tools, {rows['shape'].nunique()} shapes"
                    + (f", {kernels} kernels)" if kernels > 1 else ")"))
        return "; ".join(f"{r.tool} on {r.shape}" + (f" ({r.kernel})" if kernels > 1 else "") + ": "
                         + (f"{int(r.errors)} errors, {int(r.warnings)} warnings" if pd.notna(r.errors) else r.status)
                         for r in bad.itertuples())
    return table.groupby("variant", sort=False).apply(one, include_groups=False)
