"""The copy engine's feed into shared memory while every multiprocessor asks at once (gpu/feed.cu): bytes a
clock a multiprocessor, and the SM clock inside the launch, for the K-slices of the tiles a TMA + wgmma
mainloop might take, each block alone or two in a cluster sharing boxes by multicast.

    python -m matmulstudy.tools.feed [--source-mb 16,1024] [--blocks 0,66,33] [--launches 5] [--out feed.csv]

A stage is `boxes` boxes of 64 rows by 128 bytes (8 KB). The configurations, by the BF16 tile whose K-slice of
64 they bring (TILES below): 128 x 128 (4 boxes), 64 x 256 (5), 128 x 256 (6: the chapter's block tile), two
128 x 128 tiles at once (8: a ping-pong block's two consumers); in pairs, A's boxes shared (each block of the
pair brings half of them into both, as step 28's clusters do) or B's. The source is one BF16 matrix
of --source-mb: 16 MB stays in L2 (the GEMM's operands at 4096 mostly do), 1024 MB does not.

With --blocks, the probe runs on that many blocks as well as on a block an SM (0): if a block's feed grows as
fewer ask, what bounds it is L2's total, shared out; if not, each SM's own port.

The table gives, a row a configuration, the median over blocks and launches of each block's bytes over its
cycles (its feed), the slowest block's, the SM clock inside the launch (cycles over global-timer
nanoseconds), and all blocks' bytes over the launch's longest time. What a mainloop at the tensor cores' peak
needs, to compare: Hopper's dense BF16 peak is 4096 flops a clock a multiprocessor (precisions.py), 2048
products; a slice of 64 k of a BM x BN tile is BM x BN x 64 products, so stage bytes x 2048 / (BM x BN x 64)
bytes a clock (the `needs` column).
"""

from __future__ import annotations

import argparse
import ctypes
import itertools
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from .. import elements, precisions
from ..errors import StudyError
from ..gpu import host, tma
from ..gpu.session import GpuSession
from ..measure import build

SOURCE = Path(__file__).resolve().parent.parent / "gpu" / "feed.cu"
BOX_BYTES, MAX_STAGES, SHARED_LIMIT = 64 * 128, 8, 227 * 1024
PRODUCTS_A_CLOCK = precisions.get("bf16").per_sm[9, 0] // 2   # dense BF16 products a clock an SM, Hopper
# name: (boxes a stage, boxes shared in a pair (0: alone), BF16 products a slice of 64 k)
TILES = {
    "128x128": (4, 0, 128 * 128 * 64),
    "64x256": (5, 0, 64 * 256 * 64),
    "128x256": (6, 0, 128 * 256 * 64),
    "2 x 128x128": (8, 0, 2 * 128 * 128 * 64),
    "128x256, A shared": (6, 2, 128 * 256 * 64),
    "128x256, B shared": (6, 4, 128 * 256 * 64),
    "2 x 128x128, A shared": (8, 4, 2 * 128 * 128 * 64),
}


