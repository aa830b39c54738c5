# Build every compiled variant (nvcc -> cubin on the GPU side, gcc -O2 ->
# shared library for the CPU loop), the harness and the sanitizer's launcher;
# read the main loop's instruction mix off each cubin. Each job logs the
# compiler's full output; the resource report becomes JSON. `snakemake
# build` does only this, which needs no GPU (with label and arch given).


rule build:
    input:
        lambda wc: resource_reports(LABEL) + sass_reports(LABEL),


rule compile_kernel:
    wildcard_constraints:
        variant=variant_pattern(("cuda", "c")),
        ext="cubin|so",
    input:
        unpack(tuned_choice),
        source=lambda wc: str(REGISTRY[wc.variant].file),
        headers=KERNEL_HEADERS,   # what the kernels include: a change rebuilds them
    output:
        binary="results/{label}/build/{dtype}/{variant}.{ext}",
        resources="results/{label}/build/{dtype}/{variant}.{ext}.json",
    log:
        "logs/compile_kernel/{label}/{dtype}/{variant}.{ext}.log",
    params:
        arch=lambda wc: REGISTRY[wc.variant].target(ARCH) if REGISTRY[wc.variant].backend == "cuda" else None,
    script:
        "../scripts/compile_kernel.py"


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


rule compile_launcher:
    input:
        source=str(LAUNCHER_SOURCE),
    output:
        "results/{label}/build/launch",
    log:
        "logs/compile_launcher/{label}.log",
    script:
        "../scripts/compile_launcher.py"


rule inspect_sass:
    input:
        cubin="results/{label}/build/{dtype}/{variant}.cubin",
        resources="results/{label}/build/{dtype}/{variant}.cubin.json",
    output:
        "results/{label}/build/{dtype}/{variant}.sass.json",
    log:
        "logs/inspect_sass/{label}/{dtype}/{variant}.log",
    script:
        "../scripts/inspect_sass.py"
