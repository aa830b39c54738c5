# The run every rule file asks: the settings (validated, label and arch resolved) and the registry
# (matmulstudy/study/run.py), and the inputs and targets of the rules (matmulstudy/pipeline/rules.py); the path
# templates are those of matmulstudy/study/paths.py. Functions only: the rules are in one file per stage.
import os
import sys
import time

STARTED = time.time()   # what this run writes is newer (pipeline/ending.py)

try:
    from matmulstudy.report.figures import report_outputs
    from matmulstudy.study import paths
    from matmulstudy.study.run import StudyRun
    from matmulstudy.measure.build import forget_failed
    from matmulstudy.pipeline import ending, preflight
    from matmulstudy.pipeline.rules import RuleFiles, dry_run, reads_rules_only
    from matmulstudy.errors import StudyError
except ImportError as err:
    sys.exit(f"error: the matmulstudy package cannot be imported ({err}); "
             f"install it with: pip install -e {workflow.basedir}")

try:   # config problems stop the run here, in one line, before any job
    RUN = StudyRun.start(config, rules_only=reads_rules_only(sys.argv))
except StudyError as err:
    sys.exit(f"error: {err}")
RULES = RuleFiles(RUN)
REGISTRY, SETTINGS = RUN.registry, RUN.settings
LABEL, ARCH = SETTINGS.label, SETTINGS.arch
SKIPPED_LINE = RUN.skipped_line()
if SKIPPED_LINE:   # what this GPU cannot run, said before any job (a dry run and `build` too)
    print(SKIPPED_LINE, file=sys.stderr)
if not dry_run(sys.argv):   # a build that failed is built again: while it fails, every run names it
    forget_failed(RULES.resource_reports(LABEL))
# The study a job belongs to, for the jobs that labels share (make_inputs): in the environment, not in their
# params, which snakemake compares to rerun a job (a study of another label would make it run this one again).
os.environ[paths.STUDY_LABEL_ENV] = LABEL if RUN.uses_gpu else ""
# what the cuda kernels include: a change rebuilds them
KERNEL_HEADERS = sorted(str(p) for folder in (paths.KERNEL_HEADERS, paths.SM90_HEADERS) for p in folder.glob("*.cuh"))
REPORT_LABELS = [LABEL]   # the studies the report rules draw (render.smk: every committed one)


wildcard_constraints:
    label=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    variant="|".join(REGISTRY),
    dtype="float32|int32",
    shape=r"\d+x\d+x\d+",
    seed=r"\d+",


onstart:   # the planned jobs, before the first starts: a GPU for those that need one, folders they can write
    try:
        if not workflow.touch:
            preflight.check(workflow.dag.needrun_jobs(), local=workflow.local_exec)
    except StudyError as err:
        sys.exit(f"error: {err}")


onerror:
    ending.end_of_error(RULES, log)


onsuccess:
    ending.end_of_success(RULES, since=STARTED)
