"""Seeded input matrices and the float64 reference they are checked against."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .. import precisions
from ..study.shapes import Shape
from . import verify


INT_RANGE = 8   # int32 inputs lie in [-8, 8]: |C| <= 64 K, exact in int32 and float64


def make_inputs(shape: Shape, seed: int, dtype: str = "float32") -> tuple[np.ndarray, np.ndarray]:
    """A (M x K) and B (K x N) from numpy's default_rng(seed).

    float32: uniform in [-1, 1). Signed values: the partial sums of a dot
    product are a random walk, which is what the verification's bound
    assumes (measure/verify.py). int32 (seed 003's integer mode): integers in [-8, 8], small
    enough that no sum overflows. The same shape, seed and dtype always give
    the same bits.
    """
    rng = np.random.default_rng(seed)
    if dtype == "int32":
        a = rng.integers(-INT_RANGE, INT_RANGE, size=(shape.M, shape.K), dtype=np.int32, endpoint=True)
        b = rng.integers(-INT_RANGE, INT_RANGE, size=(shape.K, shape.N), dtype=np.int32, endpoint=True)
        return a, b
    a = rng.random((shape.M, shape.K), dtype=np.float32) * 2 - 1
    b = rng.random((shape.K, shape.N), dtype=np.float32) * 2 - 1
    return a, b


def round_to_bf16(x: np.ndarray) -> np.ndarray:
    """float32 values rounded to the nearest BF16 (ties to even), as float32: the high 16 bits of each are the
    BF16 value's, the low 16 zero. As the hardware's cvt.rn.bf16.f32 rounds: add 0x7FFF plus the lowest kept
    bit, then cut. (No NaN or infinity is among the study's inputs; one that rounds up past the largest
    finite value becomes infinity, as it should.)"""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    rounded = bits >> np.uint32(16)   # in place from here: one array, not one a step (1.9 s at 8192^2 otherwise)
    rounded &= np.uint32(1)
    rounded += np.uint32(0x7FFF)
    rounded += bits
    rounded &= np.uint32(0xFFFF0000)
    return rounded.view(np.float32)


def bf16_bits(x: np.ndarray) -> np.ndarray:
    """The 16-bit values a BF16 kernel reads, of float32 values that are BF16 already (round_to_bf16's)."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    if (bits & np.uint32(0xFFFF)).any():
        raise ValueError("bf16_bits takes values rounded to BF16 (round_to_bf16): these have more bits")
    return (bits >> np.uint32(16)).astype(np.uint16)


E4M3_MAX = 448.0        # e4m3's largest finite value (1.75 x 2^8; the OCP FP8 format's "fn" variant: no infinity)
E4M3_SUBNORMAL = 2.0**-9   # its smallest step: below 2^-6 values are multiples of it (subnormal)
E4M3_FINITE = np.array([x for x in range(256) if x & 0x7F != 0x7F], dtype=np.uint8)   # every code but the NaNs


def round_to_e4m3(x: np.ndarray) -> np.ndarray:
    """float32 values rounded to the nearest e4m3 value (ties to even), as float32.

    e4m3 keeps 3 explicit mantissa bits and exponents 2^-6 to 2^8; below 2^-6 its values are multiples of 2^-9
    (subnormal), and |x| <= 2^-10 rounds to zero (the tie goes to the even zero). From 2^-6 up, as round_to_bf16
    does with 20 bits cut instead of 16: add 0x7FFFF plus the lowest kept bit, then cut. Below, x * 512 rounded to
    the nearest integer (ties to even) and scaled back, both exact. Values past e4m3's range (|x| > 448) raise:
    the study's inputs lie in [-1, 1) and need no scale.
    """
    x = np.ascontiguousarray(x, dtype=np.float32)
    if x.size and not np.abs(x).max() <= E4M3_MAX:
        raise ValueError(f"round_to_e4m3 takes values within e4m3's range (|x| <= {E4M3_MAX:g}); scale them first")
    bits = x.view(np.uint32)
    normal = (bits >> np.uint32(20)) & np.uint32(1)
    normal += np.uint32(0x7FFFF)
    normal += bits
    normal &= np.uint32(0xFFF00000)
    out = normal.view(np.float32)
    small = np.abs(x) < np.float32(2.0**-6)
    out[small] = np.rint(x[small] * np.float32(512)) / np.float32(512)
    return out


def e4m3_bits(x: np.ndarray) -> np.ndarray:
    """The bytes an FP8 kernel reads (sign, 4 exponent bits of bias 7, 3 mantissa bits), of float32 values that
    are e4m3 values already (round_to_e4m3's)."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    bits = x.view(np.uint32)
    sign = ((bits >> np.uint32(24)) & np.uint32(0x80)).astype(np.uint8)
    magnitude = np.abs(x)
    exponent = ((bits >> np.uint32(23)) & np.uint32(0xFF)).astype(np.int32) - 127 + 7
    normal = magnitude >= np.float32(2.0**-6)
    mantissa = ((bits >> np.uint32(20)) & np.uint32(7)).astype(np.int32)
    code = np.where(normal, (np.clip(exponent, 1, 15) << 3) | mantissa, (magnitude * np.float32(512)).astype(np.int32))
    more_bits = np.where(normal, (bits & np.uint32(0xFFFFF)) != 0, code * E4M3_SUBNORMAL != magnitude)
    if more_bits.any() or (magnitude > E4M3_MAX).any():
        raise ValueError("e4m3_bits takes e4m3 values (round_to_e4m3): these have more bits or lie past its range")
    return sign | code.astype(np.uint8)


def e4m3_values(code: np.ndarray) -> np.ndarray:
    """float32 values of e4m3 bytes (e4m3_bits inverted); the byte 0x7F or 0xFF (NaN) gives NaN."""
    code = np.asarray(code, dtype=np.uint8).astype(np.int32)
    exponent, mantissa = (code >> 3) & 0xF, code & 7
    magnitude = np.where(exponent > 0, (8 + mantissa) * np.exp2(exponent - 10.0), mantissa * E4M3_SUBNORMAL)
    magnitude = np.where((code & 0x7F) == 0x7F, np.nan, magnitude)
    return np.where(code & 0x80, -magnitude, magnitude).astype(np.float32)


# The element types a precision's kernels may read narrower than float32 (its `inputs`): the rounding to its
# values (as float32) and the bits the kernels read of those.
NARROW = {"bfloat16": (round_to_bf16, bf16_bits), "float8_e4m3": (round_to_e4m3, e4m3_bits)}


def rounded(a: np.ndarray, b: np.ndarray, precision: precisions.Precision) -> tuple[np.ndarray, np.ndarray]:
    """A and B as `precision`'s kernels multiply them and its reference is computed from: rounded to BF16 or
    e4m3 (as float32 arrays holding such values) where its kernels read those, else as given. Both keep their
    M x K and K x N shapes (`b_transposed` is how the kernels store B, not what it is)."""
    if not precision.rounds_inputs:
        return a, b
    rounding = NARROW[precision.inputs][0]
    return rounding(a), rounding(b)


def operands(a: np.ndarray, b: np.ndarray, precision: precisions.Precision) -> tuple[np.ndarray, np.ndarray]:
    """A and B as a variant of `precision` reads them: as given, their 16-bit BF16 values, or their e4m3 bytes
    (rounded; B's as N x K where the precision stores it so)."""
    if not precision.rounds_inputs or a.dtype != np.float32:
        return a, b
    rounding, bits = NARROW[precision.inputs]
    ra, rb = rounding(a), rounding(b)
    return bits(ra), np.ascontiguousarray(bits(rb).T) if precision.b_transposed else bits(rb)


def save_inputs(shape: Shape, seed: int, a_path: Path, b_path: Path, dtype: str = "float32") -> None:
    a, b = make_inputs(shape, seed, dtype)
    np.save(a_path, a, allow_pickle=False)
    np.save(b_path, b, allow_pickle=False)


def reference(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(A @ B in float64, r = sqrt((A∘A) @ (B∘B)) as float32), on the CPU.

    r is each element's root-sum-square of products, the scale of the bound
    every result is checked against (measure/verify.py). For int32 inputs
    every product and partial sum is an integer below 2^53, so the float64
    product is exact. A study with a GPU computes both there instead
    (measure/devicecheck.py); this is for CPU-only studies and the tests.
    """
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    return a64 @ b64, verify.scale(a64, b64).astype(np.float32)


def load(path: Path) -> np.ndarray:
    """A saved array, mapped read-only from the file (the OS's page cache) rather than read into memory: a
    measuring job copies each input to the GPU in every context, and reading them cost it 0.26 s (10 s a
    study on the H100 machine)."""
    return np.load(path, mmap_mode="r", allow_pickle=False)
