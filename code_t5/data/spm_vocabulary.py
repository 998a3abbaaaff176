"""`CodeSentencePieceVocabulary`: the seqio vocabulary of a code SentencePiece model, and
`get_vocabulary(name)`: each vocabulary of `vocab.VOCABULARIES` as seqio's object.

Its own module because it subclasses seqio's SentencePieceVocabulary, so defining it imports seqio
and TensorFlow; code_t5/data/vocab.py (the vocabularies' names and files, the SentencePiece trainer
and `code-t5 vocab`) does not import it, and imports neither.
"""

import functools
from typing import List

import seqio
from sentencepiece import sentencepiece_model_pb2
import tensorflow.compat.v2 as tf
import tensorflow_text as tf_text

from code_t5.data import vocab


class CodeSentencePieceVocabulary(seqio.SentencePieceVocabulary):
  """A code SentencePiece model: decode(encode(text)) == text for every str, in Python and in TF.

  SentencePiece (trained with vocab.TRAINER_OPTIONS) keeps whitespace, newlines and any character
  (byte fallback) exactly, with ONE exception: it writes spaces as "▁" (U+2581) internally and turns
  every "▁" back into a space when decoding, so a literal "▁" in the text would come back as " ".
  The fix is a reversible mapping around SentencePiece: the text is split at each literal "▁", the
  parts are encoded by SentencePiece, and each "▁" is inserted as its three UTF-8 byte pieces
  <0xE2><0x96><0x81> (which SentencePiece decodes to "▁" itself, not to a space). Text without
  "▁" — nearly all code — is encoded exactly as SentencePiece alone would. `_encode` and
  `_encode_tf` do the same split, so both sides give the same ids (tested over dataset-dev).

  Sentinels: the 100 extra ids are the ids after the model's pieces, as in ByteVocabulary, not the
  "▁<extra_id_N>" pieces seqio's SentencePieceVocabulary adds to the model: with those, a text
  containing " <extra_id_0>" would be encoded as a sentinel. Here no text ever encodes to a
  sentinel, and sentinels, pad, eos and unk decode to nothing.
  """

  def __init__(self, sentencepiece_model_file, extra_ids: int = vocab.NUM_EXTRA_IDS):
    super().__init__(str(sentencepiece_model_file), extra_ids=extra_ids)

  def _model_context(self):
    if self._model:
      return self._model
    # The model as trained (extra_ids=0: no sentinel pieces added, see the class docstring).
    self._model = seqio.vocabularies._load_model(  # pylint: disable=protected-access
        self._sentencepiece_model_file, 0, None, True)
    _check_model(self._sentencepiece_model_file, self._model.sp_model)
    return self._model

  @property
  def vocab_size(self) -> int:
    return self._base_vocab_size + self.extra_ids

  @functools.cached_property
  def _space_symbol_ids(self) -> List[int]:
    return [self.tokenizer.PieceToId(f"<0x{b:02X}>") for b in vocab.SPACE_SYMBOL.encode("utf-8")]

  def __getstate__(self):
    state = super().__getstate__()
    state.pop("_space_symbol_ids", None)
    return state

  def _encode(self, s: str) -> List[int]:
    ids = []
    for i, part in enumerate(s.split(vocab.SPACE_SYMBOL)):
      if i:
        ids.extend(self._space_symbol_ids)
      ids.extend(self.tokenizer.EncodeAsIds(part))
    return ids

  def _encode_tf(self, s):
    """Rank 0 (what seqio's tokenize passes): int32 ids; rank 1: a RaggedTensor of ids."""
    s = tf.convert_to_tensor(s, tf.string)
    if s.shape.rank == 0:
      return self._encode_scalar_tf(s)
    return tf.map_fn(self._encode_scalar_tf, s,
                     fn_output_signature=tf.RaggedTensorSpec([None], tf.int32))

  def encode_tf_sampled(self, s, alpha: float):
    """BPE-dropout (SentencePiece's subword sampling of a BPE model): a rank-0 text's ids where
    each merge is skipped with probability `alpha`, so words come out split into smaller pieces
    than `encode` gives (the same text: `decode` returns it). Random on every call, unseeded:
    SentencePiece's sampling op takes no seed."""
    sampling = tf_text.SentencepieceTokenizer(model=self.sp_model, nbest_size=-1, alpha=alpha)
    return self._encode_scalar_tf(tf.convert_to_tensor(s, tf.string), sampling)

  def _encode_scalar_tf(self, s, tokenizer=None):
    # Built once per call site, in every training run's input function (six times for
    # cursor_lm's two sides), so in few ops: the parts between literal "▁"s as StringSplitV2's
    # values ([n_parts], at least one, maybe empty; tf.strings.split's RaggedTensor of them is
    # ~50 ops more), and the "▁" byte pieces put in place with one scatter, not a RaggedTensor
    # concatenation: 81 instead of 174 ops, 0.43x the time to build, and the shipped model's
    # input function 0.73x (benchmarks/encode_graph_benchmark.py).
    _, parts, _ = tf.raw_ops.StringSplitV2(input=tf.reshape(s, [1]), sep=vocab.SPACE_SYMBOL)
    pieces = (tokenizer or self.tf_tokenizer).tokenize(parts)  # ragged [n_parts, None]
    ends = pieces.row_splits[1:-1]  # where each part but the last ends, among the pieces
    width = len(self._space_symbol_ids)
    # Each piece moves right by the symbols inserted at the ends before it; the symbols after
    # part i start at its end, moved by the i symbols before them.
    index = tf.range(tf.size(pieces.flat_values, out_type=tf.int64))
    moved = index + width * tf.searchsorted(ends, index, side="right", out_type=tf.int64)
    marks = ends + width * tf.range(tf.size(ends, out_type=tf.int64))
    positions = tf.concat([moved, tf.reshape(marks[:, None] + tf.range(width, dtype=tf.int64),
                                             [-1])], 0)
    ids = tf.concat([tf.cast(pieces.flat_values, tf.int32),
                     tf.tile(tf.constant(self._space_symbol_ids, tf.int32), [tf.size(ends)])], 0)
    return tf.scatter_nd(positions[:, None], ids, tf.size(positions, out_type=tf.int64)[None])

  def _decode(self, ids) -> str:
    # Vocabulary.decode has cut at EOS and mapped sentinels to unk; pad, eos are control pieces
    # (decoded to nothing) and unk is removed (SentencePiece would write " ⁇ ").
    unk = self.tokenizer.unk_id()
    return self.tokenizer.DecodeIds([int(i) for i in ids if int(i) != unk])

  def _decode_tf(self, ids):
    ids = tf.convert_to_tensor(ids)
    kept = tf.ragged.boolean_mask(ids, tf.not_equal(ids, self.tokenizer.unk_id()))
    return self.tf_tokenizer.detokenize(kept)

  def __str__(self) -> str:
    return f"Code{super().__str__()}"


