"""The code SentencePiece vocabulary loses nothing (Python and TF agree), and `code-t5 vocab`."""

import pathlib
import re

import pytest
import seqio
import sentencepiece as spm
import tensorflow as tf

from code_t5 import cli
from code_t5 import test_utils
from code_t5.data import flcc
from code_t5.data import line_completion
from code_t5.data import sources
from code_t5.data import spm_vocabulary
from code_t5.data import vocab

# What SentencePiece's defaults (or a careless mapping) would lose: tabs, trailing spaces, CRLF, a
# lone CR, form feed, BOM, non-ASCII identifiers, emoji (astral plane, ZWJ and skin tones), the
# "▁" SentencePiece writes spaces as, text shaped like its sentinels, NBSP and other odd spaces.
NASTY = ("\ufeff  # leading spaces\n\tdef ƒ(ñ, 变量):\t \n"
         "\t\treturn 'é🙂👍🏽👨‍👩‍👧' + \"▁\" + '▁▁ ▁'  \r\n"
         "\r\n\n\n    x = ' <extra_id_0>'<extra_id_1>\x0c\n"
         "y\u00a0=\u20031\u3000# ⁇ <unk> <s></s>\u2028\u200b\r"
         "last line without newline   ")
CASES = ["", " ", "\n", "\t", "▁", "▁▁", " ▁", "▁ ", "a▁", "▁a", "\r\n", "   \n   ", NASTY]


@pytest.fixture(scope="module")
def spm_vocab():
  return spm_vocabulary.dev_spm_vocabulary()


def _all_ways(vocabulary, text):
  """(ids, decode, encode_tf ids, decode_tf) of one text."""
  ids = list(vocabulary.encode(text))
  tf_ids = vocabulary.encode_tf(tf.constant(text)).numpy().tolist()
  decoded_tf = vocabulary.decode_tf(tf.constant(ids or [0], tf.int32)).numpy().decode("utf-8")
  return ids, vocabulary.decode(ids), tf_ids, decoded_tf


def test_every_dev_file_round_trips_exactly_in_python_and_tf(spm_vocab):
  count = tokens = 0
  for source_file in flcc.read_files(sources.DEV_ROOT):
    ids, decoded, tf_ids, decoded_tf = _all_ways(spm_vocab, source_file.text)
    assert decoded == source_file.text, source_file.path
    assert tf_ids == ids, source_file.path
    assert decoded_tf == source_file.text, source_file.path
    count += 1
    tokens += len(ids)
  assert count > 300
  # Not the byte vocabulary in disguise: > 4 bytes per token over the whole dev dataset.
  assert sum(len(f.text.encode()) for f in flcc.read_files(sources.DEV_ROOT)) / tokens > 4


@pytest.mark.parametrize("text", CASES)
def test_nasty_text_round_trips_and_all_four_functions_agree(spm_vocab, text):
  ids, decoded, tf_ids, decoded_tf = _all_ways(spm_vocab, text)
  assert decoded == text
  assert tf_ids == ids
  assert decoded_tf == text
  # No text is ever encoded as unk or as a sentinel.
  pieces = spm_vocab.tokenizer.GetPieceSize()
  assert all(i != spm_vocab.unk_id and i < pieces for i in ids)


def test_literal_space_symbol_is_byte_pieces_and_other_text_is_plain_sentencepiece(spm_vocab):
  tokenizer = spm_vocab.tokenizer
  assert spm_vocab.encode("x = 1\n") == tokenizer.EncodeAsIds("x = 1\n")
  symbol = [tokenizer.PieceToId(f"<0x{b:02X}>") for b in "▁".encode()]
  assert spm_vocab.encode("a▁b") == (tokenizer.EncodeAsIds("a") + symbol +
                                     tokenizer.EncodeAsIds("b"))


def test_newlines_and_indentation_are_pieces_not_bytes(spm_vocab):
  pieces = [spm_vocab.tokenizer.IdToPiece(i) for i in
            spm_vocab.encode("def f(x):\n        return x\n\n\n")]
  assert "▁" * 8 in pieces
  assert not any(p.startswith("<0x") for p in pieces), pieces


