"""The verifier: bound (1) of matmulstudy/measure/verify.py passes every correct FP32 summation with
room, rejects TF32 and fp16 arithmetic at every K of the study, and catches every kind of wrong
result; Freivalds' check as documented. All on the CPU, with products made here."""

import math

import numpy as np
import pytest

from matmulstudy.measure import data
from matmulstudy.study.shapes import Shape
from matmulstudy.measure.verify import FREIVALDS_LAMBDA, POISON, bound, elementwise, freivalds, scale
from matmulstudy.precisions import EPS32, PRECISIONS

FACTOR = 8
KS = [1, 2, 7, 64, 256, 997, 1024, 4096, 8192]   # the study's K, and the small ones
SIDE = 64                                          # C is SIDE x SIDE: 4096 elements per K


def sequential_fp32(a, b):
    """C as the naive kernel makes it: one running float32 sum per element, k in order, each
    step one fused multiply-add (the exact product added, the sum rounded once to float32)."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    acc = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for k in range(a.shape[1]):
        acc = (acc + np.outer(a64[:, k], b64[k])).astype(np.float32)
    return acc


def fp16_accumulated(a, b):
    """The same sum kept in fp16 between steps."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    acc = np.zeros((a.shape[0], b.shape[1]), np.float16)
    for k in range(a.shape[1]):
        acc = (acc + np.outer(a64[:, k], b64[k])).astype(np.float16)
    return acc.astype(np.float32)


def tf32(x, truncate=False):
    """float32 rounded to TF32's 10-bit mantissa: to nearest (ties away, cvt.rna), or truncated
    (what tensor cores do with an unconverted float32)."""
    bits = x.view(np.uint32)
    if not truncate:
        bits = bits + np.uint32(0x1000)
    return (bits & np.uint32(0xFFFFE000)).view(np.float32)


@pytest.fixture(scope="module", params=KS, ids=lambda k: f"K{k}")
def products(request):
    """For one K: the inputs, the float64 reference, r, and the result of each arithmetic."""
    K = request.param
    a, b = data.make_inputs(Shape(SIDE, SIDE, K), K)
    ref, r = data.reference(a, b)
    return {"K": K, "ref": ref, "r": r,
            "fp32 sequential": sequential_fp32(a, b),
            "fp32 blocked (BLAS)": a @ b,
            "tf32 to nearest": sequential_fp32(tf32(a), tf32(b)),
            "tf32 truncated": sequential_fp32(tf32(a, True), tf32(b, True)),
            "fp16 accumulation": fp16_accumulated(a, b)}


def margin(p, name, precision="fp32"):
    return elementwise(p[name], p["ref"], p["r"], p["K"], FACTOR, PRECISIONS[precision]).margin


@pytest.mark.parametrize("name", ["fp32 sequential", "fp32 blocked (BLAS)"])
def test_every_correct_fp32_sum_passes_with_a_margin_of_2(products, name):
    assert margin(products, name) <= 0.5


@pytest.mark.parametrize("name", ["tf32 to nearest", "tf32 truncated"])
def test_tf32_arithmetic_fails_fp32s_bound_by_2x_at_every_k(products, name):
    result = elementwise(products[name], products["ref"], products["r"], products["K"], FACTOR)
    assert not result.ok and result.margin >= 2 and result.base_margin == result.margin


@pytest.mark.parametrize("name", ["tf32 to nearest", "tf32 truncated"])
def test_tf32_arithmetic_passes_its_own_bound_with_a_margin_of_2(products, name):
    result = elementwise(products[name], products["ref"], products["r"], products["K"], FACTOR, PRECISIONS["tf32"])
    assert result.ok and result.margin <= 0.5 and result.base_margin >= 2


def test_fp16_accumulation_fails_everywhere(products):
    assert margin(products, "fp16 accumulation") >= 2


