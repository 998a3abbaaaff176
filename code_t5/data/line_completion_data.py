"""The line-completion task's data: code_t5/data/line_completion.py's points as seqio examples.

The points are chosen in Python once per prepared FLCC root, split and point scheme, and written
next to the prepared file shards (code_t5/data/sources.py) as one TFRecord file per split: one
tf.train.Example per file with points, holding the file's text and the UTF-8 byte offsets of its
cursors and line ends. Reading them back is pure TensorFlow (no py_function), so the task runs
wherever tf.data runs, and its examples come in a fixed order: files in reader order, points by
cursor — the order of `line_completion.points_of_files` over `flcc.read_files`, which the
baseline uses. Written to a temporary folder and renamed, like the prepared shards.

Examples: inputs = the context, cut from the left to its last `inputs length - 1` pieces (of its
last line_completion.MAX_CHARS_PER_TOKEN characters a piece; tests/line_completion_test.py's
`model_input_ids` says the same in Python), targets = the rest of the line.
"""

import collections
import json
import pathlib
from typing import List, Optional

import gin
import seqio
import tensorflow.compat.v2 as tf

from code_t5.data import line_completion
from code_t5.data import sources

# The held-out splits, and train: points of the training files show what a model has learnt by
# heart (tests/learning_test.py) and how far held-out completions fall behind.
SPLITS = sources.SPLITS
POINT_FEATURES = {
    "text": tf.io.FixedLenFeature([], tf.string),
    "repo": tf.io.FixedLenFeature([], tf.string),
    "path": tf.io.FixedLenFeature([], tf.string),
    "cursor": tf.io.VarLenFeature(tf.int64),  # UTF-8 byte offsets
    "end": tf.io.VarLenFeature(tf.int64),
}


_File = collections.namedtuple("_File", "repo path text")


@gin.configurable(module="code_t5")
def line_completion_points(max_files: Optional[int] = None) -> Optional[int]:
  """gin: `code_t5.line_completion_points.max_files = N` draws the points of a split from at most
  N of its files (line_completion.sample_files: spread over the repositories, the same as
  `code-t5 baseline --max-files N`); None, the default, every file."""
  return max_files


def _points_dir(prepared: sources.PreparedDataset, split: str, max_files: Optional[int]
                ) -> pathlib.Path:
  return prepared.path / (f"line_completion-v{line_completion.POINTS_VERSION}"
                          f"-seed{line_completion.DEFAULT_SEED}"
                          f"-s{line_completion.START_POINTS_PER_FILE}"
                          f"-i{line_completion.INSIDE_POINTS_PER_FILE}-{split}" +
                          ("" if max_files is None else f"-f{max_files}") +
                          # (points of several shards were once written shard after shard)
                          "-reader-order")


def _read_prepared_files(shards: List[str]):
  """(repo, path, text) of a split's prepared shards in the reader's order; works in graph mode
  too. sources.prepare deals the reader's files to the shards in turn (file k to shard k % n), so
  they are read back in turn: one shard after another put a root of several shards in another
  order than `flcc.read_files`, and `baseline --model-dir` refused the eval's targets as another
  root's (helper-47's audit)."""
  readers = [tf.compat.v1.io.tf_record_iterator(shard) for shard in shards]
  while readers:
    for reader in list(readers):
      record = next(reader, None)
      if record is None:
        readers.remove(reader)
        continue
      feature = tf.train.Example.FromString(record).features.feature
      yield _File(*(feature[k].bytes_list.value[0].decode("utf-8")
                    for k in ("repo", "path", "text")))


def _point_example(repo: str, path: str, text: str, points) -> bytes:
  def byte_offset(index):
    return len(text[:index].encode("utf-8"))

  def strings(value):
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value.encode("utf-8")]))

  def ints(values):
    return tf.train.Feature(int64_list=tf.train.Int64List(value=values))

  return tf.train.Example(features=tf.train.Features(feature={
      "text": strings(text), "repo": strings(repo), "path": strings(path),
      "cursor": ints([byte_offset(p.cursor) for p in points]),
      "end": ints([byte_offset(p.end) for p in points]),
  })).SerializeToString()


