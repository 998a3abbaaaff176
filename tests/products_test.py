"""code_t5/training/products.py: products through Eigen's SparseMatMul equal Mesh TF's einsum's,
on one device and on a mesh that splits the batch; which einsums are one matrix product, and which
of those go to Eigen; only CPU meshes take that path; a wrong gin value is named.
"""

import contextlib

import gin
import mesh_tensorflow as mtf
import numpy as np
import pytest
import tensorflow.compat.v1 as tf

from code_t5 import test_utils
from code_t5.training import products

BATCH, LENGTH, D_MODEL = 4, 6, 64
LAYOUTS = {"one device": ("batch:1", "batch:batch"), "batch split": ("batch:2", "batch:batch")}
Form = products.MatrixForm


@contextlib.contextmanager
def _eigen(value):
  with gin.unlock_config():
    gin.bind_parameter("code_t5.eigen_products.enabled", value)
  try:
    yield
  finally:
    with gin.unlock_config():
      gin.bind_parameter("code_t5.eigen_products.enabled", "auto")


@pytest.mark.parametrize("equation, form", [
    # the causal LM mini's weight gradients, as Mesh TF lowers them (x or dy first)
    ("abcd,abce->ed", Form(1, 3, True, False)),
    ("abcd,abce->de", Form(0, 3, True, False)),
    ("abc,abd->cd", Form(0, 2, True, False)),
    # its forward products and input gradients: [positions, K] by [K, N] or [N, K]
    ("abcd,de->abce", Form(0, 1, False, False)),
    ("abcd,ed->abce", Form(0, 1, False, True)),
    ("abc,dc->dab", Form(1, 1, False, True)),
    # attention's batch matmuls; contracted dims in another order, or apart; a dim of the output
    # from both operands; three operands; a dim summed within one operand
    ("abcde,abcfe->abcdf", None), ("abcde,abcdf->abcfe", None), ("abcd,bace->de", None),
    ("abcd,cabe->de", None), ("abcd,abce->aed", None), ("abc,abd,abe->cde", None),
    ("abc,cd->ad", None), ("acb,cd->abd", None),
])
def test_matrix_forms(equation, form):
  assert products.matrix_form(equation) == form


