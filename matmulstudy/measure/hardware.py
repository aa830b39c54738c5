"""Why a step is as fast as it is: occupancy, instruction mix, profiler counters.

Three sources, from cheapest to dearest:
- the compiler's resource report and the device's limits give the
  theoretical occupancy (no GPU needed once the limits are known);
- the machine code (cuobjdump -sass) gives the instruction mix of the
  kernel's main loop, e.g. FFMA per shared-memory load, which is seed 000's
  own argument for the outer product (no GPU needed);
- Nsight Compute (ncu) measures bank conflicts, sectors per request,
  achieved occupancy and DRAM throughput of one launch (GPU needed).
"""

from __future__ import annotations

import glob
import math
import os
import re
import shutil
import subprocess
import sys
from io import StringIO

from ..errors import StudyError

# --- occupancy ----------------------------------------------------------

REGISTER_ALLOCATION_UNIT = 256   # registers are given to a warp in blocks of 256 (cc 5.0 and later)
WARP = 32


def occupancy(threads: int, registers: int, shared_bytes: int, gpu: dict) -> dict:
    """Theoretical occupancy of a kernel on a GPU, and what limits it.

    Blocks per SM are bounded by warps, registers, shared memory (plus the
    driver's reserve per block) and the SM's block limit; occupancy is the
    resident warps over the SM's maximum, as CUDA's occupancy calculator
    defines it.
    """
    max_warps = gpu["max_threads_per_sm"] // WARP
    warps = math.ceil(threads / WARP)
    regs_per_warp = math.ceil(registers * WARP / REGISTER_ALLOCATION_UNIT) * REGISTER_ALLOCATION_UNIT
    limits = {
        "warps": max_warps // warps,
        "registers": (gpu["registers_per_sm"] // regs_per_warp) // warps if registers else 10**9,
        "shared memory": (gpu["shared_per_sm_bytes"] // (shared_bytes + gpu["reserved_shared_per_block_bytes"])
                          if shared_bytes else 10**9),
        "blocks": gpu["max_blocks_per_sm"],
    }
    blocks = min(limits.values())
    limiter = min(limits, key=limits.get)
    return {"blocks_per_sm": blocks, "warps_per_sm": blocks * warps,
            "occupancy": blocks * warps / max_warps, "occupancy_limiter": limiter}


# --- instruction mix ------------------------------------------------------

_SASS_LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_.]*)([^;]*);")


