"""code_t5/training/products.py: weight gradients through Eigen's SparseMatMul equal Mesh TF's
einsum's, on one device and on a mesh that splits the batch; only weight gradients of CPU meshes
take that path; a wrong gin value is named.
"""

import contextlib

import gin
import mesh_tensorflow as mtf
import numpy as np
import pytest

from code_t5 import test_utils
from code_t5.training import products

BATCH, LENGTH, D_MODEL = 4, 6, 64
LAYOUTS = {"one device": ("batch:1", "batch:batch"), "batch split": ("batch:2", "batch:batch")}


@contextlib.contextmanager
def _eigen(value):
  with gin.unlock_config():
    gin.bind_parameter("code_t5.weight_gradients.eigen", value)
  try:
    yield
  finally:
    with gin.unlock_config():
      gin.bind_parameter("code_t5.weight_gradients.eigen", "auto")


@pytest.mark.parametrize("equation, form", [
    # the causal LM mini's weight gradients, as Mesh TF lowers them (x or dy first)
    ("abcd,abce->ed", ((1, 0), 3)),
    ("abcd,abce->de", ((0, 1), 3)),
    ("abc,abd->cd", ((0, 1), 2)),
    # its forward products and input gradients, attention's batch matmuls
    ("abcd,de->abce", None), ("abcd,ed->abce", None), ("abcde,abcfe->abcdf", None),
    ("abcde,abcdf->abcfe", None),
    # contracted dims in another order, or not leading; a dim of the output from both operands
    ("abcd,bace->de", None), ("abcd,cabe->de", None), ("abcd,abce->aed", None),
    ("abc,abd,abe->cde", None),
])
def test_only_weight_gradients_have_the_form(equation, form):
  assert products.weight_gradient_form(equation) == form


def _weight_gradient(layout, d_ff, eigen, device="cpu:0"):
  """(dW of x [batch, length, d_model] . W [d_model, d_ff], x . W, the lowered tf.Graph)."""
  rng = np.random.default_rng(0)
  batch, length = mtf.Dimension("batch", BATCH), mtf.Dimension("length", LENGTH)
  d_model, hidden = mtf.Dimension("d_model", D_MODEL), mtf.Dimension("d_ff", d_ff)
  values = {"x": (rng.normal(size=(BATCH, LENGTH, D_MODEL)).astype(np.float32),
                  [batch, length, d_model]),
            "w": (rng.normal(size=(D_MODEL, d_ff)).astype(np.float32), [d_model, hidden]),
            "dy": (rng.normal(size=(BATCH, LENGTH, d_ff)).astype(np.float32),
                   [batch, length, hidden])}

  def build(x, w, dy):
    y = mtf.einsum([x, w], mtf.Shape([batch, length, hidden]))
    return [mtf.gradients([y], [w], [dy])[0], y]

  with _eigen(eigen):
    (dw, y), tf_graph = test_utils.run_on_mesh(*LAYOUTS[layout], build, values, device=device)
  x, w, dy = (values[name][0] for name in ("x", "w", "dy"))
  np.testing.assert_allclose(y, x @ w, rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(dw, np.einsum("bld,blf->df", x, dy), rtol=1e-5, atol=1e-5)
  return dw, {op.type for op in tf_graph.get_operations()}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_eigen_weight_gradients_equal_mesh_tf_einsums(layout):
  eigen, eigen_ops = _weight_gradient(layout, 64, True)
  einsum, einsum_ops = _weight_gradient(layout, 64, False)
  assert "SparseMatMul" in eigen_ops and "SparseMatMul" not in einsum_ops
  np.testing.assert_allclose(eigen, einsum, rtol=1e-5, atol=1e-5)


def test_small_weights_and_meshes_not_on_named_cpus_keep_the_einsum():
  assert "SparseMatMul" not in _weight_gradient("one device", 32, True)[1]
  assert "SparseMatMul" not in _weight_gradient("one device", 64, True, device="")[1]


def test_a_wrong_setting_is_named():
  with pytest.raises(ValueError, match=r"code_t5\.weight_gradients\.eigen.*'yes'"):
    products.weight_gradients(eigen="yes")
