# Optional (config sanitizer: true): compute-sanitizer's memcheck, initcheck,
# racecheck and synccheck on one launch of each cuda variant (float32) at
# each of sanitizer_shapes, through the native launcher (compile.smk).
# collect_results merges the tables into reports/<label>/sanitizer.csv.


rule sanitize_kernel:
    wildcard_constraints:
        variant=RULES.variant_pattern(("cuda",)),
    input:
        cubin=paths.fill(paths.BINARY, dtype="float32", ext="cubin"),
        launcher=paths.LAUNCHER,
        gpu=paths.GPU_FACTS,
    output:
        paths.SANITIZER,
    log:
        "logs/sanitize_kernel/{label}/{variant}.log",
    params:
        shapes=SETTINGS.sanitizer_shapes,
    resources:
        gpu=1,
        gpu_model=RULES.gpu_model,
        runtime=15,
    script:
        "../scripts/sanitize_kernel.py"
