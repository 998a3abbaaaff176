"""code_t5/training/activations.py: the ReLU with a one-pass gradient gives Mesh TF's ReLU and
gradient, on one device and on a mesh that splits the batch, and is what Mesh TF's layers call."""

import gin
import mesh_tensorflow as mtf
from mesh_tensorflow import ops_with_redefined_builtins
import numpy as np
import pytest

from code_t5 import test_utils
from code_t5.training import activations

LAYOUTS = {"one device": ("batch:1", "batch:batch"), "batch split": ("batch:2", "batch:batch")}


@pytest.fixture
def one_pass_gradient():
  with gin.unlock_config():
    gin.bind_parameter("code_t5.relu.one_pass_gradient", True)
  yield
  gin.clear_config()


def _relu_and_gradient(layout):
  batch, hidden = mtf.Dimension("batch", 4), mtf.Dimension("d_ff", 6)
  rng = np.random.default_rng(0)
  x = rng.normal(size=(4, 6)).astype(np.float32)
  x[0, :2] = 0.0  # at 0 both give the gradient 0
  dy = rng.normal(size=(4, 6)).astype(np.float32)

  def build(x, dy):
    # By name, as mtf.layers.dense_product finds DenseReluDense's "relu" (on the module that
    # mtf.layers imports as mtf).
    y = getattr(ops_with_redefined_builtins, "relu")(x)
    return [y, *mtf.gradients([y], [x], [dy])]

  (y, grad), graph = test_utils.run_on_mesh(*LAYOUTS[layout], build, {
      "x": (x, [batch, hidden]), "dy": (dy, [batch, hidden])})
  return x, dy, y, grad, {op.type for op in graph.get_operations()}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_one_pass_gradient_gives_mesh_tfs_relu_and_gradient(layout, one_pass_gradient):
  del one_pass_gradient
  x, dy, y, grad, op_types = _relu_and_gradient(layout)
  np.testing.assert_array_equal(y, np.maximum(x, 0))
  np.testing.assert_array_equal(grad, np.where(x > 0, dy, 0))
  assert "ReluGrad" in op_types and "Greater" not in op_types


def test_unbound_it_is_mesh_tfs_relu():
  x, dy, y, grad, op_types = _relu_and_gradient("one device")
  np.testing.assert_array_equal(y, np.maximum(x, 0))
  np.testing.assert_array_equal(grad, np.where(x > 0, dy, 0))
  assert "ReluGrad" not in op_types and "Greater" in op_types
  assert mtf.relu is ops_with_redefined_builtins.relu is activations.relu
