# Optional (config sanitizer: true): compute-sanitizer's memcheck, initcheck,
# racecheck and synccheck on one launch of each cuda variant (float32) at
# each of sanitizer_shapes, through a small native launcher. collect merges
# the tables into reports/<label>/sanitizer.csv.
from matmulstudy.sanitize import LAUNCHER_SOURCE


rule compile_launcher:
    input:
        source=str(LAUNCHER_SOURCE),
    output:
        "results/{label}/build/launch",
    log:
        "logs/compile_launcher/{label}.log",
    script:
        "../scripts/compile_launcher.py"


rule sanitize_kernel:
    wildcard_constraints:
        variant=variant_pattern("cuda"),
    input:
        cubin="results/{label}/build/float32/{variant}.cubin",
        launcher="results/{label}/build/launch",
        gpu="results/{label}/gpu.json",
    output:
        "results/{label}/sanitizer/{variant}.csv",
    log:
        "logs/sanitize_kernel/{label}/{variant}.log",
    params:
        shapes=[list(s) for s in CFG["sanitizer_shapes"]],
    resources:
        gpu=1,
        gpu_model=gpu_model,
        runtime=15,
    script:
        "../scripts/sanitize_kernel.py"
