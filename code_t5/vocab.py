"""Vocabularies that keep code exactly: every space, tab and newline survives encode/decode.

Two kinds, both with T5's ids (pad 0, eos 1, unk 2) and 100 sentinels for span corruption:

- `byte_vocabulary()`: UTF-8 bytes, 1 byte per token; lossless for any text.
- `CodeSentencePieceVocabulary`: a SentencePiece BPE model trained on code by `train_spm` /
  `code-t5 vocab` (identity normalisation, whitespace kept, byte fallback), plus one reversible
  fix (see the class). `code_t5/vocabs/flcc_dev_spm.model` is one, trained on dataset-dev's train
  split; it is reproduced byte for byte by

    code-t5 vocab --root dataset-dev --size 8000 --out code_t5/vocabs/flcc_dev_spm.model --force

`VOCABULARIES` names the vocabularies tasks are registered with (code_t5/tasks.py); a task's name
says which one it uses, and gin picks the task (`code_t5.task_name.vocabulary`).
"""

import functools
import os
import pathlib
import tempfile
from typing import Callable, Dict, Iterator, List

import seqio
import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2
import tensorflow.compat.v2 as tf

from code_t5 import errors

# Sentinels for span corruption (t5's default count); prefix-LM tasks share the vocabulary so the
# two objectives can be mixed in one model.
NUM_EXTRA_IDS = 100

VOCABS_DIR = pathlib.Path(__file__).resolve().parent / "vocabs"
DEV_SPM_MODEL = VOCABS_DIR / "flcc_dev_spm.model"
# 8000 pieces for dataset-dev's 3.3 MB of training code. Of the learned pieces, those seen fewer
# than 10 times in that text (embeddings that would barely train): 7% at 8k, 37% at 16k, 76% at 32k.
# Bytes per token on held-out repositories (benchmarks/vocab_benchmark.py): 4.27 at 8k, 4.60 at 16k,
# 4.92 at 32k (bytes: 1.0). Train 32k on a real FLCC root.
DEV_SPM_SIZE = 8000

# SentencePiece's own ids: pad, eos, unk, then the 256 byte-fallback pieces <0x00>..<0xFF>.
NUM_RESERVED_PIECES = 3 + 256
# "▁" (U+2581): SentencePiece writes spaces as this character inside its pieces.
SPACE_SYMBOL = "\u2581"

# SentencePieceTrainer settings (see train_spm). Why each one:
TRAINER_OPTIONS = dict(
    # BPE: on code it compresses better than unigram at the same size (dev: 8k pieces 4.27 vs 3.83
    # bytes/token held out) and, unlike unigram on 3 MB, actually reaches 32k pieces.
    model_type="bpe",
    # No NFKC: code is compared byte for byte (NFKC turns "\n" into a space, sentencepiece#101).
    normalization_rule_name="identity",
    remove_extra_whitespaces=False,  # keep indentation, trailing spaces and blank lines
    add_dummy_prefix=False,  # no invented leading space
    allow_whitespace_only_pieces=True,  # indentation runs ("▁▁▁▁", "▁▁▁▁▁▁▁▁") become pieces
    split_by_whitespace=True,  # pieces never cross a space: "▁==" but not "x▁==▁1"
    # Punctuation is its own Unicode script: splitting there keeps "):\n", "self." or "()" from
    # being pieces (dev, 8k pieces: 3.76 -> 4.27 bytes/token held out when off).
    split_by_unicode_script=False,
    byte_fallback=True,  # any character a piece cannot spell becomes its UTF-8 bytes: no <unk>
    character_coverage=0.9995,  # rarer characters go through byte fallback
    # T5's ids: pad 0, eos 1, unk 2, no bos (t5#566).
    pad_id=0, eos_id=1, unk_id=2, bos_id=-1,
    # Training "sentences" are chunks of files that keep their newlines (see _chunks): "\n" is an
    # ordinary character, learnt in pieces such as ":\n" or "\n\n".
    max_sentence_length=1 << 16,
    # A real FLCC root: sample at most this many chunks (reservoir sampling while reading, so memory
    # stays bounded); dataset-dev has ~1,000, all used.
    input_sentence_size=2_000_000,
    shuffle_input_sentence=True,
    # Too large a size for the data is not an error: the vocabulary stops where the data ends.
    hard_vocab_limit=False,
    num_threads=2,
    minloglevel=2,
)
CHUNK_CHARS = 4096
RANDOM_SEED = 20240601


