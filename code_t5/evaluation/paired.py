"""Is one completer better than another at the same points, or is the difference noise?

Two systems judged at the same line-completion points differ by the mean of their per-point
differences (exact match 0 or 100, edit similarity 0-100). Held-out sets here are small
(dataset-dev's validation split has 192 points), so a difference of a line or two says little
alone. `compare` gives the difference with a 95 % confidence interval from a paired bootstrap:
the points are resampled with both systems' scores kept together, and resampled *by file*, not
by point, because the points of one file share its code, names and style, so they are not
independent draws (a point bootstrap would give intervals that are too narrow). The interval
covers the test points' sampling only; two trainings of one recipe differ as well (docs/training.md).

For exact match it also counts the points where only one of the two is exact: the difference is
decided there alone.
"""

from typing import Dict, Hashable, Sequence

import numpy as np

from code_t5.data import metrics

RESAMPLES = 4000
SEED = 0  # the same resamples in every run: a results file's intervals repeat exactly
LEVEL = 95


def point_scores(targets: Sequence[str], predictions: Sequence[str]) -> Dict[str, np.ndarray]:
  """Per point: exact match (0 or 100) and edit similarity (0-100) of the prediction's first line,
  as metrics.line_completion_metrics scores them (their means are its exact_match and
  edit_similarity)."""
  scores = metrics.line_scores(targets, predictions)
  return {name: np.array(scores[name]) for name in ("exact_match", "edit_similarity")}


def compare(targets: Sequence[str], predictions: Sequence[str], reference: Sequence[str],
            groups: Sequence[Hashable], resamples: int = RESAMPLES, seed: int = SEED) -> dict:
  """predictions minus reference at the same points: each metric's difference and its interval.

  groups: one label per point (its file); points are resampled a whole group at a time.
  Returns {"exact_match": {"difference", "ci95", "only_this", "only_reference"},
  "edit_similarity": {"difference", "ci95"}, "points", "groups", "resamples"}.
  """
  count = len(targets)
  if not count:
    raise ValueError("no points to compare: a difference of zero points is not 0")
  if not len(predictions) == len(reference) == len(groups) == count:
    raise ValueError(f"{count} targets, {len(predictions)} predictions, {len(reference)} "
                     f"reference predictions and {len(groups)} groups: one of each per point")
  mine, theirs = point_scores(targets, predictions), point_scores(targets, reference)
  labels = {}
  group_of = np.array([labels.setdefault(g, len(labels)) for g in groups])
  sizes = np.bincount(group_of, minlength=len(labels))
  # Each resample draws len(labels) groups with replacement: weights[r, g] is how often group g
  # was drawn, and a resample's mean is its weighted sum over the groups' point counts.
  rng = np.random.default_rng(seed)
  weights = rng.multinomial(len(labels), np.full(len(labels), 1.0 / len(labels)), size=resamples)
  denominators = weights @ sizes
  tail = (100 - LEVEL) / 2
  result = {}
  for name in ("exact_match", "edit_similarity"):
    difference = mine[name] - theirs[name]
    per_group = np.bincount(group_of, weights=difference, minlength=len(labels))
    means = weights @ per_group / denominators
    low, high = np.percentile(means, [tail, 100 - tail])
    result[name] = {"difference": round(float(difference.mean()), 3),
                    f"ci{LEVEL}": [round(float(low), 3), round(float(high), 3)]}
  exact_mine, exact_theirs = mine["exact_match"] > 0, theirs["exact_match"] > 0
  result["exact_match"]["only_this"] = int(np.sum(exact_mine & ~exact_theirs))
  result["exact_match"]["only_reference"] = int(np.sum(exact_theirs & ~exact_mine))
  result.update(points=count, groups=len(labels), resamples=resamples)
  return result


def shown(comparison: dict, name: str) -> str:
  """'+1.6 [-3.1, +6.3]': a metric's difference and its interval, for tables."""
  found = comparison[name]
  low, high = found[f"ci{LEVEL}"]
  return f"{found['difference']:+.1f} [{low:+.1f}, {high:+.1f}]"
