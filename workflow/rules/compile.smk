# Build every compiled variant: nvcc -> cubin (GPU), gcc -O2 -> shared library (CPU).
# Each job logs the compiler's full output; the resource report becomes JSON.


rule compile:
    wildcard_constraints:
        variant=variant_pattern("cuda"),
    input:
        source=lambda wc: str(REGISTRY[wc.variant].file),
    output:
        binary="results/{label}/build/{dtype}/{variant}.cubin",
        resources="results/{label}/build/{dtype}/{variant}.resources.json",
    log:
        "logs/compile/{label}/{dtype}/{variant}.log",
    params:
        arch=ARCH,
        defines=lambda wc: REGISTRY[wc.variant].defines,
    script:
        "../scripts/compile.py"


rule compile_cpu:
    wildcard_constraints:
        variant=variant_pattern("c"),
    input:
        source=lambda wc: str(REGISTRY[wc.variant].file),
    output:
        binary="results/{label}/build/{dtype}/{variant}.so",
        resources="results/{label}/build/{dtype}/{variant}.resources.json",
    log:
        "logs/compile_cpu/{label}/{dtype}/{variant}.log",
    params:
        arch=None,
        defines=lambda wc: REGISTRY[wc.variant].defines,
    script:
        "../scripts/compile.py"



rule compile_harness:
    input:
        source=str(HARNESS_SOURCE),
    output:
        "results/{label}/build/harness.cubin",
    log:
        "logs/compile_harness/{label}.log",
    params:
        arch=ARCH,
    script:
        "../scripts/compile_harness.py"


rule inspect:
    input:
        cubin="results/{label}/build/{dtype}/{variant}.cubin",
    output:
        "results/{label}/build/{dtype}/{variant}.sass.json",
    log:
        "logs/inspect/{label}/{dtype}/{variant}.log",
    script:
        "../scripts/inspect_sass.py"
