"""Softmax and softmax cross-entropy as single Mesh TF operations, for CPU training (runs/cpu.gin).

Mesh TF builds both out of element-wise operations: `mtf.softmax` is exp(x - logsumexp(x)), two
exponentials and seven more passes over the tensor, and the cross-entropy multiplies the
log-softmax by one-hot targets and sums; each backward pass is a chain as long, with broadcasts
lowered as additions to zeros. On CPU those passes are bound by memory, and the tensors are the
step's largest: the attention weights (batch x heads x length x memory_length, 32 MB per layer
for the causal LM mini) and the logits over the 8k code vocabulary (4,096 x 8,192 floats, 134
MB). A traced step of that model spent a quarter of its ops' time in them (docs/speed.md).

`softmax` below is TensorFlow's softmax kernel on each slice, and its gradient
y * (dy - sum(dy * y)). `softmax_cross_entropy` keeps exp(x - max) and its sum from the forward
pass and writes the gradient from them in one product, subtracting the target's one-hot entry
in place: fewer passes, the same function (z-loss included); only hard targets (no label
smoothing). Both work on any layout: where the reduced dimension (memory_length, vocab) is split
over a mesh axis, the maximum and the sum are all-reduced over it, and each slice finds the
targets in the part of the vocabulary it holds (tests/softmax_test.py, tests/meshes_test.py).
`code_t5.attention.fused_softmax` and `code_t5.loss_per_target_token.fused` switch them on.
"""

import mesh_tensorflow as mtf
import tensorflow.compat.v1 as tf

from code_t5.training import embeddings


def _max_and_sum_of_exp(mesh_impl, x, axis, mesh_axis):
  """Per slice: the maximum over `axis` (kept as a size-1 axis), exp(x - maximum) and its sum,
  the maximum and the sum all-reduced over `mesh_axis` where that axis splits `axis`."""
  peak = mesh_impl.slicewise(lambda t: tf.reduce_max(t, axis, keepdims=True), x)
  if mesh_axis is not None:
    peak = mesh_impl.allreduce(peak, [mesh_axis], "MAX")
  exp = mesh_impl.slicewise(lambda t, m: tf.exp(t - m), x, peak)
  total = mesh_impl.slicewise(lambda e: tf.reduce_sum(e, axis, keepdims=True), exp)
  if mesh_axis is not None:
    total = mesh_impl.allreduce(total, [mesh_axis], "SUM")
  return peak, exp, total


class _SoftmaxOperation(mtf.Operation):
  """softmax(x) over `reduced_dim`."""

  def __init__(self, x, reduced_dim, name=None):
    super().__init__([x], name=name or "fused_softmax")
    self._reduced_dim = reduced_dim
    self._outputs = [mtf.Tensor(self, x.shape, x.dtype)]

  def gradient(self, grad_ys):
    y, dy = self.outputs[0], grad_ys[0]
    return [y * (dy - mtf.reduce_sum(dy * y, reduced_dim=self._reduced_dim))]

  def lower(self, lowering):
    mesh_impl = lowering.mesh_impl(self)
    x = self.inputs[0]
    axis = x.shape.dims.index(self._reduced_dim)
    mesh_axis = mesh_impl.tensor_dimension_to_mesh_axis(self._reduced_dim)
    if mesh_axis is None:
      y = mesh_impl.slicewise(lambda t: tf.nn.softmax(t, axis=axis), lowering.tensors[x])
    else:
      _, exp, total = _max_and_sum_of_exp(mesh_impl, lowering.tensors[x], axis, mesh_axis)
      y = mesh_impl.slicewise(tf.divide, exp, total)
    lowering.set_tensor_lowering(self.outputs[0], y)


def softmax(x: mtf.Tensor, reduced_dim: mtf.Dimension) -> mtf.Tensor:
  """`mtf.softmax(x, reduced_dim)` as one operation (no extra logit)."""
  return _SoftmaxOperation(x, reduced_dim).outputs[0]


