"""Completion metrics: exact match (string and CodeXGLUE token level) and edit similarity."""

import math

import pytest

from code_t5.data import metrics
from code_t5.data import postprocessors


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


def _line_score(targets, predictions):
  line = postprocessors.to_json_line
  return metrics.line_completion_metrics([line(t) for t in targets],
                                         [line(p) for p in predictions])


def test_prefix_match_length_counts_characters_equal_from_the_start():
  assert metrics.prefix_match_length("return x", "return y") == 7
  assert metrics.prefix_match_length("", "abc") == 0
  assert metrics.prefix_match_length("abcdef", "abc") == 3
  assert metrics.prefix_match_length("xbc", "abc") == 0


def test_line_completion_metrics_on_hand_made_cases():
  targets = ["return self._x", "if a:", "x = [1, 2]", "pass"]
  # The last prediction goes on past its line.
  predictions = ["return self._x", "if b:", "", "pass\n    return 1"]
  result = _line_score(targets, predictions)
  assert result["exact_match"] == 50.0  # the first, and the last cut at its newline
  assert result["exact_match_tokens"] == 50.0
  assert result["edit_similarity"] == pytest.approx((100 + 80 + 0 + 100) / 4)
  assert result["prefix_match_chars"] == pytest.approx((14 + 3 + 0 + 4) / 4)
  assert result["prefix_match_ratio"] == pytest.approx(100 * (1 + 3 / 5 + 0 + 1) / 4)


def test_line_completion_exact_match_is_exact_but_token_match_ignores_spacing():
  result = _line_score(["x = f(a, b)"], ["x = f(a,  b)"])
  assert result["exact_match"] == 0.0 and result["exact_match_tokens"] == 100.0
  result = _line_score(["x = f(a, b)"], ["x = f(a, c)"])
  assert result["exact_match"] == 0.0 and result["exact_match_tokens"] == 0.0


def test_a_metric_of_zero_examples_is_nan_not_zero():
  """An eval of an empty split printed exact_match 0.000: read as a model that learned nothing."""
  for result in (metrics.completion_metrics([], []), metrics.line_completion_metrics([], [])):
    assert result and all(math.isnan(value) for value in result.values()), result
