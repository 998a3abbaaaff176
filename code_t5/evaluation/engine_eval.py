"""What each part of the completion engine does to quality, at `code-t5 baseline`'s points.

`code-t5 baseline --checkpoint DIR` runs the engine (code_t5.engine.complete.Completer) on the
model at every held-out line-completion point, once per rung of a ladder; each rung adds one part:

    greedy        beam 1, no healing, no filters: Mesh TF's greedy decode, cut at the newline
    greedy+heal   greedy with token healing at the cursor: the n-gram's own decoding (it too
                  extends a half-typed word), so the like-for-like comparison with it
    beam          beam search (5 lines), the best by log-probability / sqrt(pieces), no healing
    beam+heal     beam search and token healing
    beam+heal+filters  + dropping lines that cannot be valid Python there
    beam+heal+filters+names  + a half-typed word completed to a name the file uses ranked first
                  among near equals (code_t5/engine/names.py), and an import or definition
                  of a name the file reads and nothing binds (wanted.py): the engine without
                  the repository
    +file-cache   + the copy cache of the file above the cursor (code_t5/engine/copy_cache.py)
    +repo-cache   + the repository's other files in the cache (the point's repository in the
                  root, the point's file left out)
    +retrieval    + whole lines of the file and repository as candidates (line_retrieval.py)
    +below        + the file's lines below the cursor's line
    +similar      + the model first reads the code of the file below and the repository most
                  like the lines above the cursor (similar_code.py): the engine's default in an
                  editor

and scores each rung's best line like any other system (EM, ES by point kind). For the last rung
(the engine's default) it also counts what each filter removed, how a confidence threshold
(--min-score) trades suggestions shown against suggestions that are wrong (the IDE's view, where
showing nothing costs less than showing a wrong line), and the list an editor shows beside the
best line at the model's gates (`Completer.listed` with `lsp`'s and `serve`'s default --top):
its alternatives and how often they are the line.
"""

import collections
import dataclasses
import math
import time
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from code_t5.engine import complete
from code_t5.engine import confidence
from code_t5.engine import line_filters
from code_t5.engine import repository as repository_lib


@dataclasses.dataclass(frozen=True)
class Rung:
  options: complete.EngineOptions
  repository: bool = False  # the point's repository (without its file) is the engine's
  below: bool = False  # the file's lines below the cursor's line are the engine's


# Every rung scores its best line, shown or not (the gate is reported beside the ladder).
_EVERY_LINE = dict(min_score=complete.DEFAULT_MIN_SCORE)
# The rungs before "+below" read neither the lines below nor the similar code (found among them).
_ABOVE_ONLY = dict(below=False, similar=False, **_EVERY_LINE)
_ALONE = dict(cache=False, retrieval=False, **_ABOVE_ONLY)
RUNGS: Dict[str, Rung] = {
    "greedy": Rung(complete.EngineOptions(top=1, beam_size=1, heal=False, filters=False,
                                          names=False, **_ALONE)),
    "greedy+heal": Rung(complete.EngineOptions(top=1, beam_size=1, filters=False, names=False,
                                               **_ALONE)),
    "beam": Rung(complete.EngineOptions(top=1, heal=False, filters=False, names=False, **_ALONE)),
    "beam+heal": Rung(complete.EngineOptions(top=1, filters=False, names=False, **_ALONE)),
    "beam+heal+filters": Rung(complete.EngineOptions(top=1, names=False, **_ALONE)),
    "beam+heal+filters+names": Rung(complete.EngineOptions(top=1, **_ALONE)),
    "+file-cache": Rung(complete.EngineOptions(top=1, retrieval=False, **_ABOVE_ONLY)),
    "+repo-cache": Rung(complete.EngineOptions(top=1, retrieval=False, **_ABOVE_ONLY),
                        repository=True),
    "+retrieval": Rung(complete.EngineOptions(top=1, **_ABOVE_ONLY), repository=True),
    "+below": Rung(complete.EngineOptions(top=1, similar=False, **_EVERY_LINE), repository=True,
                   below=True),
    "+similar": Rung(complete.EngineOptions(top=1, **_EVERY_LINE), repository=True, below=True),
}
DEFAULT_RUNG = "+similar"
WITHOUT_REPOSITORY = "beam+heal+filters+names"  # the engine as it was before it read more
# Thresholds reported for the last rung (the best line's score: log-probability / sqrt(pieces),
# + complete.RETRIEVAL_BONUS for a line the file or repository holds), and the model's own gate
# (its about.json's min_score) among them.
THRESHOLDS = (-math.inf, -4.0, -3.0, -2.5, -2.25, -2.1, -2.0, -1.75, -1.5, -1.0, -0.5, 0.0)


