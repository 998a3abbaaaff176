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


def completion_lm(dataset: tf.data.Dataset, sequence_length, output_features) -> tf.data.Dataset:
  """Prefix LM at random cursors: the code before a cursor -> the code after it, both full length.

  Per file of n tokens, ceil(n / (L_in + L_t)) cursors are drawn uniformly between tokens (seeded
  per example, as t5's objectives are); each gives inputs = up to L_in - 1 tokens before the
  cursor (cut on the LEFT: the code nearest the cursor) and targets = up to L_t - 1 tokens after
  it (EOS takes the last slot of each). This is the situation line completion is judged in
  (line_completion.py: the context is the code before the cursor, left-truncated), and, unlike
  t5's prefix_lm — one L_in-token chunk cut at a random point, so inputs + targets fill half of
  the L_in + L_t slots — both sides are full except within L tokens of a file's start or end:
  training batches are nearly all real tokens (benchmarks/input_pipeline_benchmark.py).
  """
  inputs_length = sequence_length["inputs"] - int(output_features["inputs"].add_eos)
  targets_length = sequence_length["targets"] - int(output_features["targets"].add_eos)
  window = inputs_length + targets_length

  @seqio.map_over_dataset(num_seeds=1)
  def draw_cursors(example, seed):
    tokens = example["targets"]
    count = (tf.size(tokens) + window - 1) // window
    cursors = tf.random.stateless_uniform([count], seed=seed, minval=1, maxval=tf.size(tokens),
                                          dtype=tf.int32)
    return {"tokens": tokens, "cursors": cursors}

  def cut_at_cursors(record):
    tokens = record["tokens"]

    def cut(cursor):
      return {"inputs": tokens[tf.maximum(0, cursor - inputs_length):cursor],
              "targets": tokens[cursor:cursor + targets_length]}

    return tf.data.Dataset.from_tensor_slices(record["cursors"]).map(cut)

  # A cursor needs a token on each side.
  dataset = dataset.filter(lambda example: tf.size(example["targets"]) >= 2)
  return draw_cursors(dataset).flat_map(cut_at_cursors)
