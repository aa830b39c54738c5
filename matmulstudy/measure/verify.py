"""The check every result goes through before its timing counts.

The bound
---------
For element (i, j) let p_k = a_ik b_kj (k = 1..K) be its products and

    r_ij = sqrt(sum_k p_k^2) = sqrt((A∘A) @ (B∘B))_ij       (in float64)

the root-sum-square of its products: the size of the terms the sum is made
of. A result passes when every element satisfies

    |C_ij - R_ij| <= tau * (eps_in + eps_acc * sqrt(K) + eps_bias * K) * r_ij     (1)

with R = A @ B in float64, tau the config's `tolerance` (8), and per
precision (its row of matmulstudy/precisions.py) eps_acc = 2^-23 (FP32
accumulation), eps_in the term that does not grow with K: the relative
error of one product from its rounded inputs (0 for FP32 inputs; for a
precision that rounds its inputs in the kernel, derived beside its row), or
for FP8 promoted to FP32 the tensor cores' sums between two promotions
(derived beside its row), and eps_bias the part of a sum's error
that grows with K because it does not average out: 0 where every addition
rounds to nearest, and for BF16, whose tensor-core sums are cut toward
zero, derived beside its row. (BF16's R is the product of its rounded
inputs: A and B as its kernels read them.)

Why (1), and not the classic bound. Any summation order forms about K sums,
each rounded: s -> s (1 + d), |d| <= u = 2^-24 (FMA: the product itself is
exact). The error is e = sum_t s_t d_t over the partial sums s_t.
- Worst case |e| <= u sum_t |s_t| <= u K^1.5 r: the classic bound (the same
  order as the old tolerance, sqrt(K) eps (|A|@|B|)_ij). It sits above the
  error of inputs rounded to fewer mantissa bits too, so it cannot tell FP32
  arithmetic from a tensor-core precision's.
- The study's inputs have random signs (uniform in [-1, 1)), so the partial
  sums of a sequential sum are a random walk with E s_t^2 <= r^2, and the
  roundings are centred and close to independent. Then e has variance
  about (u^2 / 3) sum_t s_t^2 <= (u^2 / 3) K r^2: e = eps32 sqrt(K) r z with
  z of root-mean-square at most 1 / (2 sqrt 3) = 0.29. A sequential sum (the
  naive kernel's, and each thread's in a register-tiled kernel) is the worst
  order: a tree or blocked order has shorter partial sums.
- Measured by emulating sequential FMA sums bit for bit (as
  tests/test_verify.py does; 4 * 10^5 elements at K = 1024, 2 * 10^5 at
  8192): z has rms 0.15 at both K, P(z > 1) = 2e-4, P(z > 1.5) = 2.5e-6.
  The tail is exponential rather than Gaussian, because sum_t s_t^2 varies
  from element to element (a walk that wanders far has large partial sums);
  extended to the 8192^2 elements of the largest shape it puts the largest z
  near 2.2. tau = 8 leaves that worst element at about 0.3 of the bound: a
  margin of 3x, more than the 2x asked of every FP32 result.

What the bound rejects, in units of the FP32 bound's eps32 sqrt(K) r:
- inputs rounded to fewer mantissa bits (a tensor-core precision passed off
  as FP32): far over it at every K of the study; each such precision's row
  in matmulstudy/precisions.py says by how much, and its own bound;
- fp16 accumulation: each partial sum rounded to 11 bits, about 1200 in these
  units at every K;
- a missing tile of products, a wrong element, NaN, an unwritten element: all
  far beyond it.
Every result of another precision whose reference is the product of the
inputs as given (one that rounds them in its kernels) is also held against
FP32's bound (base_margin), where it must fail: the two cannot be mistaken
for each other. BF16's reference is of its rounded inputs, and its
base_margin is NaN.

The bound is made for the study's random inputs; adversarial inputs (all
products of one sign) can reach the worst case above, and are not the
study's. int32 results (seed 003's integer mode) must equal the reference
exactly.

Element by element, at every size: on the GPU (devicecheck.py: the reference
by cuBLAS DGEMM in the variant's own CUDA context), or here on the CPU
(`elementwise`, for CPU-only studies). `freivalds` is an explicit option for
shapes whose reference does not fit in GPU memory (config
full_check_max_size); its error bound is documented there.

NaN never passes (the comparison is written so that NaN is a failure), and
the output buffer is filled with a NaN of a known bit pattern before the
verified run, so an element the kernel never wrote is caught and counted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import precisions

POISON_BITS = 0x7FC0DEAD                   # a quiet NaN no arithmetic produces
POISON = np.array(POISON_BITS, dtype=np.uint32).view(np.float32)
TINY = float(np.finfo(np.float32).tiny)    # floor of r where a row of A is all 0
_ROWS = 512                                # rows per chunk: bounded memory at 16k


def bound(K: int, tolerance: float, precision: precisions.Precision = precisions.BASE) -> float:
    """Bound (1)'s coefficient, tau * (eps_in + eps_acc sqrt(K) + eps_bias K): an element may be off by this
    times its r_ij."""
    return tolerance * (precision.eps_in + precision.eps_acc * math.sqrt(K) + precision.eps_bias * K)


@dataclass(frozen=True)
class Verification:
    ok: bool
    method: str           # "full" (every element against the reference) or "freivalds"
    max_error: float      # largest |C - R| / r (int32: |C - R|); NaN if any element is NaN
    bound: float          # the bound's coefficient at this K (int32: 0, exact)
    bad: int              # elements over the bound or NaN (freivalds: rows)
    unwritten: int        # elements still holding the poison
    nan: int              # NaN elements (unwritten ones included)
    base_bound: float = 0.0   # the base precision's (FP32's) coefficient at the same K, for base_margin

    @property
    def margin(self) -> float:
        """Largest error over the bound: passes at <= 1; a correct FP32 result sits at <= 0.5."""
        return _ratio(self.max_error, self.bound)

    @property
    def base_margin(self) -> float:
        """The same error over FP32's bound: how far another precision's result is from passing as FP32."""
        return _ratio(self.max_error, self.base_bound)

    def describe(self) -> str:
        if self.ok:
            return f"ok: margin {self.margin:.3g} (max error {self.max_error:.3g}, bound {self.bound:.3g})"
        unit = "row(s)" if self.method == "freivalds" else "element(s)"
        return (f"FAILED: {self.bad} {unit} wrong (margin {self.margin:.3g}: max error {self.max_error:.3g}, "
                f"bound {self.bound:.3g}), {self.nan} NaN, {self.unwritten} never written")


def _ratio(error: float, bound: float) -> float:
    if math.isnan(error):
        return float("nan")
    if bound == 0:
        return 0.0 if error == 0 else float("inf")
    return error / bound


def bounds(K: int, tolerance: float, precision: precisions.Precision, exact: bool) -> dict:
    """The Verification fields that say what a result was held to: its bound, and the base precision's."""
    if exact:
        return {"bound": 0.0, "base_bound": 0.0}
    base = bound(K, tolerance, precisions.BASE) if precision.held_to_fp32 else float("nan")
    return {"bound": bound(K, tolerance, precision), "base_bound": base}


