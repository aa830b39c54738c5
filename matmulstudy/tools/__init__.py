"""Tools run by hand, each with `python -m matmulstudy.tools.<name> --help`.

devbench     build, verify on ragged shapes and time some variants: the loop between two studies
faults       the planted-fault suite: does the verification catch every wrong kernel?
tune         a variant's free parameters, swept by hand
crosscheck   the GPU's library GEMM timed by CuPy and PyTorch, to check the harness by
compare      how far two studies of one GPU agree
powertrace   one variant back to back, NVML read every ~2 ms: when the power cap sets in, what it costs
launch_once  one launch of a variant, for a profiler (the workflow's ncu rule runs it)
snapshot     gives a study measured before snapshots existed its own registry and config
"""
