"""few_rows.product: the C product of a few rows by a matrix equals NumPy's, and refuses what its
C code could not read safely."""

import numpy as np
import pytest

from code_t5.engine import few_rows


def test_the_c_library_is_built_by_the_install():
  # `make` builds it (setup.py's extension); without it the engine is ~20 % slower per decode
  # step, silently, so a checkout that lost it should fail here.
  assert few_rows.available, few_rows.describe()
  assert few_rows.describe().startswith("C, ")


@pytest.mark.parametrize("baseline", [False, True], ids=["this_cpu", "baseline_vectors"])
@pytest.mark.parametrize("d,k", [(256, 768), (1024, 256), (256, 8192), (7, 9), (4, 8), (3, 17),
                                 (1, 1), (5, 0)])
def test_equals_numpy_for_every_row_count_and_ragged_sizes(baseline, d, k):
  # Rows in passes of up to 6; d in fours (a remainder of 1-3); k in eights (a remainder of 1-7).
  rng = np.random.default_rng(d * 1000 + k)
  w = rng.standard_normal((d, k), dtype=np.float32)
  for rows in range(1, 14):
    x = rng.standard_normal((rows, d), dtype=np.float32)
    expected = x.astype(np.float64) @ w.astype(np.float64)
    got = few_rows.product(x, w, baseline=baseline)
    assert got.shape == (rows, k) and got.dtype == np.float32
    scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
    np.testing.assert_allclose(got, expected, rtol=0, atol=2e-6 * scale * max(1, d) ** 0.5)


def test_views_of_a_larger_block_are_read_in_place():
  # The network's kernels are views into one huge-page block (runtime.Network._in_one_block).
  rng = np.random.default_rng(0)
  block = rng.standard_normal(10 + 64 * 40, dtype=np.float32)
  w = block[10:].reshape(64, 40)
  x = rng.standard_normal((5, 64), dtype=np.float32)
  np.testing.assert_allclose(few_rows.product(x, w), x @ w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("x,w", [
    (np.zeros((2, 4), np.float64), np.zeros((4, 3), np.float32)),  # another type
    (np.zeros((2, 4), np.float32), np.zeros((5, 3), np.float32)),  # d differs
    (np.zeros((2, 4), np.float32), np.zeros((8, 3), np.float32)[::2]),  # not contiguous
    (np.zeros((4, 2), np.float32).T, np.zeros((4, 3), np.float32)),  # Fortran order
    (np.zeros((1, 2, 4), np.float32), np.zeros((4, 3), np.float32)),  # a stack
])
def test_arrays_it_cannot_read_as_given_are_a_value_error(x, w):
  with pytest.raises(ValueError, match="C-contiguous float32"):
    few_rows.product(x, w)
