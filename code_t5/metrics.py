"""Completion metrics, as seqio metric_fns over postprocessed (JSON-line) targets and predictions.

- exact_match: the predicted text equals the target exactly (whitespace included), in %.
- exact_match_tokens: CodeXGLUE's exact match: whitespace-split tokens are equal, in %.
- edit_similarity: 100 * (1 - Levenshtein(pred, target) / max(len)), per example, averaged
  (JetBrains' and CodeXGLUE's "edit similarity" scale, 0-100).
"""

from typing import Dict, Sequence

import editdistance

from code_t5 import postprocessors


def _decoded(lines: Sequence[str]):
  return [postprocessors.from_json_line(line) for line in lines]


def edit_similarity_of(prediction: str, target: str) -> float:
  longest = max(len(prediction), len(target))
  if not longest:
    return 100.0
  return 100.0 * (1.0 - editdistance.eval(prediction, target) / longest)


def completion_metrics(targets: Sequence[str], predictions: Sequence[str]) -> Dict[str, float]:
  """seqio metric_fn: exact match (string and token level) and edit similarity, 0-100."""
  targets, predictions = _decoded(targets), _decoded(predictions)
  count = max(len(targets), 1)
  return {
      "exact_match": 100.0 * sum(p == t for p, t in zip(predictions, targets)) / count,
      "exact_match_tokens":
          100.0 * sum(p.split() == t.split() for p, t in zip(predictions, targets)) / count,
      "edit_similarity":
          sum(edit_similarity_of(p, t) for p, t in zip(predictions, targets)) / count,
  }
