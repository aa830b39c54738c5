"""Models of how a tensor-core instruction sums its products: a family of them, each emulated bit for bit on
the CPU, for the FP8 chapter's bound (matmulstudy/tools/accumulation.py fits the family to what the GPU
returns on designed inputs, gpu/accumulate.cu).

One instruction adds `k` products p_1..p_k (exact: a product of two e4m3 values has at most 8 significant
bits) into the accumulator c. A model (Fasi et al., "Numerical behavior of NVIDIA tensor cores", PeerJ CS
2021; Khattak and Mikaitis, "Accurate models of NVIDIA tensor cores", 2025) says:
- `group`: the products are taken `group` at a time (k / group groups, in order), each group added to the
  accumulator as below before the next;
- `align`, `reference`: within a group, every term (its products, and the accumulator where `c_aligned`) is
  cut toward zero to a multiple of 2^(E - align), and the cut terms are added exactly. E is the largest of the
  terms' exponents: of a product, its own (2^E <= |p| < 2^(E+1): `reference` "value") or the sum of its
  factors' exponents ("exponents": one less where the factors' significands multiply to 2 or more; a
  subnormal e4m3 factor's exponent is e4m3's least, -6); of the accumulator, its own;
- `bits`, `rounding`: that sum is then kept to `bits` explicit mantissa bits, cut toward zero ("rz") or
  rounded to nearest-even ("rn");
- where the accumulator is not aligned with the products (`c_aligned` False), the group's sum so kept is added
  to it in FP32, rounded to nearest-even.
FP32's own sum (every addition rounded to nearest) is not in the family: it is what the bound is measured
against (measure/verify.py).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from .data import round_to_e4m3


@dataclass(frozen=True)
class Model:
    group: int          # products taken at a time
    align: int          # bits kept below the largest term's leading bit, each term cut toward zero
    bits: int           # explicit mantissa bits the group's sum keeps
    rounding: str       # how it keeps them: "rz" (toward zero) or "rn" (to nearest, ties to even)
    c_aligned: bool     # whether the accumulator is aligned with the products (else added after, in FP32)
    reference: str = "value"   # a product's exponent: its value's ("value"), or its factors' summed ("exponents")

    def describe(self) -> str:
        c = "the accumulator aligned with them" if self.c_aligned else "the accumulator added after, in FP32"
        way = "cut toward zero" if self.rounding == "rz" else "rounded to nearest"
        top = "largest exponent" if self.reference == "value" else "largest sum of a product's factors' exponents"
        return (f"{self.group} products at a time, {c}, each term cut to {self.align} bits below the {top}; "
                f"the sum {way} to {self.bits} mantissa bits")


# Hopper's FP8 wgmma (e4m3, FP32 accumulator), as tools/accumulation.py fits it: all 32 products of
# an instruction and the accumulator cut toward zero to 13 bits below the largest of the products' exponent sums
# and the accumulator's exponent, added, and the sum cut toward zero to 13 mantissa bits (FP32's other 10 zero).
# On each of two NVIDIA H200s (GPU-6b528e68-6fa2-beb6-4582-a6b7d3ef5889, GPU-e1f9181b-a30b-fcbd-ac15-2d0b08e6ac5c)
# it matched every one of 32,768 sums of e4m3 values from all of the format's codes into accumulators from 2^-8
# to 2^16, and of 32,768 chains of 8 instructions on the study's inputs; no other model of the family did.
HOPPER_FP8_WGMMA = Model(32, 13, 13, "rz", True, "exponents")


def _exponent(x: np.ndarray) -> np.ndarray:
    """E with 2^E <= |x| < 2^(E+1), for x != 0 (a very small value for 0)."""
    _, e = np.frexp(x)
    return np.where(x != 0, e - 1, -10_000)


def _keep(s: np.ndarray, bits: int, rounding: str) -> np.ndarray:
    """s (float64) kept to `bits` explicit mantissa bits, cut toward zero or rounded to nearest-even."""
    quantum = np.exp2(_exponent(s) - bits).astype(np.float64)   # 2^-10000 for 0: 0 / 0 below, then 0
    with np.errstate(invalid="ignore"):
        scaled = s / quantum
    kept = np.trunc(scaled) if rounding == "rz" else np.rint(scaled)
    return np.where(s != 0, kept * quantum, 0.0)


E4M3_LEAST_EXPONENT = -6   # a subnormal e4m3 value's exponent field means 2^-6 (times 0.m)


def _factor_exponent(x: np.ndarray) -> np.ndarray:
    """An e4m3 factor's exponent as its bits hold it: its own, or -6 where it is subnormal."""
    return np.maximum(_exponent(x), E4M3_LEAST_EXPONENT)


