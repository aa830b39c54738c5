"""The registry is the one list; its geometry matches what the kernels expect."""

import dataclasses
import re

import pytest
import yaml

from matmulstudy.errors import StudyError
from matmulstudy.gpu.launch import copy_kernel
from matmulstudy.study.expressions import eval_expr, holds
from matmulstudy.study import snapshot
from matmulstudy.study.paths import KERNELS_DIR, ROOT
from matmulstudy.study.registry import Registry, load_registry
from matmulstudy.study.variant import whole_waves
from matmulstudy.precisions import PRECISIONS


def test_every_kernel_file_is_in_the_registry(registry):
    """Every step in its chapter's folder, the CPU baseline in baselines/, and the pieces they share (*.cuh)
    in common/ and sm90/ alone: the folder shows which files are steps (examples/ holds programs that lift
    kernels out of the study, no step)."""
    listed = {v.file.relative_to(KERNELS_DIR) for v in registry.values() if v.file}
    on_disk = {p.relative_to(KERNELS_DIR) for p in KERNELS_DIR.rglob("*")
               if p.suffix in (".cu", ".c") and p.parent.name != "examples"}
    assert listed == on_disk
    assert {p.parts[0] for p in on_disk} == set(registry.chapters) | {"baselines"}
    headers = {p.relative_to(KERNELS_DIR) for p in KERNELS_DIR.rglob("*.cuh")}
    assert headers and {p.parent.name for p in headers} == {"common", "sm90"}


def test_kernel_function_is_named_after_the_variant(registry):
    """A step's file defines its kernel and nothing else; the other kernels its rule launches (step 20's
    `launches`) come from the step files it includes, and the copy kernel its entry names (align_rows) from a
    header of kernels/common/ that the file includes."""
    kernel = r"__global__\s+void\s+(?:(?:__launch_bounds__|__cluster_dims__)\([^)]*\)\s+)*(\w+)"
    for v in registry.values():
        if v.backend == "cuda":
            text = v.file.read_text()
            assert re.findall(kernel, text) == [v.kernel], f"{v.file.name} defines {re.findall(kernel, text)}"
            steps = re.findall(r'#include "(\d\d_\w+\.cu)"', text)
            included = [k for f in steps for k in re.findall(kernel, (v.file.parent / f).read_text())]
            assert set(v.kernels) <= {v.kernel, *included}, f"{v.file.name} lacks one of {v.kernels}"
            if v.align_rows:
                headers = re.findall(r'#include "\.\./common/([\w.]+)"', text)
                found = [k for h in headers for k in re.findall(kernel, (KERNELS_DIR / "common" / h).read_text())]
                copies = {v.align_rows, copy_kernel(v.align_rows, v.operand_element.bytes)}   # C's, A's and B's
                assert copies <= set(found), f"{v.file.name} includes no header that defines {copies - set(found)}"


def test_grid_covers_ragged_shapes(registry):
    v = registry["gpu_tiled"]
    assert v.block == (16, 16, 1)
    assert v.launch_grid(M=17, N=33) == (3, 2, 1)
    assert v.launch_grid(M=1, N=1) == (1, 1, 1)
    assert v.launch_grid(M=4096, N=64) == (4, 256, 1)


def test_a_persistent_kernel_s_grid_is_the_gpu_s_not_the_matrix_s(registry):
    v = registry["gpu_stream_k"]
    assert v.launch_grid(M=17, N=33, sms=132) == v.launch_grid(M=8192, N=8192, sms=132) == (264, 1, 1)
    assert v.launch_grid(M=1, N=1, sms=78) == (156, 1, 1)
    with pytest.raises(StudyError, match="multiprocessor count"):
        v.launch_grid(M=17, N=33)
    assert registry["gpu_operand_reuse"].launch_grid(M=17, N=33, sms=132) == (1, 1, 1)   # a tile grid ignores sms


def test_step_19_s_grid_is_a_block_an_sm_and_one_a_tile(registry):
    v = registry["gpu_async_stream_k"]   # 128 x 256 tiles: 4096^2 has 32 x 16 of them, 1537 x 3001 13 x 12
    assert v.launch_grid(M=4096, N=4096, sms=132) == (512 + 132, 1, 1)
    assert v.launch_grid(M=1537, N=3001, sms=132) == (156 + 132, 1, 1)
    assert v.launch_grid(M=1, N=1, sms=78) == (1 + 78, 1, 1)


