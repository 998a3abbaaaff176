"""code_t5/training/attention.py: heads-first attention gives Mesh TF's attention outputs and
gradients, on one device and on meshes that split the heads or the batch, and makes its einsums
batch matmuls; a bias summed as Mesh TF's layers sum it (masks, then the relative-position bias
over heads) is added without transposing it.
"""

import types

import mesh_tensorflow as mtf
from mesh_tensorflow.transformer import attention as mtf_attention
import numpy as np
import pytest

from code_t5 import test_utils
from code_t5.training import attention

BATCH, LENGTH, MEMORY, HEADS, D_KV = 2, 5, 7, 4, 3
LAYOUTS = {  # mesh shape: layout rules
    "one device": ("model:1,batch:1", "heads:model,batch:batch"),
    "heads split": ("model:2,batch:1", "heads:model,batch:batch"),
    "batch split": ("model:1,batch:2", "heads:model,batch:batch"),
}


# What Mesh TF's attention reads of a transformer.Context: no dropout, no 2-D sharding.
CONTEXT = types.SimpleNamespace(train=False, model=types.SimpleNamespace(layout=None,
                                                                         mesh_shape=None))


def _attention_and_gradients(layout, heads_first, values):
  """(outputs, dq, dk, dv[, d relative], the lowered tf.Graph) of q, k, v in Mesh TF's order.

  values["bias"] is a [length, memory_length] bias; or values["mask"] ([batch, length,
  memory_length]) and values["relative"] ([heads, length, memory_length]) are summed into one as
  Mesh TF's `SelfAttention.compute_bias` sums them (mtf.add_n: the masks first), and the
  gradient of the relative-position bias is returned too.
  """
  batch, length = mtf.Dimension("batch", BATCH), mtf.Dimension("length", LENGTH)
  memory, heads = mtf.Dimension("memory_length", MEMORY), mtf.Dimension("heads", HEADS)
  d_kv = mtf.Dimension("d_kv", D_KV)
  dims = {"q": [batch, length, heads, d_kv], "k": [batch, memory, heads, d_kv],
          "v": [batch, memory, heads, d_kv], "bias": [length, memory],
          "mask": [batch, length, memory], "relative": [heads, length, memory],
          "dy": [batch, length, heads, d_kv]}

  def build(q, k, v, dy, bias=None, mask=None, relative=None):
    if relative is not None:
      bias = mtf.add_n([mask, relative])
    out = attention.attention(q, k, v, memory, d_kv, d_kv, bias=bias, context=CONTEXT,
                              heads_first=heads_first)
    wrt = [q, k, v] + ([] if relative is None else [relative])
    return [out, *mtf.gradients([out], wrt, [dy])]

  results, tf_graph = test_utils.run_on_mesh(*LAYOUTS[layout], build, {
      name: (value, dims[name]) for name, value in values.items()})
  return (*results, tf_graph)


def _equations(tf_graph):
  return [op.get_attr("equation").decode() for op in tf_graph.get_operations()
          if op.type == "Einsum"]


def _values(bias=("bias",)):
  rng = np.random.default_rng(0)
  shapes = {"q": (BATCH, LENGTH, HEADS, D_KV), "k": (BATCH, MEMORY, HEADS, D_KV),
            "v": (BATCH, MEMORY, HEADS, D_KV), "bias": (LENGTH, MEMORY),
            "mask": (BATCH, LENGTH, MEMORY), "relative": (HEADS, LENGTH, MEMORY),
            "dy": (BATCH, LENGTH, HEADS, D_KV)}
  return {name: rng.normal(size=shape).astype(np.float32) for name, shape in shapes.items()
          if name in ("q", "k", "v", "dy") + bias}


