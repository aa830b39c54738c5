"""Tensor maps for the copy engine (TMA), and the parameters of a kernel that takes them.

A kernel of the registry with `tensor_maps: {A: [rows, cols], B: [rows,
cols]}` (and C: [rows, cols], to store C with the copy engine too) takes,
after the study's (M, N, K, A, B, C), one CUtensorMap per matrix, by value
(`const __grid_constant__ CUtensorMap`): 128 bytes made on the host by the
driver's cuTensorMapEncodeTiled, which describe the row-major matrix in
global memory (A and B of the element type its precision's kernels read,
float32, BF16 or e4m3 bytes; C float32; FP8's B is N x K) and the box (rows x cols elements) one copy
brings into shared memory, with the 128-byte swizzle.
PyCUDA does not wrap that function; it is called here in the driver itself
(libcuda, through ctypes), as the CUDA programming guide's TMA section does
through the runtime's entry-point query.

Such a kernel is also launched through the driver here (DriverKernel), in
the session's context, on the same default stream: PyCUDA's prepared_call
hands the driver the parameters as one packed buffer (cuLaunchKernel's
`extra`), and the driver refuses that buffer for these 384 bytes of
parameters with CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (measured on the H100,
CUDA 13 driver), while the same launch with one pointer per parameter
(`kernelParams`, as the runtime's cudaLaunchKernel does) runs.

The copy engine needs every row of a matrix to start on 16 bytes: a row
stride that is a multiple of 16 bytes (its columns a multiple of 4 in
float32, of 8 in BF16) and a 16-byte-aligned base. Where that does not hold (K or N odd, say), no map can
describe the matrix; the host passes 128 zero bytes, and the kernel, which
applies the same rule to its own arguments (`plan` here; each mainloop's
maps_usable in kernels/sm90/, store_map_usable in hopper.cuh), loads those
slices itself
(A and B: both maps or neither) or stores C itself.

A box of three numbers, `B: [rows, cols, blocks]` (step 43), is `blocks`
boxes of rows x cols side by side in one copy, each one 128-byte swizzle row
wide: the map is then 3-D, (a block's columns, rows, blocks of columns; the
blocks 128 bytes apart in global memory), and its one box lays the blocks
one after another in shared memory, each as the 2-D map's box would. Where
the matrix's columns are not whole blocks (N % 64 in BF16), the last block
would run into the next row, so the map is the 2-D one of one block and the
kernel makes `blocks` copies (kernels/sm90/producer.cuh applies the same
rule).

Everything but `encode` runs without a GPU (tests/test_tma.py).
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

from ..elements import FLOAT32, Element
from ..errors import StudyError

MAP_BYTES = 128          # sizeof(CUtensorMap)
MAP_ALIGN = 128          # alignof(CUtensorMap) in CUDA 13's cuda.h (kernels/sm90/hopper.cuh asserts both)
SWIZZLE_BYTES = 128      # CU_TENSOR_MAP_SWIZZLE_128B: a box row of at most 128 bytes
MAX_BOX = 256            # a box spans at most 256 elements in each dimension


# cuda.h's enumerators (CUDA 12 and 13)
_INTERLEAVE_NONE, _SWIZZLE_128B, _L2_PROMOTION_256B, _OOB_FILL_ZEROS = 0, 3, 3, 0
_MAX_DYNAMIC_SHARED = 8   # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
_NOT_FOUND = 500   # CUDA_ERROR_NOT_FOUND


def check_box(name: str, box, where: str, elem: Element = FLOAT32) -> tuple:
    """A box (rows, cols) or (rows, cols, blocks) that a 128-byte-swizzled tensor map of these elements accepts,
    or a StudyError saying why not. Blocks side by side must each be a whole swizzle row wide."""
    rows, cols, blocks = (*box, 1) if len(box) == 2 else box
    if not (1 <= rows <= MAX_BOX and 1 <= cols and cols * elem.bytes <= SWIZZLE_BYTES
            and cols * elem.bytes % 16 == 0):
        raise StudyError(f"{where}: tensor_maps {name} box {rows}x{cols} is not one the copy engine takes with the "
                         f"128-byte swizzle: rows 1..{MAX_BOX}, cols a multiple of {16 // elem.bytes} up to "
                         f"{SWIZZLE_BYTES // elem.bytes} ({elem.name})")
    if len(box) == 3 and not (1 <= blocks <= MAX_BOX and (blocks == 1 or cols * elem.bytes == SWIZZLE_BYTES)):
        raise StudyError(f"{where}: tensor_maps {name} box {rows}x{cols}x{blocks}: blocks is 1..{MAX_BOX}, and more "
                         f"than one needs cols of one whole swizzle row ({SWIZZLE_BYTES // elem.bytes} {elem.name})")
    return tuple(box)


@dataclass(frozen=True)
class MapPlan:
    """What cuTensorMapEncodeTiled is given for one row-major rows x cols matrix: 2-D, or 3-D with blocks."""
    dims: tuple          # (cols, rows), or (a block's cols, rows, blocks): innermost first
    row_bytes: int       # the stride between rows
    box: tuple           # (box cols, box rows), or (box cols, box rows, blocks): innermost first
    elem: Element = FLOAT32
    block_bytes: int = 0   # 3-D: the stride between blocks of columns


def usable(rows: int, cols: int, address: int, elem: Element = FLOAT32) -> bool:
    """Whether the copy engine can describe this matrix: its rows start on 16 bytes."""
    return cols * elem.bytes % 16 == 0 and address % 16 == 0 and rows <= 2**32 and cols <= 2**32


def plan(boxes: dict, M: int, N: int, K: int, addresses: dict, operands: Element = FLOAT32,
         b_transposed: bool = False) -> dict:
    """The maps of A (M x K), B (K x N, or N x K where `b_transposed`: FP8's) and C (M x N) named in boxes
    {matrix: (rows, cols)}, at device addresses {matrix: address}: a MapPlan each, or None where the kernel goes
    without it. A and B are of `operands` elements, C float32. A and B come together or not at all (the kernel's
    producer uses both or neither): both need their rows on 16 bytes (K and N multiples of 4 in float32, of 8
    in BF16; K of 16 in FP8, whose rows are all K long; 16-byte aligned); C needs N % 4 == 0 and a
    16-byte-aligned C."""
    shapes = {"A": (M, K), "B": (N, K) if b_transposed else (K, N), "C": (M, N)}
    elems = {"A": operands, "B": operands, "C": FLOAT32}
    ok = {name: usable(*shapes[name], addresses[name], elems[name]) for name in boxes}
    loads = ok["A"] and ok["B"]
    return {name: _map_plan(shapes[name], boxes[name], elems[name]) if (loads if name in "AB" else ok[name])
            else None for name in boxes}


def _map_plan(shape: tuple, box: tuple, elem: Element) -> MapPlan:
    """One matrix's plan: 3-D where its box has blocks and its columns are whole blocks, else 2-D (one block)."""
    (rows, cols), (box_rows, box_cols, blocks) = shape, (*box, 1)[:3]
    if blocks > 1 and cols % box_cols == 0:
        return MapPlan((box_cols, rows, cols // box_cols), cols * elem.bytes, (box_cols, box_rows, blocks), elem,
                       box_cols * elem.bytes)
    return MapPlan((cols, rows), cols * elem.bytes, (box_cols, box_rows), elem)


_driver = None


def _library():
    """libcuda, the driver PyCUDA also runs on (its functions return a CUresult, 0 for success)."""
    global _driver
    if _driver is None:
        try:
            _driver = ctypes.CDLL("libcuda.so.1")
        except OSError as err:
            raise StudyError(f"cannot make tensor maps: the CUDA driver library is not loadable ({err}); "
                             "the TMA steps need an NVIDIA driver (R525 or newer)") from None
    return _driver


def _encode_function():
    fn = _library().cuTensorMapEncodeTiled
    fn.restype = ctypes.c_int
    return fn


def encode(p: MapPlan, address: int) -> bytes:
    """The 128-byte CUtensorMap of plan p for the matrix at device address `address` (driver call)."""
    u64, u32 = ctypes.c_uint64, ctypes.c_uint32
    out = (ctypes.c_ubyte * (MAP_BYTES + MAP_ALIGN))()   # room to align it to 128 bytes
    start = -ctypes.addressof(out) % MAP_ALIGN
    rank = len(p.dims)
    strides = (p.row_bytes, p.block_bytes)[:rank - 1]
    status = _encode_function()(
        ctypes.c_void_p(ctypes.addressof(out) + start), p.elem.code, u32(rank), ctypes.c_void_p(address),
        (u64 * rank)(*p.dims), (u64 * (rank - 1))(*strides), (u32 * rank)(*p.box), (u32 * rank)(*[1] * rank),
        _INTERLEAVE_NONE, _SWIZZLE_128B, _L2_PROMOTION_256B, _OOB_FILL_ZEROS)
    if status != 0:
        raise StudyError(f"cuTensorMapEncodeTiled failed with CUresult {status} for a {rank}-D map of dims "
                         f"{p.dims}, box {p.box}")
    return bytes(out[start:start + MAP_BYTES])


def map_arguments(boxes: dict, M: int, N: int, K: int, addresses: dict, operands: Element = FLOAT32,
                  b_transposed: bool = False) -> list[bytes]:
    """The kernel's map arguments, in the order of `boxes` (A, B[, C]): encoded, or zeros where the kernel
    is to go without that map."""
    return [bytes(MAP_BYTES) if p is None else encode(p, addresses[name])
            for name, p in plan(boxes, M, N, K, addresses, operands, b_transposed).items()]


class _LaunchConfig(ctypes.Structure):
    """cuda.h's CUlaunchConfig (CUDA 12 and 13)."""
    _fields_ = [("grid_x", ctypes.c_uint), ("grid_y", ctypes.c_uint), ("grid_z", ctypes.c_uint),
                ("block_x", ctypes.c_uint), ("block_y", ctypes.c_uint), ("block_z", ctypes.c_uint),
                ("shared", ctypes.c_uint), ("stream", ctypes.c_void_p), ("attrs", ctypes.c_void_p),
                ("num_attrs", ctypes.c_uint)]


class DriverKernel:
    """A kernel loaded and launched through the driver (libcuda), one pointer per parameter (see above)."""

    def __init__(self, cubin_path, name: str, dynamic_shared: int):
        self._cuda = _library()
        self.module, self.function = ctypes.c_void_p(), ctypes.c_void_p()
        _check(self._cuda.cuModuleLoad(ctypes.byref(self.module), str(cubin_path).encode()), f"loading {cubin_path}")
        _check(self._cuda.cuModuleGetFunction(ctypes.byref(self.function), self.module, name.encode()),
               f"finding {name} in {cubin_path}")
        self.shared = dynamic_shared
        _check(self._cuda.cuFuncSetAttribute(self.function, _MAX_DYNAMIC_SHARED, dynamic_shared),
               f"raising {name}'s shared memory limit to {dynamic_shared} bytes")

    def max_active_clusters(self, grid, block) -> int:
        """How many of its thread block clusters (the kernel's compiled __cluster_dims__) can run at once on
        this GPU with this block and its shared memory (cuOccupancyMaxActiveClusters)."""
        config = _LaunchConfig(*grid, *block, self.shared, None, None, 0)
        count = ctypes.c_int()
        _check(self._cuda.cuOccupancyMaxActiveClusters(ctypes.byref(count), self.function, ctypes.byref(config)),
               "asking how many clusters run at once")
        return count.value

    def launcher(self, grid, block, M: int, N: int, K: int, a: int, b: int, c: int, maps: list[bytes],
                 workspace: int | None = None, stream: int | None = None):
        """A call that launches it once with (M, N, K, A, B, C, maps...) and, where given, the address of its
        workspace (kernels/sm90/workspace.cuh; 0: none), on `stream` (a CUstream's handle; None: the default
        stream)."""
        values = [ctypes.c_int(M), ctypes.c_int(N), ctypes.c_int(K),
                  ctypes.c_uint64(a), ctypes.c_uint64(b), ctypes.c_uint64(c)]
        values += [ctypes.create_string_buffer(m, MAP_BYTES) for m in maps]   # the driver copies each by value
        values += [] if workspace is None else [ctypes.c_uint64(workspace)]
        params = (ctypes.c_void_p * len(values))(*[ctypes.addressof(v) for v in values])
        launch, handle = self._cuda.cuLaunchKernel, ctypes.c_void_p(stream)

        def run():
            _check(launch(self.function, *grid, *block, self.shared, handle, params, None), "launching the kernel")
        run.keep = values   # alive as long as the call
        return run

    def global_address(self, name: str) -> tuple[int, int] | None:
        """The device address and bytes of its module's __device__ variable `name`, or None where it has none."""
        address, nbytes = ctypes.c_uint64(), ctypes.c_size_t()
        status = self._cuda.cuModuleGetGlobal_v2(ctypes.byref(address), ctypes.byref(nbytes), self.module,
                                                 name.encode())
        if status == _NOT_FOUND:
            return None
        _check(status, f"finding {name} in its module")
        return address.value, nbytes.value

    def close(self) -> None:
        """Unload its module (when the session that launched it ends)."""
        self._cuda.cuModuleUnload(self.module)


def _check(status: int, what: str) -> None:
    if status != 0:
        raise StudyError(f"CUDA driver error {status} {what}")
