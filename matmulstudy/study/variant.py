"""One variant of the study, as its registry entry describes it, and what follows from its defines: the
launch geometry, dynamic shared memory, tensor maps, clusters, the compute-to-memory ratio, the search
space of its free parameters."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path

from .. import precisions
from ..elements import FLOAT32, Element
from ..errors import StudyError
from ..gpu import tma
from .expressions import eval_expr, holds

GPU_BACKENDS = ("cuda", "cublas")
BUILT_BACKENDS = ("c", "cuda")


@dataclass(frozen=True)
class Search:
    """A variant's free parameters, tunable (measure/tune.py): the values each define may take, and the
    constraints a combination must meet to be built (the kernel's static_asserts say the same in C++)."""
    values: dict
    require: tuple = ()

    def candidates(self, defaults: dict) -> list[tuple[dict, str | None]]:
        """Every combination as (defines, why it is invalid or None), the registry's defaults first."""
        names = list(self.values)
        combos = [dict(zip(names, vals)) for vals in itertools.product(*self.values.values())]
        first = {n: defaults[n] for n in names}
        combos = [first] + [c for c in combos if c != first]
        out = []
        for combo in combos:
            defines = {**defaults, **combo}
            broken = next((c for c in self.require if not holds(c, defines)), None)
            out.append((combo, f"constraint {broken!r} does not hold" if broken else None))
        return out


@dataclass(frozen=True)
class Chapter:
    id: str
    title: str
    precision: precisions.Precision = precisions.BASE


@dataclass(frozen=True)
class Variant:
    id: str
    backend: str
    title: str
    source: str
    order: int
    file: Path | None = None
    kernel: str = ""
    defines: dict = field(default_factory=dict)
    block_expr: tuple = ()
    tile_expr: tuple = ()
    grid_expr: tuple = ()   # a grid of the kernel's own: expressions of grid_names()
    ratio_expr: str | None = None
    dtypes: tuple = ("float32",)
    precision: precisions.Precision = precisions.BASE
    role: str = "step"
    chapter: str | None = None
    max_size: int | None = None
    search: Search | None = None
    shows: tuple = ()   # (counter, 'lower' or 'higher'): what shows the step's change, from the step before
    shown_at: int | None = None   # the size n (n x n x n) its `shows` are measured at, with the step before's,
                                  # where it is meant to win; None: the study's ncu_size, as every counter
    needs: str | None = None   # the oldest nvcc target it builds for (sm_80), or an arch-specific one (sm_90a)
    missing_file: str | None = None   # why its source cannot be built: the file the registry names is missing
    cluster_expr: tuple = ()   # blocks of a thread block cluster (x, y), expressions of the defines
    maps_expr: tuple = ()   # ((matrix, (box rows, box cols)), ...): TMA maps it takes after C (gpu/tma.py)
    align_rows: str | None = None   # the kernel of its file that copies operands whose rows are off 16 bytes
    launch_number: bool = False   # its kernel takes the launch's number after C (kernels/common/stream_k.cuh)
    launches: tuple = ()   # ((kernel, condition or None), ...): which kernel of its file a shape launches (step 20)
    technique: str | None = None   # the name the steps applying one technique in several precisions share
    was: tuple = ()   # its numbers before the course was renumbered, oldest first (old notes, commits, links)
    builds_on: str | None = None   # the step whose code it changes, where that is another precision's (step 51)

    def unsupported(self, arch: str | None) -> str | None:
        """Why this variant cannot run in a study built for `arch` (sm_NN or sm_NNa), or None. sm_NN needs
        that or newer; an arch-specific target (sm_90a: wgmma, TMA) runs on that architecture only."""
        if not self.needs or arch is None:
            return None
        have, need = int(re.fullmatch(r"sm_(\d+)[af]?", arch).group(1)), int(self.needs[3:].rstrip("af"))
        if self.needs.endswith("a") and have != need:
            return f"needs {self.needs} (instructions of that architecture only); this study builds for {arch}"
        if have < need:
            return f"needs {self.needs} or newer; this study builds for {arch}"
        return None

    def target(self, arch: str) -> str:
        """The nvcc target to build it for in a study built for `arch`: its own where it is arch-specific."""
        return self.needs if self.needs and self.needs.endswith("a") else arch

    @property
    def is_step(self) -> bool:
        return self.role == "step"

    @property
    def number(self) -> str:
        """A step's number as its title starts ('17', '8a'), in the course of the registry it was read from."""
        return self.title.split()[0]

    def runs_on(self, shape) -> bool:
        """Whether the variant runs this shape (its size cap)."""
        return self.max_size is None or max(shape) <= self.max_size

    @property
    def is_gpu(self) -> bool:
        return self.backend in GPU_BACKENDS

    @property
    def is_built(self) -> bool:
        return self.backend in BUILT_BACKENDS

    def with_defines(self, overrides: dict) -> "Variant":
        """The same variant with some defines replaced (tuning, tests)."""
        unknown = set(overrides) - set(self.defines)
        if unknown:
            raise StudyError(f"variant {self.id}: unknown define(s) {sorted(unknown)}; it has {sorted(self.defines)}")
        return Variant(**{**self.__dict__, "defines": {**self.defines, **overrides}})

    @property
    def block(self) -> tuple[int, int, int]:
        x, y = (eval_expr(e, self.defines) for e in self.block_expr)
        return (x, y, 1)

    @property
    def tile(self) -> tuple[int, int]:
        rows, cols = (eval_expr(e, self.defines) for e in self.tile_expr)
        return (rows, cols)

    @property
    def tensor_maps(self) -> dict:
        """{matrix: (box rows, box cols[, blocks])} of the TMA maps the kernel takes after C, in order (A, B); {}
        if none. A's and B's boxes are of the element type its precision's kernels read, C's of float32."""
        return {name: tma.check_box(name, tuple(eval_expr(e, self.defines) for e in box), f"variant {self.id}",
                                    self.operand_element if name in "AB" else FLOAT32)
                for name, box in self.maps_expr}

    @property
    def operand_element(self) -> Element:
        """The element type of A and B as its kernels read them (its precision's)."""
        return self.precision.element

    @property
    def b_transposed(self) -> bool:
        """Whether its kernels read B stored N x K (K-major: FP8's), not K x N (its precision's `b_transposed`)."""
        return self.precision.b_transposed

    @property
    def flop_per_byte(self) -> float | None:
        """The seed's compute-to-memory ratio of this step (None if not given)."""
        return None if self.ratio_expr is None else float(eval_expr(self.ratio_expr, self.defines, integer=False))

    def launch_shape(self, M: int, N: int, K: int) -> tuple[int, int, int]:
        """The problem its kernel is launched on: (M, N, K), or for a variant with `align_rows`, (M, Np, Kp),
        N and K rounded up to whole 16 bytes of its operands' elements, multiples of 4 in float32 and of 8 in
        BF16 (gpu/launch.py copies the operands into zero-padded workspace; C's FP32 rows then start on 16
        bytes too). Where B is stored N x K (FP8) its rows are K long too, and N is rounded only to C's 4."""
        if not self.align_rows:
            return (M, N, K)
        per16 = 16 // self.operand_element.bytes
        n16 = 4 if self.b_transposed else per16   # C's float32 rows, or B's too
        return (M, -(-N // n16) * n16, -(-K // per16) * per16)

    @property
    def kernels(self) -> tuple[str, ...]:
        """Every kernel of its file that the study launches: its own, or those its `launches` rule chooses from."""
        return tuple(k for k, _ in self.launches) or (self.kernel,)

    def kernel_for(self, M: int, N: int, K: int, sms: int | None) -> str:
        """The kernel launched on (M, N, K) on a GPU of `sms` multiprocessors: the first of `launches` whose
        condition holds (of M, N, K, sms, C's tiles and the defines), or its own kernel."""
        if not self.launches:
            return self.kernel
        if sms is None:
            raise StudyError(f"{self.id}: which kernel it launches depends on the GPU's multiprocessor count, which "
                             "the caller did not give")
        rows, cols = self.tile
        names = {**self.defines, "M": M, "N": N, "K": K, "sms": sms, "tiles": -(-N // cols) * -(-M // rows)}
        return next(k for k, when in self.launches if when is None or holds(when, names))

    def only(self, kernel: str) -> "Variant":
        """The same variant launching one of its kernels at every shape (the tests and the sanitizer run each)."""
        if kernel not in self.kernels:
            raise StudyError(f"{self.id} has no kernel '{kernel}'; its kernels: {list(self.kernels)}")
        return Variant(**{**self.__dict__, "kernel": kernel, "launches": ()})

    def launch_grid(self, M: int, N: int, sms: int | None = None) -> tuple[int, int, int]:
        """Blocks to cover an M x N matrix C: ceil(N/cols) x ceil(M/rows) tiles, rounded up to whole clusters;
        or, for a variant with a `grid` entry (a kernel that shares the tiles out itself), that grid on a GPU
        of `sms` multiprocessors for C's `tiles` tiles (and `whole_waves`, below), rounded down to whole
        clusters (at least one: a cluster's blocks run at once, and more of them than the GPU holds would wait
        for a free place)."""
        cx, cy = self.cluster
        if self.grid_expr:
            if sms is None:
                raise StudyError(f"{self.id}: its grid depends on the GPU's multiprocessor count, which the "
                                 "caller did not give")
            x, y = (eval_expr(e, self.grid_names(M, N, sms)) for e in self.grid_expr)
            return (max(x // cx, 1) * cx, max(y // cy, 1) * cy, 1)
        rows, cols = self.tile
        return (_round_up(-(-N // cols), cx), _round_up(-(-M // rows), cy), 1)

    def grid_names(self, M: int, N: int, sms: int) -> dict:
        """What a `grid` entry is an expression of: the defines, `sms`, C's `tiles`, and `whole_waves`."""
        cx, _ = self.cluster
        rows, cols = self.tile
        tile_rows, tile_cols = -(-M // rows), -(-N // cols)
        cluster_tiles = tile_rows * -(-tile_cols // cx)   # a cluster's tiles lie side by side along N
        return {**self.defines, "sms": sms, "tiles": tile_rows * tile_cols,
                "whole_waves": whole_waves(cluster_tiles, max(sms // cx, 1)) * cx}

    @property
    def cluster(self) -> tuple[int, int]:
        """Blocks of one thread block cluster, (x, y); (1, 1) for a kernel without clusters. The grid is
        rounded up to whole clusters."""
        return tuple(eval_expr(e, self.defines) for e in self.cluster_expr) if self.cluster_expr else (1, 1)


def whole_waves(tiles: int, slots: int) -> int:
    """The fewest persistent blocks (or clusters) that compute `tiles` tiles in as few rounds as `slots` of
    them would: the rounds are ceil(tiles / slots) either way, and every block then takes ceil(tiles / blocks)
    tiles, as many as the busiest of the `slots`. At 4096 on the H100, 512 tiles of 128 x 256: 4 rounds, so
    128 blocks of 4 tiles each instead of 132 of which 16 sit out the last round (the committed studies' whole-rounds
    steps; kernels/sm90/scheduler.cuh's QueuedTiles now takes the same count on the device)."""
    rounds = -(-tiles // slots)
    return -(-tiles // rounds)


def _round_up(blocks: int, multiple: int) -> int:
    return -(-blocks // multiple) * multiple