def step(model: Model, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """One instruction: c (n accumulators, float32 values) plus the products of a and b (n x k factors each, e4m3
    values), as the model sums them; float64 holding the float32 result."""
    c = np.asarray(c, dtype=np.float64)
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    products = a * b   # exact: at most 8 significant bits
    if model.reference == "value":
        exponents = _exponent(products)
    else:
        exponents = np.where(products != 0, _factor_exponent(a) + _factor_exponent(b), -10_000)
    for start in range(0, products.shape[1], model.group):
        p = products[:, start:start + model.group]
        terms = np.concatenate([p, c[:, None]], axis=1) if model.c_aligned else p
        top = exponents[:, start:start + model.group].max(axis=1)
        if model.c_aligned:
            top = np.maximum(top, _exponent(c))
        quantum = np.exp2(top - model.align)[:, None]
        s = (np.trunc(terms / quantum) * quantum).sum(axis=1)   # exact (align up to ~40): multiples of one quantum
        s = _keep(s, model.bits, model.rounding)
        c = s if model.c_aligned else (c + s).astype(np.float32).astype(np.float64)
    return c


def chain(model: Model, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """D = C + sum_s A_s B_s^T as the model sums it, one instruction a step: a (n x steps x k) and b (n x steps x
    k) the products' factors of n dot products (float values), c (n) the accumulators in."""
    d = np.asarray(c, dtype=np.float64)
    for s in range(a.shape[1]):
        d = step(model, a[:, s, :], b[:, s, :], d)
    return d


def family(k: int = 32) -> list[Model]:
    """The models fitted: every combination of the parameters below (group dividing k)."""
    groups = [g for g in (8, 16, 32) if g <= k and k % g == 0]
    return [Model(g, align, bits, rounding, c_aligned, reference)
            for g, align, bits, rounding, c_aligned, reference in itertools.product(
                groups, range(10, 29), range(10, 24), ("rz", "rn"), (True, False), ("value", "exponents"))]


def fit(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray, models=None) -> list[tuple[Model, float]]:
    """Each model with the fraction of the n results d it matches bit for bit (a, b, c as `chain` takes them),
    best first."""
    models = family(a.shape[2]) if models is None else models
    d = np.asarray(d, dtype=np.float64)
    scores = [(m, float((chain(m, a, b, c) == d).mean())) for m in models]
    return sorted(scores, key=lambda ms: -ms[1])


def promoted(model: Model, a: np.ndarray, b: np.ndarray, every: int | None) -> np.ndarray:
    """Dot products of a and b (n x K factors, K a multiple of 32) as a kernel sums them with the model's
    instruction: the whole of K in the tensor cores' accumulator (`every` None), or promoted to FP32 every
    `every` instructions, as DeepGEMM does (each run of them from a zero accumulator, its result added into an
    FP32 sum, rounded to nearest). float64 holding the float32 results."""
    n, K = a.shape
    a, b = a.reshape(n, K // 32, 32), b.reshape(n, K // 32, 32)
    if every is None:
        return chain(model, a, b, np.zeros(n))
    total = np.zeros(n, dtype=np.float32)
    for start in range(0, K // 32, every):
        part = chain(model, a[:, start:start + every], b[:, start:start + every], np.zeros(n))
        total = (total + part.astype(np.float32)).astype(np.float32)
    return total.astype(np.float64)


def errors(model: Model = HOPPER_FP8_WGMMA, ks=(1024, 4096, 8192), n: int = 2000, ways=(None, 4, 1),
           seed: int = 0):
    """For each K and way of summing (`promoted`'s `every`): the errors of n dot products of the study's inputs
    rounded to e4m3 (uniform in [-1, 1)), in units of 2^-13 r (r the root-sum-square of the products): their
    mean, root-mean-square and largest magnitude. Rows of dicts."""
    rng, rows = np.random.default_rng(seed), []
    for K in ks:
        a = round_to_e4m3(rng.random((n, K), dtype=np.float32) * 2 - 1).astype(np.float64)
        b = round_to_e4m3(rng.random((n, K), dtype=np.float32) * 2 - 1).astype(np.float64)
        exact, r = (a * b).sum(axis=1), np.sqrt(((a * b) ** 2).sum(axis=1))   # exact: products of 8 bits
        for every in ways:
            z = (promoted(model, a, b, every) - exact) / r * 2.0**13
            rows.append({"K": K, "promoted_every": every or 0, "mean": z.mean(), "rms": np.sqrt((z**2).mean()),
                         "largest": np.abs(z).max(), "dots": n})
    return rows
