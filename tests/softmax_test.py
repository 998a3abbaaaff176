"""code_t5/training/softmax.py: the fused softmax and softmax cross-entropy give Mesh TF's values
and gradients, on one device and on meshes that split the reduced dimension or the batch; the
loss function uses the fused cross-entropy only where it computes the same thing.
"""

import types

import mesh_tensorflow as mtf
import numpy as np
import pytest
import tensorflow.compat.v1 as tf

from code_t5 import test_utils
from code_t5.training import losses
from code_t5.training import softmax

BATCH, LENGTH, VOCAB = 2, 3, 8
LAYOUTS = {  # mesh shape: layout rules
    "one device": ("model:1,batch:1", "vocab:model,batch:batch"),
    "vocab split": ("model:2,batch:1", "vocab:model,batch:batch"),
    "batch split": ("model:1,batch:2", "vocab:model,batch:batch"),
}
DIMS = {"batch": mtf.Dimension("batch", BATCH), "length": mtf.Dimension("length", LENGTH),
        "vocab": mtf.Dimension("vocab", VOCAB)}


def _inputs(seed=0):
  rng = np.random.default_rng(seed)
  batch, length, vocab = DIMS["batch"], DIMS["length"], DIMS["vocab"]
  targets = rng.integers(0, VOCAB, (BATCH, LENGTH)).astype(np.int32)
  targets[0, 0], targets[1, 2] = 0, VOCAB - 1  # the first and last ids: both ends of a slice
  return {"logits": (rng.normal(size=(BATCH, LENGTH, VOCAB)).astype(np.float32) * 3,
                     [batch, length, vocab]),
          "targets": (targets, [batch, length]),
          "dy": (rng.normal(size=(BATCH, LENGTH)).astype(np.float32), [batch, length]),
          "dx": (rng.normal(size=(BATCH, LENGTH, VOCAB)).astype(np.float32),
                 [batch, length, vocab])}


def _cross_entropy(layout, fused, z_loss):
  """(loss per position, its gradient for the logits under dy) and the lowered tf.Graph."""
  vocab = DIMS["vocab"]

  def build(logits, targets, dy, dx):  # pylint: disable=unused-argument
    if fused:
      loss = softmax.softmax_cross_entropy(logits, targets, vocab, z_loss=z_loss)
    else:
      loss = mtf.layers.softmax_cross_entropy_with_logits(logits, targets, vocab, z_loss=z_loss)
    return [loss, *mtf.gradients([loss], [logits], [dy])]

  return test_utils.run_on_mesh(*LAYOUTS[layout], build, _inputs())


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("z_loss", [0.0, 1e-4, 0.1])
def test_fused_cross_entropy_gives_mesh_tfs_loss_and_gradient(layout, z_loss):
  (loss, grad), graph = _cross_entropy(layout, True, z_loss)
  (expected_loss, expected_grad), _ = _cross_entropy(layout, False, z_loss)
  np.testing.assert_allclose(loss, expected_loss, rtol=1e-6, atol=1e-6)
  np.testing.assert_allclose(grad, expected_grad, rtol=1e-5, atol=1e-6)
  # And Mesh TF's is the cross-entropy: log-sum-exp minus the target's logit (+ z-loss).
  values = _inputs()
  logits, targets = values["logits"][0], values["targets"][0]
  log_z = np.log(np.exp(logits).sum(-1))
  target_logit = np.take_along_axis(logits, targets[..., None], -1)[..., 0]
  np.testing.assert_allclose(loss, log_z - target_logit + z_loss * log_z ** 2, rtol=1e-5)
  # No batch x length x vocab one-hot matrix is made, and the gradient is not copied to take the
  # targets' entries: they are gathered, and subtracted in the gradient's own buffer.
  ops = {op.type for op in graph.get_operations()}
  assert "OneHot" not in ops and "TensorScatterSub" not in ops and "InplaceSub" in ops


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_target_far_below_the_best_logit_keeps_an_exact_loss(layout):
  # The loss comes from the row's maximum and sum, never from the target's probability, which
  # underflows to 0 for a target 200 below the row's best logit: the loss is still ~200, exact.
  vocab = DIMS["vocab"]
  values = _inputs()
  values["logits"][0][0, 0, 0] = -200.0  # targets[0, 0] is 0
  values["logits"][0][1, 2, -1] = 120.0 + values["logits"][0][1, 2].max()  # a sure target

  def build(logits, targets, dy, dx):  # pylint: disable=unused-argument
    loss = softmax.softmax_cross_entropy(logits, targets, vocab, z_loss=1e-4)
    return [loss, *mtf.gradients([loss], [logits], [dy])]

  (loss, grad), _ = test_utils.run_on_mesh(*LAYOUTS[layout], build, values)
  logits, targets = values["logits"][0].astype(np.float64), values["targets"][0]
  peak = logits.max(-1)
  log_z = peak + np.log(np.exp(logits - peak[..., None]).sum(-1))
  target_logit = np.take_along_axis(logits, targets[..., None], -1)[..., 0]
  np.testing.assert_allclose(loss, log_z - target_logit + 1e-4 * log_z ** 2, rtol=1e-6)
  assert loss[0, 0] > 200 and np.isfinite(grad).all()


