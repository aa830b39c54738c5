"""An independent measurement of the GPU's library GEMM, to check the harness by.

    python -m matmulstudy.tools.crosscheck --sizes 4096 8192 --out reports/h100/crosscheck.csv

Times C = A @ B on the study's seeded float32 inputs with CuPy (cupy.matmul,
CUPY_TF32 off, so cuBLAS in FP32) and, where PyTorch is installed, with
torch.matmul in FP32 and with TF32 allowed. Each call gets its own pair of
the library's own CUDA events; the calls are queued back to back with one
synchronisation at the end, so the GPU never waits for Python between them
(a call of these sizes outlasts its launch). None of the study's harness is
used: no PyCUDA, no blocking kernel, no L2 flush (operands of these sizes
do not fit in L2 anyway). Run it in the same session as the study; the
reported-results tests compare the study's cuBLAS medians with these.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import StudyError
from ..measure.data import make_inputs
from ..study.shapes import Shape


def _row(library, version, precision, shape, times_ms):
    t = np.asarray(times_ms)
    med = float(np.median(t))
    return {"library": library, "version": version, "precision": precision, "M": shape.M, "N": shape.N,
            "K": shape.K, "samples": t.size, "median_ms": med, "q1_ms": float(np.percentile(t, 25)),
            "q3_ms": float(np.percentile(t, 75)), "median_gflops": shape.flop / (med * 1e-3) / 1e9}


def _queued(call, event, synchronize, repeat: int, warmup: int = 10) -> list:
    """(start, end) event pairs around `repeat` calls queued back to back."""
    for _ in range(warmup):
        call()
    synchronize()
    pairs = [(event(), event()) for _ in range(repeat)]
    for start, end in pairs:
        start.record()
        call()
        end.record()
    synchronize()
    return pairs


def cupy_fp32(shape: Shape, repeat: int) -> dict:
    os.environ["CUPY_TF32"] = "0"   # read when CuPy is imported: FP32 cuBLAS
    try:
        import cupy
    except ImportError as err:
        raise StudyError(f"CuPy is needed for the cross-check ({err}); pip install cupy-cuda12x") from None
    a, b = (cupy.asarray(m) for m in make_inputs(shape, 0))
    out = cupy.empty((shape.M, shape.N), cupy.float32)
    pairs = _queued(lambda: cupy.matmul(a, b, out=out), cupy.cuda.Event, cupy.cuda.Device().synchronize, repeat)
    return _row("cupy", cupy.__version__, "fp32", shape, [cupy.cuda.get_elapsed_time(s, e) for s, e in pairs])


def torch_rows(shape: Shape, repeat: int) -> list[dict]:
    try:
        import torch
    except ImportError:
        return []
    a, b = (torch.from_numpy(m).cuda() for m in make_inputs(shape, 0))
    out = torch.empty((shape.M, shape.N), dtype=torch.float32, device="cuda")
    rows = []
    for precision in ("fp32", "tf32"):
        torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
        pairs = _queued(lambda: torch.matmul(a, b, out=out), lambda: torch.cuda.Event(enable_timing=True),
                        torch.cuda.synchronize, repeat)
        rows.append(_row("torch", torch.__version__, precision, shape, [s.elapsed_time(e) for s, e in pairs]))
    return rows


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[4096, 8192])
    p.add_argument("--repeat", type=int, default=50)
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    rows = []
    for n in args.sizes:
        shape = Shape(n, n, n)
        rows.append(cupy_fp32(shape, args.repeat))
        rows += torch_rows(shape, args.repeat)
    df = pd.DataFrame(rows)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(args.out, index=False)
    print(df.to_string(index=False))


if __name__ == "__main__":
    try:
        main()
    except StudyError as err:
        raise SystemExit(f"error: {err}") from None
