"""code_t5.engine.decoding and the Completer's search, on the shipped model (no TensorFlow,
seconds).

That greedy lines equal Mesh TF's decodes is pretrained_test; that the runtime computes Mesh TF's
logits is runtime_test; that healing completes half-typed words of memorised files is
learning_test. Here: what the search returns and how the options change it.
"""

import types

import numpy as np
import pytest

from code_t5 import test_utils
from code_t5.data import flcc
from code_t5.data import line_completion
from code_t5.data import sources
from code_t5.engine import complete
from code_t5.engine import decoding
from code_t5.engine import tokenizers

# The search alone: no healing, filters, names, cache, retrieval, similar code or confidence gate.
PLAIN = complete.EngineOptions(top=5, heal=False, filters=False, names=False, cache=False,
                               retrieval=False, similar=False,
                               min_score=complete.DEFAULT_MIN_SCORE)


@pytest.fixture(scope="module")
def completer():
  return complete.Completer(test_utils.PRETRAINED, PLAIN)


def _points(count=12, typed=True):
  """(text, cursor) at dataset-dev's validation points; typed: the text as the point's line is
  typed (test_utils.as_typed), else the whole file."""
  files = flcc.read_files(sources.DEV_ROOT, only_split="validation")
  return [(test_utils.as_typed(f.text, p.cursor) if typed else f.text, p.cursor)
          for f, p in line_completion.points_of_files(files)][:count]


def test_candidates_are_distinct_single_lines_best_first(completer):
  for text, cursor in _points():
    result = completer.complete_at(text, cursor)
    texts = [c.text for c in result.candidates]
    scores = [c.score for c in result.candidates]
    assert 1 <= len(texts) <= 5 and len(set(texts)) == len(texts)
    assert not any("\n" in t for t in texts)
    assert scores == sorted(scores, reverse=True) and all(s <= 0 for s in scores)
    assert result.completion == texts[0]


def test_the_best_line_does_not_depend_on_how_many_are_asked_for(completer):
  for text, cursor in _points(6):
    assert (completer.complete_at(text, cursor, top=1).completion
            == completer.complete_at(text, cursor, top=5).completion)


def test_lines_that_do_not_end_within_max_tokens_are_dropped():
  # The same search but for max_tokens: what the short one keeps, the default one finds too.
  short = complete.Completer(test_utils.PRETRAINED,
                             complete.EngineOptions(max_tokens=3, filters=False))
  default = complete.Completer(test_utils.PRETRAINED, complete.EngineOptions(filters=False))
  for text, cursor in _points(6):
    _, ranked = short.ranked(text[:cursor])
    assert all(line.tokens <= 3 for line, _ in ranked)
    assert len(ranked) <= len(default.ranked(text[:cursor])[1])


def test_split_heal_takes_back_the_last_piece_unless_it_holds_a_newline(completer):
  tokenizer = completer.tokenizer
  ids = tokenizer.encode("import os\nos.pa")
  context, heal = decoding.split_heal(ids, tokenizer)
  assert context == ids[:-1] and heal == tokenizer.piece_bytes[ids[-1]] and heal.endswith(b"pa")
  assert tokenizer.decode(context).encode() + heal == b"import os\nos.pa"
  ends_in_newline = tokenizer.encode("import os\n")
  assert decoding.split_heal(ends_in_newline, tokenizer) == (ends_in_newline, b"")
  one_piece = tokenizer.encode('""')  # a file's first piece too: '"""' is a piece
  assert decoding.split_heal(one_piece, tokenizer) == ([], b'""')
  for indented in ("def f():\n    ", "def f():\n    x = 1\n  "):
    ids = tokenizer.encode(indented)
    assert decoding.split_heal(ids, tokenizer) == (ids, b"")


@pytest.mark.parametrize("prefix, heal", [
    ("        return ", b"return "),  # "return" " ": the model chooses " self", not indentation
    ("    missing = ", b" = "),
    ("    x = f(a, ", b"(a, "),
])
def test_split_heal_takes_back_spaces_after_code_with_the_piece_before_them(completer, prefix,
                                                                           heal):
  tokenizer = completer.tokenizer
  ids = tokenizer.encode(prefix)
  context, taken = decoding.split_heal(ids, tokenizer)
  assert taken == heal and len(ids) - len(context) == 2
  assert tokenizer.decode(context).encode() + taken == prefix.encode()