def test_the_derivations_numbers():
    """verify.py: a sequential FP32 sum errs by eps32 sqrt(K) r z, z of rms about 0.15 (at most
    0.29); TF32 rounding by 2^-11 r / sqrt(3), i.e. 2^12 / sqrt(3 K) in those units."""
    K = 1024
    a, b = data.make_inputs(Shape(SIDE, SIDE, K), 1)
    ref, r = data.reference(a, b)
    unit = EPS32 * math.sqrt(K) * r
    z = np.abs(sequential_fp32(a, b) - ref) / unit
    assert 0.10 < np.sqrt(np.mean(z**2)) < 0.20
    z_tf32 = np.abs(sequential_fp32(tf32(a), tf32(b)) - ref) / unit
    assert np.sqrt(np.mean(z_tf32**2)) == pytest.approx(2**12 / math.sqrt(3 * K), rel=0.15)


def test_bound_per_precision():
    assert bound(4096, 8) == pytest.approx(8 * 2**-23 * 64)
    assert bound(4096, 8, PRECISIONS["tf32"]) == pytest.approx(8 * (2**-9 + 2**-23 * 64))


def test_scale_is_the_root_sum_square_of_products():
    a, b = data.make_inputs(Shape(5, 7, 11), 2)
    r = scale(a, b)
    i, j = 3, 4
    assert r[i, j] == pytest.approx(math.sqrt(sum((float(a[i, k]) * float(b[k, j]))**2 for k in range(11))))


# --- what a wrong result looks like -------------------------------------------

@pytest.fixture(scope="module")
def problem():
    shape = Shape(96, 80, 1024)
    a, b = data.make_inputs(shape, 11)
    ref, r = data.reference(a, b)
    return shape, a, b, ref, r


def test_one_element_twice_its_bound_off_is_caught(problem):
    shape, a, b, ref, r = problem
    c = a @ b
    c[37, 41] += 2 * bound(shape.K, FACTOR) * r[37, 41]
    result = elementwise(c, ref, r, shape.K, FACTOR)
    assert not result.ok and result.bad == 1 and result.margin == pytest.approx(2, rel=0.05)


def test_one_missing_tile_of_products_is_caught(problem):
    """Leaving 16 of the 1024 products out of one element must fail."""
    shape, a, b, ref, r = problem
    c = a @ b
    c[5, 6] -= np.dot(a[5, 512:528], b[512:528, 6])
    assert not elementwise(c, ref, r, shape.K, FACTOR).ok


def test_nan_never_passes(problem):
    shape, a, b, ref, r = problem
    c = a @ b
    c[0, 0] = np.nan
    result = elementwise(c, ref, r, shape.K, FACTOR)
    assert not result.ok and result.nan == 1 and np.isnan(result.max_error) and np.isnan(result.margin)


def test_unwritten_element_is_caught_and_counted(problem):
    shape, a, b, ref, r = problem
    c = a @ b
    c[-1, -3:] = POISON
    result = elementwise(c, ref, r, shape.K, FACTOR)
    assert not result.ok and result.unwritten == 3 and result.bad == 3


def test_int32_must_be_exact():
    a, b = data.make_inputs(Shape(9, 5, 33), 3, "int32")
    ref, r = data.reference(a, b)
    c = a @ b
    result = elementwise(c, ref, r, 33, FACTOR)
    assert result.ok and result.bound == 0 and result.margin == 0
    c[2, 2] += 1
    result = elementwise(c, ref, r, 33, FACTOR)
    assert not result.ok and result.margin == float("inf")


def test_one_by_one_by_one():
    a, b = np.array([[0.5]], np.float32), np.array([[-0.25]], np.float32)
    ref, r = data.reference(a, b)
    assert elementwise(a @ b, ref, r, 1, FACTOR).ok
    assert not elementwise(np.array([[0.0]], np.float32), ref, r, 1, FACTOR).ok


# --- Freivalds' check (an explicit option for shapes beyond the GPU's memory) ----

VECTORS = 16


@pytest.fixture(scope="module")
def big():
    """A float32 product, and each row's tau_i of Freivalds' bound (absolute units)."""
    a, b = data.make_inputs(Shape(300, 260, 700), 5)
    c = a @ b
    r = scale(a, b)
    tau = FREIVALDS_LAMBDA * bound(700, FACTOR) * np.sqrt((r**2).sum(axis=1))
    return a, b, c, tau


