"""How likely the engine's best line is exactly right: the number its default gate reads.

The best line's score (decoding.Line.score) says how sure the model is of that line. Three more
things the engine knows at every cursor sharpen it: how far the best line's score is ahead of the
best score among the other kept lines (a close rival: the model hesitates between two lines; a
rival that scores higher was ranked lower by the engine, not by the model, as a guessed or
repeated import is), the best line's length in
pieces (a long line is more often wrong in some detail), and whether the cursor is at a line's
start (the whole line is a guess) or inside one. `probability` is a logistic model over these four
`FEATURES`; `fit` finds its weights from held-out points (`code-t5 baseline` keeps each point's
features in its per-point records; scripts/fit_confidence.py), and a model dir's about.json keeps
them, with the gate's threshold, under "confidence" (code_t5.engine.complete.model_about).

Fitted on the site-packages corpus's validation points, it ranks dataset-dev's points better than
the score alone: at 60 % of them shown, 39.1 % of the shown lines are exact against 33.9 %
(docs/engine.md, "The confidence gate").
"""

import math
from typing import Dict, List, Mapping, Optional, Sequence

import numpy as np

FEATURES = ("score", "margin", "log_pieces", "line_start")
# The margin of a best line that has no second: about the largest margins seen.
NO_SECOND_MARGIN = 5.0


def features(lines: Sequence, line_start: bool) -> Optional[List[float]]:
  """FEATURES of the kept lines, best first (anything with .score and .tokens); None if none, or
  if the best is one the engine itself ranked after the others (`.unlikely`: every kept line is
  a guessed import, a loop, a line that does not fit...): the gate shows no such line."""
  if not lines or getattr(lines[0], "unlikely", False):
    return None
  return features_of(lines, 0, line_start)


def features_of(lines: Sequence, k: int, line_start: bool) -> List[float]:
  """FEATURES of `lines[k]` as if it were the best line: its score, its margin over the best
  score among the other lines (negative for a line below the best), its pieces and the line
  start. For an alternative listed beside the best line (code_t5.engine.complete.Completer.
  listed), which must pass the same gate: fitted on best lines, the model rates alternatives too
  high (those it let through at the shipped model's gate averaged 0.22-0.25 and were right 8-12 %
  of the time on the held-out sets), but it passes the likelier ones (without it, 6 %)."""
  line = lines[k]
  # Against the best-scoring rival, not the next in rank: the engine ranks some lines below
  # lower-scored ones (code_t5.engine.complete.last_if_unlikely), and the next line's score then
  # made a margin of 7.5 in sre_compile.py, where the model scored three lines it had moved down
  # (`import numpy as np` ...) above its best `import logging`: a wrong line shown at 0.97.
  rivals = [other.score for j, other in enumerate(lines) if j != k]
  margin = line.score - max(rivals) if rivals else NO_SECOND_MARGIN
  return [float(line.score), float(margin), math.log1p(line.tokens), 1.0 if line_start else 0.0]


def at_line_start(prefix: str) -> bool:
  """Whether the cursor at the end of `prefix` has only indentation before it on its line."""
  return not prefix[prefix.rfind("\n") + 1:].strip()


def probability(values: Sequence[float], model: Mapping) -> float:
  """The model's probability that the best line is exact, for `features`' values."""
  z = model["bias"] + sum(model["weights"][name] * v for name, v in zip(FEATURES, values))
  return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


def finite_number(x) -> bool:
  """Whether a JSON value is a number a float holds: an integer past float's range made
  math.isfinite raise OverflowError, a traceback (helper-50's audit)."""
  if isinstance(x, bool) or not isinstance(x, (int, float)):
    return False
  try:
    return math.isfinite(x)
  except OverflowError:
    return False


def check(model) -> Optional[str]:
  """What is wrong with an about.json "confidence" (None if nothing)."""
  if not isinstance(model, dict) or not isinstance(model.get("weights"), dict):
    return "not an object with \"weights\", \"bias\" and \"min\""
  if not all(finite_number(model["weights"].get(name)) for name in FEATURES):
    return f"\"weights\" must give a number for each of {', '.join(FEATURES)}"
  if (not finite_number(model.get("bias")) or not finite_number(model.get("min"))
      or not 0 <= model["min"] <= 1):
    return "\"bias\" must be a number and \"min\" a probability"
  return None


def fit(rows: Sequence[Sequence[float]], correct: Sequence[bool], l2: float = 1.0,
        steps: int = 3000, rate: float = 0.5) -> Dict:
  """{"weights": {feature: w}, "bias": b} of a logistic model of `correct` given `rows`
  (`features` of each point), by gradient descent on standardized features with an L2 penalty of
  `l2` (per point: l2 / n); the weights are those of the raw features. Deterministic."""
  x = np.asarray(rows, dtype=np.float64).reshape(-1, len(FEATURES))
  y = np.asarray(correct, dtype=np.float64)
  if len(x) == 0 or len(y) != len(x):
    raise ValueError(f"fit needs as many outcomes as rows, and some rows: {len(x)} rows, "
                     f"{len(y)} outcomes")
  means = x.mean(axis=0)
  scales = np.where(x.std(axis=0) > 0, x.std(axis=0), 1.0)
  z = (x - means) / scales
  w, b = np.zeros(len(FEATURES)), 0.0
  for _ in range(steps):
    p = 1.0 / (1.0 + np.exp(-np.clip(z @ w + b, -60, 60)))
    w -= rate * (z.T @ (p - y) / len(y) + l2 * w / len(y))
    b -= rate * float((p - y).mean())
  raw = w / scales
  return {"weights": {name: round(float(raw[j]), 6) for j, name in enumerate(FEATURES)},
          "bias": round(float(b - raw @ means), 6)}


def threshold_for_share(probabilities: Sequence[float], points: int, share: float) -> float:
  """The gate that shows a line at `share` of `points` (the highest probability with at least
  that many points at or above it; rounded down to 3 decimals, as about.json keeps it)."""
  ordered = sorted(probabilities, reverse=True)
  wanted = max(1, min(len(ordered), round(share * points)))
  return math.floor(ordered[wanted - 1] * 1000) / 1000