def test_healed_spaces_after_code_are_followed_by_code_not_indentation():
  healing = complete.Completer(test_utils.PRETRAINED, complete.EngineOptions(top=5, min_score=complete.DEFAULT_MIN_SCORE))
  for prefix in ("class X:\n    def domain(self):\n        return ",
                 "def f(expected):\n    i = j = 0\n    missing = "):
    candidates = healing.complete(prefix).candidates
    assert candidates and all(c.text[:1].strip() for c in candidates), candidates


@pytest.mark.parametrize("prefix, heal", [
    ("        print(x, f.rea", b".rea"),  # " f" ".re" "a": ".read" is a piece
    ("    return os.path.jo", b" os.path.jo"),  # " os.path." "jo": " os.path.join(" is one
])
def test_split_heal_takes_back_the_pieces_a_whole_piece_would_cover(completer, prefix, heal):
  tokenizer = completer.tokenizer
  ids = tokenizer.encode(prefix)
  context, taken = decoding.split_heal(ids, tokenizer)
  assert taken == heal and len(ids) - len(context) > 1
  assert tokenizer.decode(context).encode() + taken == prefix.encode()
  assert any(p and p.startswith(heal) and p != heal for p in tokenizer.piece_bytes)


def test_healing_completes_a_half_typed_word_with_whole_pieces():
  prefix = "import os\nimport sys\n\n\ndef main(argv):\n    path = os.pa"
  healing = complete.Completer(test_utils.PRETRAINED,
                               complete.EngineOptions(top=5, filters=False, min_score=complete.DEFAULT_MIN_SCORE))
  healed = healing.complete(prefix).candidates
  # " os." "pa" is taken back: the model writes " os.path." as it learnt it, one piece.
  assert all(c.text.startswith("th") for c in healed)
  plain = complete.Completer(test_utils.PRETRAINED, PLAIN).complete(prefix).candidates
  assert [c.text for c in plain] != [c.text for c in healed]


def test_min_score_shows_nothing_rather_than_a_doubtful_line():
  strict = complete.Completer(test_utils.PRETRAINED, complete.EngineOptions(min_score=-1e-6))
  text, cursor = _points(1)[0]
  result = strict.complete_at(text, cursor)
  assert result.candidates == () and result.completion == ""
  assert result.reply()["completions"] == [] and result.reply()["completion"] == ""


class _ChainNetwork:
  """A language model whose next-piece distribution is a fixed table on the last piece (a Markov
  chain), in the interface LineSearch uses: its most probable line is known exactly."""

  num_heads, head_dim, layers = 1, 1, ()

  def __init__(self, pieces, table):
    self.tokenizer = tokenizers.Tokenizer()
    self.tokenizer.piece_bytes = pieces
    self.vocab_rows = len(pieces)
    self._logits = np.log(np.asarray(table, np.float32) + 1e-30)

  def start(self, context_ids):
    return types.SimpleNamespace(logits=self._logits[context_ids[-1]], length=len(context_ids))

  def step(self, beams, tokens):
    return self._logits[tokens]


def test_a_confident_line_beats_the_unlikely_endings_of_the_first_steps():
  # After the context and after each of the pieces a..e comes the next letter with p 0.9, or the
  # line ends (EOS or a newline, p 0.05 each); after f it ends. The best line is "abcdef" (log p
  # -0.63, score -0.26); each shorter line is < 5 % as likely. A search that stopped once 5 lines
  # had ended returned one of the short ones: the endings of the first steps fill that count.
  pieces = [None, None, None] + [c.encode() for c in "abcdef"] + [b"\n", b"x"]
  a, f, newline, context = 3, 8, 9, 10  # pad, EOS, unk are 0-2; "x" is the context
  table = np.zeros((len(pieces), len(pieces)))
  for row, letter in zip([context] + list(range(a, f)), range(a, f + 1)):
    table[row, letter] = 0.9
    table[row, [tokenizers.EOS_ID, newline]] = 0.05
  table[f, newline] = 1.0
  table[newline, newline] = table[tokenizers.EOS_ID, newline] = 1.0  # (never read)
  search = decoding.LineSearch(_ChainNetwork(pieces, table))
  lines = search.search([context], beam_size=5, top=5, max_tokens=16)
  assert [line.text for line in lines] == ["abcdef", "abcde", "abcd", "abc", "ab"]
  assert lines[0].tokens == 7
  assert lines[0].score == pytest.approx(6 * np.log(0.9) / 7 ** decoding.LENGTH_EXPONENT,
                                         abs=1e-4)


