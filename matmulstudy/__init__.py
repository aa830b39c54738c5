"""matmulstudy: the step-by-step GPU matrix multiplication study.

Small modules that the Snakemake rule scripts wire together:

registry  the variants (kernels/registry.yaml)
config    validation of config/config.yaml and the grid of shapes
build     nvcc / gcc command lines and the compiler's resource report
data      seeded inputs and the float64 reference
verify    the correctness check every result goes through: the bound, its derivation
devicecheck  the float64 reference and the element-wise check on the GPU
sanitize  compute-sanitizer on one launch of a kernel
faults    the planted-fault suite
gpu       PyCUDA: context, device facts, loading cubins, event timing
cublas    cuBLAS SGEMM through ctypes
bench     one timed, verified measurement of a variant on a shape
results   the tidy results table and its summaries
plots     the report's figures
"""

__version__ = "0.1.0"
