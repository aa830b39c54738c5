# Every figure, summary page and Snakemake's HTML report again, from the
# tables committed under reports/ and each study's own registry and
# settings: no GPU, nothing measured, the live registry never read.
#   snakemake -s workflow/render.smk --cores 1 --forceall --report reports/report.html --report-after-run
from snakemake.utils import min_version

from matmulstudy.report.figures import GPUS_OUTPUTS, report_outputs
from matmulstudy.study import paths

min_version("9.0")


report: "report/workflow.rst"


REPORT_LABELS = sorted(l for l in glob_wildcards(paths.study_file("results")).label if "/" not in l)


include: "rules/report.smk"


rule all:
    input:
        [path for label in REPORT_LABELS for path in report_outputs(label)],
        GPUS_OUTPUTS if REPORT_LABELS else [],
