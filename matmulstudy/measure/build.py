"""Building variants: nvcc and gcc command lines, and ptxas's resource report."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from ..errors import StudyError
from ..gpu import cubin
from ..study.paths import HARNESS_SOURCE
from ..study.registry import DTYPES
from ..study.variant import Variant

NVCC_FLAGS = ["-O3", "-lineinfo"]   # -lineinfo: source lines for ncu, no cost
GCC_FLAGS = ["-O2", "-shared", "-fPIC"]


def nvcc_command(variant: Variant, arch: str, out: Path, dtype: str = "float32") -> list[str]:
    """nvcc line that builds a cuda variant into a cubin for one target.

    The registry's defines and the element type (-DELEM=float|int) are the
    kernel's parameters; the block it is launched with (the registry's
    `block`) comes as BLOCK_DIM_X and BLOCK_DIM_Y, which the kernel
    static_asserts against the geometry its code is written for, so that a
    registry entry and its kernel cannot disagree unseen. -Xptxas=-v makes
    ptxas print registers, shared memory and spills per kernel; parse_ptxas()
    turns that into data.
    """
    x, y, _ = variant.block
    defines = [f"-D{k}={v}" for k, v in {**variant.defines, "ELEM": DTYPES[dtype], "BLOCK_DIM_X": x,
                                         "BLOCK_DIM_Y": y}.items()]
    return ["nvcc", "-cubin", f"-arch={arch}", *NVCC_FLAGS, "-Xptxas=-v", *defines,
            "-o", str(out), str(variant.file)]


def gcc_command(variant: Variant, out: Path) -> list[str]:
    return ["gcc", *GCC_FLAGS, "-o", str(out), str(variant.file)]



def build_harness(arch: str, out: Path, log) -> None:
    """The harness's blocking kernel (harness.cu), for the GPU at hand."""
    out.parent.mkdir(parents=True, exist_ok=True)
    run_build(["nvcc", "-cubin", f"-arch={arch}", "-O3", "-o", str(out), str(HARNESS_SOURCE)], log)


def build_sm90_probe(source: Path, out: Path, arch: str, what: str) -> Path:
    """A probe of matmulstudy/gpu/ (source) built into the folder `out` for an sm_90 GPU, as sm_90a as the steps
    are; on another GPU (`arch`), StudyError naming the probe (`what`: "the feed probe ... (...)")."""
    if arch != "sm_90":
        raise StudyError(f"{what} needs an sm_90 GPU; this is {arch}")
    cubin = out / (source.stem + ".cubin")
    run_build(["nvcc", "-cubin", "-arch=sm_90a", "-O3", "-o", str(cubin), str(source)], io.StringIO())
    return cubin


_PTXAS = {
    "registers": r"Used (\d+) registers",
    "barriers": r"used (\d+) barriers",
    "shared_bytes": r"(\d+) bytes smem",
    "stack_bytes": r"(\d+) bytes stack frame",
    "spill_store_bytes": r"(\d+) bytes spill stores",
    "spill_load_bytes": r"(\d+) bytes spill loads",
}


def parse_ptxas(text: str) -> dict[str, dict[str, int]]:
    """ptxas -v output -> {kernel: {registers, shared_bytes, spill_*...}}.

    Each entry function's block starts at "Compiling entry function 'name'";
    a count that ptxas leaves out (no smem, no barriers) is 0.
    """
    out = {}
    for block in re.split(r"(?=Compiling entry function ')", text)[1:]:
        name = re.match(r"Compiling entry function '([^']+)'", block).group(1)
        out[name] = {key: int(m.group(1)) if (m := re.search(rx, block)) else 0
                     for key, rx in _PTXAS.items()}
    return out


def compiler_version(exe: str) -> str:
    """The last line of `exe --version` that names a version, e.g. nvcc's 'Build cuda_13.0...'."""
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout
    except OSError:
        return "unknown"
    lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
    if exe == "nvcc":
        return next((ln for ln in reversed(lines) if ln.startswith("Cuda compilation tools")), lines[-1] if lines else "unknown")
    return lines[0] if lines else "unknown"


