"""Seeded input matrices and the float64 reference they are checked against."""

from __future__ import annotations

from pathlib import Path

import numpy as np

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
