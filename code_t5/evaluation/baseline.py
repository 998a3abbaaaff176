"""`code-t5 baseline`: scores the model-free line-completion baseline, a token n-gram model
(code_t5/evaluation/ngram.py) counted on the TRAIN split of an FLCC root.

It judges it at exactly the task's points (code_t5/data/line_completion.py) of a split, next to an
empty prediction, with the task's metrics (metrics.line_completion_metrics), and — with
--model-dir — a trained model's eval decodes of the same points (the Mesh TF eval of
runs/eval_line_completion.gin), into one JSON results file. Every system is also compared with the
n-gram at the same points: the difference in each metric and its 95 % interval
(code_t5/evaluation/paired.py), as one line more or less of a 192-point set is not a win.
"""

import collections
import json
import os
import pathlib
import random
import tempfile
import time
from typing import Dict, List, Optional, Sequence, Tuple

from code_t5 import errors
from code_t5.data import flcc
from code_t5.data import line_completion
from code_t5.data import metrics
from code_t5.data import postprocessors
from code_t5.engine import complete
from code_t5.evaluation import ngram as ngram_lib
from code_t5.evaluation import paired


def default_root() -> pathlib.Path:
  """dataset-dev/ of the repository (the tasks' default root)."""
  return pathlib.Path(__file__).resolve().parents[2] / "dataset-dev"


class BaselineError(errors.UserError):
  """A bad `code-t5 baseline` argument; the message is one line."""


def _score(targets: Sequence[str], predictions: Sequence[str]) -> Dict[str, float]:
  line = postprocessors.to_json_line
  result = metrics.line_completion_metrics([line(t) for t in targets],
                                           [line(p) for p in predictions])
  return {k: round(v, 3) for k, v in result.items()}


def _model_predictions(model_dir: pathlib.Path, split: str, root_name: str
                       ) -> Tuple[str, int, List[str], List[str]]:
  """(task, step, targets, predictions) of the newest line-completion eval of the root named
  `root_name` in model_dir (`code-t5 eval --line-completion`)."""
  eval_dir = model_dir / f"{split}_eval_{line_completion.eval_dir_suffix(root_name)}"
  found = []
  for targets_file in sorted(eval_dir.glob("flcc_py_line_completion*_targets")):
    task = targets_file.name[:-len("_targets")]
    for predictions_file in eval_dir.glob(f"{task}_*_predictions"):
      step = predictions_file.name[len(task) + 1:-len("_predictions")]
      if step.isdigit():
        found.append((int(step), task, targets_file, predictions_file))
  if not found:
    raise BaselineError(f"--model-dir {model_dir}: no line-completion decodes in {eval_dir}; run "
                        f"`code-t5 eval --line-completion --model-dir {model_dir}` with the same "
                        "--root and --max-files first")
  step, task, targets_file, predictions_file = max(found)

  def read(path):
    return [postprocessors.from_json_line(line) for line in
            path.read_text(encoding="utf-8").splitlines()]

  return task, step, read(targets_file), read(predictions_file)


