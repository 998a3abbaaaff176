"""Vocabularies that keep code exactly: every space, tab and newline survives encode/decode.

Two kinds, both with T5's ids (pad 0, eos 1, unk 2) and 100 sentinels for span corruption:

- `byte_vocabulary()`: UTF-8 bytes, 1 byte per token; lossless for any text.
- `CodeSentencePieceVocabulary` (code_t5/data/spm_vocabulary.py): a SentencePiece BPE model trained
  on code by `train_spm` / `code-t5 vocab` (identity normalisation, whitespace kept, byte
  fallback), plus one reversible fix (see the class). `code_t5/vocabs/flcc_dev_spm.model` is one,
  trained on dataset-dev's train split; it is reproduced byte for byte by

    code-t5 vocab --root dataset-dev --size 8000 --out code_t5/vocabs/flcc_dev_spm.model --force

`VOCABULARIES` names the vocabularies tasks are registered with (code_t5/data/tasks.py); a task's
name says which one it uses, and gin picks the task (`code_t5.task_name.vocabulary`).
`spm_vocabulary.get_vocabulary(name)` builds one. This module imports no seqio or TensorFlow until
byte_vocabulary() is called, and never code_t5/data/spm_vocabulary.py (which imports it).
"""

from __future__ import annotations  # seqio's types in annotations: seqio imports TensorFlow

import json
import os
import pathlib
import re
import signal
import sys
from typing import TYPE_CHECKING, Dict, Iterator, Optional

import sentencepiece as spm

from code_t5 import errors
from code_t5 import processes

if TYPE_CHECKING:
  import seqio

# Sentinels for span corruption (t5's default count); prefix-LM tasks share the vocabulary so the
# two objectives can be mixed in one model.
NUM_EXTRA_IDS = 100

VOCABS_DIR = pathlib.Path(__file__).resolve().parents[1] / "vocabs"
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


# SentencePiece's error for a --size below the characters it must keep as pieces of their own.
_TOO_FEW_PIECES = re.compile(r"Vocabulary size is smaller than required_chars\. \d+ vs (\d+)\.")


class VocabError(errors.UserError):
  """A bad `code-t5 vocab` argument or an unusable vocabulary file; the message is one line."""


def byte_vocabulary() -> seqio.ByteVocabulary:
  """UTF-8 bytes + pad/eos/unk + sentinels: lossless for any text, 1 byte per token."""
  import seqio  # pylint: disable=g-import-not-at-top  (imports TensorFlow)
  return seqio.ByteVocabulary(extra_ids=NUM_EXTRA_IDS)


# name -> its SentencePiece model file (None: UTF-8 bytes, byte_vocabulary()); built by
# spm_vocabulary.get_vocabulary. Each name gets its own versioned tasks (code_t5/data/tasks.py);
# "byte" keeps the original task names.
VOCABULARIES: Dict[str, Optional[pathlib.Path]] = {
    "byte": None,
    "spm_dev": DEV_SPM_MODEL,
}


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
  from code_t5.data import flcc  # pylint: disable=g-import-not-at-top
  splits = flcc.Splits(validation=validation_fraction, test=test_fraction)
  for source_file in flcc.read_files(root, splits=splits, only_split="train"):
    yield from _chunks(source_file.text)


