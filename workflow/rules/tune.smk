# Optional (config tune: true): every variant whose registry entry has a
# search space is tuned on this GPU (matmulstudy/tune.py): each candidate
# built, verified and timed at tune_size, invalid ones recorded with the
# reason, for at most tune_budget_s seconds; compile_kernel then builds the
# study's kernel with the chosen defines, and collect_results keeps every
# candidate in reports/<label>/tuning.csv.


rule tune_variant:
    wildcard_constraints:
        variant=TUNED_PATTERN,
    input:
        source=lambda wc: str(REGISTRY[wc.variant].file),
        headers=KERNEL_HEADERS,
        gpu="results/{label}/gpu.json",
    output:
        table="results/{label}/tuning/{variant}.csv",
        chosen="results/{label}/tuning/{variant}.json",
    log:
        "logs/tune_variant/{label}/{variant}.log",
    params:
        arch=ARCH,
        size=SETTINGS.tune_size,
        budget_s=SETTINGS.tune_budget_s,
        check=SETTINGS.check,
    resources:
        gpu=1,
        gpu_model=gpu_model,
        runtime=lambda wc: int(SETTINGS.tune_budget_s // 60) + 10,
    threads: workflow.cores
    script:
        "../scripts/tune_variant.py"
