"""The GPU: a session on it, launching and timing kernels, what it is, and the libraries PyCUDA does not bind.

session   a fresh CUDA context, memory, modules, and what lives as long as a session
launch    a variant launched as the study launches it (geometry, shared memory, clusters, tensor maps)
timer     the timing protocol: L2 flush, the blocking kernel, event pairs in batches; a sustained run
facts     the device's attributes, the precisions' peaks on it, the copy bandwidth
nvml      clocks, temperature, power and throttle reasons while timing
cublas    cuBLAS through ctypes: the references of each precision and the float64 reference
tma       the copy engine's tensor maps, and the driver launch of kernels that take them
host      the machine seen without a CUDA context: nvidia-smi, the CPU
harness.cu, launch.cu   the harness's kernels; one launch of a kernel, for compute-sanitizer
"""
