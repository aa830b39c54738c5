"""The host side of the TMA steps, as far as it goes without a GPU: when a matrix can have a tensor map,
what the driver is asked for, how the kernel is launched (its shared memory, its maps, its sanitizer run)."""

import ctypes
import dataclasses

import pytest

from matmulstudy import elements
from matmulstudy.gpu import tma
from matmulstudy.gpu.cubin import LaunchFacts, launch_facts
from matmulstudy.measure import sanitize
from matmulstudy.study.shapes import Shape
from matmulstudy.errors import StudyError
from matmulstudy.study.paths import ROOT, SM90_HEADERS
from matmulstudy.study.registry import load_registry
from matmulstudy.precisions import PRECISIONS

BOXES = {"A": (256, 32), "B": (32, 32)}


@pytest.mark.parametrize("vid", ["gpu_wgmma_tma", "gpu_wgmma_tma_store", "gpu_wgmma_pipelined", "gpu_wgmma_multicast",
                                 "gpu_wgmma_grouped", "gpu_wgmma_aligned", "gpu_wgmma_lean",
                                 "gpu_wgmma_persistent", "gpu_wgmma_queued"])
def test_the_tma_steps_take_two_maps_and_their_stages_in_dynamic_shared_memory(vid, sm90_builds):
    """The built kernel's shared memory (its exported LaunchFacts, gemm.cuh's SharedStorage): the ring's stages
    and its two barriers a stage, C's buffers of 64 rows a consumer after them for a persistent step, and the
    queue's slots for a queued one; a launch's workspace for the queue's ticket."""
    v = load_registry()[vid]
    bm, bn, bk, stages = (v.defines[k] for k in ("BM", "BN", "BK", "STAGES"))
    assert list(v.tensor_maps.items())[:2] == [("A", (bm // v.cluster[0], bk)), ("B", (bk, 32))]
    facts = launch_facts(sm90_builds[vid, "float32"][0], v.kernel)
    ring, queued = stages * (bm + bn) * bk * 4 + 2 * stages * 8, vid == "gpu_wgmma_queued"
    buffers = bn * 64 * 4 if v.grid_expr else 0   # a tile a block: C out through the drained ring
    slots = 40 if queued else 1   # QueuedTiles' two slots and their barriers, or an empty struct
    assert facts == LaunchFacts(-(-(ring + buffers + slots) // 8) * 8, 4 if queued else 0)   # on 8 bytes
    assert facts.shared_bytes > 48 * 1024 and sm90_builds[vid, "float32"][1]["dynamic_shared_bytes"] == facts.shared_bytes
    if not v.grid_expr:   # C stored from the ring, a box of all its rows
        assert v.tensor_maps.get("C", (bm, 32)) == (bm, 32)
    assert v.needs == "sm_90a" and v.unsupported("sm_90") is None and "sm_90a" in v.unsupported("sm_80")


ADDRESSES = {"A": 0x1000, "B": 0x2000, "C": 0x3000}


def test_a_map_describes_the_row_major_matrix_innermost_first():
    plans = tma.plan({**BOXES, "C": (256, 32)}, 300, 200, 72, ADDRESSES)
    assert plans["A"] == tma.MapPlan(dims=(72, 300), row_bytes=72 * 4, box=(32, 256))
    assert plans["B"] == tma.MapPlan(dims=(200, 72), row_bytes=200 * 4, box=(32, 32))
    assert plans["C"] == tma.MapPlan(dims=(200, 300), row_bytes=200 * 4, box=(32, 256))


@pytest.mark.parametrize("M, N, K, a, b, c, loads, store", [
    (1000, 1000, 1000, 0, 256, 512, True, True),
    (1, 4, 4, 0, 256, 512, True, True),
    (4, 4, 997, 0, 256, 512, False, True),     # A's rows start every 997 floats: not on 16 bytes; C's do
    (4, 3001, 4, 0, 256, 512, False, False),   # B's rows and C's
    (4, 4, 4, 8, 256, 512, False, True),       # A's base is not 16-byte aligned: no map of B either
    (4, 4, 4, 0, 260, 512, False, True),
    (4, 4, 4, 0, 256, 516, True, False),
])
def test_maps_only_where_every_row_starts_on_16_bytes_as_the_kernel_decides(M, N, K, a, b, c, loads, store):
    """The kernel loads through maps of A and B where K % 4 == 0, N % 4 == 0 and A, B are 16-byte aligned
    (maps_usable), and stores through a map of C where N % 4 == 0 and C is (store_map_usable); without, it
    loads or stores by itself, and the host passes zeros there, never a map the driver would refuse."""
    plans = tma.plan({**BOXES, "C": (256, 32)}, M, N, K, {"A": a, "B": b, "C": c})
    assert (plans["A"] is not None, plans["B"] is not None, plans["C"] is not None) == (loads, loads, store)
    if not loads and not store:
        assert tma.map_arguments({**BOXES, "C": (256, 32)}, M, N, K, {"A": a, "B": b, "C": c}) == [bytes(128)] * 3
    source = (SM90_HEADERS / "mainloop_tf32.cuh").read_text()
    rule = source[source.index("bool maps_usable"):].split("}")[0]
    assert "K % 4 == 0 && N % 4 == 0" in rule and "(A) % 16 == 0" in rule and "(B) % 16 == 0" in rule
    source = (SM90_HEADERS / "hopper.cuh").read_text()
    rule = source[source.index("bool store_map_usable"):].split("}")[0]
    assert "N % 4 == 0" in rule and "(C) % 16 == 0" in rule


def test_the_bf16_kernels_load_through_maps_by_the_hosts_bf16_rule():
    """BF16's A and B have maps where K and N are multiples of 8 and both are on 16 bytes (tma.plan with BF16
    elements), and the BF16 steps' producer takes the same rule (mainloop_bf16.cuh's maps_usable)."""
    boxes = {"A": (128, 64), "B": (64, 64), "C": (64, 32)}
    for (M, N, K), loads in (((100, 16, 24), True), ((100, 16, 20), False), ((100, 12, 24), False)):
        plans = tma.plan(boxes, M, N, K, ADDRESSES, elements.BFLOAT16)
        assert (plans["A"] is not None, plans["B"] is not None) == (loads, loads)
        assert plans["C"] is not None   # C stays float32: N % 4 == 0
    source = (SM90_HEADERS / "mainloop_bf16.cuh").read_text()
    rule = source[source.index("bool maps_usable"):].split("}")[0]
    assert "K % 8 == 0 && N % 8 == 0" in rule and "(A) % 16 == 0" in rule and "(B) % 16 == 0" in rule


@pytest.mark.parametrize("box", [(256, 32), (1, 4), (64, 16)])
def test_boxes_the_copy_engine_takes_with_the_128_byte_swizzle(box):
    assert tma.check_box("A", box, "here") == box


def test_bf16_maps_take_two_byte_elements_and_rows_of_a_multiple_of_8(sm90_builds):
    """A and B of a BF16 step are maps of 16-bit elements (cuda.h's CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 9): twice
    the columns in a 128-byte box row, and rows on 16 bytes only where K and N are multiples of 8; C stays
    float32. A box the element type cannot take is named with its rule."""
    plans = tma.plan({"A": (128, 64), "B": (64, 64), "C": (128, 32)}, 300, 200, 72, ADDRESSES, elements.BFLOAT16)
    assert plans["A"] == tma.MapPlan(dims=(72, 300), row_bytes=72 * 2, box=(64, 128), elem=elements.BFLOAT16)
    assert plans["B"] == tma.MapPlan(dims=(200, 72), row_bytes=200 * 2, box=(64, 64), elem=elements.BFLOAT16)
    assert plans["C"] == tma.MapPlan(dims=(200, 300), row_bytes=200 * 4, box=(32, 128))
    assert tma.plan(BOXES, 4, 8, 12, ADDRESSES, elements.BFLOAT16) == {"A": None, "B": None}   # K = 12: 24-byte rows
    assert tma.plan(BOXES, 4, 8, 12, ADDRESSES)["A"] is not None                         # in float32, 48 bytes
    assert tma.check_box("A", (128, 64), "here", elements.BFLOAT16) == (128, 64)
    with pytest.raises(StudyError, match=r"cols a multiple of 8 up to 64 \(bfloat16\)"):
        tma.check_box("A", (128, 4), "here", elements.BFLOAT16)
    with pytest.raises(StudyError, match="no kernel here reads int8 elements"):
        elements.element("int8")
    step19 = load_registry()["gpu_wgmma_tma"]   # its boxes held to BF16's rule where its precision were BF16
    as_bf16 = dataclasses.replace(step19, precision=PRECISIONS["bf16"], defines={**step19.defines, "BK": 4})
    assert as_bf16.operand_element == elements.BFLOAT16 and step19.operand_element == elements.FLOAT32
    with pytest.raises(StudyError, match=r"variant gpu_wgmma_tma: tensor_maps A box \d+x4 .* \(bfloat16\)"):
        as_bf16.tensor_maps
    # the sanitizer's launcher is told the elements' size, and makes its maps and rule by it (launch.cu)
    as_bf16 = dataclasses.replace(step19, precision=PRECISIONS["bf16"], defines={**step19.defines, "BK": 8})
    cubin = sm90_builds[step19.id, "float32"][0]
    assert sanitize.command("memcheck", "launch", cubin, as_bf16, Shape(64, 64, 64), exe="cs")[-2:] == ["elem=2", "ws=0"]
    assert sanitize.command("memcheck", "launch", cubin, step19, Shape(64, 64, 64), exe="cs")[-2:] == ["32x32", "ws=0"]
    source = (ROOT / "matmulstudy" / "gpu" / "launch.cu").read_text()
    assert "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16" in source and "kK % per16 == 0 && (b_transposed || kN % per16 == 0)" in source


def test_a_box_of_blocks_is_one_3d_map_where_the_columns_are_whole_blocks_as_the_kernel_decides():
    """Step 43's B: [rows, 64, blocks] is `blocks` boxes of 64 BF16 columns side by side in one copy: a 3-D map
    (a block's columns, rows, blocks; the blocks 128 bytes apart) where N is whole blocks; else, as the last
    block would run into the next row, the 2-D map of one block, and the producer makes a copy a block (the
    same rule in producer.cuh and in the sanitizer's launcher)."""
    boxes = {"A": (128, 64), "B": (64, 64, 4), "C": (64, 32)}
    plans = tma.plan(boxes, 300, 320, 72, ADDRESSES, elements.BFLOAT16)
    assert plans["B"] == tma.MapPlan(dims=(64, 72, 5), row_bytes=320 * 2, box=(64, 64, 4), elem=elements.BFLOAT16,
                                     block_bytes=128)
    assert plans["A"] == tma.MapPlan(dims=(72, 300), row_bytes=72 * 2, box=(64, 128), elem=elements.BFLOAT16)
    assert tma.plan(boxes, 300, 200, 72, ADDRESSES, elements.BFLOAT16)["B"] == tma.MapPlan(
        dims=(200, 72), row_bytes=200 * 2, box=(64, 64), elem=elements.BFLOAT16)   # 200 = 3 blocks and 8 columns
    source = (SM90_HEADERS / "producer.cuh").read_text()
    assert "BOXES > 1 && N % BOX_COLUMNS == 0" in source and "tma_load_3d" in source
    assert "blocks > 1 && cols % box_cols == 0" in (ROOT / "matmulstudy" / "gpu" / "launch.cu").read_text()


def test_a_3d_map_is_encoded_with_three_dimensions_and_its_block_stride(monkeypatch):
    """What the driver is asked for (cuTensorMapEncodeTiled's arguments), for a 2-D and a 3-D plan."""
    calls = []

    def encode_tiled(out, dtype, rank, address, dims, strides, box, steps, *rest):
        n = rank.value
        calls.append((dtype, n, address.value, list(dims)[:n], list(strides)[:n - 1], list(box)[:n], list(steps)[:n]))
        return 0
    monkeypatch.setattr(tma, "_encode_function", lambda: encode_tiled)
    plans = tma.plan({"A": (128, 64), "B": (64, 64, 4)}, 300, 320, 72, ADDRESSES, elements.BFLOAT16)
    assert len(tma.encode(plans["B"], 0x2000)) == tma.MAP_BYTES
    assert calls[-1] == (elements.BFLOAT16.code, 3, 0x2000, [64, 72, 5], [640, 128], [64, 64, 4], [1, 1, 1])
    tma.encode(plans["A"], 0x1000)
    assert calls[-1] == (elements.BFLOAT16.code, 2, 0x1000, [72, 300], [144], [64, 128], [1, 1])


@pytest.mark.parametrize("box, message", [((64, 32, 4), "more than one needs cols of one whole swizzle row"),
                                          ((64, 64, 0), "blocks is 1..256"), ((64, 64, 257), "blocks is 1..256")])
def test_a_box_of_blocks_the_copy_engine_cannot_take_is_named(box, message):
    assert tma.check_box("B", (64, 64, 4), "here", elements.BFLOAT16) == (64, 64, 4)
    assert tma.check_box("B", (64, 32, 1), "here", elements.BFLOAT16) == (64, 32, 1)
    with pytest.raises(StudyError, match=message):
        tma.check_box("B", box, "here", elements.BFLOAT16)


def test_the_sanitizer_launches_bf16s_one_copy_step_with_its_box_of_blocks(sm90_builds):
    v = load_registry()["gpu_wgmma_bf16_one_copy"]
    cubin = sm90_builds[v.id, "float32"][0]
    cmd = sanitize.command("memcheck", "launch", cubin, v, Shape(96, 320, 72), exe="compute-sanitizer", sms=132)
    facts = launch_facts(cubin, v.kernel)
    assert cmd[-7:] == [str(facts.shared_bytes), "128x64", "64x64x4", "64x32", "pad=pad_copy", "elem=2", "ws=4"]


@pytest.mark.parametrize("vid, grid, boxes", [
    ("gpu_wgmma_one_copy", ["132", "1"], ["128x32", "32x32x4", "64x32", "pad=pad_copy"]),
    ("gpu_wgmma_whole_waves", ["132", "1"], ["128x32", "32x32x4", "64x32", "pad=pad_copy"]),
    ("gpu_wgmma_bf16_whole_waves", ["132", "1"], ["128x64", "64x64x4", "64x32", "pad=pad_copy", "elem=2"]),
    ("gpu_wgmma_bf16_one_producer", ["132", "1"], ["128x64", "64x64x4", "64x32", "pad=pad_copy", "elem=2"]),
    ("gpu_wgmma_bf16_stepped_descriptors", ["132", "1"], ["128x64", "64x64x4", "64x32", "pad=pad_copy", "elem=2"]),
    ("gpu_wgmma_bf16_drawn_late", ["132", "1"], ["128x64", "64x64x4", "64x32", "pad=pad_copy", "elem=2"])])
def test_the_sanitizer_launches_the_last_tensor_core_steps_with_their_boxes_and_grids(vid, grid, boxes, sm90_builds):
    """B's slice in one box of 32-column (TF32) or 64-column (BF16) blocks; every persistent step on a block an
    SM (the whole-rounds steps' scheduler leaves the clusters past the rounds without a tile: at 96 x 320, all
    but 2 blocks of 128 x 256, or 2 clusters of 2 for the 3 tiles of 256 x 128); the queue's ticket in the
    launch's workspace."""
    v = load_registry()[vid]
    cubin = sm90_builds[vid, "float32"][0]
    cmd = sanitize.command("memcheck", "launch", cubin, v, Shape(96, 320, 72), exe="compute-sanitizer", sms=132)
    assert cmd[cmd.index("72") + 1: cmd.index("72") + 3] == grid and cmd[-len(boxes) - 1:] == [*boxes, "ws=4"]


def test_without_a_driver_the_error_says_what_is_missing(monkeypatch):
    def refuse(name):
        raise OSError(f"{name}: cannot open shared object file")
    monkeypatch.setattr(tma, "_driver", None)
    monkeypatch.setattr(ctypes, "CDLL", refuse)
    with pytest.raises(StudyError, match="the CUDA driver library is not loadable"):
        tma.map_arguments(BOXES, 256, 256, 256, ADDRESSES)


def test_the_sanitizer_launches_with_the_kernels_shared_memory_and_boxes(sm90_builds):
    """The built kernel's own shared memory and workspace (none here: a tile a block), read from its cubin; a
    kernel that exports none gets neither."""
    for vid, boxes in (("gpu_wgmma_tma", ["256x32", "32x32"]), ("gpu_wgmma_tma_store", ["256x32", "32x32", "256x32"])):
        v, cubin = load_registry()[vid], sm90_builds[vid, "float32"][0]
        cmd = sanitize.command("memcheck", "launch", cubin, v, Shape(200, 72, 40), exe="compute-sanitizer")
        assert cmd[-len(boxes) - 2:] == [str(launch_facts(cubin, vid).shared_bytes), *boxes, "ws=0"]
    plain = load_registry()["gpu_mma_tf32"]
    cubin = sm90_builds[plain.id, "float32"][0]
    assert sanitize.command("memcheck", "launch", cubin, plain, Shape(2, 2, 2), exe="cs")[-2:] == ["256", "1"]


@pytest.mark.parametrize("M, N, grid", [(4096, 4096, (32, 16, 1)), (200, 72, (2, 1, 1)), (1, 1, (2, 1, 1)),
                                       (300, 3 * 128 + 1, (4, 2, 1))])
@pytest.mark.parametrize("vid", ["gpu_wgmma_multicast", "gpu_wgmma_grouped"])
def test_a_cluster_kernels_grid_is_whole_clusters(vid, M, N, grid):
    """Steps 28 and 29 pair blocks along N in clusters: the grid's width is rounded up to an even number of
    blocks, and the second block of a pair may lie wholly right of C (step 28's header says how it takes part)."""
    v = load_registry()[vid]
    assert v.cluster == (2, 1) and v.launch_grid(M, N) == grid
    assert "__cluster_dims__(Kernel::CLUSTER_SIZE, 1, 1)" in v.file.read_text() and v.defines["CLUSTER"] == 2


@pytest.mark.parametrize("sms, grid", [(132, (132, 1, 1)), (133, (132, 1, 1)), (1, (2, 1, 1))])
@pytest.mark.parametrize("vid", ["gpu_wgmma_persistent", "gpu_wgmma_queued"])
def test_a_persistent_cluster_grid_is_the_multiprocessors_in_whole_clusters(vid, sms, grid):
    """Steps 32 and 33: a block a multiprocessor, rounded down to whole clusters, one cluster at least; the same
    grid at every shape (the kernel walks the tiles); C's buffers after the ring, and a box of 64 rows of C."""
    v = load_registry()[vid]
    assert v.cluster == (2, 1) and v.launch_grid(4096, 4096, sms) == v.launch_grid(1, 1, sms) == grid
    bm, bk = v.defines["BM"], v.defines["BK"]
    assert v.tensor_maps == {"A": (bm // 2, bk), "B": (bk, 32), "C": (64, 32)} and v.align_rows == "pad_copy"


@pytest.mark.parametrize("clusters, grid", [(66, (132, 1, 1)), (60, (120, 1, 1)), (100, (132, 1, 1))])
def test_a_persistent_grid_is_cut_to_the_clusters_that_run_at_once(clusters, grid):
    """A GPU whose multiprocessors do not all pair up would run the last clusters after the others."""
    from matmulstudy.gpu.launch import resident_grid
    v = load_registry()["gpu_wgmma_queued"]
    assert resident_grid(v, v.launch_grid(1, 1, 132), clusters) == grid
    with pytest.raises(StudyError, match="not one of its clusters of 2x1 blocks fits on this GPU"):
        resident_grid(v, v.launch_grid(1, 1, 132), 0)


@pytest.mark.parametrize("M, N, K, addresses, copied, shape", [
    ((4096, 4096, 4096, (0, 0, 0), "", (4096, 4096, 4096))),
    ((4096, 4096, 4095, (0, 0, 0), "AB", (4096, 4096, 4096))),   # K odd: A's rows, and B's row count
    ((200, 73, 40, (0, 0, 0), "BC", (200, 76, 40))),              # N odd: B's rows and C's
    ((1537, 3001, 997, (0, 0, 0), "ABC", (1537, 3004, 1000))),
    ((1, 1, 1, (0, 0, 0), "ABC", (1, 4, 4))),
    ((64, 64, 64, (4, 0, 0), "A", (64, 64, 64))),                 # A's address off 16 bytes: A alone
])
def test_step_28_copies_the_operands_whose_rows_are_off_16_bytes_and_multiplies_the_padded_problem(
        M, N, K, addresses, copied, shape):
    """Step 30 (align_rows): A into M x K4, B into K4 x N4, C out of M x N4, each only where needed; the kernel
    multiplies (M, N4, K4), which the copy engine describes."""
    from matmulstudy.gpu.launch import Padding
    v = load_registry()["gpu_wgmma_aligned"]
    pad = Padding(v, M, N, K, *addresses)
    assert "".join(pad.workspace_bytes()) == copied and pad.needed == bool(copied)
    M4, N4, K4 = shape
    assert pad.workspace_bytes() == {name: 4 * n for name, n in
                                     {"A": M * K4, "B": K4 * N4, "C": M * N4}.items() if name in copied}
    assert v.align_rows == "pad_copy" and v.launch_shape(M, N, K) == shape
    plan = tma.plan(v.tensor_maps, M4, N4, K4, ADDRESSES)   # the padded problem: every map usable
    assert all(p is not None for p in plan.values())


def test_step_28s_copy_kernel_covers_its_rows_and_columns():
    from matmulstudy.gpu.launch import COPY_THREADS, copy_grid
    assert COPY_THREADS * 4 == 1024
    assert copy_grid(4096, 4096) == (4, 4096, 1) and copy_grid(1, 1) == (1, 1, 1)
    assert copy_grid(100_000, 1025) == (2, 65535, 1)   # rows past the grid's y: each block walks on


def test_the_sanitizer_launches_step_28_on_the_padded_problem_with_its_copy_kernel(sm90_builds):
    v = load_registry()["gpu_wgmma_aligned"]
    cubin = sm90_builds[v.id, "float32"][0]
    cmd = sanitize.command("memcheck", "launch", cubin, v, Shape(131, 259, 67), exe="compute-sanitizer")
    shared = str(launch_facts(cubin, v.kernel).shared_bytes)
    assert cmd[-2:] == ["pad=pad_copy", "ws=0"] and cmd[-6:-2] == [shared, "128x32", "32x32", "256x32"]
    grid = cmd[cmd.index("131") + 3: cmd.index("131") + 5]
    assert grid == [str(g) for g in v.launch_grid(131, 260)[:2]]


@pytest.mark.parametrize("raw, message", [({"align_rows": "pad-copy"}, "align_rows names the copy kernel"),
                                          ({"align_rows": "pad_copy", "tensor_maps": None}, "on a variant with tensor_maps")])
def test_a_bad_align_rows_entry_is_named(raw, message):
    from matmulstudy.study.registry import parse_variants
    registry = load_registry()
    entries = [dict(e, **raw) if e["id"] == "gpu_wgmma_aligned" else dict(e) for e in registry.raw["variants"]]
    with pytest.raises(StudyError, match=message):
        parse_variants(entries, chapters=registry.raw.get("chapters"))


@pytest.mark.parametrize("M, N, K, copied, shape", [
    (4096, 4096, 4096, "", (4096, 4096, 4096)),
    (4096, 4096, 4092, "AB", (4096, 4096, 4096)),   # K a multiple of 4, not of 8: BF16's rows are off 16 bytes
    (4096, 4096, 4095, "AB", (4096, 4096, 4096)),
    (200, 76, 40, "BC", (200, 80, 40)),              # N: B's rows, and C's FP32 rows then padded alike
    (1537, 3001, 997, "ABC", (1537, 3008, 1000)),
    (1, 1, 1, "ABC", (1, 8, 8)),
])
def test_the_bf16_steps_copy_rows_onto_16_bytes_of_2_byte_elements(M, N, K, copied, shape):
    """Steps 40 and later (align_rows, BF16): K and N rounded up to multiples of 8; A's and B's workspace of
    2-byte elements copied by pad_copy_16, C's FP32 workspace by pad_copy."""
    from matmulstudy.gpu.launch import Padding, copy_kernel
    v = load_registry()["gpu_wgmma_bf16_aligned"]
    pad = Padding(v, M, N, K, 0, 0, 0)
    _, Np, Kp = shape
    assert v.launch_shape(M, N, K) == shape and "".join(pad.workspace_bytes()) == copied
    assert pad.workspace_bytes() == {name: n for name, n in
                                     {"A": 2 * M * Kp, "B": 2 * Kp * Np, "C": 4 * M * Np}.items() if name in copied}
    assert copy_kernel(v.align_rows, 2) == "pad_copy_16" and copy_kernel(v.align_rows, 4) == "pad_copy"
    plan = tma.plan(v.tensor_maps, *shape, ADDRESSES, elements.BFLOAT16)   # the padded problem: every map usable
    assert all(p is not None for p in plan.values())


def test_the_sanitizer_launches_a_bf16_step_with_its_copies_and_bf16_maps(sm90_builds):
    v = load_registry()["gpu_wgmma_bf16_queued"]
    cubin = sm90_builds[v.id, "float32"][0]
    cmd = sanitize.command("memcheck", "launch", cubin, v, Shape(131, 259, 67), exe="compute-sanitizer", sms=132)
    assert cmd[-3:] == ["pad=pad_copy", "elem=2", "ws=4"]
    assert cmd[-7:-3] == [str(launch_facts(cubin, v.kernel).shared_bytes), "128x64", "64x64", "64x32"]
    assert cmd[cmd.index("131") + 3: cmd.index("131") + 5] == ["132", "1"]   # the persistent grid
    source = (ROOT / "matmulstudy" / "gpu" / "launch.cu").read_text()
    assert 'name + "_" + std::to_string(8 * elem)' in source   # its copy kernel of narrow elements, as copy_kernel's


@pytest.mark.parametrize("vid", ["gpu_wgmma_bf16_persistent", "gpu_wgmma_bf16_aligned", "gpu_wgmma_bf16_grouped",
                                 "gpu_wgmma_bf16_queued", "gpu_wgmma_bf16_one_copy"])
def test_the_persistent_bf16_steps_fit_the_ring_and_cs_buffers_on_a_grid_of_the_multiprocessors(vid, sm90_builds):
    """The built kernel's shared memory: the ring's stages and barriers, C's buffers (16 KB a consumer), and the
    queue's two slots where it has a queue: at most 227 KB."""
    v = load_registry()[vid]
    bm, bn, bk, stages = (v.defines[k] for k in ("BM", "BN", "BK", "STAGES"))
    assert v.cluster == (1, 1) and v.launch_grid(4096, 4096, 132) == v.launch_grid(1, 1, 132) == (132, 1, 1)
    slots = 40 if "queued" in vid or "one_copy" in vid else 1
    shared = launch_facts(sm90_builds[vid, "float32"][0], v.kernel).shared_bytes
    assert shared == -(-(stages * (bm + bn) * bk * 2 + 16 * stages + (bm // 64) * 16384 + slots) // 8) * 8 <= 227 * 1024
    blocks = v.defines.get("B_BLOCKS", 1)   # step 43: the slice's boxes of B in one copy
    assert v.tensor_maps == {"A": (bm, bk), "B": (bk, 64, blocks) if blocks > 1 else (bk, 64), "C": (64, 32)}
    assert blocks in (1, bn // 64)
    assert v.operand_element == elements.BFLOAT16 and v.needs == "sm_90a"


@pytest.mark.parametrize("M, N, K, copied, shape", [
    (4096, 4096, 4096, "", (4096, 4096, 4096)),
    (4096, 4096, 4088, "AB", (4096, 4096, 4096)),   # K a multiple of 8, not of 16: FP8's rows are off 16 bytes
    (200, 76, 48, "", (200, 76, 48)),               # N: B's rows are K long, and C's a multiple of 4
    (200, 74, 48, "BC", (200, 76, 48)),             # N off C's 4: C, and B's rows to match
    (1, 1, 1, "ABC", (1, 4, 16)),
])
def test_the_fp8_step_copies_rows_of_bytes_onto_16_and_b_as_n_by_k(M, N, K, copied, shape, sm90_builds):
    """Step 50 (align_rows, FP8): K rounded up to a multiple of 16 bytes, N only to C's 4; B stored N x K is copied
    into Np x Kp by pad_copy_8, and its map is one of N rows of K bytes (box BN x BK); the sanitizer's launcher is
    told elem=1."""
    from matmulstudy.gpu.launch import Padding, copy_kernel
    v = load_registry()["gpu_wgmma_fp8"]
    pad = Padding(v, M, N, K, 0, 0, 0)
    _, Np, Kp = shape
    assert v.b_transposed and v.launch_shape(M, N, K) == shape and "".join(pad.workspace_bytes()) == copied
    assert pad.workspace_bytes() == {name: n for name, n in
                                     {"A": M * Kp, "B": Np * Kp, "C": 4 * M * Np}.items() if name in copied}
    assert copy_kernel(v.align_rows, 1) == "pad_copy_8"
    plan = tma.plan(v.tensor_maps, *shape, ADDRESSES, elements.FLOAT8_E4M3, b_transposed=True)
    assert plan["B"].dims == (Kp, Np) and plan["B"].row_bytes == Kp and plan["B"].box == (128, 256)
    assert tma.plan(v.tensor_maps, M, N, 8, ADDRESSES, elements.FLOAT8_E4M3, b_transposed=True)["A"] is None
    cubin = sm90_builds[v.id, "float32"][0]
    assert sanitize.command("memcheck", "launch", cubin, v, Shape(M, N, K), exe="cs", sms=132)[-2:] == ["elem=1", "ws=4"]
