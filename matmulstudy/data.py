"""Seeded input matrices and the float64 reference they are checked against."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .config import Shape


INT_RANGE = 8   # int32 inputs lie in [-8, 8]: |C| <= 64 K, exact in int32 and float64


def make_inputs(shape: Shape, seed: int, dtype: str = "float32") -> tuple[np.ndarray, np.ndarray]:
    """A (M x K) and B (K x N) from numpy's default_rng(seed).

    float32: uniform in [-1, 1). Signed values: rounding errors of a dot
    product then grow like sqrt(K), which keeps the verification tolerance
    tight. int32 (seed 003's integer mode): integers in [-8, 8], small
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


def save_inputs(shape: Shape, seed: int, a_path: Path, b_path: Path, dtype: str = "float32") -> None:
    a, b = make_inputs(shape, seed, dtype)
    np.save(a_path, a, allow_pickle=False)
    np.save(b_path, b, allow_pickle=False)


def reference(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(A @ B, |A| @ |B|), both computed in float64.

    The second is the scale of each element's rounding error: a float32 dot
    product of length K is off by at most ~K * eps * (|A||B|)_ij, so errors
    are measured relative to it, element by element. For int32 inputs every
    product and partial sum is an integer below 2^53, so the float64 product
    is exact.
    """
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    ref = a64 @ b64
    np.abs(a64, out=a64)
    np.abs(b64, out=b64)
    scale = (a64 @ b64).astype(np.float32)
    return ref, scale


def load(path: Path) -> np.ndarray:
    return np.load(path, allow_pickle=False)
