"""code_t5.engine.tokenizers: the engine's TensorFlow-free tokenizers give the seqio vocabularies'
ids."""

import pytest

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
