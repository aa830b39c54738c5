"""Launching a variant as the study launches it: its grid and block, its dynamic shared memory, its
thread block clusters, and the tensor maps of a kernel fed by the copy engine.

The geometry comes from the registry entry (study/variant.py) and the GPU's
multiprocessor count (a persistent kernel's grid); the dynamic shared memory
and the workspace from the built kernel (its LaunchFacts, cubin.py). A kernel
that takes tensor maps is loaded and launched through the driver (tma.py says why);
every other one through PyCUDA; one with `launch_number` (steps 15-17,
29-31) gets a new number at every launch (LAUNCHES), with which its kernel marks
what it leaves in global memory. A variant with `launches` (steps 20, 21) launches
the kernel of its file that its rule chooses for the shape (the tests and
the sanitizer launch each at every shape: Variant.only). A variant with
`align_rows` (steps 30, 40) has operands whose rows are off 16 bytes copied first, into zero-padded
workspace made once per shape (Padding), and its result copied back, all
in the one launch. The native launcher that compute-sanitizer runs
(launch.cu) launches the same way, from the same numbers.
"""

from __future__ import annotations

import itertools

from ..errors import StudyError
from . import cubin, tma

DEFAULT_SHARED_LIMIT = 48 * 1024   # dynamic shared memory a kernel may take before its limit is raised
WORKSPACES = "workspaces"          # the session's key of a module's workspaces: (WORKSPACES, cubin path)
LAUNCHES = itertools.count(1)      # the launch numbers of the process (0: what a module's state starts with)


def launcher(gpu, cubin_path, variant, M: int, N: int, K: int, d_a, d_b, d_c, stream=None):
    """A call that launches a cuda variant once on these buffers: its grid and block, its dynamic shared
    memory (the kernel's limit raised to it first), and the tensor maps (of A, B and maybe C) after
    (M, N, K, A, B, C) where the registry gives `tensor_maps`, then its workspace (a kernel that exports its
    LaunchFacts: cubin.py), one of the launcher's own. A TMA kernel may go on `stream` (a pycuda Stream; None: the
    default stream)."""
    if variant.align_rows:
        padding = Padding(variant, M, N, K, int(d_a), int(d_b), int(d_c))
        if padding.needed:
            if stream is not None:
                raise StudyError(f"{variant.id}: a launch through padded copies goes on the default stream only")
            return padding.launcher(gpu, cubin_path, d_a, d_b, d_c)
    return _kernel_launcher(gpu, cubin_path, variant, M, N, K, d_a, d_b, d_c, stream)


def _kernel_launcher(gpu, cubin_path, variant, M: int, N: int, K: int, d_a, d_b, d_c, stream=None):
    """The kernel's own launch on (M, N, K) and these buffers, as `launcher` describes it."""
    name = variant.kernel_for(M, N, K, gpu.sm_count)   # its own, or the one its rule chooses for the shape
    facts = cubin.launch_facts(cubin_path, name)
    shared = facts.shared_bytes if facts else 0
    limit = gpu.attribute("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN")
    if shared > limit:
        raise StudyError(f"{variant.id} asks for {shared} bytes of shared memory a block; "
                         f"{gpu.device.name()} allows {limit}: change its tile or stages")
    grid, block = variant.launch_grid(M, N, gpu.sm_count), variant.block
    if variant.tensor_maps:
        path = str(cubin_path)
        kernel = gpu.kept(("driver kernel", path), lambda: tma.DriverKernel(path, name, shared))
        if variant.grid_expr and variant.cluster != (1, 1):   # a block a multiprocessor fits without clusters
            grid = resident_grid(variant, grid, kernel.max_active_clusters(grid, block))
        maps = tma.map_arguments(variant.tensor_maps, M, N, K, {"A": int(d_a), "B": int(d_b), "C": int(d_c)},
                                 variant.operand_element, variant.b_transposed)
        workspace = None if facts is None else _workspace(gpu, path, facts.workspace_bytes)
        return kernel.launcher(grid, block, M, N, K, int(d_a), int(d_b), int(d_c), maps, workspace,
                               None if stream is None else stream.handle)
    if stream is not None:
        raise StudyError(f"{variant.id}: only a kernel fed by the copy engine is launched on a stream of its own")
    func = gpu.load_function(cubin_path, name, "iiiPPPI" if variant.launch_number else "iiiPPP")
    if shared > DEFAULT_SHARED_LIMIT:
        func.set_attribute(gpu.cuda.function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, shared)
    arguments = (grid, block, M, N, K, d_a, d_b, d_c)
    if variant.launch_number:
        return lambda: func.prepared_call(*arguments, next(LAUNCHES) % 2**32, shared_size=shared)
    return lambda: func.prepared_call(*arguments, shared_size=shared)


