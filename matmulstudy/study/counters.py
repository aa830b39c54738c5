"""The hardware counters a step can be explained by: hardware.csv's columns
(from ptxas, the SASS main loop and Nsight Compute, and the tensor pipe's
idle cycles per tile, worked out from them with the GPU's multiprocessor
count when hardware.csv is written), four derived from them here, and the
energy phase's (the summary's, back to back at the power cap),
with how to print them and which way is worse.

A registry entry's `shows` names the counters that show what the step
changes, and which way they should move from the step before; the summary
page prints them (report/explain.py).
"""

from __future__ import annotations

import math

from .shapes import Shape

# column -> (label, short label for a table's head, format, True if a larger value is worse, None if neither)
COUNTERS = {
    "fma_per_lds": ("FFMA per LDS (SASS main loop)", "FFMA/LDS", "{:.2f}", False),
    "flop_per_byte": ("flop per global byte (seed's ratio)", "flop/byte", "{:.2f}", False),
    "global_ld_instructions": ("global-load instructions (ncu)", "LDG executed", "{:,.0f}", True),
    "global_st_instructions": ("global-store instructions (ncu)", "STG executed", "{:,.0f}", True),
    "global_ld_sectors_per_request": ("global-load sectors/request (ncu)", "sectors/request", "{:.2f}", True),
    "bank_conflicts_per_shared_ld": ("bank conflicts per shared load (ncu)", "conflicts/LDS", "{:.2f}", True),
    "bar_per_kffma": ("barriers per 1000 FFMA (SASS main loop)", "BAR/1000 FFMA", "{:.2f}", True),
    "instructions_per_fma": ("main-loop instructions per FMA (SASS)", "instr./FMA", "{:.2f}", True),
    "instructions_per_hgmma": ("main-loop instructions per wgmma (SASS)", "instr./HGMMA", "{:.1f}", True),
    "reuse_per_ffma": ("operands read from the reuse cache per FFMA (SASS)", "reuse/FFMA", "{:.2f}", False),
    "hmma": ("HMMA (mma.sync) in the main loop (SASS)", "HMMA", "{:.0f}", None),
    "hgmma": ("wgmma (HGMMA, FP8's QGMMA) in the main loop (SASS)", "wgmma", "{:.0f}", None),
    "stall_long_scoreboard": ("long-scoreboard stall: waiting for global loads (ncu)", "long sb.", "{:.2f}", True),
    "stall_short_scoreboard": ("short-scoreboard stall: waiting for shared loads (ncu)", "short sb.", "{:.2f}", True),
    "stall_barrier": ("barrier stall (ncu)", "barrier", "{:.2f}", True),
    "stall_mio_throttle": ("MIO-throttle stall (ncu)", "MIO thr.", "{:.2f}", True),
    "stall_dispatch": ("dispatch stall (ncu)", "dispatch", "{:.2f}", True),
    "stall_wait": ("fixed-latency wait stall (ncu)", "wait", "{:.2f}", True),
    "fma_pipe_pct": ("FMA pipe busy % (ncu)", "FMA pipe %", "{:.1f}", False),
    "tensor_pipe_pct": ("tensor pipe busy % (ncu)", "tensor pipe %", "{:.1f}", False),
    "issue_active_pct": ("issue slots busy % (ncu)", "issue %", "{:.1f}", False),
    "l2_hit_pct": ("L2 hit rate % (ncu)", "L2 hit %", "{:.1f}", False),
    "l2_throughput_pct": ("L2 throughput % of peak (ncu)", "L2 %", "{:.1f}", None),
    "sm_balance": ("SM balance: mean SM's active cycles over the busiest's (ncu)", "SM balance", "{:.3f}", False),
    "tensor_idle_cycles_per_tile": ("tensor-pipe idle cycles per tile of C (ncu)", "idle cycles/tile", "{:,.0f}", True),
    "achieved_occupancy_pct": ("achieved occupancy % (ncu)", "occupancy %", "{:.1f}", False),
    "registers": ("registers/thread", "registers", "{:.0f}", None),
    # a percentage with a decimal, as ncu's achieved one beside it (12.5% was written 12%, beside 12.5)
    "occupancy": ("theoretical occupancy", "occupancy", "{:.1%}", False),
    "dram_throughput_pct": ("DRAM throughput % of peak (ncu)", "DRAM %", "{:.1f}", None),
    "dram_read_gb": ("GB read from DRAM (ncu)", "DRAM GB", "{:.2f}", True),
    # the energy phase's, from the summary at the progression's size (back to back, at the power cap)
    "sustained_gflops": ("GFLOP/s back to back, at the power cap (NVML)", "sustained GFLOP/s", "{:,.0f}", False),
    "mean_power_w": ("mean power back to back, W (NVML)", "W", "{:.0f}", None),
    "gflop_per_joule": ("GFLOP per joule back to back (NVML)", "GFLOP/J", "{:.1f}", False),
}
ENERGY = ("sustained_gflops", "mean_power_w", "gflop_per_joule")   # from the summary, not hardware.csv
# the same at every size: read off the cubin (ptxas, the SASS main loop) or the tile (the seed's ratio); a
# step's `shown_at` measures the others (Nsight Compute's) at its size, and leaves these as every step has them
ANY_SIZE = ("fma_per_lds", "flop_per_byte", "bar_per_kffma", "instructions_per_fma", "instructions_per_hgmma",
            "reuse_per_ffma", "hmma", "hgmma", "registers", "occupancy")
