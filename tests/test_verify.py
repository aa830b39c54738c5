"""The verifier passes float32 products and catches every kind of wrong result."""

import numpy as np
import pytest

from matmulstudy import data
from matmulstudy.config import Shape
from matmulstudy.verify import POISON, check

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

    def tf32(x):
        bits = x.view(np.uint32) + np.uint32(0x1000)
        return (bits & np.uint32(0xFFFFE000)).view(np.float32)
    assert not check(tf32(a) @ tf32(b), ref, scale, shape.K, FACTOR).ok


def test_one_by_one_by_one():
    a, b = np.array([[0.5]], np.float32), np.array([[-0.25]], np.float32)
    ref, scale = data.reference(a, b)
    assert check(a @ b, ref, scale, 1, FACTOR).ok
    assert not check(np.array([[0.0]], np.float32), ref, scale, 1, FACTOR).ok