def prepare_points(prepared: sources.PreparedDataset, split: str,
                   max_files: Optional[int] = None) -> pathlib.Path:
  """The folder with the split's `points.tfrecord` and `points.json`, written if missing (each
  split on first use: the train split's points are only written when someone asks for them)."""
  out = _points_dir(prepared, split, max_files)
  if (out / "points.json").exists():
    return out
  with sources.new_folder(out, "points.json") as tmp:
    files = points = 0
    with tf.io.TFRecordWriter(str(tmp / "points.tfrecord")) as writer:
      for f in line_completion.sample_files(list(_read_prepared_files(prepared.shards[split])),
                                            max_files):
        chosen = line_completion.select_points(f.text, f.repo, f.path)
        if chosen:
          writer.write(_point_example(f.repo, f.path, f.text, chosen))
          files += 1
          points += len(chosen)
    (tmp / "points.json").write_text(json.dumps(
        {"version": line_completion.POINTS_VERSION, "seed": line_completion.DEFAULT_SEED,
         "start_points_per_file": line_completion.START_POINTS_PER_FILE,
         "inside_points_per_file": line_completion.INSIDE_POINTS_PER_FILE, "split": split,
         "max_files": max_files, "files": files, "points": points}, indent=1, sort_keys=True))
  return out


def _read_points(filename):
  return tf.data.TFRecordDataset(filename).map(
      lambda record: tf.io.parse_single_example(record, POINT_FEATURES))


class LineCompletionSource(seqio.FileDataSource):
  """Files with their completion points, {text, repo, path, cursor, end}, of the gin-chosen root."""

  def __init__(self, spec_fn=sources.flcc_dataset):
    self._spec_fn = spec_fn
    super().__init__(read_file_fn=_read_points,
                     split_to_filepattern={s: "<prepared at first use>" for s in SPLITS},
                     cycle_length=1)

  def points_dir(self, split: str) -> pathlib.Path:
    return prepare_points(sources.prepare(self._spec_fn()), split, line_completion_points())

  def list_shards(self, split: str) -> List[str]:
    return [str(self.points_dir(split) / "points.tfrecord")]

  def num_input_examples(self, split: str) -> Optional[int]:
    return json.loads((self.points_dir(split) / "points.json").read_text())["files"]

  def __str__(self):
    return f"LineCompletionSource({self._spec_fn().root})"


# Preprocessors.


def points_to_examples(dataset, sequence_length=None):
  """One example per point: inputs = the context window (text), targets = the rest of the line."""
  length = (sequence_length or {}).get("inputs")

  def examples(record):
    text = record["text"]
    cursors = tf.sparse.to_dense(record["cursor"])
    ends = tf.sparse.to_dense(record["end"])

    def example(cursor, end):
      context = tf.strings.substr(text, tf.constant(0, tf.int64), cursor)
      if length:  # the last MAX_CHARS_PER_TOKEN * length characters (line_completion.py)
        chars = tf.strings.length(context, unit="UTF8_CHAR")
        start = tf.maximum(chars - line_completion.MAX_CHARS_PER_TOKEN * length, 0)  # int32
        context = tf.strings.substr(context, start, chars - start, unit="UTF8_CHAR")
      return {"inputs": context, "targets": tf.strings.substr(text, cursor, end - cursor)}

    return tf.data.Dataset.from_tensor_slices((cursors, ends)).map(example)

  return dataset.flat_map(examples)


def left_truncate_inputs(dataset, output_features, sequence_length=None):
  """Keeps the LAST `length - 1` input tokens (EOS follows) and re-decodes inputs_pretokenized.

  seqio's trimming keeps the first tokens; for a completion the code nearest the cursor counts.
  """
  if not sequence_length or not sequence_length.get("inputs"):
    return dataset
  keep = sequence_length["inputs"] - (1 if output_features["inputs"].add_eos else 0)
  vocabulary = output_features["inputs"].vocabulary

  @seqio.map_over_dataset
  def truncate(example):
    example = dict(example)
    example["inputs"] = example["inputs"][-keep:] if keep > 0 else example["inputs"][:0]
    example["inputs_pretokenized"] = vocabulary.decode_tf(example["inputs"])
    return example

  return truncate(dataset)