DIRECTIONS = ("lower", "higher")


def with_derived(hw):
    """hardware.csv's rows with the derived columns: barriers per 1000 FFMA, main-loop instructions per FMA
    and per wgmma (the loop's instructions are counted in the SASS by hardware.main_loop_mix), and the DRAM
    bytes ncu counted in GB. A DataFrame."""
    hw = hw.copy()
    if {"bar", "fma", "loop_instructions"} <= set(hw.columns):
        fma = hw["fma"].where(hw["fma"] > 0)
        hw["bar_per_kffma"] = 1000 * hw["bar"] / fma
        hw["instructions_per_fma"] = hw["loop_instructions"] / fma
    if {"hgmma", "loop_instructions"} <= set(hw.columns):
        hw["instructions_per_hgmma"] = hw["loop_instructions"] / hw["hgmma"].where(hw["hgmma"] > 0)
    if "dram_bytes_read" in hw.columns:
        hw["dram_read_gb"] = hw["dram_bytes_read"] / 1e9
    return hw


def tensor_idle_cycles_per_tile(hw, sms: int):
    """Per row of hardware.csv: the cycles an SM was active with its tensor pipe idle, over the tiles of C it
    computed at the ncu shape (C's tiles of the step's own `tile`, over the GPU's `sms` multiprocessors). What a
    tile costs beyond its multiplications (the ring filling, C going out, waits); NaN without ncu's counters or
    a tile (cuBLAS). A Series."""
    import pandas as pd   # here: the workflow reads this module to parse its rules, and pandas takes 0.5 s

    def one(r):
        needed = (r.get("tile"), r.get("ncu_shape"), r.get("sm_active_cycles_avg"), r.get("tensor_pipe_pct"))
        if any(x is None or (not isinstance(x, str) and pd.isna(x)) for x in needed):
            return float("nan")
        rows, cols = (int(x) for x in str(r["tile"]).split("x"))   # hardware.csv's "rowsxcols"
        M, N, _ = Shape.parse(str(r["ncu_shape"]))
        tiles = math.ceil(M / rows) * math.ceil(N / cols)
        return float(r["sm_active_cycles_avg"]) * (1 - float(r["tensor_pipe_pct"]) / 100) * sms / tiles
    return hw.apply(one, axis=1) if len(hw) else pd.Series(dtype=float)
