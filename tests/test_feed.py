"""The copy engine's feed probe (gpu/feed.cu, tools/feed.py): it builds where nvcc is, says which GPU it needs
elsewhere, and on an H100 or H200 every block of every configuration reports its bytes and a clock."""

import shutil

import pytest

from matmulstudy.errors import StudyError
from matmulstudy.tools import feed


def test_each_configuration_fits_a_blocks_shared_memory_and_the_probes_barriers():
    for name, (boxes, shared_boxes, products) in feed.TILES.items():
        stages = feed.stages_for(boxes)
        assert 2 <= stages <= feed.MAX_STAGES, name
        assert stages * boxes * feed.BOX_BYTES + 1024 <= feed.SHARED_LIMIT, name
        assert shared_boxes % 2 == 0 and shared_boxes < boxes, name   # each block of a pair brings half


def test_the_probe_builds_for_sm90_and_names_the_gpu_it_needs_elsewhere(tmp_path):
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not on PATH")
    assert feed.build_feed("sm_90", tmp_path).stat().st_size > 0
    with pytest.raises(StudyError, match="needs an sm_90 GPU"):
        feed.build_feed("sm_80", tmp_path)


@pytest.mark.gpu
@pytest.mark.timed
def test_every_block_of_every_configuration_reports_its_feed_and_clock():
    from matmulstudy.gpu import host
    if host.arch_of(host.visible_gpu()["compute_capability"]) != "sm_90":
        pytest.skip("the feed probe runs on an sm_90 GPU (H100, H200)")
    df = feed.measure([16], launches=1, slices=256, grids=(0, 33))
    table = feed.summary(df)
    assert list(table.index.get_level_values("tile")) == 2 * list(feed.TILES)
    assert (df["bytes"] == 256 * df["boxes"] * feed.BOX_BYTES).all()
    grids = df.groupby("tile")["grid"].unique()
    assert all(max(g) >= 2 * min(g) for g in grids) and 32 in grids["128x256, A shared"], grids   # pairs: even
    assert df["sm"].groupby([df["grid"], df["tile"], df["launch"]]).nunique().eq(
        df.groupby(["grid", "tile", "launch"]).size()).all()   # a block an SM
    assert table["mhz_median"].between(300, 3000).all(), table   # the SM clock, from cycles over nanoseconds
    assert table["feed_median"].between(1, 1024).all(), table     # bytes a clock into one SM's shared memory


def test_the_summary_divides_each_blocks_bytes_by_its_cycles_and_all_bytes_by_the_longest_time():
    import pandas as pd
    rows = []
    for launch in range(2):
        for block, (cycles, ns) in enumerate([(1000, 500), (2000, 1000)]):   # 2 GHz both; 64 and 32 B a clock
            rows.append({"source_mb": 16, "grid": 2, "tile": "128x256", "boxes": 8, "shared_boxes": 0, "stages": 3,
                         "needs_bytes_per_clock": 48.0, "launch": launch, "block": block, "sm": block,
                         "cycles": cycles, "ns": ns, "bytes": 64_000})
    row = feed.summary(pd.DataFrame(rows)).loc[(16, 2, "128x256")]
    assert row["feed_median"] == 48.0 and row["feed_slowest"] == 32.0
    assert row["mhz_median"] == 2000.0
    assert row["tb_s"] == 0.13   # 128,000 bytes over the slower block's 1,000 ns
