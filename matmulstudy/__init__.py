"""matmulstudy: the step-by-step GPU matrix multiplication study.

The package reads as the pipeline does, each folder one role (its own
docstring lists its modules); the Snakemake rule scripts (workflow/scripts/)
wire them together:

errors.py      errors a user can act on, in one line
elements.py    the element types the kernels read (float32, BF16, e4m3): bytes and tensor-map codes
precisions.py  the one table of precisions (FP32 and each tensor-core one): a precision is one row
gpu/           the GPU: a session, launching and timing kernels, its facts, cuBLAS, TMA, NVML
study/         what a study is: the registry of variants, the settings, the plan of its jobs, the paths
measure/       measuring and checking: builds, inputs, one verified and timed measurement, counters
report/        the tables, figures and pages of a study, drawn without a GPU
pipeline/      the Snakemake side: the files each rule reads and writes, the checks before the first job,
               the rule scripts' logging, the lines that end a run
tools/         run by hand: devbench, the planted faults, tuning, cross-checks, comparisons

Listed lowest first: a module imports from its own folder and the ones
listed before it, never from one after it.
"""

__version__ = "0.1.0"
