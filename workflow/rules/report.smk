# The figures and pages of each study, drawn from its tables: after `collect`
# in a study, or from the committed tables alone by workflow/render.smk.
# Figures go into Snakemake's HTML report (snakemake --report) with the
# captions in workflow/report/, one category per kind of figure and one
# subcategory per GPU.
from matmulstudy.render import FIGURES

CATEGORIES = {
    "progression": "1. Progression",
    "progression_int32": "1. Progression",
    "size_sweep": "2. Scaling with size",
    "efficiency": "3. Efficiency",
    "roofline": "3. Efficiency",
    "hardware": "4. What explains each step",
    "timing": "5. Timing noise",
}


def report_outputs(label):
    return [f"reports/{label}/figures/{name}.{ext}" for name in FIGURES for ext in ("svg", "png")] + [
        f"reports/{label}/README.md", f"reports/{label}/provenance.rst"]


def gpus_outputs():
    return ["reports/figures/progression_by_gpu.svg", "reports/figures/progression_by_gpu.png",
            "reports/README.md"]


rule report:
    input:
        results="reports/{label}/results.csv",
        summary=report("reports/{label}/summary.csv", caption="../report/summary.rst",
                       category="6. Tables", subcategory="{label}"),
        hardware="reports/{label}/hardware.csv",
        gpu="reports/{label}/gpu.json",
    output:
        **{name: report(f"reports/{{label}}/figures/{name}.svg", caption=f"../report/{name}.rst",
                        category=CATEGORIES[name], subcategory="{label}") for name in FIGURES},
        png=[f"reports/{{label}}/figures/{name}.png" for name in FIGURES],
        page="reports/{label}/README.md",
        provenance="reports/{label}/provenance.rst",
    log:
        "logs/report/{label}.log",
    wildcard_constraints:
        label=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    script:
        "../scripts/plot_report.py"


rule report_gpus:
    input:
        summaries=lambda wc: expand("reports/{label}/summary.csv", label=REPORT_LABELS),
        pages=lambda wc: expand("reports/{label}/README.md", label=REPORT_LABELS),
    output:
        svg=report("reports/figures/progression_by_gpu.svg", caption="../report/progression_by_gpu.rst",
                   category="7. Across GPUs"),
        png="reports/figures/progression_by_gpu.png",
        page="reports/README.md",
    log:
        "logs/report/gpus.log",
    script:
        "../scripts/plot_gpus.py"
