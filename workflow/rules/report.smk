# The figures and pages of each study, drawn from its tables and its own
# registry and settings: after collect_results in a study, or from the
# committed tables alone by workflow/render.smk. Figures go into Snakemake's
# HTML report (snakemake --report) with their captions, in their categories
# (matmulstudy/figures.py, the one table of figures), one subcategory per GPU.
from matmulstudy.figures import FIGURES, GPUS_OUTPUTS


rule plot_report:
    input:
        results="reports/{label}/results.csv",
        summary=report("reports/{label}/summary.csv", caption="../report/summary.rst",
                       category="6. Tables", subcategory="{label}"),
        hardware="reports/{label}/hardware.csv",
        gpu="reports/{label}/gpu.json",
        registry="reports/{label}/registry.yaml",
        config="reports/{label}/config.yaml",
    output:
        **{f.name: report(f"reports/{{label}}/figures/{f.name}.svg", caption=f"../report/{f.caption}",
                          category=f.category, subcategory="{label}") for f in FIGURES},
        png=[f"reports/{{label}}/figures/{f.name}.png" for f in FIGURES],
        page="reports/{label}/README.md",
        provenance="reports/{label}/provenance.rst",
    log:
        "logs/plot_report/{label}.log",
    wildcard_constraints:
        label=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    script:
        "../scripts/plot_report.py"


rule plot_gpus:
    input:
        summaries=lambda wc: expand("reports/{label}/summary.csv", label=REPORT_LABELS),
        pages=lambda wc: expand("reports/{label}/README.md", label=REPORT_LABELS),
    output:
        svg=report(GPUS_OUTPUTS[0], caption="../report/progression_by_gpu.rst", category="7. Across GPUs"),
        png=GPUS_OUTPUTS[1],
        page=GPUS_OUTPUTS[2],
    log:
        "logs/plot_gpus/gpus.log",
    script:
        "../scripts/plot_gpus.py"