def _numpy_attention(values, bias):
  """softmax(q.k + bias) . v per batch row and head; bias broadcasts to [batch, heads, length,
  memory_length]."""
  logits = np.einsum("blhd,bmhd->bhlm", values["q"], values["k"]) + bias
  weights = np.exp(logits - logits.max(-1, keepdims=True))
  weights /= weights.sum(-1, keepdims=True)
  return np.einsum("bhlm,bmhd->blhd", weights, values["v"])


@pytest.mark.parametrize("layout", LAYOUTS)
def test_heads_first_gives_mesh_tfs_attention_and_gradients(layout):
  values = _values()
  *got, _ = _attention_and_gradients(layout, True, values)
  *expected, _ = _attention_and_gradients(layout, False, values)
  for name, g, e in zip(("outputs", "dq", "dk", "dv"), got, expected):
    assert g.shape == e.shape, name
    np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6, err_msg=name)
  # And Mesh TF's is attention itself: softmax(q.k + bias) . v, per batch row and head.
  np.testing.assert_allclose(got[0], _numpy_attention(values, values["bias"]), rtol=1e-5,
                             atol=1e-6)


def _is_batch_matmul(equation):
  """Whether an einsum is a batch matmul with no transposes: the shared leading letters, then
  one matrix product of the last two (either operand transposed, as BatchMatMul's adjoints)."""
  inputs, output = equation.split("->")
  a, b = inputs.split(",")
  batch = output[:-2]
  if not (a.startswith(batch) and b.startswith(batch)) or len(a) != len(b) or len(a) != len(output):
    return False
  contracted = set(a) & set(b) - set(output)
  return len(contracted) == 1 and set(a[-2:]) | set(b[-2:]) == set(output[-2:]) | contracted


def test_heads_first_attention_einsums_are_batch_matmuls():
  *_, heads_first = _attention_and_gradients("one device", True, _values())
  *_, mesh_tf = _attention_and_gradients("one device", False, _values())
  heads_first, mesh_tf = _equations(heads_first), _equations(mesh_tf)
  two_operand = [e for e in heads_first if "," in e]
  assert len(two_operand) == 6, heads_first  # q.k, weights.v and their four gradients
  assert all(_is_batch_matmul(e) for e in two_operand), heads_first
  assert not any(_is_batch_matmul(e) for e in mesh_tf if "," in e), mesh_tf


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_bias_with_heads_gives_mesh_tfs_attention_and_gradients(layout):
  values = _values(bias=("mask", "relative"))
  *got, _ = _attention_and_gradients(layout, True, values)
  *expected, _ = _attention_and_gradients(layout, False, values)
  for name, g, e in zip(("outputs", "dq", "dk", "dv", "d relative"), got, expected):
    assert g.shape == e.shape, name
    np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5, err_msg=name)
  bias = values["mask"][:, None] + values["relative"][None]  # [batch, heads, length, memory]
  np.testing.assert_allclose(got[0], _numpy_attention(values, bias), rtol=1e-5, atol=1e-6)


def _transposed_sizes(tf_graph):
  return [op.inputs[0].shape.num_elements() for op in tf_graph.get_operations()
          if op.type == "Transpose"]


def test_a_bias_with_heads_is_summed_in_the_logits_order_not_transposed():
  # Mesh TF's sum lists heads last ([batch, length, memory_length, heads]); heads-first logits
  # are [batch, heads, length, memory_length]. Nothing of the logits' size is transposed, forward
  # or backward (q, k, v and their gradients, smaller, still are).
  logits_size = BATCH * HEADS * LENGTH * MEMORY
  *_, heads_first = _attention_and_gradients("one device", True, _values(("mask", "relative")))
  *_, mesh_tf = _attention_and_gradients("one device", False, _values(("mask", "relative")))
  assert logits_size not in _transposed_sizes(heads_first), _transposed_sizes(heads_first)
  assert logits_size in _transposed_sizes(mesh_tf)  # Mesh TF's own layout transposes it


def test_it_replaces_mesh_tfs_attention_where_the_layers_look_it_up():
  assert mtf_attention.attention is attention.attention