class VocabError(errors.UserError):
  """A bad `code-t5 vocab` argument or an unusable vocabulary file; the message is one line."""


def byte_vocabulary() -> seqio.ByteVocabulary:
  """UTF-8 bytes + pad/eos/unk + sentinels: lossless for any text, 1 byte per token."""
  return seqio.ByteVocabulary(extra_ids=NUM_EXTRA_IDS)


class CodeSentencePieceVocabulary(seqio.SentencePieceVocabulary):
  """A code SentencePiece model: decode(encode(text)) == text for every str, in Python and in TF.

  SentencePiece (trained with TRAINER_OPTIONS) keeps whitespace, newlines and any character (byte
  fallback) exactly, with ONE exception: it writes spaces as "▁" (U+2581) internally and turns
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

  def __init__(self, sentencepiece_model_file, extra_ids: int = NUM_EXTRA_IDS):
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
    return [self.tokenizer.PieceToId(f"<0x{b:02X}>") for b in SPACE_SYMBOL.encode("utf-8")]

  def __getstate__(self):
    state = super().__getstate__()
    state.pop("_space_symbol_ids", None)
    return state

  def _encode(self, s: str) -> List[int]:
    ids = []
    for i, part in enumerate(s.split(SPACE_SYMBOL)):
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

  def _encode_scalar_tf(self, s):
    parts = tf.strings.split(s, sep=SPACE_SYMBOL)  # [n_parts], at least one (maybe empty)
    pieces = tf.cast(self.tf_tokenizer.tokenize(parts), tf.int32)  # ragged [n_parts, None]
    symbol = tf.constant(self._space_symbol_ids, tf.int32)
    # Append the "▁" byte pieces to every part, then drop the ones after the last part.
    marks = tf.RaggedTensor.from_tensor(tf.tile(symbol[tf.newaxis], [tf.size(parts), 1]))
    ids = tf.concat([pieces, marks], axis=1).flat_values
    return ids[:tf.size(ids) - len(self._space_symbol_ids)]

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
    raise VocabError(f"{path} is not a code vocabulary ({'; '.join(problems)}): train one with "
                     "`code-t5 vocab`")


def dev_spm_vocabulary() -> CodeSentencePieceVocabulary:
  """The committed SentencePiece vocabulary trained on dataset-dev's train split."""
  return CodeSentencePieceVocabulary(DEV_SPM_MODEL)


# name -> factory. Each name gets its own versioned tasks (code_t5/tasks.py); "byte" keeps the
# original task names.
VOCABULARIES: Dict[str, Callable[[], seqio.Vocabulary]] = {
    "byte": byte_vocabulary,
    "spm_dev": dev_spm_vocabulary,
}


def get_vocabulary(name: str) -> seqio.Vocabulary:
  if name not in VOCABULARIES:
    raise VocabError(f"vocabulary {name!r} is not one of {', '.join(VOCABULARIES)}")
  return VOCABULARIES[name]()


# Training.


def _chunks(text: str, limit: int = CHUNK_CHARS) -> Iterator[str]:
  """A file as whole-line chunks of at most `limit` characters (a longer line is a chunk alone).

  SentencePiece trains on "sentences"; given through sentence_iterator they may contain newlines,
  which is how "\\n" and indentation after it get into pieces.
  """
  chunk, size = [], 0
  for line in text.splitlines(keepends=True):
    if chunk and size + len(line) > limit:
      yield "".join(chunk)
      chunk, size = [], 0
    chunk.append(line)
    size += len(line)
  if chunk:
    yield "".join(chunk)


