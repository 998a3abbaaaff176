"""code_t5.decoding and the Completer's search, on the shipped model (no TensorFlow, seconds).

That greedy lines equal Mesh TF's decodes is pretrained_test; that the runtime computes Mesh TF's
logits is runtime_test; that healing completes half-typed words of memorised files is
learning_test. Here: what the search returns and how the options change it.
"""

import pytest

from code_t5 import complete
from code_t5 import decoding
from code_t5 import flcc
from code_t5 import line_completion
from code_t5 import sources

PRETRAINED = sources.REPO_ROOT / "code_t5" / "pretrained" / "causal_lm-mini-spm_dev-sitepackages"
PLAIN = complete.EngineOptions(top=5, heal=False, filters=False)


@pytest.fixture(scope="module")
def completer():
  return complete.Completer(PRETRAINED, PLAIN)


def _points(count=12):
  files = flcc.read_files(sources.DEV_ROOT, only_split="validation")
  return [(f.text, p.cursor) for f, p in line_completion.points_of_files(files)][:count]


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


def test_lines_that_do_not_end_within_max_tokens_are_dropped(completer):
  short = complete.Completer(PRETRAINED, complete.EngineOptions(max_tokens=3, filters=False))
  for text, cursor in _points(6):
    _, ranked = short.ranked(text[:cursor])
    assert all(line.tokens <= 3 for line, _ in ranked)
    assert len(ranked) <= len(completer.ranked(text[:cursor])[1])


def test_split_heal_takes_back_the_last_piece_unless_it_holds_a_newline(completer):
  tokenizer = completer.tokenizer
  ids = tokenizer.encode("import os\nos.pa")
  context, heal = decoding.split_heal(ids, tokenizer)
  assert context == ids[:-1] and heal == tokenizer.piece_bytes[ids[-1]] and heal.endswith(b"pa")
  assert tokenizer.decode(context).encode() + heal == b"import os\nos.pa"
  ends_in_newline = tokenizer.encode("import os\n")
  assert decoding.split_heal(ends_in_newline, tokenizer) == (ends_in_newline, b"")
  one_piece = tokenizer.encode("x")
  assert decoding.split_heal(one_piece, tokenizer) == (one_piece, b"")


def test_healing_completes_a_half_typed_word_with_whole_pieces():
  prefix = "import os\nimport sys\n\n\ndef main(argv):\n    path = os.pa"
  healing = complete.Completer(PRETRAINED, complete.EngineOptions(top=5, filters=False))
  healed = healing.complete(prefix).candidates
  # The cursor's last piece "pa" is taken back: the model writes "path" as it learnt it.
  assert healed[0].text.startswith("th(")
  plain = complete.Completer(PRETRAINED, PLAIN).complete(prefix).candidates
  assert [c.text for c in plain] != [c.text for c in healed]


def test_min_score_shows_nothing_rather_than_a_doubtful_line():
  strict = complete.Completer(PRETRAINED, complete.EngineOptions(min_score=-1e-6))
  text, cursor = _points(1)[0]
  result = strict.complete_at(text, cursor)
  assert result.candidates == () and result.completion == ""
  assert result.reply()["completions"] == [] and result.reply()["completion"] == ""