def test_loops_are_groups_of_pieces_repeated_three_times_or_one_piece_four():
  assert decoding.loops([7, 1, 2, 1, 2, 1, 2])
  assert not decoding.loops([7, 1, 2, 1, 2])
  assert decoding.loops([3, 4, 5, 3, 4, 5, 3, 4, 5])
  assert decoding.loops([5, 5, 5, 5]) and not decoding.loops([5, 5, 5])
  assert not decoding.loops([1, 2, 1, 2, 1, 2, 9])  # the last pieces must repeat


def test_a_looping_beam_does_not_hold_the_search_open():
  # After the context: "c" (p 0.3, then the line ends) or "a" (p 0.7); a and b then follow each
  # other with p 0.99 and end the line with p 0.01. The loop abab... grows more likely per piece
  # as it goes, so by score it stays ahead of the ended "c" for ever: a search that waited for it
  # ran to max_tokens. It must stop once the open beams have looped, with "c" first and the
  # ended ab-lines kept (real lines repeat too: they are not dropped).
  pieces = [None, None, None, b"a", b"b", b"c", b"\n", b"x"]
  a, b, c, newline, context = 3, 4, 5, 6, 7
  table = np.zeros((len(pieces), len(pieces)))
  table[context, [c, a]] = 0.3, 0.7
  table[c, newline] = 1.0
  table[a, [b, tokenizers.EOS_ID]] = 0.99, 0.01
  table[b, [a, newline]] = 0.99, 0.01
  network = _ChainNetwork(pieces, table)
  steps = []
  step = network.step
  network.step = lambda beams, tokens: steps.append(1) or step(beams, tokens)
  lines = decoding.LineSearch(network).search([context], beam_size=5, top=5, max_tokens=40)
  assert lines[0].text == "c"
  assert "ab" in [line.text for line in lines]
  assert len(steps) < 10


def test_heal_masks_allow_exactly_the_pieces_that_agree_with_the_heal_text(completer):
  search = decoding.LineSearch(completer.network)
  pieces = search._pieces  # pylint: disable=protected-access
  rng = np.random.default_rng(0)
  words = [p for p in pieces if p]
  drawn = rng.integers(len(words), size=decoding.HEAL_MASKS_KEPT + 50)
  texts = [b" ", b"s", b"self.", b"    ", b"\t", b"\xc3", b"xyzzy", b"()"] + [
      words[i][:1 + rng.integers(4)] for i in drawn]
  for text in texts + texts[:8]:  # past HEAL_MASKS_KEPT, then again: kept masks stay right
    want = [p is not None and (p.startswith(text) or text.startswith(p)) for p in pieces]
    assert search._heal_mask(text).tolist() == want, text  # pylint: disable=protected-access


def test_a_context_read_as_the_user_types_is_read_once_and_bit_identical():
  # The default engine: the similar code comes first; the context starts at a line.
  completer = complete.Completer(test_utils.PRETRAINED)
  network = completer.network
  previous, read, positions, reused, keystrokes = None, 0, 0, 0, 0
  for text, cursor in _points(4, typed=False):
    for keystroke in test_utils.keystrokes(text, cursor):
      _, ids = completer.context_ids(text[:keystroke])
      ids, _ = decoding.split_heal(ids, completer.tokenizer)
      afresh, again = network.start(ids), network.start(ids, reuse=previous)
      for got, want in zip([again.logits, *again.keys, *again.values],
                           [afresh.logits, *afresh.keys, *afresh.values]):
        assert np.array_equal(got, want)  # equal bits, not nearly equal floats
      read, positions = read + again.read, positions + again.length
      reused += again.read < again.length
      keystrokes += 1
      previous = again
  # Most keystrokes reuse the reading before them; fewer than half the positions are read.
  assert reused >= 0.8 * keystrokes and read < 0.5 * positions, (reused, keystrokes, read)


