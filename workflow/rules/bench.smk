# Verify and time one variant on every shape of the study, for one dtype and
# seed: one process and one CUDA context per variant's sweep.
# A bench job takes every core, so timed jobs never overlap each other or
# other work: the GPU and the CPU are the measured job's alone, on a machine
# with several GPUs too (one timed job at a time, on the first visible GPU).
TIMING_KEYS = ("warmup", "cache", "min_samples", "max_samples", "max_noise", "max_time_s",
               "throttle_fraction", "tolerance", "freivalds_vectors")


rule gpu_info:
    output:
        "results/{label}/gpu.json",
    log:
        "logs/gpu_info/{label}.log",
    resources:
        gpu=1,
        gpu_model=gpu_model,
        runtime=5,
    priority: 100
    script:
        "../scripts/gpu_info.py"


def bench_problems(wc):
    """Per shape of this job: its input files, and how its results are checked (study.check_method):
    'gpu' and 'freivalds' need only A and B, 'cpu' the float64 reference made by the reference rule."""
    problems = []
    for shape in BENCH_SHAPES[wc.variant, wc.dtype, int(wc.seed)]:
        base = input_dir(wc.dtype, shape, wc.seed)
        method = study.check_method(shape, CFG, USES_GPU)
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
        inputs["build"] = f"results/{wc.label}/build/{wc.dtype}/{variant.id}.resources.json"
    if USES_GPU:   # GPU variants run on it; every variant's results are checked on it
        inputs["gpu"] = f"results/{wc.label}/gpu.json"
        inputs["harness"] = f"results/{wc.label}/build/harness.cubin"
    return inputs


rule bench:
    input:
        unpack(bench_inputs),
    output:
        "results/{label}/bench/{dtype}/{variant}_s{seed}.csv",
    log:
        "logs/bench/{label}/{dtype}/{variant}_s{seed}.log",
    params:
        problems=bench_problems,
        timing={k: CFG[k] for k in TIMING_KEYS},
    resources:
        # every bench job of a study asks for the study's GPU: on Slurm they
        # run as one job on one node (profiles/slurm), CPU baselines included
        gpu=int(USES_GPU),
        gpu_model=gpu_model,
        runtime=10,   # minutes for one variant's sweep (under a minute on an H100)
        mem_mb=16000,
    threads: workflow.cores
    script:
        "../scripts/bench.py"
