"""Preprocessors for code: restore what t5's objectives drop and Mesh TF eval needs."""

import gin
import seqio
import tensorflow.compat.v2 as tf

from code_t5.data import line_completion
from code_t5.data import task_names


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


# Files hold about this many bytes per token (docs/data.md: 1 for bytes, 4.3 for spm_dev on held-out
# code); it sets how many cursors a file gets, so each byte is read about once per epoch.
_BYTES_PER_TOKEN = {"byte": 1, "subword": 4}
_INDENT = (ord(" "), ord("\t"), ord("\f"))


def _lines(codepoints: tf.Tensor):
  """Per character: its line's index, whether it is indentation (space, tab, form feed), and
  whether it is code (neither that nor a newline)."""
  newline = tf.equal(codepoints, ord("\n"))
  line = tf.cumsum(tf.cast(newline, tf.int32), exclusive=True)
  indent = tf.reduce_any(tf.equal(codepoints[:, None], tf.constant(_INDENT)[None, :]), axis=1)
  return line, indent, tf.logical_not(tf.logical_or(newline, indent))


def _line_code_starts(line: tf.Tensor, code: tf.Tensor) -> tf.Tensor:
  """Character index of the first non-indentation character of each line that has one (the
  first and third of `_lines`)."""
  n = tf.size(code)
  positions = tf.where(code, tf.range(n), tf.fill([n], n))
  starts = tf.math.unsorted_segment_min(positions, line, num_segments=line[-1] + 1)
  return tf.boolean_mask(starts, starts < n)


def _outside_indentation(line: tf.Tensor, indent: tf.Tensor, code: tf.Tensor) -> tf.Tensor:
  """Character indices that are not leading indentation (a space, tab or form feed with no code
  before it on its line; `_lines` gives the masks): where an editor's cursor is while typing,
  after a line's indentation."""
  code_before = tf.cumsum(tf.cast(code, tf.int32), exclusive=True)
  # code_before never falls along a line, so its minimum over the line is its value at the start.
  at_line_start = tf.gather(tf.math.unsorted_segment_min(code_before, line,
                                                         num_segments=line[-1] + 1), line)
  leading = tf.logical_and(indent, tf.equal(code_before, at_line_start))
  return tf.cast(tf.where(tf.logical_not(leading))[:, 0], tf.int32)


