"""The check every result goes through before its timing counts.

Error of element (i, j):  |C_ij - R_ij| / S_ij   with R = A @ B and
S = |A| @ |B| in float64. A float32 dot product of length K has error at most
about K * eps * S_ij (worst case), and about sqrt(K) * eps * S_ij for the
signed random inputs of the study, whatever the summation order. The
tolerance is ``factor * eps32 * sqrt(K)``: loose enough for any correct
summation order, tight enough that one wrong element, one missing tile
(an error of about sqrt(tile)/K) or a TF32 product (eps 2^-11) fails.

int32 results (seed 003's integer mode) must equal the reference exactly.

NaN never passes (the comparison is written so that NaN is a failure), and
the output buffer is filled with a NaN of a known bit pattern before the
verified run, so an element the kernel never wrote is caught and counted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

EPS32 = float(np.finfo(np.float32).eps)
POISON_BITS = 0x7FC0DEAD                   # a quiet NaN no arithmetic produces
POISON = np.array(POISON_BITS, dtype=np.uint32).view(np.float32)
_TINY = float(np.finfo(np.float32).tiny)   # floor of S where a row of A is all 0
_ROWS = 512                                # rows per chunk: bounded memory at 16k


def tolerance(K: int, factor: float) -> float:
    return factor * EPS32 * math.sqrt(K)


@dataclass(frozen=True)
class Verification:
    ok: bool
    max_error: float      # NaN if any element is NaN
    tolerance: float
    bad: int              # elements over tolerance or NaN
    unwritten: int        # elements still holding the poison
    nan: int              # NaN elements (unwritten ones included)

    def describe(self) -> str:
        if self.ok:
            return f"ok: max error {self.max_error:.3g} <= tolerance {self.tolerance:.3g}"
        return (f"FAILED: {self.bad} element(s) wrong (max error {self.max_error:.3g}, tolerance "
                f"{self.tolerance:.3g}), {self.nan} NaN, {self.unwritten} never written")


def check(c: np.ndarray, ref: np.ndarray, scale: np.ndarray, K: int, factor: float) -> Verification:
    """Compare a result with the float64 reference, element by element.

    float32: the relative error above against tolerance(K, factor).
    int32: exact equality (error = absolute difference, tolerance 0).
    """
    if c.shape != ref.shape:
        raise ValueError(f"result has shape {c.shape}, reference {ref.shape}")
    exact = np.issubdtype(c.dtype, np.integer)
    tol = 0.0 if exact else tolerance(K, factor)
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
    return Verification(ok=bad == 0, max_error=max_err, tolerance=tol, bad=bad,
                        unwritten=unwritten, nan=nan)


def worst(*results: Verification) -> Verification:
    """The failing one if any, else the one with the largest error."""
    failing = [r for r in results if not r.ok]
    if failing:
        return max(failing, key=lambda r: r.bad)
    return max(results, key=lambda r: r.max_error)