def test_t5_ids_and_sentinels_after_the_pieces(spm_vocab):
  assert (spm_vocab.pad_id, spm_vocab.eos_id, spm_vocab.unk_id) == (0, 1, 2)
  assert spm_vocab.extra_ids == vocab.NUM_EXTRA_IDS
  assert spm_vocab.vocab_size == vocab.DEV_SPM_SIZE + vocab.NUM_EXTRA_IDS
  ids = spm_vocab.encode("x = 1")
  sentinel = spm_vocab.vocab_size - 1  # t5's sentinel_id
  # Sentinels, pad and unk decode to nothing; decoding stops at EOS; the same in TF, batched too.
  assert spm_vocab.decode([sentinel] + ids + [2, sentinel - 5]) == "x = 1"
  assert spm_vocab.decode(ids + [1] + ids) == "x = 1"
  batch = tf.constant([[sentinel] + ids + [0, 0], ids + [1, 5, 6]], tf.int32)
  assert spm_vocab.decode_tf(batch).numpy().tolist() == [b"x = 1", b"x = 1"]
  ragged = spm_vocab.encode_tf(tf.constant(["x = 1", "a▁b"])).to_list()
  assert ragged == [ids, spm_vocab.encode("a▁b")]


def test_no_piece_is_longer_than_line_completion_assumes(spm_vocab):
  tokenizer = spm_vocab.tokenizer
  longest = max(len(tokenizer.IdToPiece(i)) for i in range(tokenizer.GetPieceSize())
                if not tokenizer.IsByte(i) and not tokenizer.IsControl(i))
  assert longest <= line_completion.MAX_CHARS_PER_TOKEN


def test_the_vocabulary_pickles_and_compares_equal(spm_vocab):
  import pickle  # pylint: disable=g-import-not-at-top
  copy = pickle.loads(pickle.dumps(spm_vocab))
  assert copy == spm_vocab
  assert copy.encode("a▁b c") == spm_vocab.encode("a▁b c")


def test_a_lossy_sentencepiece_model_is_refused():
  test_model = pathlib.Path(seqio.__file__).parent / "test_data/sentencepiece/sentencepiece.model"
  with pytest.raises(vocab.VocabError, match="not a code vocabulary"):
    spm_vocabulary.CodeSentencePieceVocabulary(test_model).encode("x")


def test_the_committed_vocabulary_is_reproduced_by_the_documented_command(tmp_path):
  out = tmp_path / "again.model"
  assert cli.main(["vocab", "--root", str(sources.DEV_ROOT), "--size", str(vocab.DEV_SPM_SIZE),
                   "--out", str(out)]) == 0
  assert out.read_bytes() == vocab.DEV_SPM_MODEL.read_bytes()


# The trainer, on a small tree.


@pytest.fixture(scope="module")
def small_root(tmp_path_factory):
  code = "".join(f"def function_{i}(value):\n    return value * {i} + 'ünï'\n\n\n"
                 for i in range(40))
  return test_utils.make_flcc_tree(tmp_path_factory.mktemp("flcc"), {
      test_utils.repo_in_split("train"): {f"pkg/m{i}.py": code + f"x = {i}\n" for i in range(3)},
      test_utils.repo_in_split("validation"): {"held/out.py": "HELD_OUT_ONLY = 1\n" * 50},
  })


def test_trains_a_small_lossless_vocabulary_on_the_train_split_only(small_root, tmp_path):
  out = vocab.train_spm(small_root, 300, tmp_path / "small.model")
  assert list(tmp_path.iterdir()) == [out]  # no temporary file left
  assert out.stat().st_mode & 0o044 == 0o044  # readable like any written file, not mkstemp's 0600
  small = spm_vocabulary.CodeSentencePieceVocabulary(out)
  assert small.tokenizer.GetPieceSize() == 300
  for text in CASES:
    assert small.decode(small.encode(text)) == text
    assert small.encode_tf(tf.constant(text)).numpy().tolist() == small.encode(text)
  pieces = [small.tokenizer.IdToPiece(i) for i in range(vocab.NUM_RESERVED_PIECES, 300)]
  assert "value" in pieces  # learnt from the train split ...
  assert not any(c in "".join(pieces) for c in "HELD")  # ... and nothing from validation