@gin.configurable(module="code_t5", allowlist=["line_start_rate"])
def cursor_lm(dataset: tf.data.Dataset, sequence_length, output_features,
              line_start_rate: float = 0.5,
              cursors_in_indentation: bool = False,
              below_rate: float = 0.0) -> tf.data.Dataset:
  """Code before an editor's cursor -> the code after it, each side tokenized ON ITS OWN.

  Runs on whole texts (`text`) and emits `inputs`/`targets` strings for seqio's tokenize.
  Cursors are characters, as in an editor: with probability `line_start_rate` right after the
  indentation of a random line (the user pressed Enter), else anywhere in the file (the user is
  typing). The text before the cursor is encoded by itself — exactly what the line-completion
  eval and `code-t5 complete` feed the model — so the model learns to continue a context whose
  last piece is cut where the cursor is (a half-typed word, a lone indentation piece). Training
  on cursors between the whole file's pieces (completion_lm) leaves every such context unseen:
  the probe of shared/notes/LEARNING.md began 150 of 192 completions with spurious whitespace.
  Per file of n bytes, ceil(n / (bytes per token x (L_in + L_t))) cursors (seeded per example).

  `line_start_rate` is set in gin (`code_t5.cursor_lm.line_start_rate`; the operative config
  records it). A file has far fewer line starts than characters, so at the default half the
  line starts are seen over and over while the cursors inside lines, the ones a model is slow
  to place exactly, get half the examples: the proof of learning (tests/learning_test.py)
  learns its files in fewer steps at 0.1.

  `cursors_in_indentation` (task v1) also draws "anywhere" cursors inside a line's leading
  indentation (about a fifth of them in Python code), where no completion is asked for: the
  eval's points and an editor's cursor come after it. They teach that trailing spaces mean more
  indentation, which misreads `return |`. v2 draws them outside it.

  `below_rate` (task v4): that share of the examples also get `below`, the text from the line
  after the cursor's (enough characters for task_names.BELOW_TOKENS pieces; "" for the others),
  which `below_first` puts before the inputs: fill-in-the-middle for a causal LM, in the
  suffix-prefix-middle order, so the model learns to read the lines under the cursor that an
  editor (and the engine) has.
  """
  inputs_length = sequence_length["inputs"] - int(output_features["inputs"].add_eos)
  targets_length = sequence_length["targets"] - int(output_features["targets"].add_eos)
  bytes_per_token = _BYTES_PER_TOKEN[
      "byte" if isinstance(output_features["targets"].vocabulary, seqio.ByteVocabulary)
      else "subword"]
  window_bytes = bytes_per_token * (inputs_length + targets_length)
  # Characters tokenized on each side before the tokens are cut to the lengths: as many as the
  # longest tokens can hold, so the cut never runs short while the file has more.
  left_chars = line_completion.MAX_CHARS_PER_TOKEN * inputs_length
  right_chars = line_completion.MAX_CHARS_PER_TOKEN * targets_length
  below_chars = line_completion.MAX_CHARS_PER_TOKEN * task_names.BELOW_TOKENS

  # A fourth seed only where it is used: v1-v3's examples stay as they were.
  @seqio.map_over_dataset(num_seeds=4 if below_rate else 3)
  def draw_cursors(example, seeds):
    text = example["text"]
    codepoints = tf.strings.unicode_decode(text, "UTF-8")
    n = tf.size(codepoints)
    count = (tf.strings.length(text) + window_bytes - 1) // window_bytes
    line, indent, code = _lines(codepoints)
    if cursors_in_indentation:
      anywhere = tf.random.stateless_uniform([count], seed=seeds[0], minval=0, maxval=n,
                                             dtype=tf.int32)
    else:
      allowed = _outside_indentation(line, indent, code)
      anywhere = tf.gather(tf.concat([allowed, [0]], 0), tf.random.stateless_uniform(
          [count], seed=seeds[0], minval=0, maxval=tf.maximum(tf.size(allowed), 1),
          dtype=tf.int32))
    starts = _line_code_starts(line, code)
    pick = tf.random.stateless_uniform([count], seed=seeds[1], minval=0,
                                       maxval=tf.maximum(tf.size(starts), 1), dtype=tf.int32)
    at_line_start = tf.logical_and(
        tf.random.stateless_uniform([count], seed=seeds[2]) < line_start_rate,
        tf.size(starts) > 0)
    line_starts = tf.gather(tf.concat([starts, [0]], 0), pick)
    cursors = tf.where(at_line_start, line_starts, anywhere)
    if not below_rate:
      return {"text": text, "cursors": cursors}
    # The line after the cursor's starts after the first newline at or after the cursor (none:
    # nothing below); examples not drawn for it get an empty `below`.
    newlines = tf.cast(tf.where(tf.equal(codepoints, ord("\n")))[:, 0], tf.int32)
    after = tf.searchsorted(newlines, cursors, side="left")
    below_starts = tf.gather(tf.concat([newlines + 1, [n]], 0), after)
    with_below = tf.random.stateless_uniform([count], seed=seeds[3]) < below_rate
    return {"text": text, "cursors": cursors,
            "below_starts": tf.where(with_below, below_starts, tf.fill([count], n))}

  def cut_at_cursors(record):
    text = record["text"]

    def cut(cursor, below_start=None):
      start = tf.maximum(0, cursor - left_chars)
      example = {"inputs": tf.strings.substr(text, start, cursor - start, unit="UTF8_CHAR"),
                 "targets": tf.strings.substr(text, cursor, right_chars, unit="UTF8_CHAR")}
      if below_start is not None:
        example["below"] = tf.strings.substr(text, below_start, below_chars, unit="UTF8_CHAR")
      return example

    if below_rate:
      return tf.data.Dataset.from_tensor_slices(
          (record["cursors"], record["below_starts"])).map(cut)
    return tf.data.Dataset.from_tensor_slices(record["cursors"]).map(cut)

  # A cursor needs a character after it (before it may be nothing: the start of a file).
  dataset = dataset.filter(lambda example: tf.strings.length(example["text"], "UTF8_CHAR") >= 1)
  return draw_cursors(dataset).flat_map(cut_at_cursors)