def test_freivalds_passes_a_float32_product(big):
    a, b, c, _ = big
    result = freivalds(c, a, b, FACTOR, VECTORS, seed=0)
    assert result.ok and result.method == "freivalds" and result.margin <= 0.5


def test_freivalds_catches_one_element_twice_its_row_bound_off(big):
    """Documented: a row whose only wrong element is off by more than 2 tau_i is always caught."""
    a, b, c, tau = big
    wrong = c.copy()
    wrong[123, 45] += 2.5 * tau[123]
    result = freivalds(wrong, a, b, FACTOR, VECTORS, seed=7)
    assert not result.ok and result.bad == 1


def test_freivalds_misses_small_errors_that_the_element_wise_check_catches(big):
    """Why the study checks every element: one element 5 bounds off passes Freivalds' check."""
    a, b, c, _ = big
    ref, r = data.reference(a, b)
    wrong = c.copy()
    wrong[10, 10] += 5 * bound(700, FACTOR) * r[10, 10]
    assert freivalds(wrong, a, b, FACTOR, VECTORS, seed=1).ok
    assert not elementwise(wrong, ref, r, 700, FACTOR).ok


def test_freivalds_misses_a_cancelling_pair_with_probability_two_to_minus_k(big):
    """Documented: an element off by more than tau_i escapes one vector with probability <= 1/2.

    The worst case: +d and -d in one row cancel whenever x_j = x_l, which a
    random sign vector does with probability exactly 1/2. Over 400 fixed
    seeds, one vector catches about half; two vectors about three quarters;
    the default 16 catch every one.
    """
    a, b, c, tau = big
    wrong = c.copy()
    wrong[10, 3] += 3 * tau[10]
    wrong[10, 200] -= 3 * tau[10]
    caught = {k: sum(not freivalds(wrong, a, b, FACTOR, k, seed=s).ok for s in range(400)) / 400
              for k in (1, 2, VECTORS)}
    # binomial(400, p): 4 standard deviations are 0.1 at p = 1/2 and 0.087 at p = 3/4
    assert abs(caught[1] - 0.5) < 0.1 and abs(caught[2] - 0.75) < 0.087
    assert caught[VECTORS] == 1.0


def test_freivalds_counts_nan_and_unwritten_elements(big):
    a, b, c, _ = big
    wrong = c.copy()
    wrong[0, 0] = np.nan
    wrong[-1, -2:] = POISON
    result = freivalds(wrong, a, b, FACTOR, VECTORS, seed=0)
    assert not result.ok and result.nan == 3 and result.unwritten == 2 and np.isnan(result.max_error)


def test_freivalds_is_exact_for_int32():
    a, b = data.make_inputs(Shape(65, 33, 129), 3, "int32")
    c = a @ b
    assert freivalds(c, a, b, FACTOR, 4, seed=0).ok
    c[17, 5] += 1
    result = freivalds(c, a, b, FACTOR, 1, seed=0)    # one vector suffices: +-1 never cancels alone
    assert not result.ok and result.bound == 0 and result.max_error == 1


def test_freivalds_on_one_by_one_by_one():
    a, b = np.array([[0.5]], np.float32), np.array([[-0.25]], np.float32)
    assert freivalds(a @ b, a, b, FACTOR, VECTORS, seed=0).ok
    assert not freivalds(np.array([[0.0]], np.float32), a, b, FACTOR, VECTORS, seed=0).ok


# --- BF16 (matmulstudy/precisions.py's row derives its bound) -------------------------------------------------

