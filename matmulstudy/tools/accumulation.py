"""What Hopper's tensor cores keep of a sum of FP8 products: gpu/accumulate.cu's two kernels run on designed
inputs, and the family of models of measure/tensorcore.py fitted to what they return, bit for bit.

    python -m matmulstudy.tools.accumulation [--problems 64] [--out accumulation.csv] [--raw accumulation.npz]
    python -m matmulstudy.tools.accumulation --errors    (on the CPU: what the fitted model does to a dot product)

Two sets of inputs, each of `problems` problems (64 x 8 dot products each for wgmma, 16 x 8 for mma.sync):
- "wide": one instruction (k = 32) on e4m3 values drawn from all of e4m3's finite codes (products from 2^-18
  to 2^17, so that alignment shows), added to accumulators of random sign, mantissa and exponent (2^-8 to
  2^16), a sixteenth of them zero;
- "study": the study's inputs (uniform in [-1, 1), rounded to e4m3), 8 instructions in a row (k = 256) from
  a zero accumulator, as a main loop runs them.
The family is fitted to the first 4,096 dot products of "wide"; the table gives, for each instruction, the best
models and the fraction of every set's results each matches bit for bit. A model that matches every result of
both sets is the one the FP8 bound is derived from: tensorcore.HOPPER_FP8_WGMMA, fitted on an H200.

--errors emulates that model on the study's inputs (no GPU): the error of a dot product of K = 1024, 4096 and
8192 products in units of 2^-13 r, summed in the tensor cores alone (cuBLASLt's "fast accumulation"), or
promoted to FP32 every 4 instructions or every one (docs/fp8.md).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import StudyError
from ..gpu import host
from ..gpu.session import GpuSession
from ..measure import build, tensorcore
from ..measure.data import E4M3_FINITE, e4m3_bits, e4m3_values, round_to_e4m3

SOURCE = Path(__file__).resolve().parent.parent / "gpu" / "accumulate.cu"
K = 32   # products an instruction, both kernels
# name: (kernel, rows of A an instruction, threads a block, problems a block)
INSTRUCTIONS = {"wgmma m64n8k32": ("fp8_wgmma_chain", 64, 128, 1), "mma.sync m16n8k32": ("fp8_mma_chain", 16, 128, 4)}
FIT_DOTS = 4096


def build_probe(arch: str, out: Path) -> Path:
    """accumulate.cu for an sm_90 GPU (wgmma)."""
    return build.build_sm90_probe(SOURCE, out, arch, "the FP8 accumulation probe (wgmma: an H100 or H200)")


def designed(kind: str, problems: int, rows: int, rng: np.random.Generator):
    """(a problems x steps x rows x K e4m3 values, b problems x steps x 8 x K, c problems x rows x 8 float32)."""
    if kind == "wide":
        steps = 1
        a = e4m3_values(rng.choice(E4M3_FINITE, size=(problems, steps, rows, K)))
        b = e4m3_values(rng.choice(E4M3_FINITE, size=(problems, steps, 8, K)))
        mantissa = rng.random((problems, rows, 8)) + 1
        c = (rng.choice([-1, 1], size=mantissa.shape) * mantissa * np.exp2(rng.integers(-8, 17, mantissa.shape)))
        c[rng.random(c.shape) < 1 / 16] = 0
        return a, b, c.astype(np.float32)
    steps = 8
    a = round_to_e4m3(rng.random((problems, steps, rows, K), dtype=np.float32) * 2 - 1)
    b = round_to_e4m3(rng.random((problems, steps, 8, K), dtype=np.float32) * 2 - 1)
    return a, b, np.zeros((problems, rows, 8), dtype=np.float32)


def dots(a: np.ndarray, b: np.ndarray, c: np.ndarray):
    """The problems' dot products one a row, as tensorcore.chain takes them: (n x steps x K) twice, and n."""
    problems, steps, rows, _ = a.shape
    fa = np.broadcast_to(a.transpose(0, 2, 1, 3)[:, :, None], (problems, rows, 8, steps, K))
    fb = np.broadcast_to(b.transpose(0, 2, 1, 3)[:, None], (problems, rows, 8, steps, K))
    return fa.reshape(-1, steps, K), fb.reshape(-1, steps, K), c.reshape(-1)


