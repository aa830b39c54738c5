# Optional (config tune: true): every variant whose registry entry has a
# search space is tuned on this GPU (matmulstudy/measure/tune.py): each candidate
# built, verified and timed at tune_size, invalid ones recorded with the
# reason, for at most tune_budget_s seconds; compile_kernel then builds the
# study's kernel with the chosen defines, and collect_results keeps every
# candidate in reports/<label>/tuning.csv.


rule tune_variant:
    wildcard_constraints:
        variant=RULES.tuned_pattern,
    input:
        source=lambda wc: str(REGISTRY[wc.variant].file),
        headers=KERNEL_HEADERS,
        gpu=paths.GPU_FACTS,
    output:
        table=paths.fill(paths.TUNING, ext="csv"),
        chosen=paths.fill(paths.TUNING, ext="json"),
    log:
        "logs/tune_variant/{label}/{variant}.log",
    params:
        arch=ARCH,
        size=SETTINGS.tune_size,
        budget_s=SETTINGS.tune_budget_s,
        checking=SETTINGS.checking,
    resources:
        gpu=1,
        gpu_model=RULES.gpu_model,
        runtime=lambda wc: int(SETTINGS.tune_budget_s // 60) + 10,
    threads: workflow.cores
    script:
        "../scripts/tune_variant.py"
