"""matmulstudy: the step-by-step GPU matrix multiplication study.

Small modules that the Snakemake rule scripts (workflow/scripts/) wire together:

registry     the variants, their chapters and roles (kernels/registry.yaml)
config       validation of config/config.yaml into typed settings, and the grid of shapes
build        nvcc / gcc command lines and the compiler's resource report
data         seeded inputs and the float64 reference on the CPU
verify       the bound every result is checked against (its derivation), the checks on the CPU
devicecheck  the float64 reference and the element-wise check on the GPU
gpu          PyCUDA: context, device facts, loading cubins, event timing
timing       when to stop timing (the noise criterion)
nvml         clocks, power and throttle reasons while timing
cublas       cuBLAS SGEMM and DGEMM through ctypes
host         facts of the machine that need no CUDA context
bench        one verified, timed measurement of a variant on a shape
hardware     occupancy, the instruction mix from SASS, Nsight Compute's counters
sanitize     compute-sanitizer on one launch of a kernel (launch.cu)
results      the tidy results table, its summary and the hardware table
snapshot     what a study was measured with, kept beside its tables
study        one committed study, read for drawing and checking
plots        the figures; figures: the one table of them
explain      the progression table and why a step is slower
pages        each study's summary page and the index across GPUs
render       draw every figure and page of committed studies (no GPU)
provenance   where a result comes from: commit, host, time
rulescript   logging and one-line errors for the rule scripts

Tools run by hand: faults (the planted-fault suite), tune (a variant's free
parameters), crosscheck (cuBLAS through CuPy), compare (two studies of one
GPU), launch_once (one launch, for ncu).
"""

__version__ = "0.1.0"
