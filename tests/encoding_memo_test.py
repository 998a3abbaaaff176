"""Tests of code_t5.engine.encoding_memo: a file's pieces from its remembered parts."""

import pathlib
import threading

from code_t5 import test_utils
from code_t5.data import flcc
from code_t5.data import sources
from code_t5.data import vocab
from code_t5.engine import complete
from code_t5.engine import encoding_memo
from code_t5.engine import repository
from code_t5.engine import tokenizers

EDGE_TEXTS = ["", "\n", " ", "x", "    " * 3 + "pass\n" * 3, "a b\n" * 500, "\n" * 300 + "  x",
              "s = '▁▁x▁'\n" * 40, " " * 300 + "x\n" + "y" * 4000, "\t  \n  " * 400]


def _tokenizer():
  return tokenizers.Pieces(pathlib.Path(vocab.DEV_SPM_MODEL).read_bytes(), 100)


def _dev_texts(count):
  return [f.text for f in list(flcc.read_files(sources.DEV_ROOT, only_split="train"))[:count]]


def test_the_parts_pieces_are_the_whole_texts():
  tokenizer = _tokenizer()
  memo = encoding_memo.EncodingMemo(tokenizer)
  for text in _dev_texts(60) + EDGE_TEXTS:
    parts = encoding_memo.parts(text)
    assert "".join(parts) == text
    assert memo.encode(text).tolist() == tokenizer.encode(text), text[:60]
  # dataset-dev's files are cut into parts of a few hundred characters.
  text = max(_dev_texts(60), key=len)
  assert len(encoding_memo.parts(text)) > len(text) / 2000


def test_moving_down_a_file_encodes_only_what_changed():
  # The copy cache encodes the file above and below the cursor's line at every request: as the
  # cursor moves down a line, only the parts around it are encoded again.
  tokenizer = _tokenizer()
  text = max(_dev_texts(60), key=len)
  memo = encoding_memo.EncodingMemo(tokenizer)
  starts = [0] + [k + 1 for k, c in enumerate(text) if c == "\n"]
  encoded = []
  for start, end in zip(starts[100:140], starts[101:141]):
    before = memo.encoded_chars
    above, below = text[:start], text[end:]
    assert memo.encode(above).tolist() == tokenizer.encode(above)
    assert memo.encode(below).tolist() == tokenizer.encode(below)
    encoded.append(memo.encoded_chars - before)
  assert encoded[0] > 0.9 * len(text)  # the first time: all of it (but parts seen twice)
  assert max(encoded[1:]) < len(text) / 10, (encoded, len(text))


def test_an_edit_moves_no_cut_outside_its_part():
  text = max(_dev_texts(60), key=len)
  middle = text.index("\n", len(text) // 2) + 1
  edited = text[:middle] + "    value = compute(value, 1)\n" + text[middle:]
  before, after = encoding_memo.parts(text), encoding_memo.parts(edited)
  assert len(set(after) - set(before)) <= 2  # the edited part (or two, if it made a cut)
  tokenizer = _tokenizer()
  memo = encoding_memo.EncodingMemo(tokenizer)
  memo.encode(text)
  chars = memo.encoded_chars
  assert memo.encode(edited).tolist() == tokenizer.encode(edited)
  assert memo.encoded_chars - chars < 3000


def test_a_memo_past_its_budget_forgets_the_oldest_parts_and_stays_exact():
  tokenizer = _tokenizer()
  memo = encoding_memo.EncodingMemo(tokenizer, max_chars=5000)
  texts = _dev_texts(8)
  for text in texts + texts:
    assert memo.encode(text).tolist() == tokenizer.encode(text)
    assert sum(map(len, memo._parts)) <= 5000  # pylint: disable=protected-access
  assert memo.encoded_chars >= 2 * sum(map(len, texts)) - 5000  # nothing left of the first round


def test_bytes_are_encoded_directly():
  tokenizer = tokenizers.Bytes(vocab.byte_vocabulary().extra_ids)
  memo = encoding_memo.EncodingMemo(tokenizer)
  assert memo.encode("x = 'é'\n").tolist() == tokenizer.encode("x = 'é'\n")
  assert len(memo) == 0


def test_a_file_the_repository_holds_is_not_encoded_again_for_its_first_completion():
  # The LSP server adds a document it opens to the repository's index; the first completion in
  # it finds the file's parts in the tokenizer's shared memo (all but the cursor line's part).
  completer = complete.Completer(test_utils.PRETRAINED, complete.EngineOptions())
  memo = encoding_memo.shared(completer.tokenizer)
  text = max(_dev_texts(60), key=len)
  project = repository.Repository(completer.tokenizer)
  project.add("big.py", text)
  cursor = text.index("\n", len(text) // 2) + 5
  before = memo.encoded_chars
  completer.complete_at(text, cursor, repository=project, path="big.py")
  assert memo.encoded_chars - before < 3000, (memo.encoded_chars - before, len(text))
  fresh = complete.Completer(test_utils.PRETRAINED, complete.EngineOptions())
  fresh.forget_requests()  # the shared memo emptied: the same reply from encoding afresh
  want = fresh.complete_at(text, cursor, repository=repository.Repository(fresh.tokenizer),
                           path="big.py")
  got = completer.complete_at(text, cursor, repository=repository.Repository(fresh.tokenizer),
                              path="big.py")
  assert [(c.text, c.score) for c in got.candidates] == [(c.text, c.score) for c in want.candidates]


def test_threads_sharing_a_memo_get_the_tokenizers_pieces():
  # The LSP server's reader adds documents through the repository's index while its model
  # thread completes: both encode through the tokenizer's one memo, which forgets as they go.
  tokenizer = _tokenizer()
  memo = encoding_memo.EncodingMemo(tokenizer, max_chars=20_000)
  texts = _dev_texts(12)
  wanted = [tokenizer.encode(text) for text in texts]
  wrong = []

  def encode_all(order):
    for k in order * 3:
      if memo.encode(texts[k]).tolist() != wanted[k]:
        wrong.append(k)

  threads = [threading.Thread(target=encode_all, args=(order,))
             for order in (list(range(12)), list(reversed(range(12))))]
  for thread in threads:
    thread.start()
  for thread in threads:
    thread.join()
  assert not wrong


def test_texts_encoded_together_get_their_own_pieces_and_share_their_parts():
  tokenizer = _tokenizer()
  memo = encoding_memo.EncodingMemo(tokenizer)
  texts = _dev_texts(30) + EDGE_TEXTS
  got = memo.encode_many(texts + texts[:5])  # the same texts twice in one call
  assert [ids.tolist() for ids in got] == [tokenizer.encode(text) for text in texts + texts[:5]]
  # Each distinct part was given to the tokenizer once, and is remembered.
  distinct = {part for text in texts for part in encoding_memo.parts(text)}
  assert memo.encoded_chars == sum(len(part) for part in distinct)
  assert memo.encode_many(texts[:5])[0].tolist() == tokenizer.encode(texts[0])
  assert memo.encoded_chars == sum(len(part) for part in distinct)