def scale(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """r = sqrt((A∘A) @ (B∘B)) in float64: each element's root-sum-square of products."""
    a2 = np.square(a, dtype=np.float64)
    b2 = np.square(b, dtype=np.float64)
    return np.sqrt(a2 @ b2)


def elementwise(c: np.ndarray, ref: np.ndarray, r: np.ndarray, K: int, tolerance: float,
                precision: precisions.Precision = precisions.BASE) -> Verification:
    """Compare a result with the float64 reference, element by element, on the CPU.

    float32: |C - R| / r against bound(K, tolerance, precision), bound (1).
    int32: exact equality (error = absolute difference, bound 0).
    """
    if c.shape != ref.shape:
        raise ValueError(f"result has shape {c.shape}, reference {ref.shape}")
    exact = np.issubdtype(c.dtype, np.integer)
    held = bounds(K, tolerance, precision, exact)
    tol = held["bound"]
    bad = unwritten = nan = 0
    max_err = 0.0
    for r0 in range(0, c.shape[0], _ROWS):
        cc = c[r0:r0 + _ROWS]
        err = np.abs(cc.astype(np.float64) - ref[r0:r0 + _ROWS])
        if not exact:
            err /= np.maximum(r[r0:r0 + _ROWS], TINY)
        isnan = np.isnan(err)
        bad += int(np.count_nonzero(~(err <= tol)))
        nan += int(np.count_nonzero(isnan))
        unwritten += int(np.count_nonzero(cc.view(np.uint32) == POISON_BITS))
        if err.size and not isnan.all():
            max_err = max(max_err, float(np.nanmax(err)))
    if nan:
        max_err = float("nan")
    return Verification(ok=bad == 0, method="full", max_error=max_err, bad=bad, unwritten=unwritten, nan=nan,
                        **held)


FREIVALDS_LAMBDA = 8.0   # a correct row fails with probability <= 2 exp(-LAMBDA^2 / 2) = 2.5e-14


def freivalds(c: np.ndarray, a: np.ndarray, b: np.ndarray, tolerance: float, vectors: int,
              seed, precision: precisions.Precision = precisions.BASE) -> Verification:
    """Freivalds' check of C = A @ B in O(n^2): C x against A (B x), in float64.

    Only for shapes whose float64 reference does not fit in the GPU's memory
    (config full_check_max_size): it is probabilistic and sees only large
    errors. x are `vectors` random sign vectors (each entry +1 or -1, from
    default_rng(seed)). Row i of the residual r = C x - A (B x) is the sum of
    row i's errors with random signs, compared with

        tau_i = LAMBDA * tol * sqrt(sum_j r_ij^2),   tol = bound(K, tolerance)

    where sum_j r_ij^2 = sum_k a_ik^2 ||b_k||^2 = ((A∘A) @ rowsums(B∘B))_i is
    exact and costs O(n^2). Error bound (D = C - A B, "correct" = every
    element within bound (1), |D_ij| <= tol r_ij):
    - a correct result fails with probability at most
      2 M vectors exp(-LAMBDA^2 / 2) (Hoeffding's inequality: the errors are
      fixed before x is drawn); below 1e-8 at 16384;
    - a row holding an element with |D_ij| > tau_i passes one vector with
      probability at most 1/2 (flipping x_j moves r_i by 2|D_ij| > 2 tau_i),
      so it is missed with probability at most 2^-vectors;
    - a row whose only wrong element has |D_ij| > 2 tau_i is always caught.
    tau_i grows like sqrt(N): for random inputs it is about LAMBDA sqrt(N)
    times an element's own bound, so this check sees gross errors
    (overflowed indices, garbage, missing blocks) and lets small ones (one
    element a few bounds off, inputs rounded to fewer mantissa bits) through:
    that is why the study checks every element wherever the reference fits.
    NaN and never-written elements are counted element by element, as in
    `elementwise`. int32: exact
    arithmetic, tau_i = 0, so any wrong element is caught by every vector.

    max_error is the largest |r_i| / (LAMBDA sqrt(sum_j r_ij^2)): it fails
    where it exceeds tol, like the element-wise error.
    """
    M, N = c.shape
    K = a.shape[1]
    if a.shape[0] != M or b.shape != (K, N):
        raise ValueError(f"shapes do not multiply: C {c.shape}, A {a.shape}, B {b.shape}")
    exact = np.issubdtype(c.dtype, np.integer)
    held = bounds(K, tolerance, precision, exact)
    tol = held["bound"]
    x = np.random.default_rng(seed).choice([-1.0, 1.0], size=(N, vectors))
    bx = np.empty((K, vectors))
    b2_rows = np.empty(K)
    for r0 in range(0, K, _ROWS):
        chunk = b[r0:r0 + _ROWS].astype(np.float64)
        bx[r0:r0 + _ROWS] = chunk @ x
        b2_rows[r0:r0 + _ROWS] = np.einsum("ij,ij->i", chunk, chunk)
    bad = unwritten = nan = 0
    max_err = 0.0
    for r0 in range(0, M, _ROWS):
        a64 = a[r0:r0 + _ROWS].astype(np.float64)
        cc = c[r0:r0 + _ROWS]
        resid = np.abs(cc.astype(np.float64) @ x - a64 @ bx)
        if not exact:
            norm = FREIVALDS_LAMBDA * np.sqrt(np.square(a64) @ b2_rows)
            resid /= np.maximum(norm, TINY)[:, None]
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
    return Verification(ok=bad == 0 and unwritten == 0, method="freivalds", max_error=max_err, bad=bad,
                        unwritten=unwritten, nan=nan, **held)


def worst(*results: Verification) -> Verification:
    """The failing one if any, else the one with the largest error."""
    failing = [r for r in results if not r.ok]
    if failing:
        return max(failing, key=lambda r: r.bad)
    return max(results, key=lambda r: r.max_error)
