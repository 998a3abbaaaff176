"""What each part of the completion engine does to quality, at `code-t5 baseline`'s points.

`code-t5 baseline --checkpoint DIR` runs the engine (code_t5.engine.complete.Completer) on the
model at every held-out line-completion point, once per rung of a ladder:

    greedy        beam 1, no healing, no filters: Mesh TF's greedy decode, cut at the newline
    greedy+heal   greedy with token healing at the cursor: the n-gram's own decoding (it too
                  extends a half-typed word), so the like-for-like comparison with it
    beam          beam search (5 lines), the best by log-probability / sqrt(pieces), no healing
    beam+heal     beam search and token healing
    beam+heal+filters  + dropping lines that cannot be valid Python there
    beam+heal+filters+names  + a half-typed word completed to a name the file uses ranked first
                  among near equals (code_t5/engine/names.py; the engine's default)

and scores each rung's best line like any other system (EM, ES by point kind). For the last rung
(the engine's default) it also counts what each filter removed, and how a confidence threshold
(--min-score) trades suggestions shown against suggestions that are wrong: the IDE's view, where
showing nothing costs less than showing a wrong line.
"""

import collections
import dataclasses
import math
import time
from typing import Callable, Dict, List, Sequence, Tuple

from code_t5.engine import complete

RUNGS: Dict[str, complete.EngineOptions] = {
    "greedy": complete.EngineOptions(top=1, beam_size=1, heal=False, filters=False, names=False),
    "greedy+heal": complete.EngineOptions(top=1, beam_size=1, filters=False, names=False),
    "beam": complete.EngineOptions(top=1, heal=False, filters=False, names=False),
    "beam+heal": complete.EngineOptions(top=1, filters=False, names=False),
    "beam+heal+filters": complete.EngineOptions(top=1, names=False),
    "beam+heal+filters+names": complete.EngineOptions(top=1),
}
DEFAULT_RUNG = "beam+heal+filters+names"
# Thresholds reported for the last rung (log-probability / sqrt(pieces) of the best line).
THRESHOLDS = (-math.inf, -10.0, -8.0, -6.0, -5.0, -4.0, -3.0, -2.0)


@dataclasses.dataclass
class _Shown:
  score: float
  correct: bool


def run(model_dir, points: Sequence[Tuple[str, object]], score: Callable, echo=print) -> dict:
  """{"systems": {"engine:<rung>": ...}, "predictions": {...}, "filters": ..., "threshold": ...}.

  points: (file text, line_completion.Point); score(predictions) -> the baseline's metrics.
  """
  systems, predictions = {}, {}
  filtered = collections.Counter()
  candidates_seen = 0
  shown: List[_Shown] = []
  for rung, options in RUNGS.items():
    completer = complete.Completer(model_dir, options, echo=echo)
    start = time.time()
    best = []
    for text, point in points:
      _, ranked = completer.ranked(text[:point.cursor])
      kept = [line for line, reason in ranked if reason is None]
      if rung == DEFAULT_RUNG:
        candidates_seen += len(ranked)
        filtered.update(reason for _, reason in ranked if reason)
        if kept:
          shown.append(_Shown(kept[0].score, kept[0].text == point.target(text)))
      best.append(kept[0].text if kept else "")
    seconds = time.time() - start
    echo(f"engine {rung}: {len(points)} points in {seconds:.0f} s "
         f"({1000 * seconds / max(len(points), 1):.0f} ms each)")
    key = f"engine:{rung}"
    systems[key] = {"description": _describe(options), "model_dir": str(model_dir),
                    "step": completer.info.step, "ms_per_point": 1000 * seconds / len(points),
                    "metrics": score(best)}
    predictions[key] = best
  count = len(points)
  thresholds = []
  for threshold in THRESHOLDS:
    above = [s for s in shown if s.score >= threshold]
    right = sum(s.correct for s in above)
    thresholds.append({"min_score": threshold if math.isfinite(threshold) else None,
                       "shown": len(above), "correct": right,
                       "wrong": len(above) - right,
                       "shown_percent": round(100 * len(above) / count, 1),
                       "precision": round(100 * right / len(above), 1) if above else None})
  return {"systems": systems, "predictions": predictions,
          "filters": {"candidates": candidates_seen, "removed": dict(filtered)},
          "threshold": {"points": count, "rows": thresholds}}


def _describe(options: complete.EngineOptions) -> str:
  search = "greedy" if options.beam_size == 1 else f"beam {options.beam_size}"
  return (f"code_t5 engine: {search}, newline stop, healing {'on' if options.heal else 'off'}, "
          f"filters {'on' if options.filters else 'off'}, "
          f"file's names {'preferred' if options.names else 'not preferred'}")
