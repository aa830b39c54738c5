"""Launch one variant once, for a profiler: python -m matmulstudy.tools.launch_once ID MxNxK [CUBIN].

ncu replays that one launch as often as its counters need. The inputs are
the study's seeded float32 matrices (rounded to BF16 or e4m3 for such a
variant, as it reads them); the result is not checked here (the bench jobs
verify every variant on this shape). A cuda variant needs its cubin; a
cublas variant calls cuBLAS (cuBLASLt for FP8) as its precision's row says.
"""

from __future__ import annotations

import sys

from ..errors import StudyError
from ..gpu.session import GpuSession
from ..measure.bench import gpu_launch
from ..measure.build import built_variant
from ..measure.data import make_inputs, operands
from ..study.registry import load_registry
from ..study.shapes import Shape


def main(argv: list[str]) -> None:
    if len(argv) not in (2, 3):
        raise StudyError("usage: python -m matmulstudy.tools.launch_once VARIANT MxNxK [CUBIN]")
    variant = load_registry()[argv[0]]
    if len(argv) == 3:
        variant = built_variant(variant, argv[2])
    shape = Shape.parse(argv[1])
    if not variant.is_gpu or variant.is_built != (len(argv) == 3):
        raise StudyError(f"{variant.id}: a cuda variant needs its CUBIN, a cublas one none, others cannot run here")
    a, b = operands(*make_inputs(shape, 0), variant.precision)
    M, N, K = shape
    with GpuSession() as gpu:
        d_a, d_b, d_c = gpu.to_device(a), gpu.to_device(b), gpu.empty(M * N * 4)
        launch, _ = gpu_launch(gpu, variant, argv[2] if variant.is_built else None, shape, d_a, d_b, d_c)
        launch()
        gpu.synchronize()


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except StudyError as err:
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(1) from None
