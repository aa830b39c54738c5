# Every sample of the study in one tidy table, with the summary, failures,
# the GPU's facts, and what the study was measured with (its registry
# entries and settings: matmulstudy/snapshot.py).


rule collect_results:
    input:
        bench=lambda wc: bench_csvs(wc.label),
        resources=lambda wc: resource_reports(wc.label),
        sass=lambda wc: sass_reports(wc.label),
        ncu=lambda wc: ncu_reports(wc.label),
        sanitizer=lambda wc: sanitizer_reports(wc.label),
        tuning=lambda wc: tuning_tables(wc.label),
        gpu=lambda wc: gpu_json(wc.label),
    output:
        results="reports/{label}/results.csv",
        summary="reports/{label}/summary.csv",
        hardware="reports/{label}/hardware.csv",
        failures="reports/{label}/failures.txt",
        skipped="reports/{label}/skipped.csv",
        gpu="reports/{label}/gpu.json",
        registry="reports/{label}/registry.yaml",
        config="reports/{label}/config.yaml",
        **({"sanitizer": "reports/{label}/sanitizer.csv"} if SETTINGS.sanitizer else {}),
        **({"tuning": "reports/{label}/tuning.csv"} if TUNED else {}),
    log:
        "logs/collect_results/{label}.log",
    params:
        settings=SETTINGS,
        skipped=SKIPPED,
    script:
        "../scripts/collect_results.py"