def train_spm(root, size: int, out, force: bool = False, validation_fraction: float = 0.05,
              test_fraction: float = 0.05, echo=lambda line: None, in_a_child: bool = False,
              **options) -> pathlib.Path:
  """Trains a code SentencePiece model on the train split of an FLCC root and writes it to `out`.

  Written to a temporary file beside `out` and renamed: an interrupted or failed run leaves no
  file. Deterministic: the same root, size and options give the same bytes. `in_a_child`
  (`code-t5 vocab`): SentencePiece trains in a forked child, so that Ctrl-C stops it at once (a
  library caller's process may run threads, which a fork does not take along). `echo`: the line
  said as training starts.

  Raises:
    VocabError: a missing root, a size below the reserved pieces, an existing `out` without
      force, or SentencePiece refusing the data.
  """
  from code_t5.data import flcc  # pylint: disable=g-import-not-at-top
  out = pathlib.Path(out)
  if isinstance(size, bool) or not isinstance(size, int) or size <= NUM_RESERVED_PIECES:
    raise VocabError(f"--size must be an integer above {NUM_RESERVED_PIECES} (pad, eos, unk and "
                     f"the 256 byte pieces), got {size!r}")
  if not pathlib.Path(root).exists():
    raise VocabError(f"--root {root} does not exist: give the folder that holds v3/")
  processes.check_output_file(out, force, f"the vocabulary {out}", VocabError)
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

  def train(model_writer):
    spm.set_random_generator_seed(RANDOM_SEED)
    try:
      spm.SentencePieceTrainer.train(sentence_iterator=sentences(), model_writer=model_writer,
                                     vocab_size=size, **{**TRAINER_OPTIONS, **options})
    except RuntimeError as e:
      message = str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__
      # In the terms of this command (it named SentencePiece's own flags: helper-58's audit).
      if m := _TOO_FEW_PIECES.search(message):
        raise VocabError(f"--size {size} is below the {m.group(1)} pieces the characters of "
                         f"{root} need: give --size {m.group(1)} or more") from None
      raise VocabError(f"SentencePiece could not train on {root}: {message}") from None

  def train_in_a_child(model_writer):
    # SentencePiece trains in C++ without returning to Python, so Ctrl-C waited for it (minutes
    # on a large root: helper-33's audit). A forked child trains, dies with this process, and is
    # killed at Ctrl-C; what ended it comes back through a pipe: a VocabError's line, or the
    # errno of a failed write (for errors.writing's line).
    model_writer.flush()
    read_end, write_end = os.pipe()
    try:
      pid = processes.fork_dying_with_parent()
    except OSError as e:
      os.close(read_end)
      os.close(write_end)
      raise VocabError(f"cannot start SentencePiece's training process ({e.strerror})") from None
    if pid == 0:  # the child: trains into the inherited file, then leaves at once
      os.close(read_end)
      told = b""
      try:
        train(model_writer)
        model_writer.flush()
      except OSError as e:
        told = json.dumps({"errno": e.errno, "message": str(e)}).encode()
      except BaseException as e:  # pylint: disable=broad-except  (told to the parent)
        told = json.dumps({"message": str(e)}).encode()
      os.write(write_end, told[:4096])
      os._exit(1 if told else 0)  # pylint: disable=protected-access  (no cleanup of the parent's)
    os.close(write_end)
    try:
      with os.fdopen(read_end, "rb") as told_by_child:
        told = told_by_child.read()
      _, status = os.waitpid(pid, 0)
    except BaseException:
      os.kill(pid, signal.SIGKILL)
      os.waitpid(pid, 0)
      raise
    code = os.waitstatus_to_exitcode(status)
    if not code:
      return
    if not told:  # killed (the kernel's OOM killer, a signal of someone else's)
      raise VocabError(f"SentencePiece's training process was killed by signal {-code}"
                       if code < 0 else f"SentencePiece's training process ended with status "
                       f"{code}")
    what = json.loads(told)
    if "errno" in what:
      raise OSError(what["errno"], os.strerror(what["errno"]))
    raise VocabError(what["message"])

  echo(f"training {size} pieces on the train split of {root} (seconds for dataset-dev, minutes "
       "for a large root)")
  with errors.writing(f"the vocabulary {out}", out.parent, "give another --out"):
    processes.write_file_beside(out, train_in_a_child if in_a_child else train, binary=True,
                                replace=force, make_parents=True)
  return out


# `code-t5 vocab`.


def _cli(args) -> int:
  from code_t5.data import flcc  # pylint: disable=g-import-not-at-top  (as train_spm)
  # The flags, as train names them: flcc.Splits would name its own fields ("Splits.validation").
  flcc.check_fractions(args.validation_fraction, args.test_fraction)
  out = train_spm(args.root, args.size, args.out, force=args.force,
                  validation_fraction=args.validation_fraction, test_fraction=args.test_fraction,
                  echo=lambda line: print(line, file=sys.stderr), in_a_child=True)
  pieces = spm.SentencePieceProcessor(model_file=str(out)).GetPieceSize()
  print(f"wrote {out}: {pieces} pieces "
        f"(+{NUM_EXTRA_IDS} sentinels = {pieces + NUM_EXTRA_IDS} ids)")
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
  from code_t5.data import flcc  # pylint: disable=g-import-not-at-top  (as _cli)
  flcc.add_fraction_flags(parser)
  parser.set_defaults(func=_cli)