def evaluate(root, split: str = "validation", model_dirs: Sequence[pathlib.Path] = (),
             validation_fraction: float = 0.05, test_fraction: float = 0.05,
             train_root=None, max_files: Optional[int] = None, examples: int = 10,
             checkpoints: Sequence[pathlib.Path] = (), echo=print,
             rungs: Optional[Sequence[str]] = None) -> dict:
  """Scores the baselines (and the models' eval decodes) at the split's completion points.

  The n-gram counts the train split of `train_root` (default: `root`), so a model and an n-gram
  trained on one root are judged on another's held-out repositories alike. `max_files` draws the
  points from that many files of the split (line_completion.sample_files), as
  `code-t5 eval --line-completion --max-files` does. `examples` random points are kept with every
  system's prediction, for a reader to judge. Each of `checkpoints` is run through the completion
  engine at the points, once per rung of code_t5.evaluation.engine_eval.RUNGS (or of `rungs`),
  with each point's repository in the root (all its files in the split, the point's file left
  out) as the repository an editor would have open. Every point's target, predictions and the
  engine's scores are kept in "per_point", so that splits and systems can be compared later.
  """
  if split not in flcc.SPLITS:
    raise BaselineError(f"--split must be one of {', '.join(flcc.SPLITS)}, got {split!r}")
  train_root = root if train_root is None else train_root
  for flag, path in (("--root", root), ("--train-root", train_root)):
    if not pathlib.Path(path).exists():
      raise BaselineError(f"{flag} {path} does not exist: give the folder that holds v3/")
  if max_files is not None and max_files < 1:
    raise BaselineError(f"--max-files must be at least 1, got {max_files}")
  splits = flcc.Splits(validation=validation_fraction, test=test_fraction)
  models = [_model_predictions(pathlib.Path(d), split, pathlib.Path(root).resolve().name)
            for d in model_dirs]  # fail early
  split_files = list(flcc.read_files(root, splits=splits, only_split=split))
  sampled = line_completion.sample_files(split_files, max_files)
  points = [(f.text, p) for f, p in line_completion.points_of_files(sampled)]
  if not points:
    raise BaselineError(f"--root {root}: its {split} split has no completion points")
  targets = [p.target(text) for text, p in points]
  kinds = [p.kind for _, p in points]

  start = time.time()
  train_files = 0

  def train_texts():
    nonlocal train_files
    for source_file in flcc.read_files(train_root, splits=splits, only_split="train"):
      train_files += 1
      yield source_file.text

  model = ngram_lib.NgramModel().fit(train_texts())
  fit_seconds = time.time() - start
  start = time.time()
  ngram = [model.complete(p.context(text)) for text, p in points]
  echo(f"n-gram: fit on {train_files} train files in {fit_seconds:.1f} s, "
       f"{len(points)} completions in {time.time() - start:.1f} s")

  def scored(predictions, subset=None):
    chosen = range(len(predictions)) if subset is None else subset
    result = {"all": _score([targets[i] for i in chosen], [predictions[i] for i in chosen])}
    for kind in line_completion.KINDS:
      idx = [i for i in chosen if kinds[i] == kind]
      result[kind] = _score([targets[i] for i in idx], [predictions[i] for i in idx])
    return result

  systems = {
      "empty": {"description": "predicts nothing (the floor)",
                "metrics": scored([""] * len(points))},
      "ngram": {"description": f"token {ngram_lib.ORDER}-gram, stupid backoff, greedy to the newline, "
                             f"trained on the train split of {_shown(train_root)} "
                             f"({train_files} files)",
                "metrics": scored(ngram)},
  }
  system_predictions = {"ngram": ngram}
  for model_dir, (task, step, model_targets, predictions) in zip(model_dirs, models):
    count = len(model_targets)
    if count > len(targets) or model_targets != targets[:count] or len(predictions) != count:
      raise BaselineError(f"--model-dir {model_dir}: the targets of its {task} eval are not the "
                          f"{split} points of --root {root} (another root, split or scheme?)")
    subset = list(range(count))
    key = f"model:{pathlib.Path(model_dir).name}"
    while key in systems:
      key += "'"
    systems[key] = {
        "description": f"{task} decodes of checkpoint step {step}"
                       + ("" if count == len(targets) else f" (first {count} points)"),
        "model_dir": str(model_dir), "task": task, "step": step, "points": count,
        "metrics": scored(predictions + [""] * (len(targets) - count), subset)}
    system_predictions[key] = predictions
  engine = {}
  engine_scores: Dict[str, List[Optional[float]]] = {}
  files = [(p.repo, p.path) for _, p in points]
  repositories: Dict[str, List[Tuple[str, str]]] = collections.defaultdict(list)
  for source_file in split_files:
    repositories[source_file.repo].append((source_file.path, source_file.text))
  for checkpoint in checkpoints:
    # Imported only here, where a model is loaded.
    from code_t5.evaluation import engine_eval  # pylint: disable=g-import-not-at-top
    found = engine_eval.run(pathlib.Path(checkpoint), points, scored, echo,
                            repository_files=repositories, rungs=rungs)
    suffix = "" if len(checkpoints) == 1 else f"@{pathlib.Path(checkpoint).name}"
    for key, system in found["systems"].items():
      systems[key + suffix] = system
      system_predictions[key + suffix] = found["predictions"][key]
      engine_scores[key + suffix] = found["scores"][key]
    # Each rung against the engine without the repository (the engine before it read one).
    reference = "engine:" + engine_eval.WITHOUT_REPOSITORY
    if reference in found["predictions"]:
      for key, predictions in found["predictions"].items():
        if key != reference:
          systems[key + suffix][f"vs_{reference}"] = paired.compare(
              targets, predictions, found["predictions"][reference], files)
    engine[str(checkpoint)] = {"filters": found["filters"], "threshold": found["threshold"]}
  # Each system against the n-gram at the same points (all of them, or a model eval's first
  # `count`): the difference with its interval, so one line more or less is not read as a win.
  for key, predictions in {"empty": [""] * len(points), **system_predictions}.items():
    if key != "ngram":
      count = len(predictions)
      systems[key]["vs_ngram"] = paired.compare(targets[:count], predictions, ngram[:count],
                                                files[:count])
  return {
      "root": _shown(root),
      "train_root": _shown(train_root),
      "split": split,
      "points": {"version": line_completion.POINTS_VERSION, "seed": line_completion.DEFAULT_SEED,
                 "start_points_per_file": line_completion.START_POINTS_PER_FILE,
                 "inside_points_per_file": line_completion.INSIDE_POINTS_PER_FILE,
                 "min_line_chars": line_completion.MIN_LINE_CHARS, "max_files": max_files,
                 "files": len(sampled),
                 "count": len(points),
                 "by_kind": dict(collections.Counter(kinds))},
      "systems": systems,
      "examples": _examples(points, system_predictions, examples),
      "per_point": _per_point(points, system_predictions, engine_scores),
      **({"engine": engine} if engine else {}),
  }


