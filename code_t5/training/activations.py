"""Mesh TF's ReLU with its gradient as one TensorFlow op, for CPU training (runs/cpu.gin).

Mesh TF differentiates `mtf.relu` as dy * cast(x > 0): three element-wise passes (a comparison,
a cast, a product) over the feed-forward layer's hidden activations, the largest tensors of a
layer after the attention weights (batch x length x d_ff floats, 16 MB per layer for the causal
LM mini). TensorFlow's `ReluGrad` kernel writes the same gradient in one pass. The forward pass is
Mesh TF's (TensorFlow's `Relu`). Mesh TF's layers look activations up by name
(`mtf.layers.dense_product`: `getattr(mtf, "relu")`, on Mesh TF's `ops_with_redefined_builtins`,
the module `mtf.layers` knows as mtf), so `relu` below is installed there and on `mtf` when this
module is imported; unbound it is Mesh TF's own:

    import code_t5.training.activations
    code_t5.relu.one_pass_gradient = True
"""

import gin
import mesh_tensorflow as mtf
from mesh_tensorflow import ops_with_redefined_builtins
import tensorflow.compat.v1 as tf

_mesh_tf_relu = mtf.relu


def _relu_gradient(op, dy):
  x = op.inputs[0]
  return [mtf.slicewise(lambda dy_slice, x_slice: tf.raw_ops.ReluGrad(gradients=dy_slice,
                                                                      features=x_slice),
                        [dy, x], output_shape=x.shape, output_dtype=x.dtype,
                        splittable_dims=x.shape.dims, name="relu_gradient")]


@gin.configurable(module="code_t5", allowlist=["one_pass_gradient"])
def relu(x, name="relu", one_pass_gradient=False):
  """`mtf.relu(x)`; with `one_pass_gradient`, differentiated by TensorFlow's `ReluGrad`."""
  if not one_pass_gradient:
    return _mesh_tf_relu(x, name=name)
  return mtf.cwise(tf.nn.relu, [x], name=name, grad_function=_relu_gradient)


mtf.relu = ops_with_redefined_builtins.relu = relu
