# The settings, the registry, and the paths and input functions every rule
# file shares. Functions only: the rules are in one file per stage.
import dataclasses
import sys

try:
    from matmulstudy import config as study, host
    from matmulstudy.build import HARNESS_SOURCE, LAUNCHER_SOURCE
    from matmulstudy.errors import StudyError
    from matmulstudy.figures import report_outputs
    from matmulstudy.registry import KERNELS_DIR, load_registry
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
KERNEL_HEADERS = sorted(str(p) for p in KERNELS_DIR.glob("*.cuh"))
_GIVEN = _checked(study.validate, config, REGISTRY)
VARIANTS = [REGISTRY[v] for v in _GIVEN.variants]
USES_GPU = any(v.is_gpu for v in VARIANTS)  # then nvcc builds at least the harness


# `snakemake --lint` reads the rules and runs nothing: it asks no GPU for the label and the nvcc target.
LINTING = any(arg == "--lint" or arg.startswith("--lint=") for arg in sys.argv)


def _label_and_arch(given):
    label, arch = given.label, given.arch
    if LINTING:
        return (label if label != "auto" else "lint"), (arch if arch != "auto" else "sm_90")
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
    if USES_GPU:
        _checked(host.check_arch, arch)
    return label, (arch if USES_GPU else None)


# The study's settings, with the label and the nvcc target resolved and the variants its GPU can run: what
# every job measures with, what provenance hashes, what the study keeps. What the GPU cannot run (a registry
# `needs` its arch lacks: mma.sync's TF32 before sm_80, wgmma and TMA off Hopper) is neither built nor run;
# collect_results writes why (skipped.csv), and the page says so.
_LABEL, _ARCH = _label_and_arch(_GIVEN)
SKIPPED = {v.id: why for v in VARIANTS if (why := v.unsupported(_ARCH))}
SETTINGS = dataclasses.replace(_GIVEN, label=_LABEL, arch=_ARCH,
                               variants=type(_GIVEN.variants)(v for v in _GIVEN.variants if v not in SKIPPED))
LABEL, ARCH = SETTINGS.label, SETTINGS.arch
VARIANTS = [REGISTRY[v] for v in SETTINGS.variants]
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


TUNED = [v for v in VARIANTS if v.search] if SETTINGS.tune else []   # what tune_variant sweeps
TUNED_PATTERN = "|".join(v.id for v in TUNED) or "(?!)"


def tuned_choice(wc):
    """compile_kernel's extra input where the study tunes the variant: the chosen defines."""
    return {"chosen": f"results/{wc.label}/tuning/{wc.variant}.json"} if wc.variant in {v.id for v in TUNED} else {}


def tuning_tables(label):
    return [f"results/{label}/tuning/{v.id}.csv" for v in TUNED]


def variant_pattern(backends):
    """Wildcard regex of the variants of some backends (never matches if none)."""
    ids = [vid for vid, v in REGISTRY.items() if v.backend in backends]
    return "|".join(ids) if ids else "(?!)"


def input_dir(dtype, shape, seed):
    return f"results/inputs/{dtype}/{shape.tag}_s{seed}"


def binary_path(label, variant, dtype):
    """A built variant: a cubin (cuda) or a shared library (c); its resource report is this + .json."""
    suffix = {"cuda": "cubin", "c": "so"}[variant.backend]
    return f"results/{label}/build/{dtype}/{variant.id}.{suffix}"


# --- measure_variant: one job per variant, dtype and seed ------------------

BENCH_SHAPES = {(v.id, dtype, seed): shapes for v, dtype, seed, shapes in study.bench_jobs(SETTINGS, REGISTRY)}


def bench_problems(wc):
    """Per shape of this job: its input files, and how its results are checked (study.check_method):
    'gpu' and 'freivalds' need only A and B, 'cpu' the float64 reference made by make_reference."""
    problems = []
    for shape in BENCH_SHAPES[wc.variant, wc.dtype, int(wc.seed)]:
        base = input_dir(wc.dtype, shape, wc.seed)
        method = study.check_method(shape, SETTINGS.check, USES_GPU)
        files = {"shape": shape.tag, "check": method, "a": f"{base}/A.npy", "b": f"{base}/B.npy"}
        if method == "cpu":
            files.update(ref=f"{base}/ref.npy", scale=f"{base}/scale.npy")
        problems.append(files)
    return problems


