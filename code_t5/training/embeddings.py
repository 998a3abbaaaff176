"""A vocabulary embedding whose lookup is a gather, for Mesh TF on CPU (runs/cpu.gin).

Mesh TF looks token ids up in the embedding as a matrix product with their one-hot vectors
(`mtf.gather` is `einsum([one_hot(ids, vocab), weights])`), and differentiates that product for
both operands: with the 8k code vocabulary that is 3 x tokens x 8,192 x d_model multiply-adds
per step that do no work -- a quarter of Mesh TF's einsum count for the causal LM of docs/training.md
-- besides materialising the tokens x 8,192 one-hot matrix.
`GatherVocabEmbedding` keeps Mesh TF's embedding (same variable, same logits through it) and
replaces only the lookup: `tf.gather` forward, a segment sum of the output gradient backward.

Any layout works: where the vocabulary dimension is split over a mesh axis (model parallel,
`vocab:model`), each device gathers the rows it holds (the others give zeros) and the result is
summed over that axis, as Mesh TF's one-hot product would be; the weights' gradient is summed
over the mesh axes that split the ids (data parallel), as the product's reduction would be.
tests/meshes_test.py checks both against the one-device run, and Mesh TF's one-hot lookup
against this one.

    import code_t5.training.embeddings
    mesh_tensorflow.transformer.transformer.get_vocab_embedding_cls.cls = \\
        @code_t5.GatherVocabEmbedding
"""

import gin
import mesh_tensorflow as mtf
from mesh_tensorflow.transformer import transformer
import tensorflow.compat.v1 as tf

# Mesh TF's own lookup, named for gin so that a run can go back to it (tests/meshes_test.py).
gin.external_configurable(transformer.VocabEmbedding, "OneHotVocabEmbedding", module="code_t5")


def vocab_offset(mesh_impl, vocab_axis, rows):
  """Per device: the first vocabulary row its slice holds (0 where the vocabulary is whole)."""
  if vocab_axis is None:
    return 0
  return mesh_impl.slicewise(tf.multiply, mesh_impl.laid_out_pcoord(vocab_axis), rows)


def local_ids(ids, offset, rows):
  """The ids as rows of this device's slice, and where they fall inside it."""
  local = ids - offset
  inside = tf.logical_and(local >= 0, local < rows)
  return tf.where(inside, local, tf.zeros_like(local)), inside


class _GatherOperation(mtf.Operation):
  """weights [vocab, d] at ids [...] -> [..., d] (or weights [vocab] -> [...])."""

  def __init__(self, weights, ids, vocab_dim, name=None):
    super().__init__([weights, ids], name=name or "embedding_gather")
    self._vocab_dim = vocab_dim
    model_dims = [d for d in weights.shape.dims if d != vocab_dim]
    self._outputs = [mtf.Tensor(self, mtf.Shape(ids.shape.dims + model_dims), weights.dtype)]
    self._splittable_dims, self._unsplittable_dims = (
        self._initialize_all_dimensions_as_splittable())

  def gradient(self, grad_ys):
    weights, ids = self.inputs
    return [_ScatterAddOperation(grad_ys[0], ids, weights.shape, self._vocab_dim).outputs[0],
            None]

  def lower(self, lowering):
    mesh_impl = lowering.mesh_impl(self)
    weights, ids = self.inputs
    vocab_axis = mesh_impl.tensor_dimension_to_mesh_axis(self._vocab_dim)
    rows = mesh_impl.slice_shape(weights.shape)[0]

    def gather(weights_slice, ids_slice, offset):
      local, inside = local_ids(ids_slice, offset, rows)
      found = tf.gather(weights_slice, local)
      inside = tf.cast(inside, found.dtype)
      return found * (inside[..., tf.newaxis] if weights.shape.ndims > 1 else inside)

    y = mesh_impl.slicewise(gather, lowering.tensors[weights], lowering.tensors[ids],
                            vocab_offset(mesh_impl, vocab_axis, rows))
    if vocab_axis is not None:
      y = mesh_impl.allreduce(y, [vocab_axis], "SUM")
    lowering.set_tensor_lowering(self.outputs[0], y)


class _ScatterAddOperation(mtf.Operation):
  """The gradient of _GatherOperation for its weights: dy [..., d] summed into rows [vocab, d]."""

  def __init__(self, dy, ids, weights_shape, vocab_dim, name=None):
    super().__init__([dy, ids], name=name or "embedding_scatter_add")
    self._vocab_dim = vocab_dim
    self._outputs = [mtf.Tensor(self, weights_shape, dy.dtype)]
    self._splittable_dims, self._unsplittable_dims = (
        self._initialize_all_dimensions_as_splittable())

  @property
  def has_gradient(self):
    return False

  def lower(self, lowering):
    mesh_impl = lowering.mesh_impl(self)
    dy, ids = self.inputs
    vocab_axis = mesh_impl.tensor_dimension_to_mesh_axis(self._vocab_dim)
    rows, width = mesh_impl.slice_shape(self.outputs[0].shape)

    def scatter_add(dy_slice, ids_slice, offset):
      local, inside = local_ids(ids_slice, offset, rows)
      dy_slice *= tf.cast(inside, dy_slice.dtype)[..., tf.newaxis]
      return tf.math.unsorted_segment_sum(tf.reshape(dy_slice, [-1, width]),
                                          tf.reshape(local, [-1]), rows)

    y = mesh_impl.slicewise(scatter_add, lowering.tensors[dy], lowering.tensors[ids],
                            vocab_offset(mesh_impl, vocab_axis, rows))
    # The ids' dimensions are reduced: sum over the mesh axes that split them (data parallel).
    split = [a for a in (mesh_impl.tensor_dimension_to_mesh_axis(d) for d in ids.shape.dims)
             if a is not None]
    if split:
      y = mesh_impl.allreduce(y, split, "SUM")
    lowering.set_tensor_lowering(self.outputs[0], y)


def gather(weights: mtf.Tensor, ids: mtf.Tensor, vocab_dim: mtf.Dimension) -> mtf.Tensor:
  """`mtf.gather(weights, ids, vocab_dim)` as a gather, for weights [vocab, d] or [vocab]."""
  return _GatherOperation(weights, ids, vocab_dim).outputs[0]


@gin.configurable(module="code_t5")
class GatherVocabEmbedding(transformer.VocabEmbedding):
  """Mesh TF's VocabEmbedding, looking ids up with a gather instead of a one-hot product."""

  def ids_to_embedding(self, ids, context):
    weights = self._embedding_weights
    if weights.shape.dims != [self._vocab_dim, self._output_dim]:
      return super().ids_to_embedding(ids, context)  # an ensemble: Mesh TF's own lookup
    ret = gather(weights, ids, self._vocab_dim)
    if self._scale_variable_like_classifier_weights:
      ret *= self._output_dim.size ** 0.5
    return ret