# Confidence gates reported for the last rung when the model has a confidence model (the
# probability that the best line is exact: code_t5.engine.confidence), and the model's own.
CONFIDENCE_THRESHOLDS = (0.0, 0.03, 0.05, 0.07, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.7)


@dataclasses.dataclass
class _Paired:
  """The last rung at an inside point whose typed part leaves brackets or a string open, with
  the closers an auto-pairing editor put after the cursor (line_filters.auto_closers)."""
  exact: bool  # the best kept line, with what it leaves of the closers (with nothing kept or
  # the line complete as it stands, the closers alone), is the target
  exact_without: bool  # the best kept line without the closers (the ladder's point) is
  kept: bool  # a line was kept, and the engine would show one (not a line complete as it stands)
  confidence: Optional[float]  # the best kept line's (None: no confidence model, or none kept)
  score: Optional[float]


# The lines `lsp` and `serve` list by default (their --top): what the list figures are of.
LIST_TOP = complete.EngineOptions.top


@dataclasses.dataclass
class _Listed:
  """The last rung's list at a point where the model's gate shows a line (Completer.listed)."""
  best_correct: bool
  alternatives: int  # the lines listed beside the best
  alternative_correct: bool  # one of them is the target


@dataclasses.dataclass
class _Shown:
  score: float
  correct: bool
  chars: int  # the target's characters
  confidence: Optional[float]  # None without a confidence model, or for a best line never shown


def check_rungs(names: Sequence[str]) -> List[str]:
  unknown = [name for name in names if name not in RUNGS]
  if unknown:
    raise complete.CompletionError(f"--rungs: unknown rung {unknown[0]!r} (the ladder: "
                                   f"{', '.join(RUNGS)})")
  return [name for name in RUNGS if name in names]  # the ladder's order


