"""The SM clock inside a launch and the epilogue's share of it (kernels/sm90/block_clock.cuh, devbench's
CLOCK_TRACE candidates): only a CLOCK_TRACE build asks its launch for room for the blocks' clocks (its workspace,
kernels/sm90/workspace.cuh), devbench turns them into MHz and a share, and on the GPU they read as a clock."""

import io
import shutil

import numpy as np
import pytest

from matmulstudy.gpu.cubin import launch_facts
from matmulstudy.gpu.launch import WORKSPACES
from matmulstudy.measure import build
from matmulstudy.study.registry import load_registry
from matmulstudy.study.shapes import Shape
from matmulstudy.tools import devbench

STEP = "gpu_wgmma_bf16_drawn_late"


def test_only_a_clock_trace_build_asks_for_room_for_the_blocks_clocks(tmp_path):
    """The step's exported workspace (its LaunchFacts): the queue's ticket alone, or the ticket and, from byte
    devbench.CLOCKS_AT, a row of CLOCK_FIELDS 8-byte clocks for each of 1,024 blocks."""
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not on PATH")
    registry = load_registry()
    for name, room in ((STEP, 4), (STEP + ":CLOCK_TRACE=1", devbench.CLOCKS_AT + 1024 * devbench.CLOCK_FIELDS * 8)):
        v = devbench.candidate(registry, name)
        cubin = tmp_path / f"{room}.cubin"
        build.build(v, cubin, tmp_path / f"{room}.json", v.target("sm_90"), io.StringIO())
        assert launch_facts(cubin, v.kernel).workspace_bytes == room, name


class _Session:
    """A session whose one module's one launcher's workspace holds two blocks' clocks (and 1,022 that did not
    run): no GPU, the arithmetic only."""

    def __init__(self, clocks):
        self.memory = {7 + devbench.CLOCKS_AT: clocks.astype(np.uint64).ravel()}
        self.cuda = self
        self.kernels = {(WORKSPACES, "step.cubin"): [(7, devbench.CLOCKS_AT + clocks.nbytes)]}

    def held(self, key):
        return self.kernels.get(key)

    def memcpy_dtoh(self, out, address):
        out[:] = self.memory[address]

    def memset_d8(self, address, value, nbytes):
        self.memory[address][:] = value


def test_devbench_reads_each_blocks_cycles_over_its_nanoseconds_and_zeroes_them():
    clocks = np.zeros((1024, devbench.CLOCK_FIELDS), np.int64)
    clocks[0] = [1_000, 1_000 + 1_980_000, 5_000, 5_000 + 1_000_000, 198_000, 4]   # 1,980 MHz for 1 ms; 10% storing
    clocks[1] = [0, 1_500_000, 0, 1_000_000, 450_000, 3]                          # 1,500 MHz; 30%
    clocks[2] = [0, 1_000_000, 0, 500_000, 0, 0]                                  # 2,000 MHz; no tile of its own
    gpu = _Session(clocks)
    v = devbench.candidate(load_registry(), STEP + ":CLOCK_TRACE=1")
    got = devbench.block_clocks(gpu, v, "step.cubin", placements=1)
    assert got == {"launch_mhz": pytest.approx(1980.0), "launch_mhz_min": pytest.approx(1500.0),
                   "epilogue_pct": pytest.approx(10.0), "epilogue_cycles_per_tile": pytest.approx(99_750.0)}
    assert not gpu.memory[7 + devbench.CLOCKS_AT].any()   # zeroed for the next measurement
    assert devbench.block_clocks(gpu, v, "step.cubin", placements=1) == {}   # nothing ran since
    assert devbench.block_clocks(gpu, load_registry()[STEP], "step.cubin", placements=1) == {}   # no trace built


def test_the_traced_builds_fields_are_the_ones_devbench_reads():
    """workspace.cuh's CLOCK_FIELDS and devbench's are one number, said twice (a kernel header and Python)."""
    import re
    from matmulstudy.study.paths import ROOT
    header = (ROOT / "kernels" / "sm90" / "workspace.cuh").read_text()
    assert int(re.search(r"constexpr int CLOCK_FIELDS = (\d+);", header).group(1)) == devbench.CLOCK_FIELDS


@pytest.mark.gpu
@pytest.mark.timed
def test_a_clock_trace_candidate_runs_at_a_clock_the_gpu_has():
    from matmulstudy.gpu import host
    gpu = host.visible_gpu()
    arch = host.arch_of(gpu["compute_capability"])
    if arch != "sm_90":
        pytest.skip("the TMA + wgmma steps run on sm_90 (H100, H200)")
    df = devbench.run([STEP + ":CLOCK_TRACE=1"], [], [Shape(2048, 2048, 2048)], arch)
    row = df[df["timed"]].iloc[0]
    assert row["verified"]
    assert 300 <= row["launch_mhz_min"] <= row["launch_mhz"] <= 3000, row
    assert 0 < row["epilogue_pct"] < 50 and row["epilogue_cycles_per_tile"] > 0, row
