# Build every compiled variant (nvcc -> cubin on the GPU side, with its main
# loop's instruction mix read off the cubin; gcc -O2 -> shared library for the
# CPU loop), the harness and the sanitizer's launcher. Each job logs the
# compiler's full output; the resource report becomes JSON. `snakemake
# build` does only this, which needs no GPU (with label and arch given).


rule build:
    input:
        lambda wc: RULES.resource_reports(LABEL) + RULES.sass_reports(LABEL),


rule compile_kernel:
    wildcard_constraints:
        variant=RULES.variant_pattern(("cuda",)),
    input:
        unpack(lambda wc: RULES.tuned_choice(wc.label, wc.variant)),
        source=lambda wc: str(REGISTRY[wc.variant].file),
        headers=KERNEL_HEADERS,   # what the cuda kernels include: a change rebuilds them
    output:
        binary=paths.fill(paths.BINARY, ext="cubin"),
        resources=paths.fill(paths.RESOURCES, ext="cubin"),
        # the main loop's instruction mix, read off the cubin in the same job (a job of its own cost
        # 1.6 s a kernel, most of it starting Python: 55 s of the H100 study at --cores 1)
        sass=paths.SASS,
    log:
        "logs/compile_kernel/{label}/{dtype}/{variant}.cubin.log",
    params:
        arch=lambda wc: REGISTRY[wc.variant].target(ARCH),
    script:
        "../scripts/compile_kernel.py"


rule compile_library:
    wildcard_constraints:
        variant=RULES.variant_pattern(("c",)),
    input:
        unpack(lambda wc: RULES.tuned_choice(wc.label, wc.variant)),
        source=lambda wc: str(REGISTRY[wc.variant].file),
    output:
        binary=paths.fill(paths.BINARY, ext="so"),
        resources=paths.fill(paths.RESOURCES, ext="so"),
    log:
        "logs/compile_kernel/{label}/{dtype}/{variant}.so.log",
    params:
        arch=None,
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
