"""Where everything of a study lies: the repository's own files, and the workflow's path templates.

The templates are Snakemake patterns ({label}, {dtype}, {variant}, {seed},
{shape}, {ext}, {name}): the rules name them as their outputs, and the input
functions and the figure table fill them in with str.format. Nothing else
writes a path of the pipeline.

    results/inputs/<dtype>/<shape>_s<seed>/   seeded A and B (and a CPU-only study's reference)
    results/<label>/                          a study's scratch: builds, GPU facts, samples, profiles
    reports/<label>/                          a study's published tables, figures and pages
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]            # the repository
KERNELS_DIR = ROOT / "kernels"
KERNEL_HEADERS = KERNELS_DIR / "common"               # the pieces the SIMT steps share (*.cuh)
SM90_HEADERS = KERNELS_DIR / "sm90"                   # the tensor-core kernels' roles (*.cuh)
REGISTRY_PATH = KERNELS_DIR / "registry.yaml"
CONFIG_PATH = ROOT / "config" / "config.yaml"
SCHEMA_PATH = ROOT / "workflow" / "schemas" / "config.schema.yaml"
HARNESS_SOURCE = ROOT / "matmulstudy" / "gpu" / "harness.cu"   # the harness's kernels: timing, verification
LAUNCHER_SOURCE = ROOT / "matmulstudy" / "gpu" / "launch.cu"   # compute-sanitizer's launcher (measure/sanitize.py)

# --- the pipeline's files ----------------------------------------------------
INPUTS = "results/inputs/{dtype}/{shape}_s{seed}"      # A.npy, B.npy (ref.npy, scale.npy: CPU-only)
INPUT_A, INPUT_B = INPUTS + "/A.npy", INPUTS + "/B.npy"
REFERENCE, SCALE = INPUTS + "/ref.npy", INPUTS + "/scale.npy"   # a CPU-only study's float64 reference
RESULTS = "results/{label}"
GPU_FACTS = RESULTS + "/gpu.json"
HARNESS = RESULTS + "/build/harness.cubin"
LAUNCHER = RESULTS + "/build/launch"
BINARY = RESULTS + "/build/{dtype}/{variant}.{ext}"   # cubin (cuda) or so (c)
RESOURCES = BINARY + ".json"                          # its resource report
SASS = RESULTS + "/build/{dtype}/{variant}.sass.json"
SAMPLES = RESULTS + "/bench/{dtype}/{variant}_s{seed}.csv"
ENERGY = RESULTS + "/energy.csv"                       # every GPU variant's sustained run, after every timed one
HEADLINE = RESULTS + "/headline.csv"                   # the headline ratios in rounds, after the energy phase
HEADLINE_PART = RESULTS + "/headline/{precision}.csv"  # one precision's rounds: a job each (one call of a lent GPU)
NCU = RESULTS + "/ncu/{variant}_{shape}.json"
SANITIZER = RESULTS + "/sanitizer/{variant}.csv"
TUNING = RESULTS + "/tuning/{variant}.{ext}"          # csv: every candidate; json: the choice
STUDY_LABEL_ENV = "MATMULSTUDY_GPU_LABEL"            # the GPU study a shared job runs for (common.smk)
GPU_LOG = "logs/query_gpu/{label}.log"                # its first line says why a GPU was not usable

# --- a study's folder: what collect_results and plot_report write, what everything reads --------------
REPORT = "reports/{label}"
STUDY_FILES = {
    "results": "samples.csv.gz", "measured_with": "measured_with.csv", "summary": "summary.csv",
    "hardware": "hardware.csv",
    "failures": "failures.txt", "skipped": "skipped.csv", "gpu": "gpu.json",
    "registry": "registry.yaml", "config": "config.yaml", "sanitizer": "sanitizer.csv",
    "tuning": "tuning.csv", "energy": "energy.csv", "headline": "headline.csv", "page": "README.md", "provenance": "provenance.rst",
    "counters_at": "counters_at.csv",   # a step's counters where it is meant to win, and the step before's (shown_at)
}
FIGURE = REPORT + "/figures/{name}.{ext}"             # png and svg
GPUS = "reports"                                      # the studies side by side
GPUS_FIGURE = GPUS + "/figures/progression_by_gpu_{precision}.svg"   # one per precision
GPUS_PAGE = GPUS + "/README.md"


def fill(template: str, **values) -> str:
    """A template with some of its wildcards filled in and the others left ({label} stays a pattern)."""
    for key, value in values.items():
        template = template.replace("{" + key + "}", str(value))
    return template


def study_file(key: str, label: str = "{label}") -> str:
    """reports/<label>/<file> of one of STUDY_FILES (a pattern, where label is left as {label})."""
    return f"{REPORT.format(label=label)}/{STUDY_FILES[key]}"


def binary(label: str, variant, dtype: str) -> str:
    """A built variant: a cubin (cuda) or a shared library (c); its resource report is this + .json."""
    ext = {"cuda": "cubin", "c": "so"}[variant.backend]
    return BINARY.format(label=label, dtype=dtype, variant=variant.id, ext=ext)


def inputs(dtype: str, shape, seed) -> dict:
    """The input files of one shape and seed: {a, b, ref, scale} (ref and scale: a CPU-only study's)."""
    where = {"dtype": dtype, "shape": shape.tag, "seed": seed}
    return {key: t.format(**where) for key, t in (("a", INPUT_A), ("b", INPUT_B), ("ref", REFERENCE), ("scale", SCALE))}