def training_texts(root, validation_fraction: float = 0.05,
                   test_fraction: float = 0.05) -> Iterator[str]:
  """The chunks of every kept file of the root's TRAIN split (as the tasks filter and split it)."""
  from code_t5 import flcc  # pylint: disable=g-import-not-at-top
  splits = flcc.Splits(validation=validation_fraction, test=test_fraction)
  for source_file in flcc.read_files(root, splits=splits, only_split="train"):
    yield from _chunks(source_file.text)


def train_spm(root, size: int, out, force: bool = False, validation_fraction: float = 0.05,
              test_fraction: float = 0.05, **options) -> pathlib.Path:
  """Trains a code SentencePiece model on the train split of an FLCC root and writes it to `out`.

  Written to a temporary file beside `out` and renamed: an interrupted or failed run leaves no
  file. Deterministic: the same root, size and options give the same bytes.

  Raises:
    VocabError: a missing root, a size below the reserved pieces, an existing `out` without
      force, or SentencePiece refusing the data.
  """
  from code_t5 import flcc  # pylint: disable=g-import-not-at-top
  out = pathlib.Path(out)
  if isinstance(size, bool) or not isinstance(size, int) or size <= NUM_RESERVED_PIECES:
    raise VocabError(f"--size must be an integer above {NUM_RESERVED_PIECES} (pad, eos, unk and "
                     f"the 256 byte pieces), got {size!r}")
  if not pathlib.Path(root).exists():
    raise VocabError(f"--root {root} does not exist: give the folder that holds v3/")
  if out.exists() and not force:
    raise VocabError(f"--out {out} exists: pass --force to replace it")
  if out.is_dir():
    raise VocabError(f"--out {out} is a directory: give a file name such as vocab.model")
  if not out.parent.is_dir():
    raise VocabError(f"--out {out}: folder {out.parent} does not exist")
  texts = training_texts(root, validation_fraction, test_fraction)  # raises FlccError early
  try:
    first = next(texts)
  except StopIteration:
    raise VocabError(f"--root {root} has no files in its train split") from None
  except flcc.FlccError as e:
    raise VocabError(str(e)) from None

  def sentences():
    yield first
    yield from texts

  fd, tmp = tempfile.mkstemp(prefix=out.name + ".tmp-", dir=out.parent)
  try:
    with os.fdopen(fd, "wb") as model_writer:
      spm.set_random_generator_seed(RANDOM_SEED)
      try:
        spm.SentencePieceTrainer.train(sentence_iterator=sentences(), model_writer=model_writer,
                                       vocab_size=size, **{**TRAINER_OPTIONS, **options})
      except RuntimeError as e:
        message = str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__
        raise VocabError(f"SentencePiece could not train on {root}: {message}") from None
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 -> what a plain open() would give
    os.replace(tmp, out)
  finally:
    if os.path.exists(tmp):
      os.unlink(tmp)
  return out


# `code-t5 vocab`.


def _cli(args) -> int:
  out = train_spm(args.root, args.size, args.out, force=args.force,
                  validation_fraction=args.validation_fraction, test_fraction=args.test_fraction)
  vocabulary = CodeSentencePieceVocabulary(out)
  print(f"wrote {out}: {vocabulary.tokenizer.GetPieceSize()} pieces "
        f"(+{vocabulary.extra_ids} sentinels = {vocabulary.vocab_size} ids)")
  return 0


def register_cli(subparsers) -> None:
  parser = subparsers.add_parser(
      "vocab", help="train a lossless code SentencePiece vocabulary on an FLCC root's train split")
  parser.add_argument("--root", type=pathlib.Path, required=True,
                      help="FLCC dataset root (the folder that holds v3/), e.g. dataset-dev")
  parser.add_argument("--size", type=int, default=32000,
                      help="number of pieces, the 259 reserved ones included (default 32000)")
  parser.add_argument("--out", type=pathlib.Path, required=True, help="the .model file to write")
  parser.add_argument("--force", action="store_true", help="replace --out if it exists")
  parser.add_argument("--validation-fraction", type=float, default=0.05,
                      help="held-out share of repositories, as the tasks split them")
  parser.add_argument("--test-fraction", type=float, default=0.05)
  parser.set_defaults(func=_cli)
