"""The check every result goes through before its timing counts.

Error of element (i, j):  |C_ij - R_ij| / S_ij   with R = A @ B and
S = |A| @ |B| in float64. A float32 dot product of length K has error at most
about K * eps * S_ij (worst case), and about sqrt(K) * eps * S_ij for the
signed random inputs of the study, whatever the summation order. The
tolerance is ``factor * eps32 * sqrt(K)``: loose enough for any correct
summation order, tight enough that one wrong element, one missing tile
(an error of about sqrt(tile)/K) or a TF32 product (eps 2^-11) fails.

int32 results (seed 003's integer mode) must equal the reference exactly.
A TF32 variant (cuBLAS with tensor-op math) is held to the same formula with
TF32's epsilon (2^-10) in place of float32's: a different precision, a
tolerance of its own.

Above a size (config full_check_max_size) there is no float64 reference;
`freivalds` checks the result in O(n^2) instead (its error bound is
documented there).

NaN never passes (the comparison is written so that NaN is a failure), and
the output buffer is filled with a NaN of a known bit pattern before the
verified run, so an element the kernel never wrote is caught and counted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

EPS32 = float(np.finfo(np.float32).eps)
EPS = {"fp32": EPS32, "tf32": 2.0**-10}    # machine epsilon of each precision
POISON_BITS = 0x7FC0DEAD                   # a quiet NaN no arithmetic produces
POISON = np.array(POISON_BITS, dtype=np.uint32).view(np.float32)
_TINY = float(np.finfo(np.float32).tiny)   # floor of S where a row of A is all 0
_ROWS = 512                                # rows per chunk: bounded memory at 16k


def tolerance(K: int, factor: float, precision: str = "fp32") -> float:
    return factor * EPS[precision] * math.sqrt(K)


@dataclass(frozen=True)
class Verification:
    ok: bool
    method: str           # "full" (every element against the reference) or "freivalds"
    max_error: float      # NaN if any element is NaN
    tolerance: float
    bad: int              # elements over tolerance or NaN (freivalds: rows)
    unwritten: int        # elements still holding the poison
    nan: int              # NaN elements (unwritten ones included)

    def describe(self) -> str:
        if self.ok:
            return f"ok: max error {self.max_error:.3g} <= tolerance {self.tolerance:.3g}"
        unit = "row(s)" if self.method == "freivalds" else "element(s)"
        return (f"FAILED: {self.bad} {unit} wrong (max error {self.max_error:.3g}, tolerance "
                f"{self.tolerance:.3g}), {self.nan} NaN, {self.unwritten} never written")


def check(c: np.ndarray, ref: np.ndarray, scale: np.ndarray, K: int, factor: float,
          precision: str = "fp32") -> Verification:
    """Compare a result with the float64 reference, element by element.

    float32: the relative error above against tolerance(K, factor, precision).
    int32: exact equality (error = absolute difference, tolerance 0).
    """
    if c.shape != ref.shape:
        raise ValueError(f"result has shape {c.shape}, reference {ref.shape}")
    exact = np.issubdtype(c.dtype, np.integer)
    tol = 0.0 if exact else tolerance(K, factor, precision)
    bad = unwritten = nan = 0
    max_err = 0.0
    for r0 in range(0, c.shape[0], _ROWS):
        cc = c[r0:r0 + _ROWS]
        err = np.abs(cc.astype(np.float64) - ref[r0:r0 + _ROWS])
        if not exact:
            err /= np.maximum(scale[r0:r0 + _ROWS], _TINY)
        isnan = np.isnan(err)
        bad += int(np.count_nonzero(~(err <= tol)))
        nan += int(np.count_nonzero(isnan))
        unwritten += int(np.count_nonzero(cc.view(np.uint32) == POISON_BITS))
        if err.size:
            max_err = max(max_err, float(np.nanmax(err)) if not isnan.all() else 0.0)
    if nan:
        max_err = float("nan")
    return Verification(ok=bad == 0, method="full", max_error=max_err, tolerance=tol, bad=bad,
                        unwritten=unwritten, nan=nan)


FREIVALDS_LAMBDA = 8.0   # a correct row fails with probability <= 2 exp(-LAMBDA^2 / 2) = 2.5e-14


def freivalds(c: np.ndarray, a: np.ndarray, b: np.ndarray, factor: float, vectors: int,
              seed, precision: str = "fp32") -> Verification:
    """Freivalds' check of C = A @ B in O(n^2): C x against A (B x), in float64.

    x are `vectors` random sign vectors (each entry +1 or -1, from
    default_rng(seed)). Row i of the residual r = C x - A (B x) is the sum of
    row i's errors with random signs, compared with

        tau_i = LAMBDA * tol * ||A_i||_2 * ||B||_F,   tol = tolerance(K, factor)

    Error bound (D = C - A B, "correct" = every element within the
    element-wise tolerance tol * (|A||B|)_ij of `check`):
    - a correct result fails with probability at most
      2 M vectors exp(-LAMBDA^2 / 2) (Hoeffding's inequality: the errors are
      fixed before x is drawn, and sum_j (tol (|A||B|)_ij)^2 <=
      tol^2 ||A_i||^2 ||B||_F^2 by Cauchy-Schwarz); below 1e-8 at 16384;
    - a row holding an element with |D_ij| > tau_i passes one vector with
      probability at most 1/2 (flipping x_j moves r_i by 2|D_ij| > 2 tau_i),
      so it is missed with probability at most 2^-vectors;
    - a row whose only wrong element has |D_ij| > 2 tau_i is always caught.
    tau_i grows like sqrt(N): for uniform [-1, 1) inputs it is about
    LAMBDA * (4/3) sqrt(N) times the element-wise tolerance, so this check
    sees gross errors (overflowed indices, garbage, missing blocks) while
    small ones are left to the element-wise checks at smaller sizes. NaN and
    never-written elements are counted element by element, as in `check`.
    int32: exact arithmetic, tau_i = 0, so any wrong element is caught by
    every vector.

    max_error is the largest |r_i| / (LAMBDA ||A_i|| ||B||_F): it fails
    where it exceeds tol, like the element-wise error.
    """
    M, N = c.shape
    K = a.shape[1]
    if a.shape[0] != M or b.shape != (K, N):
        raise ValueError(f"shapes do not multiply: C {c.shape}, A {a.shape}, B {b.shape}")
    exact = np.issubdtype(c.dtype, np.integer)
    tol = 0.0 if exact else tolerance(K, factor, precision)
    x = np.random.default_rng(seed).choice([-1.0, 1.0], size=(N, vectors))
    bx = np.empty((K, vectors))
    b_frob2 = 0.0
    for r0 in range(0, K, _ROWS):
        chunk = b[r0:r0 + _ROWS].astype(np.float64)
        bx[r0:r0 + _ROWS] = chunk @ x
        b_frob2 += float(np.einsum("ij,ij->", chunk, chunk))
    bad = unwritten = nan = 0
    max_err = 0.0
    for r0 in range(0, M, _ROWS):
        a64 = a[r0:r0 + _ROWS].astype(np.float64)
        cc = c[r0:r0 + _ROWS]
        resid = np.abs(cc.astype(np.float64) @ x - a64 @ bx)
        if not exact:
            norm = FREIVALDS_LAMBDA * np.sqrt(np.einsum("ij,ij->i", a64, a64) * b_frob2)
            resid /= np.maximum(norm, _TINY)[:, None]
        row_err = resid.max(axis=1)
        bad += int(np.count_nonzero(~(row_err <= tol)))
        unwritten += int(np.count_nonzero(cc.view(np.uint32) == POISON_BITS))
        if not exact:
            nan += int(np.count_nonzero(np.isnan(cc)))
        finite = row_err[~np.isnan(row_err)]
        if finite.size:
            max_err = max(max_err, float(finite.max()))
    if nan:
        max_err = float("nan")
    return Verification(ok=bad == 0 and unwritten == 0, method="freivalds",
                        max_error=max_err, tolerance=tol, bad=bad, unwritten=unwritten, nan=nan)


def worst(*results: Verification) -> Verification:
    """The failing one if any, else the one with the largest error."""
    failing = [r for r in results if not r.ok]
    if failing:
        return max(failing, key=lambda r: r.bad)
    return max(results, key=lambda r: r.max_error)