class _CrossEntropyOperation(mtf.Operation):
  """Per position: logsumexp(logits) - logits[target] + z_loss * logsumexp(logits)^2.

  Its other outputs, exp(logits - max) and the scale (1 + 2 z_loss logsumexp) / sum(exp), are
  the gradient's: d loss / d logits = exp * scale - one_hot(target).
  """

  def __init__(self, logits, targets, vocab_dim, z_loss, name=None):
    if logits.shape.dims[-1] != vocab_dim:
      raise ValueError(f"fused softmax cross-entropy: {vocab_dim.name} must be the logits' last "
                       f"dimension, not in {logits.shape}")
    super().__init__([logits, targets], name=name or "fused_softmax_cross_entropy")
    self._vocab_dim = vocab_dim
    self._z_loss = z_loss
    position_shape = logits.shape - vocab_dim
    self._outputs = [mtf.Tensor(self, position_shape, logits.dtype),
                     mtf.Tensor(self, logits.shape, logits.dtype),
                     mtf.Tensor(self, position_shape, logits.dtype)]

  def gradient(self, grad_ys):
    targets = self.inputs[1]
    _, exp, scale = self.outputs
    return [_CrossEntropyGradOperation(grad_ys[0], exp, scale, targets,
                                       self._vocab_dim).outputs[0], None]

  def lower(self, lowering):
    mesh_impl = lowering.mesh_impl(self)
    logits, targets = self.inputs
    axis = logits.shape.ndims - 1  # the vocabulary (__init__ checks)
    mesh_axis = mesh_impl.tensor_dimension_to_mesh_axis(self._vocab_dim)
    rows = mesh_impl.slice_shape(logits.shape)[axis]
    peak, exp, total = _max_and_sum_of_exp(mesh_impl, lowering.tensors[logits], axis, mesh_axis)

    def target_logit(logits_slice, targets_slice, offset):
      local, inside = embeddings.local_ids(targets_slice, offset, rows)
      found = tf.gather(logits_slice, local[..., tf.newaxis], batch_dims=targets.shape.ndims)
      return found[..., 0] * tf.cast(inside, found.dtype)

    chosen = mesh_impl.slicewise(target_logit, lowering.tensors[logits],
                                 lowering.tensors[targets],
                                 embeddings.vocab_offset(mesh_impl, mesh_axis, rows))
    if mesh_axis is not None:
      chosen = mesh_impl.allreduce(chosen, [mesh_axis], "SUM")

    def loss_and_scale(peak_slice, total_slice, chosen_slice):
      log_z = tf.math.log(total_slice[..., 0]) + peak_slice[..., 0]
      loss = log_z - chosen_slice + self._z_loss * tf.square(log_z)
      return loss, (1.0 + 2.0 * self._z_loss * log_z) / total_slice[..., 0]

    loss, scale = mesh_impl.slicewise(loss_and_scale, peak, total, chosen)
    for output, lowered in zip(self.outputs, (loss, exp, scale)):
      lowering.set_tensor_lowering(output, lowered)


# InplaceSub indexes the entries it changes with int32: a slice of the logits' gradient with more
# entries takes the scatter, which copies it.
INPLACE_MAX_ENTRIES = 2**31 - 1


def _subtract_at_targets(g, local, update, rows):
  """g ([..., rows]) less update[p] at each position p's entry local[p]. TensorFlow's scatter copies
  the whole of g first (11 ms of the causal LM mini's step for its 134 MB, on the AVX-512 kind,
  when nothing else runs: docs/speed.md); InplaceSub changes g's own buffer, which nothing else
  reads: g is this function's product, made for it."""
  entries = g.shape.num_elements()
  if entries is not None and entries <= INPLACE_MAX_ENTRIES:
    positions = tf.range(entries // rows, dtype=local.dtype)
    flat = tf.raw_ops.InplaceSub(x=tf.reshape(g, [-1]), i=positions * rows + local, v=update)
    return tf.reshape(flat, g.shape)
  flat = tf.reshape(g, [-1, rows])
  positions = tf.range(tf.shape(flat)[0], dtype=local.dtype)
  flat = tf.tensor_scatter_nd_sub(flat, tf.stack([positions, local], axis=1), update)
  return tf.reshape(flat, tf.shape(g))


class _CrossEntropyGradOperation(mtf.Operation):
  """d loss / d logits = dy * (exp * scale - one_hot(target)): one product, then the targets'
  entries subtracted in place."""

  def __init__(self, dy, exp, scale, targets, vocab_dim, name=None):
    super().__init__([dy, exp, scale, targets], name=name or "fused_softmax_cross_entropy_grad")
    self._vocab_dim = vocab_dim
    self._outputs = [mtf.Tensor(self, exp.shape, exp.dtype)]

  @property
  def has_gradient(self):
    return False

  def lower(self, lowering):
    mesh_impl = lowering.mesh_impl(self)
    dy, exp, scale, targets = self.inputs
    mesh_axis = mesh_impl.tensor_dimension_to_mesh_axis(self._vocab_dim)
    rows = mesh_impl.slice_shape(exp.shape)[-1]

    def grad(dy_slice, exp_slice, scale_slice, targets_slice, offset):
      g = exp_slice * (dy_slice * scale_slice)[..., tf.newaxis]
      local, inside = embeddings.local_ids(targets_slice, offset, rows)
      update = tf.reshape(dy_slice * tf.cast(inside, dy_slice.dtype), [-1])
      return _subtract_at_targets(g, tf.reshape(local, [-1]), update, rows)

    y = mesh_impl.slicewise(grad, *(lowering.tensors[t] for t in (dy, exp, scale, targets)),
                            embeddings.vocab_offset(mesh_impl, mesh_axis, rows))
    lowering.set_tensor_lowering(self.outputs[0], y)


def softmax_cross_entropy(logits: mtf.Tensor, targets: mtf.Tensor, vocab_dim: mtf.Dimension,
                          z_loss: float = 0.0) -> mtf.Tensor:
  """`mtf.layers.softmax_cross_entropy_with_logits` with hard (integer) targets, as one
  operation; `vocab_dim` must be the logits' last dimension."""
  if targets.shape != logits.shape - vocab_dim:
    targets = mtf.transpose(targets, logits.shape - vocab_dim)
  return _CrossEntropyOperation(logits, targets, vocab_dim, z_loss).outputs[0]