def run(model_dir, points: Sequence[Tuple[str, object]], score: Callable, echo=print,
        repository_files: Optional[Mapping[str, Sequence[Tuple[str, str]]]] = None,
        rungs: Optional[Sequence[str]] = None) -> dict:
  """{"systems": {"engine:<rung>": ...}, "predictions": {...}, "scores": {...}, "features": [...],
  "filters": ..., "autopairs": ..., "listed": ..., "threshold": ...}: per rung its metrics, and
  per point its best line and that line's score (None where it shows nothing); per point the last
  rung's confidence features (code_t5.engine.confidence.FEATURES, None where no line was kept),
  which scripts/fit_confidence.py fits a model's confidence gate from; "autopairs": the last rung
  again at the points whose typed part of the line leaves brackets or a string open, with the
  closers an auto-pairing editor put after the cursor (_autopairs); "listed": the last rung's
  lists as `lsp` and `serve` show them (_list_figures).

  points: (file text, line_completion.Point); score(predictions) -> the baseline's metrics;
  repository_files: repo id -> its (path, text) files in the root, for the rungs that read the
  repository (each point's file is left out of its own; without them those rungs see none);
  rungs: the rungs to run
  (default all), in the ladder's order. Progress (points, rate, ETA) goes to `echo` every 10 s.
  """
  chosen = check_rungs(rungs) if rungs is not None else list(RUNGS)
  systems, predictions, scores = {}, {}, {}
  filtered = collections.Counter()
  candidates_seen = 0
  shown: List[_Shown] = []
  point_features: List[Optional[List[float]]] = []
  paired: List[_Paired] = []
  listed: List[_Listed] = []
  completer = None
  for rung_name in chosen:
    rung = RUNGS[rung_name]
    if completer is None:
      completer = complete.Completer(model_dir, rung.options, echo=echo)
      repositories = {}
      for repo, repo_files in (repository_files or {}).items():
        repositories[repo] = repository_lib.Repository(completer.tokenizer)
        for path, text in repo_files:
          repositories[repo].add(path, text)
    completer.options = rung.options
    complete.check_options(rung.options)
    start = last = time.time()
    listing_seconds = 0.0
    best, best_scores = [], []
    for k, (text, point) in enumerate(points):
      repository = repositories.get(point.repo) if rung.repository else None
      line_end = text.find("\n", point.cursor)
      below = text[line_end + 1:] if rung.below and line_end >= 0 else ""
      ranking = completer.rank(text[:point.cursor], repository=repository, path=point.path,
                               below=below)
      ranked = ranking.lines
      kept = complete.kept_lines(ranked)
      if rung_name == chosen[-1]:
        candidates_seen += len(ranked)
        filtered.update(reason for _, reason in ranked if reason)
        values = confidence.features(kept, ranking.line_start)
        point_features.append(None if values is None else [round(v, 4) for v in values])
        if kept:
          target = point.target(text)
          shown.append(_Shown(kept[0].score, kept[0].text == target, len(target),
                              completer.confidence_of(values)))
          listing = time.time()
          item = _listed(completer, text, point, repository, below)
          if item is not None:
            listed.append(item)
          listing_seconds += time.time() - listing  # a second search: not the rung's time
        closers = line_filters.auto_closers(text[text.rfind("\n", 0, point.cursor) + 1:
                                                 point.cursor])
        if closers:
          paired.append(_autopaired(completer, text, point, closers, repository, below,
                                    bool(kept) and kept[0].text == point.target(text)))
      best.append(kept[0].text if kept else "")
      best_scores.append(round(kept[0].score, 4) if kept else None)
      if time.time() - last >= 10:
        last = time.time()
        rate = (k + 1) / (last - start)
        echo(f"engine {rung_name}: {k + 1}/{len(points)} points, {rate:.1f}/s, "
             f"ETA {(len(points) - k - 1) / rate:.0f} s")
    seconds = time.time() - start - listing_seconds
    echo(f"engine {rung_name}: {len(points)} points in {seconds:.0f} s "
         f"({1000 * seconds / max(len(points), 1):.0f} ms each)")
    key = f"engine:{rung_name}"
    systems[key] = {"description": _describe(rung), "model_dir": str(model_dir),
                    "step": completer.info.step, "ms_per_point": 1000 * seconds / len(points),
                    "metrics": score(best)}
    predictions[key] = best
    scores[key] = best_scores
  count = len(points)
  all_chars = sum(len(point.target(text)) for text, point in points)
  def row(above):
    right = sum(s.correct for s in above)
    return {"shown": len(above), "correct": right, "wrong": len(above) - right,
            "shown_percent": round(100 * len(above) / count, 1),
            "precision": round(100 * right / len(above), 1) if above else None,
            "chars_saved_percent": round(100 * sum(s.chars for s in above if s.correct)
                                         / all_chars, 1)}

  model = completer.confidence_model if completer else None
  sure_gate = float(model["min"]) if model else None
  gate = None if model or not completer else completer.about.get("min_score")
  thresholds = [
      {"min_score": threshold if math.isfinite(threshold) else None,
       "model_gate": threshold == gate, **row([s for s in shown if s.score >= threshold])}
      for threshold in sorted(set(THRESHOLDS) | ({float(gate)} if gate is not None else set()))]
  sure_rows = [
      {"min_confidence": threshold, "model_gate": threshold == sure_gate,
       **row([s for s in shown if s.confidence is not None and s.confidence >= threshold])}
      for threshold in sorted(set(CONFIDENCE_THRESHOLDS) | {sure_gate})] if model else []
  return {"systems": systems, "predictions": predictions, "scores": scores,
          "features": point_features,
          "filters": {"candidates": candidates_seen, "removed": dict(filtered)},
          "autopairs": _autopairs(paired, sure_gate, gate),
          "listed": _list_figures(listed),
          "threshold": {"rung": chosen[-1], "points": count, "rows": thresholds,
                        **({"confidence_rows": sure_rows} if model else {})}}


