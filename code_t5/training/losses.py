"""The training loss per target token (and per byte), instead of Mesh TF's per slot.

Mesh TF's `Unitransformer._compute_loss` divides the summed cross-entropy by the size of the
batch x length tensor: padding, and for `delimited_lm` models the input half whose loss is masked,
count in the denominator, so the printed "loss" is not a loss per anything a user can compare
across objectives, batches or models (a prefix LM printed 2.6 while its targets cost 6.2-7.2
nats/token teacher-forced). Bound in dataset.gin as every model's loss:

    Unitransformer.loss_fn = @code_t5.loss_per_target_token

it is the same cross-entropy (label smoothing and z-loss included) divided by the number of
tokens the loss is taken on, so `tf_loss`, the TensorBoard `loss`, `logs/train_loss.tsv` and
`loss.png` are nats per target token. It also prints `loss_per_byte[...]` every step (nats per
UTF-8 byte of those targets, comparable across vocabularies). Adafactor scales its updates by the
gradients' running RMS, so the changed constant factor does not change what is learnt.
"""

import re

import gin
import mesh_tensorflow as mtf
from mesh_tensorflow.transformer import transformer as mtf_transformer
import numpy as np
import seqio
import tensorflow.compat.v1 as tf

from code_t5.training import embeddings
from code_t5.training import softmax

# SentencePiece's byte-fallback pieces, "<0x0A>": one byte each.
_BYTE_PIECE = re.compile(r"^<0x[0-9A-F]{2}>$")


def piece_bytes(vocabulary, size: int) -> np.ndarray:
  """UTF-8 bytes each id < `size` of `vocabulary` stands for (0 for padding, EOS, UNK, sentinels
  and the ids Mesh TF pads the vocabulary with)."""
  sizes = np.zeros(size, np.float32)
  tokenizer = getattr(vocabulary, "tokenizer", None)
  for i in range(3, vocabulary.vocab_size - vocabulary.extra_ids):
    if isinstance(vocabulary, seqio.ByteVocabulary) or (
        tokenizer is not None and _BYTE_PIECE.match(tokenizer.id_to_piece(i))):
      sizes[i] = 1
    else:
      sizes[i] = len(vocabulary.decode([i]).encode("utf-8"))
  return sizes


@gin.configurable(module="code_t5")
def loss_per_target_token(unitransformer, context, logits, targets, output_vocab_dim,
                          vocabulary=None, fused=False):
  """Cross-entropy per target token: an `Unitransformer.loss_fn` (see the module docstring).

  `fused`: the cross-entropy as one operation (code_t5/training/softmax.py), where there is no
  label smoothing and the vocabulary is the logits' last dimension; else Mesh TF's.
  """
  z_loss = unitransformer.z_loss if context.train else 0.0
  if (fused and not unitransformer.label_smoothing
      and logits.shape.dims[-1] == output_vocab_dim):
    loss = softmax.softmax_cross_entropy(logits, mtf.maximum(targets, 0), output_vocab_dim,
                                         z_loss=z_loss)
  else:
    off_value = unitransformer.label_smoothing / output_vocab_dim.size
    on_value = 1.0 - unitransformer.label_smoothing + off_value
    soft_targets = mtf.one_hot(mtf.maximum(targets, 0), output_vocab_dim,
                               dtype=context.activation_dtype, on_value=on_value,
                               off_value=off_value)
    loss = mtf.layers.softmax_cross_entropy_with_logits(logits, soft_targets, output_vocab_dim,
                                                        z_loss=z_loss)
  weights = mtf.cast(mtf.greater(targets, 0), context.activation_dtype)
  if unitransformer.loss_on_targets_only:
    weights *= mtf.cast(mtf.logical_not(mtf_transformer.delimited_lm_inputs_mask(targets)),
                        dtype=context.activation_dtype)
  total = mtf.reduce_sum(loss * weights)
  per_token = total / mtf.maximum(mtf.reduce_sum(weights), 1.0)
  if isinstance(vocabulary, tuple):  # Mesh TF's (inputs, targets) vocabularies
    vocabulary = vocabulary[1]
  if vocabulary is not None and context.train:
    table = mtf.import_tf_tensor(
        context.mesh, tf.constant(piece_bytes(vocabulary, output_vocab_dim.size)),
        mtf.Shape([output_vocab_dim]))
    # A gather, not Mesh TF's product with the targets' one-hot vectors (tokens x vocab).
    num_bytes = mtf.reduce_sum(
        embeddings.gather(table, mtf.maximum(targets, 0), output_vocab_dim) * weights)
    # Printed beside Mesh TF's "step, tf_loss[...]" line (Mesh TF writes its own scalar
    # summaries only on TPU); the launcher reads it.
    per_token = mtf.Print(per_token, [total / mtf.maximum(num_bytes, 1.0)], "loss_per_byte",
                          summarize=1)
  return per_token