def _examples(points, system_predictions: Dict[str, List[str]], count: int) -> List[dict]:
  """`count` points drawn at random (fixed seed) with what each system predicted there, for a
  reader to judge: the last lines of the context, the target and each prediction."""
  chosen = sorted(random.Random(0).sample(range(len(points)), min(count, len(points))))
  return [{"repo": points[i][1].repo, "path": points[i][1].path, "line": points[i][1].line,
           "kind": points[i][1].kind,
           "context_tail": "\n".join(points[i][1].context(points[i][0]).split("\n")[-4:]),
           "target": points[i][1].target(points[i][0]),
           **{name: predictions[i] for name, predictions in system_predictions.items()
              if i < len(predictions)}}
          for i in chosen]


def _per_point(points, system_predictions: Dict[str, List[str]],
               scores: Dict[str, List[Optional[float]]]) -> List[dict]:
  """Every point with its target and each system's line (and the engine's score of it)."""
  return [{"repo": point.repo, "path": point.path, "line": point.line, "kind": point.kind,
           "target": point.target(text),
           "predictions": {name: predictions[i] for name, predictions in
                           system_predictions.items() if i < len(predictions)},
           "scores": {name: values[i] for name, values in scores.items()}}
          for i, (text, point) in enumerate(points)]


def _shown(root) -> str:
  """A root as results show it: relative to the repository when inside it."""
  root = pathlib.Path(root).resolve()
  repository = default_root().parent
  return str(root.relative_to(repository) if root.is_relative_to(repository) else root)


def write_json(results: dict, out: pathlib.Path, force: bool) -> None:
  """Writes to a temporary file beside `out`, then renames (no half-written results)."""
  out = pathlib.Path(out)
  if out.exists() and not force:
    raise BaselineError(f"--out {out} exists: pass --force to replace it")
  out.parent.mkdir(parents=True, exist_ok=True)
  fd, tmp = tempfile.mkstemp(prefix=out.name + ".tmp-", dir=out.parent, text=True)
  try:
    with os.fdopen(fd, "w", encoding="utf-8") as f:
      json.dump(results, f, indent=1, ensure_ascii=False)
      f.write("\n")
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)
    os.replace(tmp, out)
  finally:
    if os.path.exists(tmp):
      os.unlink(tmp)