def test_a_reply_does_not_depend_on_the_requests_before_it():
  # The Completer keeps its last reading and the file's pieces; a reply is the same bits as a
  # fresh Completer's (serve's workers and the LSP answer with one Completer per process).
  typing = complete.Completer(test_utils.PRETRAINED, complete.EngineOptions(min_score=-1e9))
  for text, cursor in _points(3, typed=False):
    for keystroke in list(test_utils.keystrokes(text, cursor))[::3]:
      fresh = complete.Completer(test_utils.PRETRAINED, complete.EngineOptions(min_score=-1e9))
      typed = test_utils.as_typed(text, keystroke)
      got, want = typing.complete_at(typed, keystroke), fresh.complete_at(typed, keystroke)
      assert [(c.text, c.score) for c in got.candidates] == [
          (c.text, c.score) for c in want.candidates]


def test_a_reply_after_moving_to_other_lines_of_a_file_is_a_fresh_completers():
  # Moving the cursor from line to line, the Completer encodes only the changed parts of the file
  # (encoding_memo) and keeps the file's cache index while it stays on a line: every reply is a
  # fresh Completer's, down the file, back up, and in another file.
  moving = complete.Completer(test_utils.PRETRAINED, complete.EngineOptions(min_score=-1e9))
  (text, _), (other, other_cursor) = _points(1, typed=False)[0], _points(12)[-1]
  starts = [k + 1 for k, c in enumerate(text) if c == "\n"]
  cursors = [(test_utils.as_typed(text, starts[k] + 4), starts[k] + 4)
             for k in (30, 31, 32, 40, 31)] + [(other, other_cursor)]
  for source, cursor in cursors:
    fresh = complete.Completer(test_utils.PRETRAINED, complete.EngineOptions(min_score=-1e9))
    got, want = moving.complete_at(source, cursor), fresh.complete_at(source, cursor)
    assert [(c.text, c.score) for c in got.candidates] == [
        (c.text, c.score) for c in want.candidates]


def test_the_context_starts_at_a_line_unless_that_drops_much_of_it(completer):
  text, cursor = _points(1)[0]
  prefix = text[:cursor] * 3  # long enough to be cut
  context = completer.context(prefix)
  assert prefix.endswith(context) and len(context) < len(prefix)
  assert prefix[len(prefix) - len(context) - 1] == "\n"
  cut = complete.Completer(test_utils.PRETRAINED, complete.EngineOptions(whole_lines=False))
  assert cut.context(prefix) == complete.left_truncate(prefix, completer.tokenizer, 255)
  assert len(cut.context(prefix)) > len(context)
  # A line longer than the room is cut, not dropped.
  long_line = "x = [" + ", ".join(str(i) for i in range(2000)) + "]\ny = "
  assert completer.context(long_line) == complete.left_truncate(long_line, completer.tokenizer,
                                                                255)


@pytest.mark.parametrize("size", [8192, 8100, 259, 10])
def test_each_beam_s_best_pieces_are_the_ones_a_full_partition_finds(size):
  # The search's top pieces per beam are found chunk by chunk (the vocabulary's rows are long);
  # they must be the pieces a partition of the whole row finds, -inf rows (healing) included.
  rng = np.random.default_rng(size)
  for trial in range(200):
    beams, width = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    totals = (5 * rng.standard_normal((beams, size))).astype(np.float32)
    if trial % 3 == 0:
      totals[rng.random((beams, size)) < 0.995] = -np.inf  # a few pieces agree with the heal
    found = decoding._top_per_row(totals, width)  # pylint: disable=protected-access
    expected = np.argpartition(-totals, width - 1, axis=1)[:, :width]
    assert found.shape == (beams, width)
    for row, mine, theirs in zip(totals, found, expected):
      assert sorted(row[mine]) == sorted(row[theirs])
      assert {i for i in mine if np.isfinite(row[i])} == {i for i in theirs if np.isfinite(row[i])}
