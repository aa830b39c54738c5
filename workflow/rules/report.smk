# The figures of the study, PNG and SVG, from the collected table.


rule report:
    input:
        results="reports/{label}/results.csv",
        gpu="reports/{label}/gpu.json",
    output:
        expand("reports/{{label}}/figures/{name}.{ext}", name=FIGURES, ext=("png", "svg")),
    log:
        "logs/report/{label}.log",
    params:
        reference_size=CFG["reference_size"],
    script:
        "../scripts/plot_report.py"