def bench_inputs(wc):
    variant = REGISTRY[wc.variant]
    inputs = {"data": [path for p in bench_problems(wc) for key, path in p.items() if key not in ("shape", "check")]}
    if variant.is_built:
        inputs["binary"] = binary_path(wc.label, variant, wc.dtype)
        inputs["build"] = binary_path(wc.label, variant, wc.dtype) + ".json"
    if USES_GPU:   # GPU variants run on it; every variant's results are checked on it
        inputs["gpu"] = f"results/{wc.label}/gpu.json"
        inputs["harness"] = f"results/{wc.label}/build/harness.cubin"
    return inputs


# --- what collect_results gathers ------------------------------------------

def bench_csvs(label):
    return [f"results/{label}/bench/{dtype}/{vid}_s{seed}.csv" for vid, dtype, seed in BENCH_SHAPES]


def resource_reports(label):
    return [binary_path(label, v, dtype) + ".json" for v, dtype in study.builds(SETTINGS, REGISTRY)]


def sass_reports(label):
    return [f"results/{label}/build/{dtype}/{v.id}.sass.json"
            for v, dtype in study.builds(SETTINGS, REGISTRY) if v.backend == "cuda"]


def ncu_reports(label):
    if not SETTINGS.ncu:
        return []
    size = SETTINGS.ncu_size
    return [f"results/{label}/ncu/{v.id}_{size}x{size}x{size}.json" for v in VARIANTS if v.is_gpu]


def sanitizer_reports(label):
    if not SETTINGS.sanitizer:
        return []
    return [f"results/{label}/sanitizer/{v.id}.csv" for v in VARIANTS if v.backend == "cuda"]


def gpu_json(label):
    return [f"results/{label}/gpu.json"] if USES_GPU else []


def final_outputs():
    """The study's tables, figures and pages, and the optional stages' own outputs: asked for here,
    an ncu or sanitizer run added to a finished study runs, and collect_results then takes it in
    (Snakemake does not run a job for an input that only a job with nothing else to do would read)."""
    sanitizer = [f"{REPORT}/sanitizer.csv"] if SETTINGS.sanitizer else []
    tuning = [f"{REPORT}/tuning.csv"] if TUNED else []
    return ([f"{REPORT}/results.csv", f"{REPORT}/summary.csv", f"{REPORT}/hardware.csv"] + sanitizer + tuning
            + ncu_reports(LABEL) + sanitizer_reports(LABEL) + report_outputs(LABEL))


onerror:
    # the reason a GPU study could not run, as the run's very last line: printed at exit, after
    # Snakemake's own closing lines ("At least one job did not complete successfully")
    import atexit

    why = USES_GPU and host.gpu_failure(f"logs/query_gpu/{LABEL}.log")
    if why:
        atexit.register(print, f"{why} (the study's GPU jobs did not run; `snakemake build` builds what needs "
                        "no GPU)", file=sys.stderr)


def _end_of_run(line, failed):
    """At exit, after Snakemake's own closing lines: `line` last; with `failed`, a non-zero exit status."""
    print(line, file=sys.stderr, flush=True)
    if failed:
        sys.stdout.flush()
        os._exit(1)


onsuccess:
    # what failed, named as the run's last line (printed at exit, after Snakemake's closing lines); a
    # build or a run that failed also makes the exit status non-zero (a wrong result is recorded, as ever)
    import atexit

    import pandas as pd

    from matmulstudy.results import failed_runs, failed_summary, failures

    table = f"{REPORT}/results.csv"
    if os.path.exists(table):
        df = pd.read_csv(table)
        lines = failures(df)
        if lines:
            print(f"\nFAILED: {len(lines)} measurement(s), recorded and not plotted (see {REPORT}/failures.txt):",
                  file=sys.stderr)
            for line in lines:
                print(f"  {line}", file=sys.stderr)
            atexit.register(_end_of_run, failed_summary(df, REPORT), not failed_runs(df).empty)
        else:
            atexit.register(print, f"Every result verified; tables and figures in {REPORT}/", file=sys.stderr)