def test_bf16_rounding_is_to_nearest_even_on_the_bits():
    """Ties go to the even neighbour, the rest to the nearer; the low 16 bits end zero, and the 16-bit values
    the kernels read are the high halves."""
    x = np.array([1.0, 1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-9, 1 + 2**-8 + 2**-20, -1 - 2**-8, 0.0, -0.0],
                 np.float32)
    rounded = data.round_to_bf16(x)
    assert rounded.tolist() == [1.0, 1.0, 1 + 2**-6, 1.0, 1 + 2**-7, -1.0, 0.0, -0.0]
    assert data.bf16_bits(rounded).tolist() == [0x3F80, 0x3F80, 0x3F82, 0x3F80, 0x3F81, 0xBF80, 0, 0x8000]
    with pytest.raises(ValueError, match="round_to_bf16"):
        data.bf16_bits(np.array([1 + 2**-20], np.float32))


def test_the_same_seed_gives_the_same_bf16_bits():
    a, _ = data.make_inputs(Shape(33, 17, 65), 5)
    first = data.operands(a, a, PRECISIONS["bf16"])[0]
    assert first.dtype == np.uint16 and np.array_equal(first, data.operands(a.copy(), a, PRECISIONS["bf16"])[0])
    assert data.operands(a, a, PRECISIONS["tf32"])[0] is a   # TF32 rounds in the kernel: its operands are the inputs


def tensor_core_sums(a, b, group=16, extra_bits=3):
    """C as a tensor core sums BF16 products, after the published models (precisions.py's BF16 row): each
    instruction adds `group` exact products to the FP32 accumulator, every term aligned to the largest of them
    with `extra_bits` bits below the accumulator's 24 and cut toward zero, the sum then cut toward zero to FP32."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    acc = np.zeros((a.shape[0], b.shape[1]))
    for k0 in range(0, a.shape[1], group):
        terms = np.concatenate([acc[:, None, :], a64[:, k0:k0 + group, None] * b64[None, k0:k0 + group, :]], axis=1)
        top = np.floor(np.log2(np.maximum(np.abs(terms).max(axis=1), 2.0**-126)))
        ulp = 2.0 ** (top - 23 - extra_bits)[:, None, :]
        total = (np.trunc(terms / ulp) * ulp).sum(axis=1)
        ulp = 2.0 ** (np.floor(np.log2(np.maximum(np.abs(total), 2.0**-126))) - 23)
        acc = np.trunc(total / ulp) * ulp
    return acc.astype(np.float32)


@pytest.mark.parametrize("K", [1024, 8192])
def test_bf16_bound_holds_tensor_core_sums_and_rejects_unrounded_inputs_and_bf16_sums(K):
    """Against the product of the rounded inputs: sums cut toward zero, as the tensor cores make them, sit at
    about 0.1 of BF16's bound or less, where against FP32's bound (eps_acc sqrt(K) alone) they reach 0.6 at
    K = 8192, past the half that a correct FP32 sum keeps: a cut does not average out as a rounding does, hence
    BF16's eps_bias K. The unrounded inputs' product and sums kept in BF16 are far over BF16's bound."""
    a, b = (data.round_to_bf16(x) for x in data.make_inputs(Shape(SIDE, SIDE, K), K))
    ref, r = data.reference(a, b)
    limit = bound(K, FACTOR, PRECISIONS["bf16"])
    assert limit == pytest.approx(FACTOR * EPS32 * (math.sqrt(K) + K / 16))
    cut = tensor_core_sums(a, b)
    margin = elementwise(cut, ref, r, K, FACTOR, PRECISIONS["bf16"]).margin
    assert margin < 0.15, margin
    if K == 8192:
        assert elementwise(cut, ref, r, K, FACTOR, PRECISIONS["fp32"]).margin > 0.5
    unrounded = sequential_fp32(*data.make_inputs(Shape(SIDE, SIDE, K), K))
    assert elementwise(unrounded, ref, r, K, FACTOR, PRECISIONS["bf16"]).margin > 4
    bf16_sums = np.zeros_like(ref, dtype=np.float32)
    for k in range(K):
        bf16_sums = data.round_to_bf16((bf16_sums + np.outer(a[:, k], b[k])).astype(np.float32))
    assert elementwise(bf16_sums, ref, r, K, FACTOR, PRECISIONS["bf16"]).margin > 20
