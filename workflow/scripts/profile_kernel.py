# Nsight Compute's counters of one launch of a step, or of one cuBLAS call
# (config ncu: true).
import json
import subprocess
import sys

from matmulstudy.errors import StudyError
from matmulstudy.gpu import host
from matmulstudy.measure import hardware
from matmulstudy.pipeline import rulescript
from matmulstudy.study.registry import load_registry
from matmulstudy.study.shapes import Shape


def main(snakemake, log):
    variant = load_registry()[snakemake.wildcards.variant]
    cmd = hardware.ncu_command() + [sys.executable, "-m", "matmulstudy.tools.launch_once", variant.id,
                                    snakemake.wildcards.shape] + ([snakemake.input.cubin] if variant.is_built else [])
    print("$ " + " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    log.write(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        raise StudyError(f"ncu failed on {variant.id} (exit {proc.returncode}); see the log")
    with open(snakemake.input.gpu) as fh:
        gpu = json.load(fh)
    shape = Shape.parse(snakemake.wildcards.shape)
    kernel = variant.kernel_for(*shape, gpu["sm_count"]) if variant.is_built else None
    counters = hardware.parse_ncu_csv(proc.stdout, kernel)
    with open(snakemake.output[0], "w") as fh:
        json.dump({"variant": variant.id, "shape": snakemake.wildcards.shape, "ncu_gpu_uuid": host.running_uuid(),
                   **counters}, fh, indent=2)


rulescript.run(snakemake, main)
