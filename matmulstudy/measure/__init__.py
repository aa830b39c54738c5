"""Measuring and checking: building a variant, its inputs, one verified and timed measurement, its counters.

build        nvcc and gcc command lines, ptxas's resource report
data         seeded inputs, and the float64 reference on the CPU
verify       the bound every result is held to (its derivation), and the checks on the CPU
devicecheck  the float64 reference and the element-wise check on the GPU
criterion    when to stop timing (the noise criterion)
bench        one measurement: verified, then timed (throttled batches taken again), then verified again
energy       every GPU variant back to back after every timed one: the sustained rate, power and energy
hardware     occupancy, the instruction mix from SASS, Nsight Compute's counters
sanitize     compute-sanitizer on one launch of a kernel
tune         a variant's free parameters searched on the GPU at hand
"""