# Characters per piece a side's first encoding reads (cursor_lm's texts hold
# line_completion.MAX_CHARS_PER_TOKEN = 16 per piece, so that the cut never runs short): code
# averages ~4.3 (dev vocabulary, benchmarks/vocab_benchmark.py), so 6 per piece nearly always
# gives the pieces kept, and the whole text is encoded only when it does not.
NEAR_CHARS_PER_TOKEN = 6
_SPACE = ord(" ")


def _word_starts(text, offset, length):
  """Positions p in [offset, offset + length) of `text` (characters) where a word starts for
  SentencePiece: a space after a non-space (its split_by_whitespace; the project's vocabularies,
  code_t5.data.vocab.TRAINER_OPTIONS). Pieces never cross one, so the text from there on is
  encoded as the whole text encodes it."""
  before = tf.maximum(offset - 1, 0)  # the character before the first one, if there is one
  codepoints = tf.strings.unicode_decode(
      tf.strings.substr(text, before, offset + length - before, unit="UTF8_CHAR"), "UTF-8")
  space = tf.equal(codepoints, _SPACE)
  after_space = tf.concat([[False], space[:-1]], 0)  # the text's first character follows none
  starts = tf.logical_and(space, tf.logical_not(after_space))[offset - before:]
  return tf.cast(tf.where(starts)[:, 0], tf.int32) + offset


def encode_near_cursor(encode, text, keep: int, side: str):
  """encode(text)'s last `keep` pieces (side "inputs": the code before a cursor) or its first
  `keep` (side "targets": the code after it), encoding only the NEAR_CHARS_PER_TOKEN * keep
  characters next to the cursor where they hold that many pieces.

  cursor_lm cuts each side 16 characters per piece long, so that the pieces kept never run
  short; encoding all of them was most of the input pipeline's work, and of the time to a
  run's first step (docs/speed.md). The shorter text starts (inputs) or ends (targets) where a
  word starts, so its pieces are exactly the whole text's there: `encode` canonical, the same
  ids (tests/tasks_test.py compares them); `encode` sampling (BPE-dropout), the same
  distribution. Where it holds fewer than `keep` pieces the whole text is encoded."""
  window = NEAR_CHARS_PER_TOKEN * keep
  length = tf.strings.length(text, unit="UTF8_CHAR")

  def whole():
    return encode(text)

  def near():
    if side == "inputs":
      starts = _word_starts(text, length - window, window)
      begin = tf.cond(tf.size(starts) > 0, lambda: starts[0], lambda: length)
      ids = encode(tf.strings.substr(text, begin, length - begin, unit="UTF8_CHAR"))
    else:
      starts = _word_starts(text, 1, window - 1)  # the first word is the text's own start
      end = tf.cond(tf.size(starts) > 0, lambda: starts[-1], lambda: 0)
      ids = encode(tf.strings.substr(text, 0, end, unit="UTF8_CHAR"))
    return tf.cond(tf.size(ids) >= keep, lambda: ids, whole)

  return tf.cond(length > window, near, whole)


def _kept_lengths(output_features, sequence_length):
  """fit_to_lengths' pieces kept per side (None without lengths: keep everything)."""
  if not sequence_length:
    return None
  return {key: sequence_length[key] - int(output_features[key].add_eos)
          for key in ("inputs", "targets") if key in sequence_length}


def _encode_sides(dataset: tf.data.Dataset, encoders, keep) -> tf.data.Dataset:
  """Each feature of `encoders` (key -> encode(text) -> ids) encoded, the text kept as
  `<key>_pretokenized`: near the cursor (encode_near_cursor) where `keep` gives its pieces kept,
  else whole."""

  @seqio.map_over_dataset
  def encode(example):
    example = dict(example)
    for key, encode_text in encoders.items():
      if key in example:
        example[f"{key}_pretokenized"] = example[key]
        example[key] = (encode_near_cursor(encode_text, example[key], keep[key], key)
                        if key in keep else encode_text(example[key]))
    return example

  return encode(dataset)