@pytest.mark.parametrize("layout", ["one device", "vocab split"])
def test_a_gradient_too_large_to_change_in_place_is_scattered_the_same(layout, monkeypatch):
  # InplaceSub numbers the entries it changes with int32: past 2**31 - 1 entries (a slice of
  # 2,048 x 1,048,576 logits) the targets' entries are scattered into a copy instead.
  (_, grad), _ = _cross_entropy(layout, True, 1e-4)
  monkeypatch.setattr(softmax, "INPLACE_MAX_ENTRIES", 0)
  (_, scattered), graph = _cross_entropy(layout, True, 1e-4)
  np.testing.assert_array_equal(scattered, grad)
  ops = {op.type for op in graph.get_operations()}
  assert "TensorScatterSub" in ops and "InplaceSub" not in ops


def _softmax(layout, fused, reduced="vocab"):
  """(softmax over `reduced`, its gradient under dx)."""

  def build(logits, targets, dy, dx):  # pylint: disable=unused-argument
    dim = DIMS[reduced]
    y = softmax.softmax(logits, dim) if fused else mtf.softmax(logits, dim)
    return [y, *mtf.gradients([y], [logits], [dx])]

  return test_utils.run_on_mesh(*LAYOUTS[layout], build, _inputs(seed=1))[0]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("reduced", ["vocab", "length"])
def test_fused_softmax_gives_mesh_tfs_softmax_and_gradient(layout, reduced):
  (y, grad), (expected_y, expected_grad) = _softmax(layout, True, reduced), _softmax(
      layout, False, reduced)
  np.testing.assert_allclose(y, expected_y, rtol=1e-6, atol=1e-7)
  np.testing.assert_allclose(grad, expected_grad, rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(y.sum(axis=2 if reduced == "vocab" else 1), 1.0, rtol=1e-6)


def _loss_per_target_token(fused, label_smoothing):
  """`losses.loss_per_target_token` as a Unitransformer calls it while training."""

  def build(logits, targets, dy, dx):  # pylint: disable=unused-argument
    unitransformer = types.SimpleNamespace(label_smoothing=label_smoothing, z_loss=1e-4,
                                           loss_on_targets_only=False)
    context = types.SimpleNamespace(train=True, activation_dtype=tf.float32, mesh=logits.mesh)
    loss = losses.loss_per_target_token(unitransformer, context, logits, targets,
                                        DIMS["vocab"], fused=fused)
    return [loss, *mtf.gradients([loss], [logits])]

  return test_utils.run_on_mesh(*LAYOUTS["one device"], build, _inputs())


@pytest.mark.parametrize("label_smoothing", [0.0, 0.1])
def test_the_loss_is_the_same_fused_or_not(label_smoothing):
  """With label smoothing (soft targets) the loss is Mesh TF's cross-entropy either way."""
  (loss, grad), graph = _loss_per_target_token(True, label_smoothing)
  (expected_loss, expected_grad), _ = _loss_per_target_token(False, label_smoothing)
  np.testing.assert_allclose(loss, expected_loss, rtol=1e-6)
  np.testing.assert_allclose(grad, expected_grad, rtol=1e-5, atol=1e-7)
  assert ("OneHot" in {op.type for op in graph.get_operations()}) == bool(label_smoothing)


def test_fused_cross_entropy_needs_the_vocabulary_last():
  """The loss function checks this before choosing it; a direct call is told at graph build."""
  batch, length, vocab = DIMS["batch"], DIMS["length"], DIMS["vocab"]

  def build(logits, targets, dy, dx):  # pylint: disable=unused-argument
    return [softmax.softmax_cross_entropy(logits, targets, vocab)]

  values = _inputs()
  values["logits"] = (values["logits"][0].transpose(0, 2, 1), [batch, vocab, length])
  with pytest.raises(ValueError, match="vocab must be the logits' last dimension"):
    test_utils.run_on_mesh(*LAYOUTS["one device"], build, values)
