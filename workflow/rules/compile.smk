# Build every compiled variant (nvcc -> cubin on the GPU side, gcc -O2 ->
# shared library for the CPU loop), the harness and the sanitizer's launcher;
# read the main loop's instruction mix off each cubin. Each job logs the
# compiler's full output; the resource report becomes JSON. `snakemake
# build` does only this, which needs no GPU (with label and arch given).


rule build:
    input:
        lambda wc: RUN.resource_reports(LABEL) + RUN.sass_reports(LABEL),


rule compile_kernel:
    wildcard_constraints:
        variant=RUN.variant_pattern(("cuda", "c")),
        ext="cubin|so",
    input:
        unpack(lambda wc: RUN.tuned_choice(wc.label, wc.variant)),
        source=lambda wc: str(REGISTRY[wc.variant].file),
        # what the cuda kernels include: a change rebuilds them (and not the C ones, which include none of it)
        headers=lambda wc: KERNEL_HEADERS if REGISTRY[wc.variant].backend == "cuda" else [],
    output:
        binary=paths.BINARY,
        resources=paths.RESOURCES,
    log:
        "logs/compile_kernel/{label}/{dtype}/{variant}.{ext}.log",
    params:
        arch=lambda wc: REGISTRY[wc.variant].target(ARCH) if REGISTRY[wc.variant].backend == "cuda" else None,
    script:
        "../scripts/compile_kernel.py"


rule compile_harness:
    input:
        source=str(paths.HARNESS_SOURCE),
    output:
        paths.HARNESS,
    log:
        "logs/compile_harness/{label}.log",
    params:
        arch=ARCH,
    script:
        "../scripts/compile_harness.py"


rule compile_launcher:
    input:
        source=str(paths.LAUNCHER_SOURCE),
    output:
        paths.LAUNCHER,
    log:
        "logs/compile_launcher/{label}.log",
    script:
        "../scripts/compile_launcher.py"


rule inspect_sass:
    input:
        cubin=paths.fill(paths.BINARY, ext="cubin"),
        resources=paths.fill(paths.RESOURCES, ext="cubin"),
    output:
        paths.SASS,
    log:
        "logs/inspect_sass/{label}/{dtype}/{variant}.log",
    script:
        "../scripts/inspect_sass.py"