def _workspace(gpu, path: str, nbytes: int) -> int:
    """The address of a launcher's own workspace of `nbytes`, zeroed (kernels/sm90/workspace.cuh), or 0 where
    the kernel needs none. The session frees it at its end, and lists each module's (WORKSPACES: devbench reads a
    CLOCK_TRACE build's clocks there)."""
    if nbytes == 0:
        return 0
    words = -(-nbytes // 4)
    space = gpu.empty(4 * words)
    gpu.fill_u32(space, 0, words)
    gpu.kept((WORKSPACES, path), list).append((int(space), 4 * words))
    return int(space)


def resident_grid(variant, grid, clusters: int) -> tuple[int, int, int]:
    """A persistent grid of clusters cut to the clusters that can run at once: a GPU whose multiprocessors do
    not all pair up in clusters (the pairs form inside one GPU processing cluster) would otherwise run the
    last clusters after the others, each with a full share of the tiles."""
    cx, cy = variant.cluster
    if clusters < 1:
        raise StudyError(f"{variant.id}: not one of its clusters of {cx}x{cy} blocks fits on this GPU with its "
                         "shared memory a block")
    if grid[1] != cy or grid[0] // cx <= clusters:   # a persistent grid is one row of clusters
        return grid
    return (clusters * cx, cy, 1)


COPY_THREADS = 256        # pad_copy's block; each thread writes 4 neighbouring elements of a row
COPY_MAX_ROWS = 65535     # its grid's y, the rows at once (each block walks on by that many)


def copy_grid(rows: int, cols: int) -> tuple[int, int, int]:
    """pad_copy's grid for a rows x cols destination (launch.cu computes the same)."""
    return (-(-cols // (4 * COPY_THREADS)), min(rows, COPY_MAX_ROWS), 1)


def copy_kernel(name: str, element_bytes: int) -> str:
    """The copy kernel of `align_rows` family `name` for elements of this size (kernels/common/pad_copy.cuh):
    the name itself for 4-byte elements (FP32 operands, and every C), the name with _16 for BF16's 2-byte ones,
    with _8 for FP8's bytes."""
    return name if element_bytes == 4 else f"{name}_{8 * element_bytes}"


class Padding:
    """Where a TMA kernel's operands must be copied for their rows to start on 16 bytes (steps 30 and 40): with
    Np, Kp = N and K rounded up to whole 16 bytes of the operands' elements (the variant's launch_shape), A
    into M x Kp (where K is not such a multiple or A's address not on 16 bytes), B into Kp x Np (where K or N
    is not, or B's address), C computed into M x Np and copied back (where N is not, or C's address); the added
    rows and columns zero. Where B is stored N x K (FP8), it is copied into Np x Kp instead, where K or N is
    not such a multiple. The kernel then multiplies the (M, Np, Kp) problem, which the copy engine
    describes."""

    def __init__(self, variant, M: int, N: int, K: int, a: int, b: int, c: int):
        self.variant, self.M, self.N, self.K = variant, M, N, K
        _, self.Np, self.Kp = variant.launch_shape(M, N, K)
        self.operand_bytes = variant.operand_element.bytes
        self.a = self.Kp != K or a % 16 != 0
        self.b = self.Kp != K or self.Np != N or b % 16 != 0
        self.c = self.Np != N or c % 16 != 0

    @property
    def needed(self) -> bool:
        return self.a or self.b or self.c

    def workspace_bytes(self) -> dict:
        """{matrix: bytes} of the workspace each copied matrix takes (C is FP32 in every chapter)."""
        sizes = {"A": self.operand_bytes * self.M * self.Kp, "B": self.operand_bytes * self.Np * self.Kp,
                 "C": 4 * self.M * self.Np}
        return {name: sizes[name] for name, copied in zip("ABC", (self.a, self.b, self.c)) if copied}

    def _workspace(self, gpu) -> dict:
        """The copied matrices' workspace. C's is zeroed once: every launch overwrites all of it, by the copy
        engine, whose stores compute-sanitizer's initcheck does not see (it reported each element that
        pad_copy then read, 131 x 259 of them at 131x259x67, in a result that verified)."""
        space = {name: gpu.empty(n) for name, n in self.workspace_bytes().items()}
        if "C" in space:
            gpu.fill_u32(space["C"], 0, self.M * self.Np)
        return space

    def launcher(self, gpu, cubin_path, d_a, d_b, d_c):
        """A call that copies in, multiplies, copies out: one launch of the step, on the default stream. The
        workspace is the session's, one per variant and shape."""
        variant = self.variant
        key = ("workspace", variant.id, self.M, self.N, self.K)
        space = gpu.kept(key, lambda: self._workspace(gpu))
        a, b, c = space.get("A", d_a), space.get("B", d_b), space.get("C", d_c)
        M, N, K, Np, Kp = self.M, self.N, self.K, self.Np, self.Kp
        multiply = _kernel_launcher(gpu, cubin_path, variant, M, Np, Kp, a, b, c)
        copy = gpu.load_function(cubin_path, copy_kernel(variant.align_rows, self.operand_bytes), "PiiiPiii")
        copy_c = gpu.load_function(cubin_path, variant.align_rows, "PiiiPiii")
        block = (COPY_THREADS, 1, 1)
        steps = []
        if self.a:
            steps.append(lambda: copy.prepared_call(copy_grid(M, Kp), block, d_a, M, K, K, a, M, Kp, Kp))
        if self.b and variant.b_transposed:
            steps.append(lambda: copy.prepared_call(copy_grid(Np, Kp), block, d_b, N, K, K, b, Np, Kp, Kp))
        elif self.b:
            steps.append(lambda: copy.prepared_call(copy_grid(Kp, Np), block, d_b, K, N, N, b, Kp, Np, Np))
        steps.append(multiply)
        if self.c:
            steps.append(lambda: copy_c.prepared_call(copy_grid(M, N), block, c, M, N, Np, d_c, M, N, N))

        def launch():
            for step in steps:
                step()
        return launch
