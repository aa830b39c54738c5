"""Occupancy arithmetic, the instruction mix from SASS, and ncu's CSV (no GPU needed)."""

from pathlib import Path

import pytest

from matmulstudy.measure import hardware

H100 = {"max_threads_per_sm": 2048, "registers_per_sm": 65536, "shared_per_sm_bytes": 233472,
        "reserved_shared_per_block_bytes": 1024, "max_blocks_per_sm": 32}


def test_occupancy_full_for_the_16x16_tiled_kernel():
    occ = hardware.occupancy(threads=256, registers=32, shared_bytes=2048, gpu=H100)
    assert occ == {"blocks_per_sm": 8, "warps_per_sm": 64, "occupancy": 1.0, "occupancy_limiter": "warps"}


def test_occupancy_limited_by_registers():
    # 95 registers -> 3072 per warp -> 21 warps of registers -> 10 blocks of 2 warps
    occ = hardware.occupancy(threads=64, registers=95, shared_bytes=1088, gpu=H100)
    assert occ["blocks_per_sm"] == 10 and occ["occupancy"] == pytest.approx(20 / 64)
    assert occ["occupancy_limiter"] == "registers"


def test_occupancy_limited_by_shared_memory_and_block_count():
    occ = hardware.occupancy(threads=64, registers=16, shared_bytes=48 * 1024, gpu=H100)
    assert occ["blocks_per_sm"] == 4 and occ["occupancy_limiter"] == "shared memory"
    occ = hardware.occupancy(threads=32, registers=16, shared_bytes=0, gpu=H100)
    assert occ["blocks_per_sm"] == 32 and occ["occupancy_limiter"] == "blocks"


SASS = """
	code for sm_90
		Function : toy
	.headerflags	@"EF_CUDA_SM90"
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   LDG.E R2, desc[UR4][R4.64] ;
        /*0020*/                   LDS.128 R8, [R3] ;
        /*0030*/                   FFMA R9, R8, R2, R9 ;
        /*0040*/                   FFMA R10, R8, R2, R10 ;
        /*0050*/               @P0 BRA 0x20 ;
        /*0060*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0070*/              @!P1 BRA 0x10 ;
        /*0080*/                   EXIT ;
"""


def test_main_loop_is_the_innermost_loop_with_the_most_fma():
    mix = hardware.main_loop_mix(hardware.parse_sass(SASS, "toy"))
    assert mix["ffma"] == 2 and mix["lds"] == 1 and mix["lds_128"] == 1 and mix["ldg"] == 0
    assert mix["fma_per_lds"] == 2.0 and mix["loop_instructions"] == 4


def _mix(sm90_builds, registry, vid, dtype="float32"):
    cubin = sm90_builds[vid, dtype][0]
    return hardware.main_loop_mix(hardware.parse_sass(hardware.disassemble(cubin), registry[vid].kernel))


def test_outer_product_has_more_ffma_per_shared_load_than_the_inner_product(registry, sm90_builds):
    """Seed 000's argument for step 5, read off the machine code."""
    inner = _mix(sm90_builds, registry, "gpu_tiled")
    outer = _mix(sm90_builds, registry, "gpu_outer")
    assert inner["ffma"] == 16 and outer["ffma"] == 16
    assert outer["fma_per_lds"] > inner["fma_per_lds"]
    jacket = _mix(sm90_builds, registry, "gpu_jacket_3rows")
    assert jacket["fma_per_lds"] >= 3 * outer["fma_per_lds"] / 4


def test_unrolling_puts_the_whole_k_loop_in_one_body(registry, sm90_builds):
    rolled = _mix(sm90_builds, registry, "gpu_outer")
    unrolled = _mix(sm90_builds, registry, "gpu_outer_unrolled")
    tile_k, tile_m = (registry["gpu_outer"].defines[k] for k in ("TILE_K", "TILE_M"))
    assert rolled["ffma"] == tile_m and rolled["ldg"] == 1
    assert unrolled["ffma"] == tile_k * tile_m and unrolled["ldg"] >= tile_k


