"""Seeded inputs are deterministic to the byte; the reference is float64."""

import numpy as np

from matmulstudy.measure import data
from matmulstudy.study.shapes import Shape


def test_same_seed_gives_identical_files(tmp_path):
    shape = Shape(17, 33, 65)
    for run in ("one", "two"):
        (tmp_path / run).mkdir()
        data.save_inputs(shape, 7, tmp_path / run / "A.npy", tmp_path / run / "B.npy")
    for name in ("A.npy", "B.npy"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()


def test_inputs_have_the_shape_and_type_and_depend_on_the_seed():
    a, b = data.make_inputs(Shape(3, 5, 7), 0)
    assert a.shape == (3, 7) and b.shape == (7, 5)
    assert a.dtype == b.dtype == np.float32
    assert -1 <= a.min() and a.max() < 1
    a2, _ = data.make_inputs(Shape(3, 5, 7), 1)
    assert not np.array_equal(a, a2)


def test_reference_is_float64_product_and_scale():
    a, b = data.make_inputs(Shape(4, 6, 5), 3)
    ref, scale = data.reference(a, b)
    assert ref.dtype == np.float64
    np.testing.assert_allclose(ref, a.astype(np.float64) @ b.astype(np.float64), rtol=0, atol=0)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    np.testing.assert_allclose(scale, np.sqrt((a64 * a64) @ (b64 * b64)), rtol=1e-7)   # root-sum-square of products