def _cli(args) -> int:
  if args.out.exists() and not args.force:  # before minutes of work
    raise BaselineError(f"--out {args.out} exists: pass --force to replace it")
  try:
    results = evaluate(args.root or default_root(), args.split, args.model_dir,
                       args.validation_fraction, args.test_fraction, args.train_root,
                       args.max_files, checkpoints=args.checkpoint,
                       rungs=args.rungs.split(",") if args.rungs else None)
  except flcc.FlccError as e:
    raise BaselineError(str(e)) from None
  write_json(results, args.out, args.force)
  print(f"{results['points']['count']} points of {results['points']['files']} {args.split} files")
  interval = f"[{paired.LEVEL} % interval]"
  print(f"{'system':<40} {'EM':>6} {'ES':>6} {'prefix':>7}   {'EM - n-gram ' + interval:<30} "
        f"{'ES - n-gram ' + interval}")
  for name, system in results["systems"].items():
    m = system["metrics"]["all"]
    versus = system.get("vs_ngram")
    differences = (f"   {paired.shown(versus, 'exact_match'):<30} "
                   f"{paired.shown(versus, 'edit_similarity')}" if versus else "")
    print(f"{name[:40]:<40} {m['exact_match']:6.1f} {m['edit_similarity']:6.1f} "
          f"{m['prefix_match_chars']:7.2f}{differences}")
  print(f"intervals: a paired bootstrap over the {results['points']['files']} files' points "
        "(code_t5/evaluation/paired.py)")
  for checkpoint, found in results.get("engine", {}).items():
    filters = found["filters"]
    removed = ", ".join(f"{reason} {count}" for reason, count in filters["removed"].items())
    print(f"engine filters on {checkpoint}: of {filters['candidates']} candidate lines removed "
          f"{removed or 'none'}")
    print(f"{'--min-score':>12} {'shown':>7} {'correct':>8} {'wrong':>7} {'precision':>10}")
    for row in found["threshold"]["rows"]:
      precision = "-" if row["precision"] is None else f"{row['precision']:.1f}"
      threshold = "none" if row["min_score"] is None else f"{row['min_score']:g}"
      print(f"{threshold:>12} {row['shown_percent']:>6.1f}% {row['correct']:>8} "
            f"{row['wrong']:>7} {precision:>10}")
  print(f"wrote {args.out}")
  return 0


def register_cli(subparsers) -> None:
  parser = subparsers.add_parser(
      "baseline", help="score a model-free line-completion baseline (token n-gram) and, with "
      "--model-dir, a model's line-completion eval, at the task's points; writes JSON")
  parser.add_argument("--root", type=pathlib.Path, default=None,
                      help="FLCC dataset root (holds v3/); default: dataset-dev/")
  parser.add_argument("--train-root", type=pathlib.Path, default=None,
                      help="count the n-gram on this root's train split (default: --root), "
                      "e.g. the root the model was trained on")
  parser.add_argument("--max-files", type=int, default=None,
                      help="draw the points from this many files of the split (spread over its "
                      "repositories; the same as `code-t5 eval --line-completion --max-files`)")
  parser.add_argument("--split", default="validation",
                      help="validation (default), test, or train (what a model learnt by heart)")
  parser.add_argument("--out", type=pathlib.Path, required=True, help="JSON results file")
  parser.add_argument("--force", action="store_true", help="replace --out if it exists")
  parser.add_argument("--checkpoint", type=pathlib.Path, action="append", default=[],
                      nargs="?", const=complete.SHIPPED_MODEL, metavar="DIR",
                      help="also run the completion engine (`code-t5 complete`) on this model "
                      "dir (without DIR: the shipped model) at the points, once per rung of "
                      "code_t5/evaluation/engine_eval.py; repeatable")
  parser.add_argument("--rungs", default=None, metavar="A,B,...",
                      help="the engine's rungs to run (default: the whole ladder of "
                      "code_t5/evaluation/engine_eval.py); e.g. "
                      "beam+heal+filters+names,+below")
  parser.add_argument("--model-dir", type=pathlib.Path, action="append", default=[],
                      help="also score this model dir's newest line-completion eval decodes "
                      "(repeatable)")
  parser.add_argument("--validation-fraction", type=float, default=0.05)
  parser.add_argument("--test-fraction", type=float, default=0.05)
  parser.set_defaults(func=_cli)
