"""Completion metrics: exact match (string and CodeXGLUE token level) and edit similarity."""

import pytest

from code_t5 import metrics
from code_t5 import postprocessors


def _score(targets, predictions):
  line = postprocessors.to_json_line
  return metrics.completion_metrics([line(t) for t in targets], [line(p) for p in predictions])


def test_exact_match_counts_whitespace_but_token_match_does_not():
  result = _score(["x = 1\n", "if a:\n    b"], ["x = 1\n", "if  a:\n  b"])
  assert result["exact_match"] == 50.0
  assert result["exact_match_tokens"] == 100.0


def test_edit_similarity_is_levenshtein_over_the_longer_string():
  assert metrics.edit_similarity_of("abcd", "abcd") == 100.0
  assert metrics.edit_similarity_of("abcd", "abce") == pytest.approx(75.0)
  assert metrics.edit_similarity_of("", "abcd") == 0.0
  assert metrics.edit_similarity_of("", "") == 100.0


def test_json_lines_keep_newlines_tabs_and_unicode_on_one_line():
  text = "def f():\n\treturn 'é🙂'\r\n"
  line = postprocessors.to_json_line(text.encode("utf-8"))
  assert "\n" not in line
  assert postprocessors.from_json_line(line) == text