def test_whole_waves_is_the_fewest_blocks_that_take_the_tiles_in_as_many_rounds():
    for slots in (1, 2, 66, 78, 132):
        for tiles in range(1, 3 * slots + 2):
            blocks, rounds = whole_waves(tiles, slots), -(-tiles // slots)
            assert 1 <= blocks <= min(tiles, slots) and -(-tiles // blocks) == rounds, (tiles, slots)
            assert blocks == 1 or -(-tiles // (blocks - 1)) > rounds, (tiles, slots)   # one fewer: a round more


@pytest.mark.parametrize("vid, grids", [
    ("gpu_wgmma_bf16_whole_waves", {(4096, 4096): 128, (8192, 8192): 128, (2048, 2048): 128, (1537, 3001): 78,
                                    (1, 1): 1, (4096, 384): 64}),
    ("gpu_wgmma_whole_waves", {(4096, 4096): 128, (8192, 8192): 128, (1537, 3001): 84, (1, 1): 2,
                               (4096, 384): 64, (4096, 257): 64})])   # pairs of 256 x 128 tiles along N
def test_the_committed_studies_launched_whole_rounds_of_tiles_in_whole_clusters(vid, grids):
    """As the committed studies measured them (their registries' `grid: [whole_waves, 1]`; the live steps take
    whole rounds in their scheduler, kernels/sm90/scheduler.cuh): 4096 and 8192: 512 and 2,048 tiles, 4 and 16
    rounds on 132 multiprocessors, so 128 blocks; 1537 x 3001: 13 x 12 tiles of 128 x 256 (2 rounds: 78
    blocks), 7 x 12 pairs of 256 x 128 (2 rounds: 42 clusters); 4096 x 257: 16 x 3 tiles of 256 x 128 make 16 x
    2 pairs (the last one half outside C), 32 clusters of one round."""
    v = snapshot.read_registry(ROOT / "reports" / "h100")[vid]
    assert v.grid_expr == ("whole_waves", 1)
    for (M, N), blocks in grids.items():
        assert v.launch_grid(M, N, 132) == (blocks, 1, 1), (M, N)


def code_lines(variant) -> list[str]:
    """A kernel file's code: no comments, no blank lines, its kernel's name as `kernel`."""
    text = re.sub(r"//.*", "", variant.file.read_text()).replace(variant.kernel, "kernel")
    return [line.strip() for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize("step, before, change", [
    ("gpu_wgmma_one_copy", "gpu_wgmma_queued",
     "Overlap::next_slice, Fragments::as_stored, Unaligned::host_copies, B_BLOCKS>;"),
    ("gpu_wgmma_whole_waves", "gpu_wgmma_one_copy",
     "using Scheduler = QueuedTiles<Tile, Cluster, GROUP, Takers::whole_rounds>;"),
    ("gpu_wgmma_bf16_whole_waves", "gpu_wgmma_bf16_one_copy",
     "using Scheduler = QueuedTiles<Tile, ClusterShape<1>, GROUP, Takers::whole_rounds>;"),
    ("gpu_wgmma_bf16_one_producer", "gpu_wgmma_bf16_whole_waves",
     "using Kernel = Gemm<Mainloop, Scheduler, BufferStore, Producer::one_warp>;"),
    ("gpu_wgmma_bf16_stepped_descriptors", "gpu_wgmma_bf16_one_producer",
     "using Mainloop = Bf16Mainloop<Tile, Stages, Descriptors::stepped, Unaligned::host_copies, B_BLOCKS>;"),
    ("gpu_wgmma_bf16_drawn_late", "gpu_wgmma_bf16_stepped_descriptors",
     "using Scheduler = QueuedTiles<Tile, ClusterShape<1>, GROUP, Takers::whole_rounds, Draw::when_needed>;")])
def test_a_tensor_core_steps_change_is_one_line_of_its_file(registry, step, before, change):
    """The three roles composed as types (kernels/sm90/gemm.cuh): a step that changes its mainloop, its scheduler
    or its producer's warps changes one line of its file's code from the step before, and no define or grid of
    the registry but the geometry its host needs too (B_BLOCKS: the 3-D map of B)."""
    new, old = registry[step], registry[before]
    added = [line for line in code_lines(new) if line not in code_lines(old)]
    removed = [line for line in code_lines(old) if line not in code_lines(new)]
    assert added == [change] and len(removed) == 1, (added, removed)
    extra = {"B_BLOCKS": 4} if step == "gpu_wgmma_one_copy" else {}
    assert new.defines == {**old.defines, **extra} and new.grid_expr == old.grid_expr


def test_no_two_neighbouring_tensor_core_steps_have_the_same_code(registry):
    """In the course's order, each TMA + wgmma step's file differs in code from the step before (comments and
    its kernel's name aside): a change that lives in the registry alone is no step of its own. Save one: a
    tile of another shape (issue 60's tiles sized to the problem), which the mainloop's code reads as its
    wgmma's shape and the scheduler as the tiles' grid; its technique says so."""
    steps = [v for v in sorted(registry.steps(), key=lambda v: registry.course[v.id])
             if v.file and "Gemm<" in v.file.read_text()]
    same = [(a.id, b.id) for a, b in zip(steps, steps[1:]) if a.chapter == b.chapter and code_lines(a) == code_lines(b)]
    resized = [(a, b) for a, b in same if registry[a].tile != registry[b].tile]
    assert len(steps) >= 20 and resized == [(a, b) for a, b in same]
    assert all(registry[b].technique == "tiles sized to the problem" for _, b in resized)


def test_steps_come_in_their_files_order_chapter_by_chapter(registry):
    numbers = [int(v.file.name[:2]) for v in registry.steps()]
    assert numbers == sorted(numbers)
    chapters = [v.chapter for v in registry.steps()]
    assert [c for i, c in enumerate(chapters) if c not in chapters[:i]] == [c for c in registry.chapters
                                                                             if c in chapters]


def test_roles_name_the_references_and_the_cpu_baselines(registry):
    """What the code asks the registry for instead of naming variants."""
    for precision in {v.precision for v in registry.steps()}:
        assert registry.reference(precision) is not None and registry.reference(precision).is_gpu
    assert all(not v.is_gpu for v in registry.cpu_baselines())
    assert all(v.chapter in registry.chapters for v in registry.steps())
    assert all(v.role in ("step", "reference", "cpu_baseline") for v in registry.values())


@pytest.mark.parametrize("change, message", [
    ({"role": "chief"}, "role 'chief' is not one of"),
    ({"chapter": "nowhere"}, "a step names its chapter"),
    ({"chapter": None}, "a step names its chapter"),
    ({"max_size": 0}, "max_size must be an integer >= 1"),
    ({"defines": {False: 1}}, "is not a C identifier"),
    ({"grid": ["sms"]}, r"'grid' is \[x, y\]"),
    ({"grid": ["sms - 1", 1]}, "gives no block"),
    ({"tensor_maps": {"A": [128, 32]}}, r"tensor_maps is \{A: \[rows, cols\], B: \[rows, cols\]\}"),
    ({"tensor_maps": {"A": [128, 64], "B": [32, 32]}}, "box 128x64 is not one the copy engine takes"),
    ({"tensor_maps": {"A": [512, 32], "B": [32, 32]}}, "box 512x32 is not one the copy engine takes"),
    ({"tensor_maps": {"A": [128, 6], "B": [32, 32]}}, "box 128x6 is not one the copy engine takes"),
    ({"tensor_maps": {"A": [128, 32], "B": [32, 32, 2, 2]}}, r"a box may add \[\.\., blocks\]"),
    ({"tensor_maps": {"A": [128, 32], "B": [32, 16, 2]}}, "box 32x16x2: blocks is 1..256, and more than one"),
    ({"cluster": [2]}, r"'cluster' is \[x, y\]"),
    ({"cluster": [4, 4]}, "is not a portable cluster"),
    ({"chapter": "beyond"}, "must lie in beyond/, its chapter's folder"),   # its file is in seeds/
    ({"precision": "fp16"}, r"precision 'fp16' is not allowed; expected one of \['fp32', 'tf32', 'bf16', 'fp8_fast', 'fp8'\]"),
])
def test_a_bad_entry_is_named(registry, change, message):
    raw = {**registry.raw, "variants": [dict(registry.raw_entry(registry.steps()[0].id), **change)]}
    with pytest.raises(StudyError, match=message):
        Registry.from_entries(raw)


def test_two_references_for_one_precision_are_refused(registry):
    ref = registry.raw_entry(registry.reference(PRECISIONS["fp32"]).id)
    raw = {**registry.raw, "variants": [ref, dict(ref, id="another")]}
    with pytest.raises(StudyError, match="more than one reference"):
        Registry.from_entries(raw)


def test_compute_to_memory_ratio_as_the_seed_computes_it(registry):
    assert registry["gpu_naive"].flop_per_byte == 0.25          # "approximately 1/4"
    assert registry["gpu_tiled"].flop_per_byte == 4.0           # "B/4" with B = 16
    assert registry["gpu_outer"].flop_per_byte == 16 * 64 / (2 * 80)
    jacket = registry["gpu_jacket_3rows"]
    rows, cols = jacket.tile
    assert (rows, cols) == (jacket.defines["BY"], 3 * jacket.defines["BX"])
    assert jacket.block == (jacket.defines["BX"], 1, 1)
    assert jacket.flop_per_byte == pytest.approx(rows * cols / (2 * (rows + cols)))


def test_jacket_entries_share_one_kernel_with_different_defines(registry):
    two, three = registry["gpu_jacket_2rows"], registry["gpu_jacket_3rows"]
    assert two.file == three.file and two.kernel == three.kernel == "gpu_jacket"
    assert (two.defines["ROWS"], three.defines["ROWS"]) == (2, 3)
    for v in (two, three):
        rows, cols = v.tile
        assert v.launch_grid(M=4096, N=4097) == (-(-4097 // cols), -(-4096 // rows), 1)


def test_int32_mode_is_for_kernels_written_for_any_element_type(registry):
    """seed 003's integer mode: a kernel that lists int32 is built with -DELEM=int, so it must use ELEM."""
    ints = [v for v in registry.values() if "int32" in v.dtypes]
    assert ints and all(v.backend == "cuda" and "ELEM" in v.file.read_text() for v in ints)


def test_defines_change_the_geometry(registry):
    v = registry["gpu_tiled"].with_defines({"TILE": 32})
    assert v.block == (32, 32, 1) and v.tile == (32, 32)
    with pytest.raises(StudyError, match="unknown define"):
        registry["gpu_tiled"].with_defines({"TILES": 8})


def test_expressions_are_arithmetic_only():
    assert eval_expr("TILE*ROWS//2", {"TILE": 16, "ROWS": 4}) == 32
    with pytest.raises(StudyError):
        eval_expr("__import__('os')", {})
    with pytest.raises(StudyError, match="not one of the defines"):
        eval_expr("WIDTH", {"TILE": 16})
    # min and max of two or more (step 22's grid); no other call, and no call of one argument
    grid = "tiles * max(1, min(SPLITS, RESIDENT * sms // tiles))"
    assert [eval_expr(grid, {"tiles": t, "SPLITS": 8, "RESIDENT": 2, "sms": 132}) for t in (1, 16, 64, 200)] == \
        [8, 128, 256, 200]
    for bad in ("abs(TILE)", "min(TILE)", "max(TILE, key=TILE)"):
        with pytest.raises(StudyError, match="not an expression of the defines"):
            eval_expr(bad, {"TILE": 16})


# --- search spaces (tune: true) ---------------------------------------------

def test_conditions_are_arithmetic_and_comparisons_only():
    assert holds("WM * WN == 2048 and BM % WM == 0", {"WM": 32, "WN": 64, "BM": 128})
    assert not holds("WM * WN == 2048 or BM < WM", {"WM": 16, "WN": 64, "BM": 128})
    assert holds("2 * BK * (BM + BN) * 4 <= 48 * 1024", {"BK": 16, "BM": 128, "BN": 128})
    with pytest.raises(StudyError, match="not an expression of the defines"):
        holds("__import__('os').system('true')", {})


def test_every_search_space_puts_the_defaults_first_and_says_why_a_combination_is_invalid(registry):
    tuned = [v for v in registry.values() if v.search]
    assert tuned, "some step declares its free parameters"
    for v in tuned:
        candidates = v.search.candidates(v.defines)
        assert candidates[0] == ({k: v.defines[k] for k in v.search.values}, None)   # the defaults, valid
        assert len(candidates) == len({tuple(sorted(c.items())) for c, _ in candidates})   # each once
        for combo, why in candidates:
            defines = {**v.defines, **combo}
            assert (why is None) == all(holds(c, defines) for c in v.search.require), (combo, why)
            if why:
                assert why.startswith("constraint '") and why.endswith("does not hold")


def _with_search(registry, search):
    v = next(v for v in registry.values() if v.search)
    return {**registry.raw, "variants": [dict(registry.raw_entry(v.id), search=search)]}


@pytest.mark.parametrize("search, message", [
    ({"values": {"NOPE": [1, 2]}}, "search over 'NOPE', which is not one of its defines"),
    ({"values": {"BK": []}}, "must be a non-empty list of integers"),
    ({"values": {"BK": [8]}, "require": ["BK > 100"]}, "its defaults do not meet the search constraint"),
    ({"values": {"BK": [8]}, "require": ["BK >> 2"]}, "not an expression of the defines"),
    ({"grid": {}}, "search is {values"),
])
def test_a_bad_search_space_is_named(registry, search, message):
    with pytest.raises(StudyError, match=re.escape(message)):
        Registry.from_entries(_with_search(registry, search))


@pytest.mark.parametrize("needs, arch, runs", [
    ("sm_80", "sm_75", False), ("sm_80", "sm_80", True), ("sm_80", "sm_90", True), ("sm_80", "sm_90a", True),
    ("sm_90a", "sm_90", True), ("sm_90a", "sm_89", False), ("sm_90a", "sm_100", False)])
def test_a_steps_needs_is_checked_against_the_studys_target(needs, arch, runs):
    """sm_NN: that target or newer; an arch-specific sm_NNa (wgmma, TMA): that architecture only, built
    for its own target."""
    v = dataclasses.replace(load_registry()["gpu_mma_tf32"], needs=needs)
    why = v.unsupported(arch)
    assert (why is None) == runs
    if why:
        assert needs in why and arch in why
    assert v.target("sm_90") == (needs if needs.endswith("a") else "sm_90")


@pytest.mark.parametrize("needs", ["80", "sm80", "compute_90", "sm_9"])
def test_a_malformed_needs_says_what_it_should_be(tmp_path, needs):
    registry = yaml.safe_load((KERNELS_DIR / "registry.yaml").read_text())
    entry = next(e for e in registry["variants"] if e["id"] == "gpu_mma_tf32")
    entry["needs"] = needs
    path = tmp_path / "registry.yaml"
    path.write_text(yaml.safe_dump(registry))
    with pytest.raises(StudyError, match="needs is an nvcc target such as sm_80 or sm_90a"):
        load_registry(path, check_files=False)


def test_a_kernel_takes_a_launch_number_where_its_entry_says_so(registry):
    """launch.py passes the launch's number after C to the variants with `launch_number` (steps 15 to 17 and
    19 to 23), and to no others: each kernel's parameter list must agree, or the launch would read past its
    parameters."""
    numbered = set()
    for v in registry.values():
        if v.backend != "cuda":
            continue
        text = v.file.read_text()
        params = re.search(rf"\b{v.kernel}\s*\(([^)]*)\)", text, re.S).group(1)
        if re.search(r"unsigned\s+launch\s*$", params):
            numbered.add(v.id)
    assert numbered == {v.id for v in registry.values() if v.launch_number}
    assert numbered == {"gpu_stream_k", "gpu_deep_slices", "gpu_hybrid_stream_k", "gpu_async_stream_k",
                        "gpu_async_by_shape", "gpu_async_epilogue", "gpu_async_split_k", "gpu_async_tall_tiles"}


@pytest.mark.parametrize("vid, value", [("gpu_stream_k", "yes"), ("gpu_wgmma_queued", True), ("cublas", True)])
def test_a_bad_launch_number_entry_is_named(vid, value):
    from matmulstudy.study.registry import parse_variants
    registry = load_registry()
    entries = [dict(e, launch_number=value) if e["id"] == vid else dict(e) for e in registry.raw["variants"]]
    with pytest.raises(StudyError, match="launch_number is true or false, on a cuda kernel without tensor_maps"):
        parse_variants(entries, chapters=registry.raw.get("chapters"))


def _whole_tiles(tiles: int, W: int) -> int:
    """stream_k.cuh's whole_tiles(tiles, W, one_tile=true), as step 19's and 20's kernels compute it."""
    waves, rest = divmod(tiles, W)
    if rest == 0:
        return tiles
    if waves == 0:
        return tiles if rest * 8 >= W * 7 else 0
    return waves * W if rest * 2 >= W else (waves - 1) * W


@pytest.mark.parametrize("sms", [132, 114, 78, 1])
def test_step_20_launches_its_pieces_kernel_exactly_where_every_tile_is_shared_out(registry, sms):
    """Step 20's rule (`launches`) against the split its kernels make: its own kernel where step 19's hybrid
    shares out every tile of more than one wave (the last full wave and a partial one under half full), step
    19's kernel elsewhere (some tiles whole, or less than a wave: there its own kernel was slower on the H100),
    for every count of tiles up to 3 waves."""
    v = registry["gpu_async_by_shape"]
    rows, cols = v.tile
    for tiles in range(1, 3 * sms + 2):
        M, N = rows, tiles * cols   # one row of tiles
        shared_out = _whole_tiles(tiles, sms) == 0 and tiles > sms
        expected = "gpu_async_by_shape" if shared_out else "gpu_async_stream_k"
        assert v.kernel_for(M, N, 997, sms) == expected, (tiles, sms)
    assert v.kernel_for(1537, 3001, 997, 132) == "gpu_async_by_shape"   # 156 tiles: 1.18 waves, all shared
    assert v.kernel_for(4096, 4096, 4096, 132) == "gpu_async_stream_k"
    assert v.only("gpu_async_stream_k").kernel_for(1537, 3001, 997, 132) == "gpu_async_stream_k"


@pytest.mark.parametrize("launches, message", [
    ([{"kernel": "gpu_async_by_shape"}], "launches is \\[\\{kernel: NAME, when: CONDITION\\}"),
    ([{"kernel": "gpu_async_by_shape", "when": "tiles < sms"}, {"kernel": "x", "when": "M > 1"}],
     "the last without"),
    ([{"kernel": "a", "when": "tiles < sms"}, {"kernel": "b"}], "must name its own kernel 'gpu_async_by_shape'"),
    ([{"kernel": "gpu_async_by_shape", "when": "tiles < SMS"}, {"kernel": "b"}], "'SMS' in 'tiles < SMS'"),
    ([{"kernel": "gpu_async_by_shape", "when": "M > 1"}, {"kernel": "gpu_async_by_shape"}], "each kernel once"),
])
def test_a_bad_launches_rule_is_named(launches, message):
    from matmulstudy.study.registry import parse_variants
    registry = load_registry()
    entries = [dict(e, launches=launches) if e["id"] == "gpu_async_by_shape" else dict(e)
               for e in registry.raw["variants"]]
    with pytest.raises(StudyError, match=message):
        parse_variants(entries, chapters=registry.raw.get("chapters"))


def test_a_devbench_candidate_is_a_step_with_its_defines_changed(registry, capsys):
    """devbench's ID:NAME=VALUE: the registry's variant with those defines changed or added (a header's default),
    named so in its table; anything else is named as wrong before anything is built."""
    from matmulstudy.tools.devbench import candidate, main
    v = candidate(registry, "gpu_wgmma_bf16_queued:GROUP=8:STAGES=3")
    base = registry["gpu_wgmma_bf16_queued"]
    assert v.id == "gpu_wgmma_bf16_queued:GROUP=8:STAGES=3" and v.file == base.file
    assert v.defines == {**base.defines, "GROUP": 8, "STAGES": 3}
    assert candidate(registry, "gpu_wgmma_bf16_queued:C_HALVES=2").defines["C_HALVES"] == 2
    assert candidate(registry, "cublas_bf16") is registry["cublas_bf16"]
    for name, message in (("gpu_wgmma_bf16_queud", "unknown variant 'gpu_wgmma_bf16_queud'; did you mean "
                                                    "'gpu_wgmma_bf16_queued'"),
                          ("gpu_wgmma_bf16_queued:GROUP", "GROUP is not NAME=INTEGER"),
                          ("gpu_wgmma_bf16_queued:group=8", "group=8 is not NAME=INTEGER"),
                          ("gpu_wgmma_bf16_queued:GROUP=x", "GROUP=x is not NAME=INTEGER")):
        with pytest.raises(StudyError, match=message):
            candidate(registry, name)
    with pytest.raises(SystemExit):
        main(["gpu_wgmma_bf16_queued", "--rounds", "0", "--arch", "sm_90a"])
    assert capsys.readouterr().err.strip() == "error: --rounds is 1 or more, not 0"


def test_devbench_fits_each_variants_time_over_k_and_names_shapes_it_cannot_fit(capsys):
    """--fit-k: time = rest + slope K through each variant's medians over rounds, at one M x N; shapes of another
    M x N, or one K only, are named before anything is built."""
    import pandas as pd
    from matmulstudy.tools.devbench import fit_over_k, main
    rows = [{"variant": v, "shape": f"4096x4096x{k}", "round": r, "timed": True, "verified": True,
             "median_ms": (rest + per_k * k) * (1 + 0.01 * (r == 2 and k == 2048))}
            for v, rest, per_k in (("a", 0.02, 4e-5), ("b", 0.01, 5e-5)) for k in (1024, 2048, 4096) for r in (1, 2, 3)]
    rows.append({"variant": "a", "shape": "17x33x65", "round": 1, "timed": False, "verified": True})
    fit = fit_over_k(pd.DataFrame(rows)).set_index("variant")
    assert fit.loc["a", "us_per_1024_k"] == pytest.approx(4e-5 * 1024e3) and fit.loc["a", "rest_us"] == pytest.approx(20)
    assert fit.loc["b", "us_per_1024_k"] == pytest.approx(5e-5 * 1024e3) and fit.loc["b", "rest_us"] == pytest.approx(10)
    assert fit["max_residual_us"].max() < 1e-6   # the odd round out is not the median
    with pytest.raises(StudyError, match=r"b was timed at one K only \(4096\)"):
        fit_over_k(pd.DataFrame([r for r in rows if r["variant"] == "b" and r["shape"].endswith("x4096")]))
    for times in ("4096", "4096x4096x1024,2048x4096x2048"):
        with pytest.raises(SystemExit):
            main(["gpu_wgmma_bf16_queued", "--fit-k", "--time", times, "--arch", "sm_90a"])
        assert "error: --fit-k needs timed shapes of one M x N at two K or more" in capsys.readouterr().err


def test_the_kernels_design_notes_example_is_a_step_as_written(registry):
    """kernels/README.md shows a step's composition: its `using` lines and its call are those of a step file."""
    note = (KERNELS_DIR / "README.md").read_text()
    example = note.split("```cuda")[1].split("```")[0]
    lines = [re.sub(r"\s*//.*", "", line).strip() for line in example.splitlines()]
    wanted = [line for line in lines if line.startswith(("using ", "Kernel::run("))]
    assert len(wanted) == 6 and any(all(line in code_lines(v) for line in wanted)
                                    for v in registry.steps() if v.file and v.file.suffix == ".cu")


def test_the_shared_headers_name_no_step_and_no_kernel_comment_holds_a_measured_value():
    """A shared header says what it does and why, not which steps use it (kernels/common, kernels/sm90); a step's
    measured percentages and its GPU's serial live on its generated page, not in the kernel's comments. Comment
    lines are read joined, as a number may follow a line break."""
    for path in sorted((ROOT / "kernels").rglob("*.cu*")):
        comments = " ".join(re.findall(r"//(.*)", path.read_text()))
        if path.parent.name in ("common", "sm90"):
            assert not re.search(r"\b[Ss]teps?\s+\d", comments), path
        assert not re.search(r"\d\s?%|per ?cent", comments), path
        assert not re.search(r"GPU-[0-9a-f]{8}", comments), path


def test_a_step_builds_on_the_step_its_entry_names_and_only_on_a_step_before_it(registry):
    """Step 51 promotes step 50's sums, another precision's step (builds_on): its page sets it against step 50,
    where the precision rule alone gives it none. A builds_on that names no step before it is refused."""
    promoted = next(v for v in registry.steps() if v.builds_on)
    assert registry.step_before(promoted.id).id == promoted.builds_on
    assert registry[promoted.builds_on].precision != promoted.precision
    entries = [dict(e) for e in registry.raw["variants"]]
    later = next(e for e in entries if e["id"] == registry.steps()[-1].id)
    for e in entries:
        if e["id"] == registry.steps()[0].id:
            e["builds_on"] = later["id"]
    with pytest.raises(StudyError, match="is no step before it"):
        Registry.from_entries({**registry.raw, "variants": entries}, check_files=False)
