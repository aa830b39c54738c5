# Every sample of the study in one tidy table, with the summary and failures.


rule collect:
    input:
        bench=lambda wc: bench_csvs(wc.label),
        resources=lambda wc: resource_reports(wc.label),
        gpu=lambda wc: gpu_json(wc.label),
    output:
        results="reports/{label}/results.csv",
        summary="reports/{label}/summary.csv",
        resources="reports/{label}/resources.csv",
        failures="reports/{label}/failures.txt",
        gpu="reports/{label}/gpu.json",
    log:
        "logs/collect/{label}.log",
    script:
        "../scripts/collect.py"
