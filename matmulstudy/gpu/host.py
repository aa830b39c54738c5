"""Facts about the machine that need no CUDA context: nvidia-smi, the CPU."""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess

from ..errors import StudyError


def visible_gpu() -> dict:
    """Name and compute capability of the first GPU that CUDA will use.

    Asks nvidia-smi (cheap, no CUDA context). nvidia-smi ignores
    CUDA_VISIBLE_DEVICES, so its first entry picks the device by index/UUID.
    """
    exe = shutil.which("nvidia-smi")
    if exe is None:
        raise StudyError("no GPU is visible: nvidia-smi was not found (no NVIDIA driver on this machine)")
    cmd = [exe, "--query-gpu=name,compute_cap,uuid", "--format=csv,noheader"]
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    if visible:
        cmd.append(f"--id={visible}")
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise StudyError(f"no GPU is visible: nvidia-smi failed ({err})") from None
    lines = [ln for ln in out.stdout.splitlines() if ln.strip()]
    if out.returncode != 0 or not lines:
        msg = (out.stderr or out.stdout).strip().splitlines()
        raise StudyError(f"no GPU is visible: nvidia-smi says {msg[0] if msg else 'nothing'}")
    name, cc, uuid = (f.strip() for f in lines[0].split(","))
    return {"name": name, "compute_capability": cc, "uuid": uuid}


def running_uuid() -> str | None:
    """The UUID of the GPU this process's CUDA work runs on (the first visible one), or None where nvidia-smi
    cannot say. A job records this one, not the study's gpu.json's: a job run on another machine (a study
    resumed elsewhere, Nsight Compute or the sanitizer on another node) must say so, or be refused with the
    samples of another GPU (report/results.py)."""
    try:
        return visible_gpu()["uuid"]
    except StudyError:
        return None


def gpu_label(name: str) -> str:
    """A short folder name for a GPU model: 'NVIDIA H100 80GB HBM3' -> 'h100'.

    Vendor and brand words and the memory size/type go; the model and form
    factor stay ('NVIDIA H100 PCIe' -> 'h100-pcie', 'NVIDIA A100-SXM4-80GB'
    -> 'a100-sxm4'), so GPUs that perform differently get different folders.
    """
    drop = re.compile(r"^(nvidia|geforce|tesla|quadro|\d+gb|hbm\d*e?|gddr\d*x?)$")
    words = [w for w in re.split(r"[^a-z0-9]+", name.lower()) if w and not drop.match(w)]
    return "-".join(words) or "gpu"


def arch_of(compute_capability: str) -> str:
    """'9.0' -> 'sm_90'."""
    major, minor = compute_capability.split(".")
    return f"sm_{major}{minor}"


OLDEST_ARCH = 70   # the harness waits with __nanosleep: sm_70 and newer


def check_arch(arch: str, nvcc: str = "nvcc") -> None:
    """An nvcc target the study can build for, or StudyError saying why not: sm_70 or newer (the harness
    uses __nanosleep), and one the installed nvcc builds for (nvcc --list-gpu-code; an sm_90a is sm_90's)."""
    m = re.fullmatch(r"sm_(\d+)([af]?)", arch)
    if not m:
        raise StudyError(f"config: arch = {arch!r} is not an nvcc target such as sm_90")
    if int(m.group(1)) < OLDEST_ARCH:
        raise StudyError(f"config: arch = {arch} is older than sm_{OLDEST_ARCH}, which the harness needs (it uses "
                         f"__nanosleep); set arch to sm_{OLDEST_ARCH} or newer, or to auto")
    exe = shutil.which(nvcc)
    if exe is None:
        return   # the build says so, naming nvcc
    codes = subprocess.run([exe, "--list-gpu-code"], capture_output=True, text=True).stdout.split()
    if codes and f"sm_{m.group(1)}" not in codes:
        raise StudyError(f"config: arch = {arch} is not one this nvcc builds for ({exe}: {', '.join(codes)}); "
                         "choose one of those, or install a CUDA toolkit that has it")


def gpu_failure(query_log) -> str | None:
    """Why the study's GPU could not be used: the one-line error query_gpu left first in its log, or None
    (no log yet, or the GPU was found)."""
    try:
        with open(query_log) as fh:
            first = fh.readline().strip()
    except OSError:
        return None
    return first if first.startswith("error:") else None


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def blas_threads():
    """Context in which the CPU BLAS uses every core this process may run on.

    Snakemake limits BLAS threads to a job's `threads`; the CPU baseline and
    the reference are meant to use the whole CPU (bench jobs hold all cores).
    """
    from threadpoolctl import threadpool_limits
    return threadpool_limits(limits=cpu_threads(), user_api="blas")


def blas_description() -> str:
    """Which BLAS numpy uses, and with how many threads: 'openblas 0.3.31, 16 threads'."""
    from threadpoolctl import threadpool_info
    blas = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    if not blas:
        return "unknown BLAS"
    return ", ".join(f"{i['internal_api']} {i.get('version')}, {i['num_threads']} threads" for i in blas)


def cpu_threads() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1