def _autopaired(completer, text: str, point, closers: str, repository, below: str,
                exact_without: bool) -> _Paired:
  prefix = text[:point.cursor]
  _, ranked = completer.ranked(prefix, closers, repository=repository, path=point.path,
                               below=below)
  kept = complete.kept_lines(ranked)
  if not kept or complete.ends_as_it_stands(ranked, closers):  # nothing to insert: the line as it stands
    return _Paired(closers == point.target(text), exact_without, False, None, None)
  best = kept[0]
  values = confidence.features(kept, confidence.at_line_start(prefix))
  return _Paired(best.text + closers[best.replaces:] == point.target(text), exact_without, True,
                 completer.confidence_of(values), best.score)


def _autopairs(paired: Sequence[_Paired], sure_gate: Optional[float], gate: Optional[float]
               ) -> Optional[dict]:
  """The last rung at the points an auto-pairing editor has closers after the cursor: best lines
  kept and exact, with and without the closers, and those the model's own gate shows (its
  confidence gate, else its min_score, else every kept line). None where there are no such
  points (a count of nothing is no figure)."""
  if not paired:
    return None
  def is_shown(p: _Paired) -> bool:
    if not p.kept:
      return False
    if sure_gate is not None:
      return p.confidence is not None and p.confidence >= sure_gate
    return gate is None or p.score >= gate
  shown = [p for p in paired if is_shown(p)]
  return {"points": len(paired), "kept": sum(p.kept for p in paired),
          "exact": sum(p.exact for p in paired),
          "exact_without_closers": sum(p.exact_without for p in paired),
          "shown": len(shown), "shown_exact": sum(p.exact for p in shown)}


def _listed(completer, text: str, point, repository, below: str) -> Optional[_Listed]:
  """The list `lsp` and `serve` show at `point` with their default --top (LIST_TOP) and the
  model's gates, searched for that many lines as they do (the ladder's rungs search for one and
  show every line); None where it is empty."""
  prefix = text[:point.cursor]
  ranking = completer.rank(prefix, top=LIST_TOP, repository=repository, path=point.path,
                           below=below)
  kept = complete.kept_lines(ranking.lines)
  sure = completer.confidence_of(confidence.features(kept, ranking.line_start))
  lines = completer.listed(ranking, kept, sure, LIST_TOP,
                           gates=completer.gates(complete.EngineOptions()))
  if not lines:
    return None
  target = point.target(text)
  return _Listed(lines[0].text == target, len(lines) - 1,
                 any(line.text == target for line in lines[1:]))


def _list_figures(listed: Sequence[_Listed]) -> Optional[dict]:
  """The lists an editor shows at the points where the model's gate shows a line: how many lines
  beside the best, how many of them are the target, and at how many points one is where the best
  line is not. None where no line is shown (a count of nothing is no figure)."""
  if not listed:
    return None
  alternatives = sum(item.alternatives for item in listed)
  right = sum(item.alternative_correct for item in listed)
  best = sum(item.best_correct for item in listed)
  return {"top": LIST_TOP, "points": len(listed), "best_correct": best,
          "points_with_alternatives": sum(item.alternatives > 0 for item in listed),
          "alternatives": alternatives, "alternatives_correct": right,
          "alternatives_precision": round(100 * right / alternatives, 1) if alternatives else None,
          "correct_only_beside_the_best": sum(item.alternative_correct and not item.best_correct
                                              for item in listed),
          "lines_precision": round(100 * (best + right) / (len(listed) + alternatives), 1)}


def _describe(rung: Rung) -> str:
  options = rung.options
  search = "greedy" if options.beam_size == 1 else f"beam {options.beam_size}"
  return (f"code_t5 engine: {search}, newline stop, healing {'on' if options.heal else 'off'}, "
          f"filters {'on' if options.filters else 'off'}, "
          f"file's names {'preferred' if options.names else 'not preferred'}, "
          f"copy cache {'on' if options.cache else 'off'}, "
          f"retrieval {'on' if options.retrieval else 'off'}, "
          f"repository {'read' if rung.repository else 'not read'}, "
          f"lines below {'read' if rung.below else 'not read'}, "
          f"similar code {'read first' if options.similar else 'not read'}")
