"""Preprocessors for code: restore what t5's objectives drop and Mesh TF eval needs."""

import seqio
import tensorflow.compat.v2 as tf


def add_pretokenized(dataset: tf.data.Dataset, output_features) -> tf.data.Dataset:
  """Adds `<key>_pretokenized` (the decoded text) for every token feature of an example.

  t5's objectives (prefix_lm, span_corruption) build new inputs/targets from a chunk of the file
  and drop the `*_pretokenized` strings; Mesh TF eval reads `targets_pretokenized` for its
  reference texts (without it: "min() arg is an empty sequence"). Decoding the final tokens gives
  exactly the text the model is trained to produce, whitespace included.
  """

  @seqio.map_over_dataset
  def add(example):
    example = dict(example)
    for key, feature in output_features.items():
      if key in example:
        example[f"{key}_pretokenized"] = feature.vocabulary.decode_tf(example[key])
    return example

  return add(dataset)
