"""Completion metrics, as seqio metric_fns over postprocessed (JSON-line) targets and predictions.

- exact_match: the predicted text equals the target exactly (whitespace included), in %.
- exact_match_tokens: CodeXGLUE's exact match: whitespace-split tokens are equal, in %.
- edit_similarity: 100 * (1 - Levenshtein(pred, target) / max(len)), per example, averaged
  (JetBrains' "edit similarity" scale, 0-100). Not CodeXGLUE's edit similarity, which is
  fuzzywuzzy's fuzz.ratio (100 * 2 * matched characters / both lengths together) and reads 6-9
  points higher on the same lines (docs/evaluation.md, "Metrics").

Every metric of zero examples is NaN, never 0: an eval of an empty split printed 0.000s that read
as a model that learned nothing.
"""

import math
from typing import Dict, List, Sequence

import editdistance

from code_t5.data import postprocessors


def _decoded(lines: Sequence[str]):
  return [postprocessors.from_json_line(line) for line in lines]


def edit_similarity_of(prediction: str, target: str) -> float:
  longest = max(len(prediction), len(target))
  if not longest:
    return 100.0
  return 100.0 * (1.0 - editdistance.eval(prediction, target) / longest)


def _text_scores(targets: Sequence[str], predictions: Sequence[str]) -> Dict[str, List[float]]:
  """Each example's exact match and token exact match (0 or 100) and edit similarity (0-100)."""
  pairs = list(zip(predictions, targets))
  return {
      "exact_match": [100.0 * (p == t) for p, t in pairs],
      "exact_match_tokens": [100.0 * (p.split() == t.split()) for p, t in pairs],
      "edit_similarity": [edit_similarity_of(p, t) for p, t in pairs],
  }


def _mean(total: float, count: int) -> float:
  return total / count if count else math.nan


def _text_metrics(targets: Sequence[str], predictions: Sequence[str]) -> Dict[str, float]:
  return {name: _mean(sum(values), len(targets))
          for name, values in _text_scores(targets, predictions).items()}


def line_scores(targets: Sequence[str], predictions: Sequence[str]) -> Dict[str, List[float]]:
  """Per line completion (decoded text, not JSON lines): the values line_completion_metrics
  averages into exact_match, exact_match_tokens and edit_similarity, each prediction cut at its
  first newline as there."""
  return _text_scores(targets, [postprocessors.first_line(p) for p in predictions])


def completion_metrics(targets: Sequence[str], predictions: Sequence[str]) -> Dict[str, float]:
  """seqio metric_fn: exact match (string and token level) and edit similarity, 0-100."""
  return _text_metrics(_decoded(targets), _decoded(predictions))


def prefix_match_length(prediction: str, target: str) -> int:
  """Characters of the prediction that equal the target's from the start (common prefix length)."""
  length = 0
  for p, t in zip(prediction, target):
    if p != t:
      break
    length += 1
  return length


def line_completion_metrics(targets: Sequence[str],
                            predictions: Sequence[str]) -> Dict[str, float]:
  """seqio metric_fn of the line-completion tasks, over JSON lines; every value is a mean.

  Predictions are cut at their first newline here too (postprocessors.line_to_json_line does it
  already in eval), so a metric never credits text beyond the line.

  - exact_match: the predicted rest of the line equals the target exactly, in %.
  - exact_match_tokens: CodeXGLUE's exact match (whitespace-split tokens equal), in %.
  - edit_similarity: 100 * (1 - Levenshtein / longer length), 0-100.
  - prefix_match_chars: characters of the prediction that match the target from the start.
  - prefix_match_ratio: the same as a share of the target's length, in %.
  """
  targets = _decoded(targets)
  predictions = [postprocessors.first_line(p) for p in _decoded(predictions)]
  prefixes = [prefix_match_length(p, t) for p, t in zip(predictions, targets)]
  return {
      **_text_metrics(targets, predictions),
      "prefix_match_chars": _mean(sum(prefixes), len(targets)),
      "prefix_match_ratio": _mean(100.0 * sum(n / len(t) if t else float(not p) for n, p, t in
                                              zip(prefixes, predictions, targets)), len(targets)),
  }