def test_int32_kernels_multiply_with_imad(registry, sm90_builds):
    mix = _mix(sm90_builds, registry, "gpu_tiled", "int32")
    assert mix["ffma"] == 0 and mix["imad"] >= 16


NCU_SAMPLE = Path(__file__).parent / "data" / "ncu_gpu_tiled_coalesced_1024.csv"


def test_ncu_csv_from_the_h100_is_parsed():
    """Real ncu output (step 3 at 1024 on the H100, including ncu's own log lines)."""
    counters = hardware.parse_ncu_csv(NCU_SAMPLE.read_text(), "gpu_tiled_coalesced")
    assert counters["global_ld_sectors_per_request"] == pytest.approx(16_777_216 / 4_194_304)
    assert counters["shared_ld_bank_conflicts"] == 100_711_967
    assert counters["bank_conflicts_per_shared_ld"] == pytest.approx(100_711_967 / 16_777_216)
    assert counters["achieved_occupancy_pct"] == pytest.approx(93.16)
    assert counters["ncu_time_ns"] == 723_168
    with pytest.raises(Exception, match="no launch of gpu_outer"):
        hardware.parse_ncu_csv(NCU_SAMPLE.read_text(), "gpu_outer")
    with pytest.raises(Exception, match="no launch of gpu_tiled"):   # by the whole name, not its start
        hardware.parse_ncu_csv(NCU_SAMPLE.read_text(), "gpu_tiled")


def test_every_tensor_core_step_runs_hmma_and_no_ffma_in_its_main_loop(registry, sm90_builds):
    """A step meant for the tensor cores is on that path: HMMA (mma.sync) or wgmma (HGMMA; FP8's QGMMA) in the
    main loop of its machine code, and no FFMA there, in every tensor-core precision (FP8's main loop was taken
    for the one with the most FFMA, its promotion's, and counted no wgmma)."""
    steps = [v for v in registry.steps() if v.precision.unit == "tensor core" and v.is_built]
    assert {v.precision.id for v in steps} == {"tf32", "bf16", "fp8_fast", "fp8"}
    for v in steps:
        mix = _mix(sm90_builds, registry, v.id)
        assert mix["hmma"] + mix["hgmma"] > 0 and mix["ffma"] == 0, (v.id, mix)
        assert mix["fma_per_lds"] is None


def test_tensor_idle_cycles_per_tile_are_an_sms_idle_cycles_over_its_share_of_the_tiles():
    """4096 x 4096 in 128 x 256 tiles is 512 tiles, 3.88 an SM on 132: 286,632 active cycles at 88.69% busy leave
    32,418 idle cycles, 8,358 a tile (step 42 on the H100, 6fbf69a:notes/bf16.md). No tile (cuBLAS) or no ncu: NaN."""
    import pandas as pd
    from matmulstudy.study.counters import COUNTERS, tensor_idle_cycles_per_tile
    hw = pd.DataFrame([
        {"tile": "128x256", "ncu_shape": "4096x4096x4096", "sm_active_cycles_avg": 286632.0, "tensor_pipe_pct": 88.69},
        {"tile": "128x256", "ncu_shape": "4000x4000x64", "sm_active_cycles_avg": 1000.0, "tensor_pipe_pct": 50.0},
        {"tile": None, "ncu_shape": "4096x4096x4096", "sm_active_cycles_avg": 280749.0, "tensor_pipe_pct": 90.54},
        {"tile": "128x256", "ncu_shape": None, "sm_active_cycles_avg": None, "tensor_pipe_pct": None},
    ])
    out = tensor_idle_cycles_per_tile(hw, 132)
    assert out[0] == pytest.approx(286632 * (1 - 0.8869) * 132 / 512) and round(out[0]) == 8358
    assert out[1] == pytest.approx(1000 * 0.5 * 132 / (32 * 16))   # ragged: C's tiles rounded up
    assert out[2:].isna().all()
    assert COUNTERS["tensor_idle_cycles_per_tile"][3] is True   # more idle cycles a tile is worse
