"""How long the code SentencePiece vocabulary's `encode_tf` takes to build in a graph, and the
training input function around it, against the plain way to write it.

    python benchmarks/encode_graph_benchmark.py [--task flcc_py_cursor_lm_spm_dev_v1] [--repeats 6]

Every training run builds its input function in Python before the first step, and `cursor_lm`
encodes each example's two sides with six `encode_tf` calls
(code_t5/data/preprocessors.py). `CodeSentencePieceVocabulary._encode_scalar_tf` splits the text
at each literal "▁" and puts the "▁" byte pieces back with one scatter
(code_t5/data/spm_vocabulary.py); the baseline here is the plain way, `tf.strings.split` and a
RaggedTensor concatenation (what the vocabulary did until 2026-12-03; the same ids). Alternated
in one process: one call's ops and build time, then `mesh_train_dataset_fn` of --task as the
trainer builds it; prints the medians and their ratios.
"""

import argparse
import statistics
import time

import bench_utils  # pylint: disable=g-import-not-at-top  (benchmarks/; puts the repository on
# sys.path and keeps the libraries' log off the output, so it comes before code_t5)

import tensorflow.compat.v1 as tf1  # pylint: disable=g-import-not-at-top,wrong-import-position
import tensorflow.compat.v2 as tf  # pylint: disable=g-import-not-at-top,wrong-import-position

from code_t5.data import spm_vocabulary  # pylint: disable=g-import-not-at-top,wrong-import-position
from code_t5.data import vocab  # pylint: disable=g-import-not-at-top,wrong-import-position

# pylint: disable=protected-access  (the vocabulary's method is what this swaps)
VOCABULARY = spm_vocabulary.CodeSentencePieceVocabulary
PROJECT = VOCABULARY._encode_scalar_tf


def plain_encode_scalar_tf(self, s, tokenizer=None):
  """The baseline: the same ids through tf.strings.split's RaggedTensor and a ragged concat."""
  parts = tf.strings.split(s, sep=vocab.SPACE_SYMBOL)
  pieces = tf.cast((tokenizer or self.tf_tokenizer).tokenize(parts), tf.int32)
  symbol = tf.constant(self._space_symbol_ids, tf.int32)
  marks = tf.RaggedTensor.from_tensor(tf.tile(symbol[tf.newaxis], [tf.size(parts), 1]))
  ids = tf.concat([pieces, marks], axis=1).flat_values
  return ids[:tf.size(ids) - len(self._space_symbol_ids)]


def one_call(vocabulary):
  """(seconds, TensorFlow ops) to build one `encode_tf` of a rank-0 text in a new graph."""
  with tf1.Graph().as_default() as graph:
    text = tf1.placeholder(tf.string, [])
    vocabulary.tf_tokenizer  # pylint: disable=pointless-statement  (its op, outside the count)
    before = len(graph.get_operations())
    start = time.perf_counter()
    vocabulary.encode_tf(text)
    return time.perf_counter() - start, len(graph.get_operations()) - before


def input_function(task: str):
  """Seconds to build the trainer's dataset of `task` (t5's mesh_train_dataset_fn) in a graph."""
  from t5.models import mesh_transformer  # pylint: disable=g-import-not-at-top
  with tf1.Graph().as_default():
    start = time.perf_counter()
    mesh_transformer.mesh_train_dataset_fn(
        task, sequence_length={"inputs": 256, "targets": 256}, dataset_split="train",
        shuffle=True, seed=None, use_cached=False, pack=True)
    return time.perf_counter() - start


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--task", default="flcc_py_cursor_lm_spm_dev_v1",
                      help="a task of the spm_dev vocabulary (the shipped model's)")
  parser.add_argument("--repeats", type=int, default=6)
  args = parser.parse_args(argv)
  import code_t5  # pylint: disable=g-import-not-at-top,unused-import  (registers the tasks)
  print(f"{bench_utils.cpu_kind()}; load average before: {bench_utils.load_average()}")
  vocabulary = spm_vocabulary.dev_spm_vocabulary()
  ways = (("plain (tf.strings.split, ragged concat)", plain_encode_scalar_tf),
          ("code_t5 (StringSplitV2, one scatter)", PROJECT))
  calls, builds = {}, {}
  for _, way in ways * 2:  # warm: the first graphs import and trace more
    VOCABULARY._encode_scalar_tf = way
    one_call(vocabulary), input_function(args.task)
  for _ in range(args.repeats):
    for name, way in ways:
      VOCABULARY._encode_scalar_tf = way
      calls.setdefault(name, []).extend(one_call(vocabulary) for _ in range(5))
      builds.setdefault(name, []).append(input_function(args.task))
  VOCABULARY._encode_scalar_tf = PROJECT
  medians = {}
  for name, _ in ways:
    call_s = statistics.median(s for s, _ in calls[name])
    medians[name] = (call_s, statistics.median(builds[name]))
    print(f"{name:40s} one encode_tf: {calls[name][0][1]:3d} ops, {call_s * 1e3:5.1f} ms; "
          f"{args.task}'s input function (s): {' '.join(f'{s:.2f}' for s in builds[name])}; "
          f"median {medians[name][1]:.2f}")
  (plain_call, plain_build), (ours_call, ours_build) = (medians[name] for name, _ in ways)
  print(f"code_t5 / plain: {ours_call / plain_call:.2f}x the time per call, "
        f"{ours_build / plain_build:.2f}x the input function's ({plain_build - ours_build:.2f} s "
        f"less at the median)")
  print(f"load average after: {bench_utils.load_average()}")


if __name__ == "__main__":
  main()