@pytest.mark.parametrize("equation, a_shape, b_shape", [
    # a weight gradient with rows the wider side, and longer than the contraction: the wider
    # operand transposed first; shorter: the narrower operand first, the result transposed
    ("abcd,abce->ed", (2, 3, 4, 70), (2, 3, 4, 90)),
    ("abcd,abce->ed", (4, 5, 6, 70), (4, 5, 6, 90)),
    ("abcd,abce->de", (2, 3, 4, 70), (2, 3, 4, 90)),
    ("abc,abd->cd", (5, 6, 90), (5, 6, 65)),
    ("abc,dc->abd", (2, 3, 80), (90, 80)),
    ("abc,cd->abd", (2, 3, 80), (80, 90)),
    ("abc,dc->dab", (2, 3, 80), (90, 80)),
    ("ab,bc->ca", (70, 80), (80, 90)),
])
def test_sparse_matmul_is_the_einsum(equation, a_shape, b_shape):
  rng = np.random.default_rng(0)
  a = rng.normal(size=a_shape).astype(np.float32)
  b = rng.normal(size=b_shape).astype(np.float32)
  form = products.matrix_form(equation)
  with tf.Graph().as_default(), tf.Session() as session:
    product = products.sparse_matmul(form, tf.constant(a), tf.constant(b))
    assert "SparseMatMul" in {op.type for op in session.graph.get_operations()}
    np.testing.assert_allclose(session.run(product), np.einsum(equation, a, b),
                               rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("equation, a_shape, b_shape, eigen", [
    ("abcd,abce->ed", (8, 512, 1, 8192), (8, 512, 1, 256), True),  # the logits' weight gradient
    ("abc,abd->cd", (8, 512, 256), (8, 512, 1024), True),  # the MLP's
    ("abc,abd->cd", (8, 512, 4), (8, 512, 32), False),  # the relative-position bias's
    ("abc,dc->abd", (8, 512, 256), (8192, 256), False),  # the logits: wider than contracted
    ("abc,cd->abd", (8, 512, 8192), (8192, 256), True),  # their input gradient
    ("abc,cd->abd", (8, 512, 1024), (1024, 256), True),  # the MLP's output projection
    ("abc,cd->abd", (8, 512, 256), (256, 1024), False),  # its input projection
    ("abc,cd->abd", (8, 512, 256), (256, 256), True),  # the attention projections
])
def test_eigen_for_weight_gradients_and_outputs_no_wider_than_the_contraction(
    equation, a_shape, b_shape, eigen):
  form = products.matrix_form(equation)
  assert products.eigen_is_faster(form, a_shape, b_shape) is eigen


def _product_and_gradients(layout, d_ff, eigen, device="cpu:0"):
  """(y = x [batch, length, d_model] . W [d_model, d_ff], dx, dW for dy, each checked against
  NumPy), and the lowered tf.Graph."""
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
    return [y] + mtf.gradients([y], [x, w], [dy])

  with _eigen(eigen):
    (y, dx, dw), tf_graph = test_utils.run_on_mesh(*LAYOUTS[layout], build, values,
                                                   device=device)
  x, w, dy = (values[name][0] for name in ("x", "w", "dy"))
  np.testing.assert_allclose(y, x @ w, rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(dx, dy @ w.T, rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(dw, np.einsum("bld,blf->df", x, dy), rtol=1e-5, atol=1e-5)
  return (y, dx, dw), tf_graph


def _types(graph):
  return [op.type for op in graph.get_operations()]


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_eigen_products_equal_mesh_tf_einsums(layout):
  eigen, eigen_graph = _product_and_gradients(layout, 64, True)
  einsum, einsum_graph = _product_and_gradients(layout, 64, False)
  eigen_ops, einsum_ops = _types(eigen_graph), _types(einsum_graph)
  assert "SparseMatMul" in eigen_ops and "SparseMatMul" not in einsum_ops
  for with_eigen, without in zip(eigen, einsum):
    np.testing.assert_allclose(with_eigen, without, rtol=1e-5, atol=1e-5)


def test_only_the_products_eigen_runs_faster_take_it():
  # d_ff 128 > d_model 64: the forward product is wider than its contraction and stays oneDNN's;
  # the input gradient (64 <= 128) and the weight gradient go to Eigen, one SparseMatMul per
  # slice each.
  _, graph = _product_and_gradients("batch split", 128, True)
  assert _types(graph).count("SparseMatMul") == 2 * 2


def test_small_weights_and_meshes_not_on_named_cpus_keep_the_einsum():
  assert "SparseMatMul" not in _types(_product_and_gradients("one device", 32, True)[1])
  assert "SparseMatMul" not in _types(
      _product_and_gradients("one device", 64, True, device="")[1])


def _upstream(op):
  """Every op `op` waits for, through its inputs and its control inputs."""
  seen, stack = set(), [op]
  while stack:
    current = stack.pop()
    for parent in [t.op for t in current.inputs] + list(current.control_inputs):
      if parent not in seen:
        seen.add(parent)
        stack.append(parent)
  return seen


@pytest.mark.parametrize("threshold, ordered", [(BATCH * LENGTH * 128, True), (None, False)])
def test_the_weight_gradient_waits_for_the_input_gradient_where_they_share_a_large_operand(
    monkeypatch, threshold, ordered):
  # Both gradients read dy [batch, length, d_ff]; the input gradient is built first. At the
  # default size (32 MB) this dy is small, and the two may run at once.
  if threshold is not None:
    monkeypatch.setattr(products, "_SHARED_OPERAND_ELEMENTS", threshold)
  _, graph = _product_and_gradients("one device", 128, True)
  products_ops = [op for op in graph.get_operations() if op.type == "SparseMatMul"]
  input_gradient, = [op for op in products_ops
                     if op.outputs[0].shape.as_list() == [BATCH * LENGTH, D_MODEL]]
  weight_gradient, = [op for op in products_ops if op is not input_gradient]
  assert (input_gradient in _upstream(weight_gradient)) is ordered
  assert weight_gradient not in _upstream(input_gradient)


def test_a_wrong_setting_is_named():
  with pytest.raises(ValueError, match=r"code_t5\.eigen_products\.enabled.*'yes'"):
    products.eigen_products(enabled="yes")