def find_tool(name: str) -> str:
    """A CUDA binary tool from PATH, CUDA_HOME, or NVIDIA's pip packages."""
    found = shutil.which(name)
    if found:
        return found
    places = [os.path.join(root, "bin", name) for root in
              filter(None, [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"])]
    for site in sys.path:
        places += glob.glob(os.path.join(site, "nvidia", "cu*", "bin", name))
    for path in places:
        if os.access(path, os.X_OK):
            return path
    raise StudyError(f"{name} was not found: install the CUDA toolkit or pip install nvidia-cuda-{name}")


def disassemble(cubin) -> str:
    tool = find_tool("cuobjdump")
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(tool) + os.pathsep + env.get("PATH", "")   # cuobjdump calls nvdisasm
    proc = subprocess.run([tool, "-sass", str(cubin)], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise StudyError(f"cuobjdump -sass {cubin} failed: {(proc.stderr or proc.stdout).strip()[:200]}")
    return proc.stdout


def parse_sass(text: str, kernel: str) -> list[tuple[int, str, str]]:
    """(address, opcode, operands) of one kernel's instructions."""
    parts = re.split(r"\n\s*Function : ", text)
    body = next((p for p in parts[1:] if p.split("\n", 1)[0].strip() == kernel), None)
    if body is None:
        raise StudyError(f"no SASS for kernel '{kernel}' in the cubin")
    return [(int(m.group(1), 16), m.group(2), m.group(3).strip()) for m in _SASS_LINE.finditer(body)]


def _family(opcode: str) -> str:
    """An opcode's family: LDSM is a shared load; a warpgroup MMA of any element type (QGMMA: FP8's, IGMMA:
    int8's) counts as HGMMA, the wgmma of 16- and 32-bit inputs, so that an FP8 kernel's main loop is found by its
    wgmma too (it was found by its FFMA, and counted no wgmma)."""
    base = opcode.split(".")[0]
    return {"LDSM": "LDS", "QGMMA": "HGMMA", "IGMMA": "HGMMA"}.get(base, base)


def main_loop_mix(instructions: list[tuple[int, str, str]]) -> dict:
    """Instruction counts of the main loop: the loop with the most FMAs.

    Loops are found from backward branches (BRA to a lower address); among
    loops with equally many FMAs the innermost (shortest) one is taken. FMA
    means FFMA, or IMAD in a kernel with no FFMA (the int32 kernels; IMAD
    there also does address arithmetic). In a tensor-core kernel the main
    loop is the one with the most HGMMA (wgmma) or, without those, HMMA
    (mma.sync) instructions, and `hmma`, `hgmma` count them: a step meant
    for the tensor cores that shows FFMA there is not on that path.
    """
    loops = []
    for addr, op, args in instructions:
        m = re.match(r"(0x[0-9a-f]+)", args)
        if _family(op) == "BRA" and m and int(m.group(1), 16) < addr:
            loops.append((int(m.group(1), 16), addr))
    if not loops:   # no loop at all: take the whole kernel
        loops = [(instructions[0][0], instructions[-1][0])] if instructions else [(0, 0)]

    def counts(lo, hi):
        c = {}
        for addr, op, operands in instructions:
            if lo <= addr <= hi:
                fam = _family(op)
                c[fam] = c.get(fam, 0) + 1
                if fam == "LDS" and ".128" in op:
                    c["LDS.128"] = c.get("LDS.128", 0) + 1
                if fam == "FFMA":
                    c["reuse"] = c.get("reuse", 0) + operands.count(".reuse")
        return c

    present = {_family(op) for _, op, _ in instructions}
    tensor = next((op for op in ("HGMMA", "HMMA") if op in present), None)
    fma_op = "FFMA" if "FFMA" in present or tensor else "IMAD"
    math_op = tensor or fma_op

    def fma(c):
        return c.get(fma_op, 0)

    lo, hi = max(loops, key=lambda l: (counts(*l).get(math_op, 0), -(l[1] - l[0])))
    c = counts(lo, hi)
    lds = c.get("LDS", 0)
    return {
        "loop_instructions": sum(v for k, v in c.items() if k not in ("LDS.128", "reuse")),
        "fma": fma(c), "ffma": c.get("FFMA", 0), "imad": c.get("IMAD", 0),
        "hmma": c.get("HMMA", 0), "hgmma": c.get("HGMMA", 0),
        "lds": lds, "lds_128": c.get("LDS.128", 0), "sts": c.get("STS", 0),
        "ldg": c.get("LDG", 0), "bar": c.get("BAR", 0),
        "fma_per_lds": fma(c) / lds if lds and not tensor else None,
        "reuse_per_ffma": c.get("reuse", 0) / c["FFMA"] if c.get("FFMA") else None,
    }


# --- Nsight Compute ---------------------------------------------------------

NCU_METRICS = {
    "gpu__time_duration.sum": "ncu_time_ns",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": "shared_ld_bank_conflicts",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": "shared_st_bank_conflicts",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": "global_ld_sectors",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": "global_ld_requests",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "achieved_occupancy_pct",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": "dram_throughput_pct",
    "dram__bytes_read.sum": "dram_bytes_read",
    "smsp__inst_executed_op_shared_ld.sum": "shared_ld_instructions",
    "smsp__inst_executed_op_global_ld.sum": "global_ld_instructions",
    "smsp__inst_executed_op_global_st.sum": "global_st_instructions",
    "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active": "fma_pipe_pct",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active": "tensor_pipe_pct",
    "smsp__issue_active.avg.pct_of_peak_sustained_active": "issue_active_pct",
    "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio": "stall_barrier",
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio": "stall_long_scoreboard",
    "smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio": "stall_short_scoreboard",
    "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio": "stall_mio_throttle",
    "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio": "stall_wait",
    "smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio": "stall_math_pipe_throttle",
    "smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio": "stall_dispatch",
    "smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio": "stall_no_instruction",
    "smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio": "stall_not_selected",
    "lts__t_sector_hit_rate.pct": "l2_hit_pct",
    "lts__throughput.avg.pct_of_peak_sustained_elapsed": "l2_throughput_pct",   # the tensor steps' feed
    "sm__cycles_active.avg": "sm_active_cycles_avg",
    "sm__cycles_active.max": "sm_active_cycles_max",
}


def ncu_command() -> list[str]:
    """ncu with the study's counters; the clocks are left as the GPU sets them."""
    return [find_tool("ncu"), "--clock-control", "none", "--print-units", "base", "--csv",
            "--metrics", ",".join(NCU_METRICS)]


def parse_ncu_csv(text: str, kernel: str | None) -> dict:
    """ncu --csv output -> the counters of the launch of `kernel`.

    kernel None (a library call such as cuBLAS, whose kernels have names of
    its own): every launch ncu saw; the time is their sum, the other
    counters those of the last one. Derived: global-load sectors per request,
    and shared-memory bank conflicts per shared-load instruction.
    """
    import pandas as pd   # here, not above: the builds read SASS through this module, and pandas takes 0.5 s

    start = text.find('"ID"')
    if start < 0:
        raise StudyError("ncu printed no CSV table (see the log for its message)")
    df = pd.read_csv(StringIO(text[start:]), thousands=",")
    if kernel is not None:
        df = df[df["Kernel Name"].str.split("(").str[0] == kernel]   # by its whole name: one may begin another's
    if df.empty:
        raise StudyError(f"ncu measured no launch of {kernel or 'any kernel'}")
    last = df[df["ID"] == df["ID"].max()]
    if kernel is None:
        times = df[df["Metric Name"] == "gpu__time_duration.sum"]
        last = pd.concat([last[last["Metric Name"] != "gpu__time_duration.sum"],
                          times.tail(1).assign(**{"Metric Value": times["Metric Value"].astype(float).sum()})])
    values = {NCU_METRICS[n]: float(v) for n, v in zip(last["Metric Name"], last["Metric Value"])
              if n in NCU_METRICS}
    req = values.get("global_ld_requests")
    values["global_ld_sectors_per_request"] = values["global_ld_sectors"] / req if req else None
    lds = values.get("shared_ld_instructions")
    values["bank_conflicts_per_shared_ld"] = values["shared_ld_bank_conflicts"] / lds if lds else None
    busiest = values.get("sm_active_cycles_max")
    values["sm_balance"] = values["sm_active_cycles_avg"] / busiest if busiest else None   # 1: every SM as busy
    values["ncu_kernels"] = " + ".join(df.drop_duplicates("ID")["Kernel Name"].str.split("(").str[0])
    return values
