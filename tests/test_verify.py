"""The verifier passes float32 products and catches every kind of wrong result."""

import numpy as np
import pytest

from matmulstudy import data
from matmulstudy.config import Shape
from matmulstudy.verify import FREIVALDS_LAMBDA, POISON, check, freivalds, tolerance

FACTOR = 8


@pytest.fixture(scope="module")
def problem():
    shape = Shape(96, 80, 1024)
    a, b = data.make_inputs(shape, 11)
    ref, scale = data.reference(a, b)
    return shape, a, b, ref, scale


def test_float32_product_passes(problem):
    shape, a, b, ref, scale = problem
    result = check(a @ b, ref, scale, shape.K, FACTOR)
    assert result.ok and result.bad == 0 and result.max_error <= result.tolerance


def test_sequential_float32_sum_passes(problem):
    """The naive kernel's order (one running float32 sum) is within tolerance."""
    shape, a, b, ref, scale = problem
    c = np.zeros((8, shape.N), np.float32)
    for k in range(shape.K):
        c += a[:8, k:k + 1] * b[k]
    assert check(c, ref[:8], scale[:8], shape.K, FACTOR).ok


def test_one_wrong_element_is_caught(problem):
    shape, a, b, ref, scale = problem
    c = a @ b
    c[37, 41] += 1e-3 * scale[37, 41]
    result = check(c, ref, scale, shape.K, FACTOR)
    assert not result.ok and result.bad == 1


def test_one_missing_tile_of_products_is_caught(problem):
    """Leaving 16 of the 1024 products out of one element must fail."""
    shape, a, b, ref, scale = problem
    c = a @ b
    c[5, 6] -= np.dot(a[5, 512:528], b[512:528, 6])
    assert not check(c, ref, scale, shape.K, FACTOR).ok


def test_nan_never_passes(problem):
    shape, a, b, ref, scale = problem
    c = a @ b
    c[0, 0] = np.nan
    result = check(c, ref, scale, shape.K, FACTOR)
    assert not result.ok and result.nan == 1 and np.isnan(result.max_error)


def test_unwritten_element_is_caught_and_counted(problem):
    shape, a, b, ref, scale = problem
    c = a @ b
    c[-1, -3:] = POISON
    result = check(c, ref, scale, shape.K, FACTOR)
    assert not result.ok and result.unwritten == 3 and result.bad == 3


def test_tf32_precision_is_rejected(problem):
    """Inputs rounded to TF32's 10-bit mantissa give errors far over FP32's."""
    shape, a, b, ref, scale = problem

    assert not check(tf32(a) @ tf32(b), ref, scale, shape.K, FACTOR).ok


def test_tf32_result_passes_its_own_precision(problem):
    shape, a, b, ref, scale = problem
    result = check(tf32(a) @ tf32(b), ref, scale, shape.K, FACTOR, precision="tf32")
    assert result.ok and result.tolerance == FACTOR * 2.0**-10 * np.sqrt(shape.K)


def tf32(x):
    """Round float32 to TF32's 10-bit mantissa (round half up on the bits)."""
    bits = x.view(np.uint32) + np.uint32(0x1000)
    return (bits & np.uint32(0xFFFFE000)).view(np.float32)


# --- Freivalds' check -------------------------------------------------------

VECTORS = 16


@pytest.fixture(scope="module")
def big():
    """A float32 product, and each row's tau_i of Freivalds' bound (absolute units)."""
    a, b = data.make_inputs(Shape(300, 260, 700), 5)
    c = a @ b
    tau = (FREIVALDS_LAMBDA * tolerance(700, FACTOR) * np.linalg.norm(a.astype(np.float64), axis=1)
           * np.linalg.norm(b.astype(np.float64)))
    return a, b, c, tau


def test_freivalds_passes_a_float32_product(big):
    a, b, c, _ = big
    result = freivalds(c, a, b, FACTOR, VECTORS, seed=0)
    assert result.ok and result.method == "freivalds" and result.max_error <= result.tolerance


def test_freivalds_catches_one_wrong_element(big):
    """Documented: a row whose only wrong element is off by more than 2 tau_i is always caught."""
    a, b, c, tau = big
    wrong = c.copy()
    wrong[123, 45] += 2.5 * tau[123]
    result = freivalds(wrong, a, b, FACTOR, VECTORS, seed=7)
    assert not result.ok and result.bad == 1


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
    assert not result.ok and result.tolerance == 0 and result.max_error == 1


def test_freivalds_on_one_by_one_by_one():
    a, b = np.array([[0.5]], np.float32), np.array([[-0.25]], np.float32)
    assert freivalds(a @ b, a, b, FACTOR, VECTORS, seed=0).ok
    assert not freivalds(np.array([[0.0]], np.float32), a, b, FACTOR, VECTORS, seed=0).ok


def test_one_by_one_by_one():
    a, b = np.array([[0.5]], np.float32), np.array([[-0.25]], np.float32)
    ref, scale = data.reference(a, b)
    assert check(a @ b, ref, scale, 1, FACTOR).ok
    assert not check(np.array([[0.0]], np.float32), ref, scale, 1, FACTOR).ok
