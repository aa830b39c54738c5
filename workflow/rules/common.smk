# Config validation, the registry, and the paths every rule shares.
import sys

try:
    from matmulstudy import config as study, host
    from matmulstudy.build import HARNESS_SOURCE
    from matmulstudy.errors import StudyError
    from matmulstudy.registry import load_registry
    from matmulstudy.results import failures
except ImportError as err:
    sys.exit(f"error: the matmulstudy package cannot be imported ({err}); "
             f"install it with: pip install -e {workflow.basedir}")


def _checked(func, *args):
    """Config problems stop the run here, in one line, before any job."""
    try:
        return func(*args)
    except StudyError as err:
        sys.exit(f"error: {err}")


REGISTRY = _checked(load_registry)
CFG = _checked(study.validate, config, REGISTRY)
VARIANTS = [REGISTRY[v] for v in CFG["variants"]]
USES_GPU = any(v.is_gpu for v in VARIANTS)  # then nvcc builds at least the harness


def _label_and_arch():
    label, arch = CFG["label"], CFG["arch"]
    if label == "auto" or (USES_GPU and arch == "auto"):
        try:
            gpu = host.visible_gpu()
        except StudyError as err:
            sys.exit(f"error: {err}; set label (and arch, e.g. sm_90) in the config "
                     "or run on a machine with a GPU")
        if label == "auto":
            label = host.gpu_label(gpu["name"])
        if arch == "auto":
            arch = host.arch_of(gpu["compute_capability"])
    return label, (arch if USES_GPU else None)


LABEL, ARCH = _label_and_arch()
RESULTS = f"results/{LABEL}"
REPORT = f"reports/{LABEL}"
REPORT_LABELS = [LABEL]   # the studies the report rules draw (render.smk: every committed one)


wildcard_constraints:
    label=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    variant="|".join(REGISTRY),
    dtype="float32|int32",
    shape=r"\d+x\d+x\d+",
    seed=r"\d+",


def gpu_model(wildcards):
    """The GPU a job asks a cluster for: the model its label names (label h100: --gpus=h100:1),
    so an h100 study lands on h100 nodes. Empty (no GPU) for a study without GPU variants."""
    return wildcards.label if USES_GPU else ""


def variant_pattern(backend):
    """Wildcard regex of the variants of one backend (never matches if none)."""
    ids = [vid for vid, v in REGISTRY.items() if v.backend == backend]
    return "|".join(ids) if ids else "(?!)"


def input_dir(dtype, shape, seed):
    return f"results/inputs/{dtype}/{shape.tag}_s{seed}"


def binary_path(label, variant, dtype):
    suffix = {"cuda": "cubin", "c": "so"}[variant.backend]
    return f"results/{label}/build/{dtype}/{variant.id}.{suffix}"


BENCH_SHAPES = {(v.id, dtype, seed): shapes for v, dtype, seed, shapes in study.bench_jobs(CFG, REGISTRY)}


def bench_csvs(label):
    return [f"results/{label}/bench/{dtype}/{vid}_s{seed}.csv" for vid, dtype, seed in BENCH_SHAPES]


def resource_reports(label):
    return [f"results/{label}/build/{dtype}/{v.id}.resources.json"
            for v, dtype in study.builds(CFG, REGISTRY)]


def sass_reports(label):
    return [f"results/{label}/build/{dtype}/{v.id}.sass.json"
            for v, dtype in study.builds(CFG, REGISTRY) if v.backend == "cuda"]


def ncu_reports(label):
    if not CFG["ncu"]:
        return []
    size = CFG["ncu_size"]
    return [f"results/{label}/ncu/{v.id}_{size}x{size}x{size}.json" for v in VARIANTS if v.is_gpu]


def sanitizer_reports(label):
    if not CFG["sanitizer"]:
        return []
    return [f"results/{label}/sanitizer/{v.id}.csv" for v in VARIANTS if v.backend == "cuda"]


def gpu_json(label):
    return [f"results/{label}/gpu.json"] if USES_GPU else []


def final_outputs():
    """The study's tables, figures and pages, and the optional stages' own outputs: asked for here,
    an ncu or sanitizer run added to a finished study runs, and collect then takes it in (Snakemake
    does not run a job for an input that only a job with nothing else to do would read)."""
    sanitizer = [f"{REPORT}/sanitizer.csv"] if CFG["sanitizer"] else []
    return ([f"{REPORT}/results.csv", f"{REPORT}/summary.csv", f"{REPORT}/hardware.csv"] + sanitizer
            + ncu_reports(LABEL) + sanitizer_reports(LABEL) + report_outputs(LABEL))


onsuccess:
    import pandas as pd

    table = f"{REPORT}/results.csv"
    if os.path.exists(table):
        lines = failures(pd.read_csv(table))
        if lines:
            print(f"\nVERIFICATION FAILED for {len(lines)} measurement(s); "
                  f"they are marked, not plotted (see {REPORT}/failures.txt):", file=sys.stderr)
            for line in lines:
                print(f"  {line}", file=sys.stderr)
        else:
            print(f"\nEvery result verified; tables and figures in {REPORT}/", file=sys.stderr)
