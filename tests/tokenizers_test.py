"""code_t5.engine.tokenizers: the engine's TensorFlow-free tokenizers give the seqio vocabularies'
ids."""

import pathlib

import pytest

from code_t5 import test_utils
from code_t5.data import flcc
from code_t5.data import sources
from code_t5.data import spm_vocabulary
from code_t5.data import vocab
from code_t5.engine import tokenizers

TRICKY = ["", "\n", "x = 1\n", "\tif a:\n\t\treturn '▁'\n", "s = '▁▁x▁'", "é = 'ü😀'\n",
          "    " * 9 + "pass  \r\n", "<extra_id_0> <unk> </s>", "\x00\x7f"]


def _dev_texts(count=40):
  files = list(flcc.read_files(sources.DEV_ROOT, only_split="train"))
  return [f.text for f in files[:count]]


@pytest.fixture(scope="module", params=["bytes", "pieces"])
def pair(request):
  if request.param == "bytes":
    seqio_vocab = vocab.byte_vocabulary()
    return seqio_vocab, tokenizers.Bytes(seqio_vocab.extra_ids)
  seqio_vocab = spm_vocabulary.dev_spm_vocabulary()
  return seqio_vocab, tokenizers.Pieces(seqio_vocab.sp_model, seqio_vocab.extra_ids)


def test_same_ids_and_text_as_the_seqio_vocabulary(pair):
  seqio_vocab, tokenizer = pair
  assert tokenizer.vocab_size == seqio_vocab.vocab_size
  for text in TRICKY + _dev_texts():
    ids = tokenizer.encode(text)
    assert ids == list(seqio_vocab.encode(text)), text[:80]
    assert tokenizer.decode(ids) == text


def test_piece_bytes_spell_what_each_id_decodes_to(pair):
  seqio_vocab, tokenizer = pair
  for i, data in enumerate(tokenizer.piece_bytes):
    if data is None:
      assert seqio_vocab.decode([i]) == "", i  # control ids decode to nothing
    elif len(data) == 1 and data[0] >= 0x80:
      continue  # a lone byte of a multi-byte character: no text on its own
    else:
      assert data.decode("utf-8") == seqio_vocab.decode([i]), i


@pytest.mark.parametrize("model_file", ["dev", "shipped"])
def test_pieces_read_from_the_model_file_are_those_sentencepiece_gives(model_file):
  # The piece table is read from the model's protobuf bytes (a cold `complete` pays ~20 ms less
  # than asking sentencepiece id by id); both readings must agree on every id, byte pieces and
  # control ids included.
  path = (vocab.DEV_SPM_MODEL if model_file == "dev" else
          next(test_utils.PRETRAINED.glob("runtime/*/vocab.model")))
  proto = pathlib.Path(path).read_bytes()
  tokenizer = tokenizers.Pieces(proto, 100)
  read = tokenizers._model_pieces(proto)  # pylint: disable=protected-access
  asked = tokenizer._asked_pieces(tokenizer._sp.get_piece_size())  # pylint: disable=protected-access
  assert [piece for piece, _ in read] == [piece for piece, _ in asked]
  assert tokenizer.piece_bytes == tokenizers._piece_bytes(asked)  # pylint: disable=protected-access
  table = tokenizer.piece_bytes
  assert sum(p is None for p in table) == 3 and table[3:259] == [bytes([b]) for b in range(256)]


def test_a_model_file_the_reader_cannot_parse_falls_back_to_sentencepiece(monkeypatch):
  proto = pathlib.Path(vocab.DEV_SPM_MODEL).read_bytes()
  assert tokenizers._model_pieces(proto[:-3]) is None  # pylint: disable=protected-access
  assert tokenizers._model_pieces(b"\x0a\x05\x0a\x09ab") is None  # pylint: disable=protected-access
  # Where the reader gives up, the table comes from sentencepiece's API: the same table.
  read = tokenizers.Pieces(proto, 100).piece_bytes
  monkeypatch.setattr(tokenizers, "_model_pieces", lambda model_proto: None)
  assert tokenizers.Pieces(proto, 100).piece_bytes == read


def test_is_piece_prefix_is_every_prefix_of_every_piece(pair):
  _, tokenizer = pair
  prefixes = {p[:n] for p in tokenizer.piece_bytes if p for n in range(1, len(p) + 1)}
  for text in prefixes:
    assert tokenizer.is_piece_prefix(text)
  for text in (b"\x00zz", b"qqqqqq", b"self.xyzzy", b" " * 40):
    assert tokenizer.is_piece_prefix(text) == (text in prefixes)


def test_text_encoded_in_chunks_cut_where_words_start_gives_the_whole_texts_pieces():
  # Pieces.encode calls sentencepiece on chunks of ~2k characters (each call holds the GIL); cut
  # where a word starts, chunks of any size give the pieces of the whole text.
  tokenizer = tokenizers.Pieces(pathlib.Path(vocab.DEV_SPM_MODEL).read_bytes(), 100)
  sp = tokenizer._sp  # pylint: disable=protected-access
  texts = _dev_texts(60) + [" " * 300 + "x", "a" * 5000, "x  = 1\n" * 900, "\t  \n  " * 400]
  for text in texts:
    for size in (7, 50, 2048):
      chunks = tokenizers._word_chunks(text, size)  # pylint: disable=protected-access
      assert "".join(chunks) == text
      assert [i for chunk in chunks for i in sp.encode(chunk)] == sp.encode(text), (size, text[:60])
  assert len(tokenizers._word_chunks(_dev_texts(1)[0] * 3, 50)) > 10  # pylint: disable=protected-access


def test_encoding_many_texts_at_once_gives_each_texts_own_pieces(monkeypatch):
  # Pieces.encode_many gives sentencepiece batches of chunks on several threads (a repository's
  # files, code_t5.engine.repository.Repository.of_folder); a batch may end inside a text.
  tokenizer = tokenizers.Pieces(pathlib.Path(vocab.DEV_SPM_MODEL).read_bytes(), 100)
  texts = _dev_texts(60) + TRICKY + ["a" * 5000, "x  = 1\n" * 3000, "▁" * 7]
  wanted = [tokenizer.encode(text) for text in texts]
  assert tokenizer.encode_many(texts) == wanted
  monkeypatch.setattr(tokenizers, "BATCH_CHARS", 100)
  assert tokenizer.encode_many(texts) == wanted
  assert tokenizer.encode_many([]) == []
  byte_tokenizer = tokenizers.Bytes(100)
  assert byte_tokenizer.encode_many(TRICKY) == [byte_tokenizer.encode(text) for text in TRICKY]
