# Verify and time one variant on one shape and seed.
# A bench job takes every core, so timed jobs never overlap each other or
# other work: the GPU and the CPU are the measured job's alone.


rule gpu_info:
    output:
        "results/{label}/gpu.json",
    log:
        "logs/gpu_info/{label}.log",
    priority: 100
    script:
        "../scripts/gpu_info.py"


def bench_inputs(wc):
    variant = REGISTRY[wc.variant]
    base = input_dir(wc)
    inputs = {"a": f"{base}/A.npy", "b": f"{base}/B.npy",
              "ref": f"{base}/ref.npy", "scale": f"{base}/scale.npy"}
    if variant.is_built:
        inputs["binary"] = binary_path(wc.label, variant, wc.dtype)
        inputs["build"] = f"results/{wc.label}/build/{wc.dtype}/{variant.id}.resources.json"
    if variant.is_gpu:
        inputs["gpu"] = f"results/{wc.label}/gpu.json"
        inputs["harness"] = f"results/{wc.label}/build/harness.cubin"
    return inputs


rule bench:
    input:
        unpack(bench_inputs),
    output:
        "results/{label}/bench/{dtype}/{variant}/{shape}_s{seed}.csv",
    log:
        "logs/bench/{label}/{dtype}/{variant}/{shape}_s{seed}.log",
    params:
        timing={k: CFG[k] for k in ("warmup", "repetitions", "cpu_repetitions", "tolerance")},
    threads: workflow.cores
    script:
        "../scripts/bench.py"