def run_build(cmd: list[str], log) -> str:
    """Run a compiler, copy its output to the log, raise StudyError on failure."""
    if shutil.which(cmd[0]) is None:
        raise StudyError(f"{cmd[0]} was not found on PATH; install it (nvcc: the CUDA toolkit) or fix PATH")
    print("$ " + " ".join(cmd), file=log, flush=True)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    log.write(proc.stdout + proc.stderr)
    log.flush()
    if proc.returncode != 0:
        first = next((ln for ln in (proc.stderr + proc.stdout).splitlines() if "error" in ln.lower()),
                     f"exit status {proc.returncode}")
        raise StudyError(f"{cmd[0]} failed on {cmd[-1]}: {first.strip()}")
    return proc.stdout + proc.stderr


def built_variant(variant: Variant, binary) -> Variant:
    """The variant as its binary was built: with the defines of its resource report (binary + .json)
    where there is one, so that a tuned build is launched with the geometry it was built for."""
    report = Path(f"{binary}.json")
    if not report.exists():
        return variant
    with open(report) as fh:
        return variant.with_defines(json.load(fh).get("defines", {}))


def _launch_facts(cubin_path: Path, kernel: str) -> dict:
    """The dynamic shared memory and workspace the built kernel is launched with (its exported LaunchFacts,
    gpu/cubin.py; none for a kernel that exports none)."""
    facts = cubin.launch_facts(cubin_path, kernel)
    return {"dynamic_shared_bytes": facts.shared_bytes if facts else 0,
            "workspace_bytes": facts.workspace_bytes if facts else 0}


def build(variant: Variant, out: Path, resources: Path, arch: str | None, log,
          dtype: str = "float32") -> dict:
    """Build one variant for one element type; write its resource report (JSON)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    if dtype not in variant.dtypes:
        raise StudyError(f"{variant.id} does not run {dtype} (its dtypes: {list(variant.dtypes)})")
    if variant.backend == "cuda":
        if not arch:
            raise StudyError(f"{variant.id}: no nvcc target; set arch in config (e.g. sm_90)")
        cmd = nvcc_command(variant, arch, out, dtype)
        kernels = parse_ptxas(run_build(cmd, log))
        missing = [k for k in variant.kernels if k not in kernels]
        if missing:
            raise StudyError(f"{variant.file.name} has no kernel named '{missing[0]}' "
                             f"(found {sorted(kernels)}); the __global__ function must be named as in the registry")
        report = {"variant": variant.id, "dtype": dtype, "arch": arch, "defines": variant.defines,
                  "compiler": compiler_version("nvcc"), "flags": " ".join(cmd[1:-3]),
                  "block": list(variant.block[:2]), "tile": list(variant.tile),
                  "flop_per_byte": variant.flop_per_byte, **_launch_facts(out, variant.kernel),
                  **kernels[variant.kernel]}   # its own kernel's (step 20's other kernel is step 19's)
    elif variant.backend == "c":
        cmd = gcc_command(variant, out)
        run_build(cmd, log)
        report = {"variant": variant.id, "dtype": dtype, "arch": "host", "defines": variant.defines,
                  "compiler": compiler_version("gcc"), "flags": " ".join(cmd[1:-3])}
    else:
        raise StudyError(f"{variant.id}: backend {variant.backend} is not built")
    with open(resources, "w") as fh:
        json.dump(report, fh, indent=2)
    return report


def record_failed_build(variant: Variant, dtype: str, binary: Path, resources: Path, error: str, log_path: str) -> None:
    """A build that failed, as the build's outputs: an empty binary and a resource report that says so."""
    binary.parent.mkdir(parents=True, exist_ok=True)
    binary.write_bytes(b"")
    with open(resources, "w") as fh:
        json.dump({"variant": variant.id, "dtype": dtype, "failed": f"build failed: {error}", "log": log_path},
                  fh, indent=2)


def forget_failed(resource_reports: list) -> list[str]:
    """Remove the resource report of every build recorded as failed, so that the run builds it again: a failed
    build is never a finished output, and while its source stays broken every run fails on it and names it
    (ending.py). Returns the reports it removed."""
    forgotten = []
    for report in resource_reports:
        if os.path.exists(report) and failed_build(report):
            os.remove(report)
            forgotten.append(str(report))
    return forgotten


def failed_build(resources) -> dict | None:
    """The record of a failed build ({variant, dtype, failed, log}) from its resource report, or None for a built
    one."""
    with open(resources) as fh:
        report = json.load(fh)
    return ({key: report.get(key) for key in ("variant", "dtype", "failed", "log")} if report.get("failed")
            else None)
