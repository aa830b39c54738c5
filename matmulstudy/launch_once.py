"""Launch one variant once, for a profiler: python -m matmulstudy.launch_once ID CUBIN MxNxK.

ncu replays that one launch as often as its counters need. The inputs are
the study's seeded float32 matrices; the result is not checked here (the
bench jobs verify every variant on this shape).
"""

from __future__ import annotations

import sys

from .config import Shape
from .data import make_inputs
from .errors import StudyError
from .gpu import GpuSession
from .registry import load_registry


def main(argv: list[str]) -> None:
    if len(argv) != 3:
        raise StudyError("usage: python -m matmulstudy.launch_once VARIANT CUBIN MxNxK")
    variant = load_registry()[argv[0]]
    shape = Shape.parse(argv[2])
    a, b = make_inputs(shape, 0)
    with GpuSession() as gpu:
        func = gpu.load_function(argv[1], variant.kernel)
        d_a, d_b, d_c = gpu.to_device(a), gpu.to_device(b), gpu.empty(shape.M * shape.N * 4)
        func.prepared_call(variant.grid(shape.M, shape.N), variant.block, shape.M, shape.N, shape.K, d_a, d_b, d_c)
        gpu.synchronize()


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except StudyError as err:
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(1) from None