def tokenize_near_cursor(dataset: tf.data.Dataset, output_features,
                         sequence_length=None) -> tf.data.Dataset:
  """seqio's tokenize (the texts kept as `*_pretokenized`) for cursor_lm's examples, each side
  encoded near the cursor (encode_near_cursor): the same ids as tokenize gives after
  fit_to_lengths, in a fraction of the time."""
  keep = _kept_lengths(output_features, sequence_length)
  if keep is None:
    return seqio.preprocessors.tokenize(dataset, output_features)
  return _encode_sides(dataset, {key: feature.vocabulary.encode_tf
                                 for key, feature in output_features.items()}, keep)


@gin.configurable(module="code_t5", allowlist=["alpha"])
def tokenize_with_subword_sampling(dataset: tf.data.Dataset, output_features,
                                   sequence_length=None, alpha: float = 0.1) -> tf.data.Dataset:
  """seqio's tokenize (the texts kept as `*_pretokenized`), with BPE-dropout: a SentencePiece
  vocabulary skips each merge with probability `alpha` (`code_t5.tokenize_with_subword_sampling.
  alpha`; 0.1 as in Provilkov et al. 2020), so a word often comes split into smaller pieces than
  its canonical encoding. At a completion's cursor the context's last piece is cut where the
  cursor is and the continuation starts inside a word (cursor_lm): a canonical encoding shows the
  model one such cut per example, sampling shows it pieces that continue a part-word all through
  the example. Training only: the eval and `complete` encode canonically. About 14 % more pieces
  per character at 0.1 on dataset-dev. A byte vocabulary has one encoding: tokenize_near_cursor.
  Given the lengths, each side is sampled near the cursor (encode_near_cursor).
  """
  if not 0 <= alpha < 1:
    raise ValueError(f"code_t5.tokenize_with_subword_sampling.alpha = {alpha}: a merge's dropout "
                     "probability, from 0 (canonical encoding) up to but not including 1")
  sampled = {key: feature.vocabulary for key, feature in output_features.items()
             if alpha and not isinstance(feature.vocabulary, seqio.ByteVocabulary)}
  if not sampled:
    return tokenize_near_cursor(dataset, output_features, sequence_length)
  return _encode_sides(
      dataset, {key: lambda text, v=vocabulary: v.encode_tf_sampled(text, alpha)
                for key, vocabulary in sampled.items()},
      _kept_lengths(output_features, sequence_length) or {})


def below_first(dataset: tf.data.Dataset, output_features, sequence_length=None):
  """Puts an example's `below` (cursor_lm's text under the cursor's line) before its inputs:
  the first task_names.BELOW_TOKENS pieces of it, the separator (task_names.below_separator),
  then as many of the inputs' last pieces as the inputs length leaves. An empty `below` leaves
  the inputs as they are. The engine builds the same context (code_t5.engine.complete)."""
  vocabulary = output_features["inputs"].vocabulary
  separator = tf.constant([task_names.below_separator(vocabulary.vocab_size)], tf.int32)
  length = (sequence_length or {}).get("inputs")
  room = (length - int(output_features["inputs"].add_eos)) if length else None

  @seqio.map_over_dataset
  def put(example):
    example = dict(example)
    below = tf.cast(vocabulary.encode_tf(example.pop("below")), tf.int32)
    below = below[:task_names.BELOW_TOKENS]
    inputs = tf.cast(example["inputs"], tf.int32)
    if room is not None:
      keep = tf.maximum(room - tf.size(below) - 1, 0)
      cut = inputs[tf.maximum(tf.size(inputs) - keep, 0):]
    else:
      cut = inputs
    example["inputs"] = tf.cond(tf.size(below) > 0,
                                lambda: tf.concat([below, separator, cut], 0),
                                lambda: inputs)
    return example

  return put(dataset)


def fit_to_lengths(dataset: tf.data.Dataset, output_features, sequence_length=None):
  """Keeps the LAST inputs tokens (the code nearest the cursor) and the FIRST targets tokens,
  leaving a slot for each EOS, and re-decodes both `*_pretokenized` texts to match."""
  keep = _kept_lengths(output_features, sequence_length)
  if keep is None:
    return dataset

  @seqio.map_over_dataset
  def fit(example):
    example = dict(example)
    example["inputs"] = example["inputs"][tf.maximum(tf.size(example["inputs"]) -
                                                     keep["inputs"], 0):]
    example["targets"] = example["targets"][:keep["targets"]]
    return example

  return add_pretokenized(fit(dataset), output_features)
