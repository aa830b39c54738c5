"""Launching a variant as the study launches it: its grid and block, its dynamic shared memory, its
thread block clusters, and the tensor maps of a kernel fed by the copy engine.

The geometry comes from the registry entry (study/variant.py) and the GPU's
multiprocessor count (a persistent kernel's grid). A kernel that takes
tensor maps is loaded and launched through the driver (tma.py says why);
every other one through PyCUDA. The native launcher that compute-sanitizer
runs (launch.cu) launches the same way, from the same numbers.
"""

from __future__ import annotations

from ..errors import StudyError
from . import tma

DEFAULT_SHARED_LIMIT = 48 * 1024   # dynamic shared memory a kernel may take before its limit is raised


def launcher(gpu, cubin_path, variant, M: int, N: int, K: int, d_a, d_b, d_c):
    """A call that launches a cuda variant once on these buffers: its grid and block, its dynamic shared
    memory (the kernel's limit raised to it first), and the tensor maps (of A, B and maybe C) after
    (M, N, K, A, B, C) where the registry gives `tensor_maps`."""
    shared = variant.dynamic_shared
    limit = gpu.attribute("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN")
    if shared > limit:
        raise StudyError(f"{variant.id} asks for {shared} bytes of shared memory a block; "
                         f"{gpu.device.name()} allows {limit}: change its defines")
    grid, block = variant.launch_grid(M, N, gpu.sm_count), variant.block
    if variant.tensor_maps:
        path = str(cubin_path)
        kernel = gpu.kept(("driver kernel", path), lambda: tma.DriverKernel(path, variant.kernel, shared))
        maps = tma.map_arguments(variant.tensor_maps, M, N, K, {"A": int(d_a), "B": int(d_b), "C": int(d_c)})
        return kernel.launcher(grid, block, M, N, K, int(d_a), int(d_b), int(d_c), maps)
    func = gpu.load_function(cubin_path, variant.kernel)
    if shared > DEFAULT_SHARED_LIMIT:
        func.set_attribute(gpu.cuda.function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, shared)

    def launch():
        func.prepared_call(grid, block, M, N, K, d_a, d_b, d_c, shared_size=shared)
    return launch