def stages_for(boxes: int) -> int:
    """As many stages as fit in a block's shared memory (4 at most, as the chapter's rings; 1 KB to align)."""
    return max(1, min(4, (SHARED_LIMIT - 1024) // (boxes * BOX_BYTES)))


def build_feed(arch: str, out: Path) -> Path:
    """feed.cu for an sm_90 GPU (its copies and clusters are sm_90's)."""
    return build.build_sm90_probe(SOURCE, out, arch, "the feed probe (TMA multicast: an H100 or H200)")


class Feed:
    """The probe's two kernels loaded, and a launch of either on a source matrix."""

    def __init__(self, gpu, cubin: Path):
        self.gpu, self.cubin = gpu, cubin
        self.cuda = tma._library()
        self.kernels = {}

    def kernel(self, pair: bool, shared: int):
        key = (pair, shared)
        if key not in self.kernels:
            self.kernels[key] = tma.DriverKernel(self.cubin, "tma_feed_pair" if pair else "tma_feed", shared)
        return self.kernels[key]

    def run(self, source, rows: int, cols: int, boxes: int, shared_boxes: int, slices: int, launches: int,
            grid: int = 0):
        """`launches` launches, one after another, of `grid` blocks (0: a block an SM, as many pairs as run at
        once); each block's (cycles, ns, bytes, sm) for each: an array of launches x blocks x 4."""
        pair, stages = shared_boxes > 0, stages_for(boxes)
        shared = stages * boxes * BOX_BYTES + 1024
        kernel = self.kernel(pair, shared)
        sms = self.gpu.sm_count
        blocks = 2 * kernel.max_active_clusters((sms, 1, 1), (128, 1, 1)) if pair else sms
        if grid:
            blocks = min(blocks, grid // 2 * 2 if pair else grid)
        out = self.gpu.empty(blocks * 4 * 8)
        plan = tma.MapPlan((cols, rows), cols * 2, (64, 64), elements.BFLOAT16)
        values = [ctypes.c_int(slices), ctypes.c_int(boxes), ctypes.c_int(shared_boxes), ctypes.c_int(stages),
                  ctypes.c_uint64(int(out)), ctypes.c_int(rows), ctypes.c_int(cols),
                  ctypes.create_string_buffer(tma.encode(plan, int(source)), tma.MAP_BYTES)]
        params = (ctypes.c_void_p * len(values))(*[ctypes.addressof(v) for v in values])
        results = []
        for _ in range(launches + 1):   # the first warms the L2 and the clocks, and is dropped
            self.gpu.cuda.memset_d8(out, 0, blocks * 4 * 8)
            status = self.cuda.cuLaunchKernel(kernel.function, blocks, 1, 1, 128, 1, 1, shared, None, params, None)
            if status != 0:
                raise StudyError(f"CUDA driver error {status} launching the feed probe ({boxes} boxes, {stages} "
                                 f"stages, {shared} bytes of shared memory)")
            self.gpu.synchronize()
            results.append(self.gpu.to_host(out, (blocks, 4), np.uint64).astype(np.int64))
        got = np.stack(results[1:])
        if (got[:, :, 2] != slices * boxes * BOX_BYTES).any():
            raise StudyError("the feed probe's blocks did not all report their bytes: a launch went wrong")
        return got, stages


def measure(source_mbs: list[int], launches: int = 5, slices: int = 4096, grids: tuple = (0,)) -> pd.DataFrame:
    """Every configuration of TILES on each source size and grid (0: a block an SM): a row a block of each
    launch."""
    rows = []
    arch = host.arch_of(host.visible_gpu()["compute_capability"])
    with tempfile.TemporaryDirectory() as tmp, GpuSession() as gpu:
        feed = Feed(gpu, build_feed(arch, Path(tmp)))
        for mb in source_mbs:
            cols = 1024   # 2 KB rows: 16 slices of 64 columns, then round again
            nrows = mb * 2**20 // (cols * 2) // 512 * 512
            source = gpu.empty(nrows * cols * 2)
            gpu.cuda.memset_d8(source, 0, nrows * cols * 2)
            for grid, (name, (boxes, shared_boxes, products)) in itertools.product(grids, TILES.items()):
                got, stages = feed.run(source, nrows, cols, boxes, shared_boxes, slices, launches, grid)
                for launch, blocks in enumerate(got):
                    for block, (cycles, ns, nbytes, sm) in enumerate(blocks):
                        rows.append({"source_mb": mb, "grid": len(blocks), "tile": name, "boxes": boxes, "shared_boxes": shared_boxes,
                                     "stages": stages, "needs_bytes_per_clock": boxes * BOX_BYTES *
                                     PRODUCTS_A_CLOCK / products, "launch": launch, "block": block, "sm": sm,
                                     "cycles": cycles, "ns": ns, "bytes": nbytes})
            gpu.release(source)
    return pd.DataFrame(rows)


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """A row a configuration: feed a block (bytes a clock; median, slowest block), the clock inside, all
    blocks' bytes over the launch's longest time, and what a mainloop at the tensor cores' peak needs."""
    df = df.assign(feed=df["bytes"] / df["cycles"], mhz=df["cycles"] / df["ns"] * 1e3)
    by = ["source_mb", "grid", "tile"]
    launch = df.groupby([*by, "launch"]).agg(total=("bytes", "sum"), longest=("ns", "max"))
    launch["tb_s"] = launch["total"] / launch["longest"] / 1e3
    out = df.groupby(by, sort=False).agg(
        stages=("stages", "first"), needs=("needs_bytes_per_clock", "first"),
        feed_median=("feed", "median"), feed_slowest=("feed", "min"), mhz_median=("mhz", "median"))
    out["tb_s"] = launch.groupby(by)["tb_s"].median()
    return out.round(2)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--source-mb", default="16,1024", help="source sizes in MB, comma-separated")
    p.add_argument("--blocks", default="0", help="grids to run, comma-separated (0: a block an SM)")
    p.add_argument("--launches", type=int, default=5)
    p.add_argument("--out", type=Path, help="every block's numbers (CSV)")
    args = p.parse_args(argv)
    try:
        gpu = host.visible_gpu()
        print(f"{gpu['name']}, UUID {gpu['uuid']}", flush=True)   # what the figures below were measured on
        sizes = [int(x) for x in args.source_mb.split(",") if x]
        df = measure(sizes, args.launches, grids=tuple(int(x) for x in args.blocks.split(",") if x))
    except (StudyError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    if args.out:
        df.assign(gpu_uuid=gpu["uuid"]).to_csv(args.out, index=False)
    print(summary(df).to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())
