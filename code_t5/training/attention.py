"""Mesh TF's attention with heads before lengths, so that its einsums are plain batch matmuls.

Mesh TF's dot-product attention (`mesh_tensorflow.transformer.attention.attention`) keeps the
queries' dimension order: q, k and v are [batch, length, heads, d_kv] and the logits and weights
[batch, length, heads, memory_length]. A (batch, head)'s matrices are then not contiguous, and
TensorFlow's Einsum transposes its operands into batch-matmul form and its result back, for
q.k, weights.v and the four gradients of those, on every layer and step. The weights tensor
is the large one: memory_length / d_kv times the size of q (8 x 512 x 4 x 512 floats, 32 MB,
for the causal LM mini at 512 tokens). Measured on this 2-core CPU, one such einsum took 46-79
ms where a 1,024^3 matmul of twice its FLOPs takes 16 ms (docs/speed.md gives the step's figures, from `benchmarks/train_benchmark.py`).

`attention` below transposes q, k and v to [batch, heads, length, d_kv] first (tensors
memory_length / d_kv times smaller than the weights) and the result back, so that the logits
and weights are [batch, heads, length, memory_length] and every attention einsum, forward and
backward, is a batch matmul without transposes. The bias added to the logits is summed in their
order too (`_bias_in_order`): Mesh TF's sum lists heads last, and was transposed on every layer.
Same weights and variables, same math; float sums may run in another order. Mesh TF's attention
layers look their attention function up at call time (`SelfAttention.attention_fn` returns
`attention.attention`), so it is installed by replacing that module attribute when this module
is imported; `heads_first` (gin) switches it on, and unbound it calls Mesh TF's own unchanged:

    import code_t5.training.attention
    code_t5.attention.heads_first = True
"""

from typing import Sequence

import gin
import mesh_tensorflow as mtf
from mesh_tensorflow.transformer import attention as mtf_attention
import tensorflow.compat.v1 as tf

from code_t5.training import softmax

_mesh_tf_attention = mtf_attention.attention


def _in_order(x: mtf.Tensor, shape: mtf.Shape) -> mtf.Tensor:
  """`x` transposed to `shape` (its own dims in another order), or `x` where it has that order."""
  return x if x.shape == shape else mtf.transpose(x, shape)


def _ordered(x: mtf.Tensor, leading: Sequence[mtf.Dimension],
             trailing: Sequence[mtf.Dimension]) -> mtf.Tensor:
  """`x` with `leading` dims it has first, `trailing` last, the others between in their order."""
  middle = [d for d in x.shape.dims if d not in leading and d not in trailing]
  return _in_order(x, mtf.Shape([d for d in leading if d in x.shape.dims] + middle +
                                list(trailing)))


def _bias_in_order(bias: mtf.Tensor, logits: mtf.Shape) -> mtf.Tensor:
  """`bias` summed in the order of the `logits` shape it is added to.

  Mesh TF's `compute_bias` sums the masks ([batch, length, memory_length]) and then the relative
  position bias ([heads, length, memory_length]), so the sum lists heads last, and adding it to
  heads-first logits transposes it on every layer, and its gradient back. Summing its last two
  addends straight into the logits' order broadcasts the small addends instead (the same values;
  the sum Mesh TF built is left unused, and TensorFlow never runs it). A bias that is not such a
  sum, or has no dims to reorder, is returned as it is.
  """
  wanted = mtf.Shape([d for d in logits.dims if d in bias.shape.dims])
  if (bias.shape == wanted or len(wanted) != len(bias.shape)
      or not isinstance(bias.operation, mtf.AddOperation)):
    return bias
  return mtf.add(*bias.operation.inputs, output_shape=wanted)


def _attention_with_fused_softmax(q, k, v, memory_length_dim, key_dim, value_dim, bias=None,
                                  dropout_rate=0.0, dropout_broadcast_dims=None,
                                  extra_logit=None, context=None, float32_logits=True,
                                  z_loss_coeff=None):
  """Mesh TF's `attention` (same arguments) with the softmax as one operation
  (code_t5/training/softmax.py); with an extra logit or an attention z-loss, Mesh TF's own."""
  if extra_logit is not None or z_loss_coeff is not None:
    return _mesh_tf_attention(q, k, v, memory_length_dim, key_dim, value_dim, bias=bias,
                              dropout_rate=dropout_rate,
                              dropout_broadcast_dims=dropout_broadcast_dims,
                              extra_logit=extra_logit, context=context,
                              float32_logits=float32_logits, z_loss_coeff=z_loss_coeff)
  result_shape = q.shape - key_dim + value_dim  # before a 2-D sharding's reshape
  q, k, v, bias = mtf_attention.maybe_reshape_attention_input_for_2d_sharding(
      context, q, k, v, bias, [key_dim, value_dim])
  if float32_logits:
    q, k = mtf.cast(q, tf.float32), mtf.cast(k, tf.float32)
  logits = mtf.layers.us_einsum([q, k], reduced_dims=[key_dim])
  if bias is not None:
    logits += mtf.cast(bias, logits.dtype)
  weights = mtf.cast(softmax.softmax(logits, memory_length_dim), v.dtype)
  weights = mtf.dropout(weights, context.train, 1.0 - dropout_rate,
                        noise_shape=weights.shape - dropout_broadcast_dims)
  outputs = mtf.einsum([weights, v], q.shape - key_dim + value_dim)
  return mtf.reshape(outputs, result_shape)


@gin.configurable(module="code_t5", allowlist=["heads_first", "fused_softmax"])
def attention(q, k, v, memory_length_dim, key_dim, value_dim, *args, heads_first=False,
              fused_softmax=False, **kwargs):
  """Mesh TF's `attention(q, k, v, memory_length_dim, key_dim, value_dim, ...)`, heads first.

  The dims q shares with k (batch and heads; Mesh TF: other_memory_dims) go first, then q's
  own (its length), then key_dim; k and v get the shared dims, memory_length_dim, then their
  channels. The result has q's order, as Mesh TF's has. `fused_softmax` (with heads first): the
  softmax over memory_length as one operation.
  """
  if not heads_first:
    return _mesh_tf_attention(q, k, v, memory_length_dim, key_dim, value_dim, *args, **kwargs)
  shared = [d for d in q.shape.dims if d in k.shape.dims and d != key_dim]
  queries = _ordered(q, shared, [key_dim])
  if kwargs.get("bias") is not None:  # Mesh TF's logits: the queries' dims, then memory_length
    kwargs["bias"] = _bias_in_order(kwargs["bias"],
                                    queries.shape - key_dim + memory_length_dim)
  inner = _attention_with_fused_softmax if fused_softmax else _mesh_tf_attention
  outputs = inner(
      queries, _ordered(k, shared, [memory_length_dim, key_dim]),
      _ordered(v, shared, [memory_length_dim, value_dim]),
      memory_length_dim, key_dim, value_dim, *args, **kwargs)
  return _in_order(outputs, q.shape - key_dim + value_dim)


mtf_attention.attention = attention