def get_vocabulary(name: str) -> seqio.Vocabulary:
  """The seqio vocabulary of a name of vocab.VOCABULARIES (what its tasks are registered with)."""
  if name not in vocab.VOCABULARIES:
    raise vocab.VocabError(f"vocabulary {name!r} is not one of {', '.join(vocab.VOCABULARIES)}")
  model = vocab.VOCABULARIES[name]
  return vocab.byte_vocabulary() if model is None else CodeSentencePieceVocabulary(model)


def dev_spm_vocabulary() -> CodeSentencePieceVocabulary:
  """The committed SentencePiece vocabulary trained on dataset-dev's train split."""
  return CodeSentencePieceVocabulary(vocab.DEV_SPM_MODEL)


def _check_model(path, sp_model: bytes) -> None:
  """Refuses models that would not round-trip code (e.g. T5's default NFKC vocabulary)."""
  model = sentencepiece_model_pb2.ModelProto.FromString(sp_model)
  problems = []
  if model.normalizer_spec.name != "identity":
    problems.append(f"normalization {model.normalizer_spec.name!r} (want identity)")
  if model.normalizer_spec.add_dummy_prefix:
    problems.append("add_dummy_prefix")
  if model.normalizer_spec.remove_extra_whitespaces:
    problems.append("remove_extra_whitespaces")
  if not model.trainer_spec.byte_fallback:
    problems.append("no byte_fallback")
  ids = (model.trainer_spec.pad_id, model.trainer_spec.eos_id, model.trainer_spec.unk_id,
         model.trainer_spec.bos_id)
  if ids != (0, 1, 2, -1):
    problems.append(f"pad/eos/unk/bos ids {ids} (want 0, 1, 2, -1)")
  if problems:
    raise vocab.VocabError(f"{path} is not a code vocabulary ({'; '.join(problems)}): train one "
                           "with `code-t5 vocab`")
