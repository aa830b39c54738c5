# The GPU matrix multiplication study: compile each step, generate seeded
# inputs, time and verify every variant on every shape, collect, plot.
#   snakemake --cores all                     # the study, on this machine's GPU (a timed job holds every core)
#   snakemake --cores 2 --directory .test     # the small CPU-only study (CI)
#   snakemake --cores 1 --report report.html  # Snakemake's HTML report of the study
#   snakemake --profile profiles/slurm ...    # on a Slurm cluster (README)
#   snakemake -s workflow/render.smk ...      # every committed report again, no GPU
from snakemake.utils import min_version

min_version("9.0")


include: "workflow/rules/configfile.smk"


configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/compile.smk"
include: "workflow/rules/inputs.smk"
include: "workflow/rules/bench.smk"
include: "workflow/rules/energy.smk"
include: "workflow/rules/headline.smk"
include: "workflow/rules/profile.smk"
include: "workflow/rules/sanitize.smk"
include: "workflow/rules/tune.smk"
include: "workflow/rules/collect.smk"
include: "workflow/rules/report.smk"


rule all:
    input:
        RULES.final_outputs(report_outputs(LABEL)),
