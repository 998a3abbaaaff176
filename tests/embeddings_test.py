"""code_t5/training/embeddings.py: the gather lookup gives Mesh TF's one-hot lookup's embeddings and
gradients, on one device and on meshes that split the vocabulary or the batch."""

import mesh_tensorflow as mtf
import numpy as np
import pytest

from code_t5 import test_utils
from code_t5.training import embeddings

VOCAB, D_MODEL, BATCH, LENGTH = 10, 4, 4, 3
LAYOUTS = {  # mesh shape: layout rules
    "one device": ("model:1,batch:1", "vocab:model,batch:batch"),
    "vocabulary split": ("model:2,batch:1", "vocab:model,batch:batch"),
    "batch split": ("model:1,batch:2", "vocab:model,batch:batch"),
    "both split": ("model:2,batch:2", "vocab:model,batch:batch"),
}


def _lookup_and_gradient(layout, lookup, weights_value, ids_value, dy_value):
  vocab_dim, d_model = mtf.Dimension("vocab", VOCAB), mtf.Dimension("d_model", D_MODEL)
  batch, length = mtf.Dimension("batch", BATCH), mtf.Dimension("length", LENGTH)

  def build(weights, ids, dy):
    out = lookup(weights, ids, vocab_dim)
    return [out, *mtf.gradients([out], [weights], [dy])]

  values, _ = test_utils.run_on_mesh(*LAYOUTS[layout], build, {
      "weights": (weights_value, [vocab_dim, d_model]), "ids": (ids_value, [batch, length]),
      "dy": (dy_value, [batch, length, d_model])})
  return values


@pytest.mark.parametrize("layout", LAYOUTS)
def test_gather_gives_the_one_hot_lookups_embeddings_and_gradients(layout):
  rng = np.random.default_rng(0)
  weights = rng.normal(size=(VOCAB, D_MODEL)).astype(np.float32)
  ids = rng.integers(0, VOCAB, size=(BATCH, LENGTH)).astype(np.int32)
  ids[0, :] = 7  # a row looked up several times: its gradient is a sum
  dy = rng.normal(size=(BATCH, LENGTH, D_MODEL)).astype(np.float32)
  out, grad = _lookup_and_gradient(layout, embeddings.gather, weights, ids, dy)
  np.testing.assert_array_equal(out, weights[ids])
  expected_out, expected_grad = _lookup_and_gradient(layout, mtf.gather, weights, ids, dy)
  np.testing.assert_allclose(out, expected_out, rtol=1e-6, atol=1e-6)
  np.testing.assert_allclose(grad, expected_grad, rtol=1e-5, atol=1e-6)
  assert np.abs(grad[7]).sum() > 0 and not np.any(grad[np.setdiff1d(np.arange(VOCAB), ids)])


@pytest.mark.parametrize("layout", LAYOUTS)
def test_gather_from_a_table_of_one_value_per_id(layout):
  """As the loss's bytes per piece are looked up (code_t5/training/losses.py)."""
  vocab_dim = mtf.Dimension("vocab", VOCAB)
  batch, length = mtf.Dimension("batch", BATCH), mtf.Dimension("length", LENGTH)
  table = np.arange(VOCAB, dtype=np.float32) * 1.5
  ids = np.random.default_rng(1).integers(0, VOCAB, size=(BATCH, LENGTH)).astype(np.int32)
  inputs = {"t": (table, [vocab_dim]), "i": (ids, [batch, length])}
  for lookup in (embeddings.gather, mtf.gather):
    (out,), _ = test_utils.run_on_mesh(
        *LAYOUTS[layout], lambda t, i, lookup=lookup: [lookup(t, i, vocab_dim)], inputs)
    np.testing.assert_array_equal(out, table[ids])
