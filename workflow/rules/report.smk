# The figures and pages of each study, drawn from its tables and its own
# registry and settings: after collect_results in a study, or from the
# committed tables alone by workflow/render.smk. Figures go into Snakemake's
# HTML report (snakemake --report) with their captions, in their categories
# (matmulstudy/report/figures.py, the one table of figures), one subcategory
# per GPU.
from matmulstudy import precisions
from matmulstudy.report.figures import FIGURES, GPUS_FIGURES, GPUS_OUTPUTS
from matmulstudy.study import paths


rule plot_report:
    input:
        results=paths.study_file("results"),
        summary=report(paths.study_file("summary"), caption="../report/summary.rst",
                       category="6. Tables", subcategory="{label}"),
        **{key: paths.study_file(key) for key in ("hardware", "gpu", "registry", "config")},
    output:
        **{f.name: report(paths.fill(paths.FIGURE, name=f.name, ext="svg"), caption=f"../report/{f.caption}",
                          category=f.category, subcategory="{label}") for f in FIGURES},
        png=[paths.fill(paths.FIGURE, name=f.name, ext="png") for f in FIGURES if f.png],   # the README's hero
        page=paths.study_file("page"),
        provenance=paths.study_file("provenance"),
    log:
        "logs/plot_report/{label}.log",
    params:
        precisions=[p.describe() for p in precisions.others()],   # the captions of their chapters' figures
    wildcard_constraints:
        label=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    threads: workflow.cores   # its figures drawn side by side, one a core (one at a time at --cores 1)
    script:
        "../scripts/plot_report.py"


rule plot_gpus:
    input:
        summaries=lambda wc: [paths.study_file("summary", label) for label in REPORT_LABELS],
        pages=lambda wc: [paths.study_file("page", label) for label in REPORT_LABELS],
    output:
        svg=[report(path, caption="../report/progression_by_gpu.rst", category="7. Across GPUs")
             for path in GPUS_FIGURES],
        page=GPUS_OUTPUTS[-1],
    log:
        "logs/plot_gpus/gpus.log",
    script:
        "../scripts/plot_gpus.py"