def test_refuses_to_overwrite_without_force(small_root, tmp_path):
  out = tmp_path / "v.model"
  out.write_bytes(b"keep me")
  with pytest.raises(vocab.VocabError, match="exists: pass --force"):
    vocab.train_spm(small_root, 300, out)
  assert out.read_bytes() == b"keep me"
  vocab.train_spm(small_root, 300, out, force=True)
  assert out.read_bytes() != b"keep me"
  assert len(list(tmp_path.iterdir())) == 1


def test_out_s_missing_folders_are_made(small_root, tmp_path):
  """As `baseline --out` and `import --out` make theirs (it refused: helper-40's audit)."""
  out = tmp_path / "vocabs" / "python" / "v.model"
  vocab.train_spm(small_root, 300, out)
  assert spm.SentencePieceProcessor(model_file=str(out)).GetPieceSize() == 300
  assert [p.name for p in out.parent.iterdir()] == ["v.model"]


@pytest.mark.parametrize("argv,message", [
    (["--size", "0"], "--size must be an integer above 259"),
    (["--size", "-5"], "--size must be an integer above 259"),
    (["--size", "259"], "--size must be an integer above 259"),
    (["--root", "{tmp}/missing"], "--root {tmp}/missing does not exist"),
    (["--out", "{tmp}/exists.model"], "exists: pass --force"),
    (["--out", "{tmp}/exists.model/v.model"], "cannot write the vocabulary {tmp}/exists.model/v.model: "
     "Not a directory: give another --out"),
    (["--root", "{tmp}"], "no v3/"),
    # Refused after --out's folders were made to try them: they are removed (they were left).
    (["--root", "{tmp}", "--out", "{tmp}/made/deeper/v.model"], "no v3/"),
    # The flags, not flcc.Splits' fields ("Splits.validation must be a fraction in [0, 1]").
    (["--validation-fraction", "2"], "--validation-fraction 2.0 is not a fraction: give a share "
     "between 0 and 1"),
    (["--validation-fraction", "0.7", "--test-fraction", "0.7"], "--validation-fraction 0.7 + "
     "--test-fraction 0.7 hold out more than every repository"),
])
def test_cli_bad_input_is_one_line_and_writes_nothing(small_root, tmp_path, capsys, argv, message):
  (tmp_path / "exists.model").write_bytes(b"old")
  args = {"--root": str(small_root), "--size": "300", "--out": str(tmp_path / "new.model")}
  for flag, value in zip(argv[::2], argv[1::2]):
    args[flag] = value.format(tmp=tmp_path)
  assert cli.main(["vocab", *[x for kv in args.items() for x in kv]]) == 2
  error = capsys.readouterr().err.strip()
  assert "\n" not in error and "Traceback" not in error
  assert error.startswith("code-t5 vocab: ") and message.format(tmp=tmp_path) in error, error
  assert sorted(p.name for p in tmp_path.iterdir()) == ["exists.model"]
  assert (tmp_path / "exists.model").read_bytes() == b"old"


def test_a_size_below_the_roots_characters_is_told_in_this_commands_terms(tmp_path, capsys):
  # SentencePiece's own line named its flags ("--character_coverage"), not --size's floor
  # (helper-58's audit).
  root = test_utils.make_flcc_tree(tmp_path / "flcc", {
      test_utils.repo_in_split("train"): {"m.py": "".join(f"x = {chr(c)!r}\n"
                                                          for c in range(0x3b1, 0x3b1 + 60))}})
  out = tmp_path / "v.model"
  assert cli.main(["vocab", "--root", str(root), "--size", "270", "--out", str(out)]) == 2
  error = capsys.readouterr().err.splitlines()[-1]
  assert re.fullmatch(fr"code-t5 vocab: --size 270 is below the (\d+) pieces the characters of "
                      fr"{re.escape(str(root))} need: give --size \1 or more", error), error
  assert not out.exists()
