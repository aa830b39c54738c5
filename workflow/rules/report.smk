# The figures of the study, PNG and SVG, from the collected table.


rule report:
    input:
        results="reports/{label}/results.csv",
        hardware="reports/{label}/hardware.csv",
        gpu="reports/{label}/gpu.json",
    output:
        expand("reports/{{label}}/figures/{name}.{ext}", name=FIGURES, ext=("png", "svg")),
        notes="reports/{label}/progression.md",
        int32=expand("reports/{{label}}/figures/progression_int32.{ext}", ext=("png", "svg"))
        if "int32" in CFG["dtypes"] else [],
    log:
        "logs/report/{label}.log",
    params:
        reference_size=CFG["reference_size"],
    script:
        "../scripts/plot_report.py"