def run(gpu, cubin: Path, instruction: str, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """The kernel's D for inputs a, b, c (designed's shapes), as float32 problems x rows x 8."""
    name, rows, threads, per_block = INSTRUCTIONS[instruction]
    problems, steps = a.shape[:2]
    kernel = gpu.load_function(cubin, name, "PPPPii")
    d_a, d_b = gpu.to_device(e4m3_bits(a)), gpu.to_device(e4m3_bits(b))
    d_c, d_d = gpu.to_device(c), gpu.empty(c.nbytes)
    kernel.prepared_call((-(-problems // per_block), 1, 1), (threads, 1, 1), d_a, d_b, d_c, d_d,
                         np.int32(problems), np.int32(steps))
    gpu.synchronize()
    out = gpu.to_host(d_d, c.shape, np.float32)
    gpu.release(d_a, d_b, d_c, d_d)
    return out


def measure(problems: int = 64, seed: int = 0, best: int = 3, raw: Path | None = None) -> pd.DataFrame:
    """For each instruction: the `best` models fitted to its "wide" results, and the fraction of each set's
    results each matches; with the fraction of results FP32 sums would match, for comparison. `raw`: an .npz
    of every set's inputs and results as well, for a model fitted elsewhere."""
    arch = host.arch_of(host.visible_gpu()["compute_capability"])
    rows_out, arrays = [], {}
    with tempfile.TemporaryDirectory() as tmp, GpuSession() as gpu:
        cubin = build_probe(arch, Path(tmp))
        for instruction, (_, rows, _, _) in INSTRUCTIONS.items():
            rng = np.random.default_rng(seed)
            sets = {}
            for kind in ("wide", "study"):
                a, b, c = designed(kind, problems, rows, rng)
                d = run(gpu, cubin, instruction, a, b, c)
                sets[kind] = (*dots(a, b, c), d.reshape(-1).astype(np.float64))
                arrays.update({f"{instruction} {kind} {x}": v for x, v in zip("abcd", (a, b, c, d))})
            fa, fb, fc, fd = sets["wide"]
            fitted = tensorcore.fit(fa[:FIT_DOTS], fb[:FIT_DOTS], fc[:FIT_DOTS], fd[:FIT_DOTS])[:best]
            fp32 = tensorcore.Model(K, 60, 23, "rn", False)   # one exact sum of the products, rounded once, then + c
            for rank, (model, _) in enumerate([*fitted, (fp32, None)]):
                row = {"instruction": instruction, "rank": rank + 1 if rank < len(fitted) else "FP32 sum",
                       **model.__dict__, "model": model.describe()}
                for kind, (fa, fb, fc, fd) in sets.items():
                    row[f"match_{kind}"] = float((tensorcore.chain(model, fa, fb, fc) == fd).mean())
                    row[f"dots_{kind}"] = len(fd)
                rows_out.append(row)
    if raw is not None:
        np.savez_compressed(raw, **arrays)
    return pd.DataFrame(rows_out)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--problems", type=int, default=64, help="problems in each set (64 x 8 dot products each)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, help="the table as CSV")
    p.add_argument("--raw", type=Path, help="every set's inputs and results (.npz)")
    p.add_argument("--errors", action="store_true", help="the fitted model's errors on the study's inputs (CPU)")
    args = p.parse_args(argv)
    if args.errors:
        table = pd.DataFrame(tensorcore.errors())
        table["promoted_every"] = table["promoted_every"].map(lambda e: f"every {e}" if e else "never")
        print(table.round(3).to_string(index=False))
        return 0
    try:
        table = measure(args.problems, args.seed, raw=args.raw)
    except StudyError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.out:
        table.to_csv(args.out, index=False)
    cols = ["instruction", "rank", "group", "align", "bits", "rounding", "c_aligned", "reference", "match_wide",
            "match_study"]
    print(table[cols].to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
