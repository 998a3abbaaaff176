"""`code-t5 baseline`: scores the model-free line-completion baseline, a token n-gram model
(code_t5/evaluation/ngram.py) counted on the TRAIN split of an FLCC root.

It judges it at exactly the task's points (code_t5/data/line_completion.py) of a split, next to an
empty prediction, with the task's metrics (metrics.line_completion_metrics), and — with
--model-dir — a trained model's eval decodes of the same points (the Mesh TF eval of
runs/eval_line_completion.gin), into one JSON results file. Every system is also compared with the
n-gram at the same points: the difference in each metric and its 95 % interval
(code_t5/evaluation/paired.py), as one line more or less of a 192-point set is not a win.

The n-gram is fitted once per training root: it is saved in a cache folder (--ngram-cache,
default $CODE_T5_CACHE/ngram, $XDG_CACHE_HOME/code_t5/ngram or ~/.cache/code_t5/ngram) keyed by
the root's content fingerprint (flcc.fingerprint: paths, sizes, mtimes), the split fractions and
the n-gram's format, order and constants, and loaded instead of refitted while that key holds.
One call can score several splits (--split validation,test or all): one fit, one JSON with
"splits": {split: results}.
"""

import collections
import hashlib
import json
import os
import pathlib
import random
import sys
import time
from typing import Dict, List, Optional, Sequence, Tuple, Union

from code_t5 import cache_dirs
from code_t5 import errors
from code_t5 import processes
from code_t5 import stranger_paths
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


# Progress lines (files read, points completed, with rate and ETA) at most this often.
PROGRESS_SECONDS = 10.0
# --split all: the held-out splits.
ALL_SPLITS = ("validation", "test")


class BaselineError(errors.UserError):
  """A bad `code-t5 baseline` argument; the message is one line."""


def default_ngram_cache() -> pathlib.Path:
  """$CODE_T5_CACHE/ngram, else $XDG_CACHE_HOME/code_t5/ngram, else ~/.cache/code_t5/ngram."""
  return cache_dirs.root() / "ngram"


def split_names(split: Union[str, Sequence[str]]) -> List[str]:
  """The splits of --split: one, several ("validation,test") or "all" (validation and test)."""
  names = split.split(",") if isinstance(split, str) else list(split)
  chosen = []
  for name in names:
    for one in ALL_SPLITS if name.strip() == "all" else (name.strip(),):
      if one not in flcc.SPLITS:
        given = split if isinstance(split, str) else ",".join(split)
        raise BaselineError(f"--split {given}: give {', '.join(flcc.SPLITS)}, all, or several "
                            f"joined by commas ({','.join(ALL_SPLITS)})")
      if one not in chosen:
        chosen.append(one)
  return chosen


class _Every:
  """True at most once every `seconds` (PROGRESS_SECONDS): when a progress line is due."""

  def __init__(self, seconds: Optional[float] = None):
    self.seconds = PROGRESS_SECONDS if seconds is None else seconds
    self.last = time.monotonic()

  def __call__(self) -> bool:
    now = time.monotonic()
    if now - self.last < self.seconds:
      return False
    self.last = now
    return True


def ngram_cache_key(train_root, splits: flcc.Splits, file_counts: Optional[dict] = None,
                    filters: flcc.Filters = flcc.Filters()) -> str:
  """What a saved n-gram is valid for: the train root's content (flcc.fingerprint, with `filters`
  -- the reader's defaults, perhaps with held-out roots -- and `splits`), the split fractions, and
  the n-gram's format, order and constants. `file_counts` is filled as flcc.fingerprint fills it."""
  return hashlib.sha256(json.dumps({
      "fingerprint": flcc.fingerprint(train_root, filters, splits, file_counts),
      "validation": splits.validation, "test": splits.test, "format": ngram_lib.FORMAT,
      "order": ngram_lib.ORDER, "top_continuations": ngram_lib.TOP_CONTINUATIONS,
      "token_re": ngram_lib.TOKEN_RE.pattern}, sort_keys=True).encode()).hexdigest()


def ngram_model(train_root, splits: flcc.Splits, cache: Optional[pathlib.Path] = None,
                echo=print, filters: flcc.Filters = flcc.Filters()) -> ngram_lib.NgramModel:
  """The n-gram counted on the train split of `train_root` (read with `filters`; a train file
  copying a held-out root's file is left out with Filters.held_out_roots): loaded from `cache` when
  it holds one saved under the same key (ngram_cache_key), else fitted (and saved there, written
  to a temporary file and renamed). A damaged cache file is fitted again, with a one-line note.
  Without `cache`, fitted every time."""
  file_counts: Dict[str, int] = {}
  key = ngram_cache_key(train_root, splits, file_counts, filters)
  path = None
  if cache is not None:
    name = cache_dirs.entry_name(pathlib.Path(train_root).resolve().name)
    path = pathlib.Path(cache) / f"{name}-{key[:24]}.npz"
    if path.exists():
      start = time.time()
      try:
        model = ngram_lib.NgramModel.load(path, key=key)
      except ngram_lib.ModelFileError as e:
        echo(f"n-gram: the cache file {path} is damaged ({e}): fitting again")
      except OSError as e:
        echo(f"n-gram: cannot read the cache file {path} ({e.strerror or e}): fitting again")
      else:
        echo(f"n-gram: loaded from {path} (fit on {model.stats.get('files')} files) in "
             f"{time.time() - start:.1f} s")
        return model
  expected = file_counts.get("train", 0)
  echo(f"n-gram: fitting on the train split of {_shown(train_root)} (~{expected} files)"
       + (f" (cached for next time in {path.parent})" if path is not None else ""))
  due = _Every()
  start = time.time()
  read = 0

  def train_texts():
    nonlocal read
    for source_file in flcc.read_files(train_root, filters, splits, only_split="train"):
      read += 1
      if due():
        rate = read / (time.time() - start)
        echo(f"n-gram: read {read}/~{expected} train files, {rate:.0f} files/s, "
             f"ETA {max(expected - read, 0) / rate:.0f} s (then counting)")
      yield source_file.text

  def counted(orders, seconds):
    if due() and orders < ngram_lib.ORDER:
      echo(f"n-gram: counted {orders}/{ngram_lib.ORDER} orders in {seconds:.0f} s, "
           f"ETA {seconds / orders * (ngram_lib.ORDER - orders):.0f} s")

  model = ngram_lib.NgramModel().fit(train_texts(), progress=counted)
  stats = model.stats
  done = (f"n-gram: fit on {stats['files']} train files ({stats['tokens']} tokens) in "
          f"{time.time() - start:.1f} s (read {stats['read_seconds']:.1f} s, count "
          f"{stats['count_seconds']:.1f} s)")
  if path is None:
    echo(done)
    return model
  try:
    processes.write_file_beside(path, lambda f: model.save(f, key=key), binary=True,
                                make_parents=True)
    size = path.stat().st_size
  except OSError as e:
    echo(f"{done}; not cached: cannot write {path} ({e.strerror or e})")
  else:
    echo(f"{done}; cached in {path} ({size / 1e6:.0f} MB)")
  return model


def _score(targets: Sequence[str], predictions: Sequence[str]) -> Dict[str, float]:
  line = postprocessors.to_json_line
  result = metrics.line_completion_metrics([line(t) for t in targets],
                                           [line(p) for p in predictions])
  return {k: round(v, 3) for k, v in result.items()}


def model_predictions(model_dir: pathlib.Path, split: str, root_name: str
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
  targets = _read_decodes(targets_file)
  # The eval writes a prediction for each target: reading stops at the first one past them.
  return task, step, targets, _read_decodes(predictions_file, targets_file, len(targets))


def _read_decodes(path: pathlib.Path, targets_file: Optional[pathlib.Path] = None,
                  most: Optional[int] = None) -> List[str]:
  """One decode (a JSON string) a line, line by line: the model dir may be a stranger's. At most
  `most` of them (the count in `targets_file`)."""
  decodes = []
  try:
    with stranger_paths.open_regular(path, postprocessors.MAX_DECODES_BYTES) as f:
      for number, line in enumerate(f, 1):
        if most is not None and number > most:
          raise BaselineError(f"{path} holds more decodes than the {most} targets of "
                              f"{targets_file.name}: run the eval again")
        try:
          decode = postprocessors.from_json_line(line.decode("utf-8"))
        except UnicodeDecodeError:
          raise BaselineError(f"{path} is not UTF-8 text: run the eval again") from None
        except (ValueError, RecursionError):  # (RecursionError: JSON nested past the limit)
          decode = None
        if not isinstance(decode, str):
          raise BaselineError(f"{path}:{number} is not a decode (a JSON string, as Mesh TF's "
                              "eval writes them): run the eval again")
        decodes.append(decode)
  except OSError as e:
    raise BaselineError(f"{path} cannot be read ({e.strerror}): run the eval again") from None
  return decodes


def evaluate(root, split: Union[str, Sequence[str]] = "validation",
             model_dirs: Sequence[pathlib.Path] = (),
             validation_fraction: float = 0.05, test_fraction: float = 0.05,
             train_root=None, max_files: Optional[int] = None, examples: int = 10,
             checkpoints: Sequence[pathlib.Path] = (), echo=print,
             rungs: Optional[Sequence[str]] = None,
             ngram_cache: Optional[pathlib.Path] = None,
             held_out_roots: Sequence[pathlib.Path] = ()) -> dict:
  """Scores the baselines (and the models' eval decodes) at the split's completion points.

  The n-gram counts the train split of `train_root` (default: `root`), so a model and an n-gram
  trained on one root are judged on another's held-out repositories alike (without the train files
  that copy a file of `held_out_roots`, as `code-t5 train --held-out-root` trains); with
  `ngram_cache` (a folder) it is fitted once and loaded from there afterwards (ngram_model).
  `max_files` draws the points from that many files of the split (line_completion.sample_files),
  as `code-t5 eval --line-completion --max-files` does. `examples` random points are kept with every
  system's prediction, for a reader to judge. Each of `checkpoints` is run through the completion
  engine at the points, once per rung of code_t5.evaluation.engine_eval.RUNGS (or of `rungs`),
  with each point's repository in the root (all its files in the split, the point's file left
  out) as the repository an editor would have open. Every point's target, predictions and the
  engine's scores are kept in "per_point", so that splits and systems can be compared later.

  `split` may name several splits ("validation,test", "all" or a list; split_names): then the
  n-gram is fitted (or loaded) once and the result is {"root", "train_root", "splits": {split:
  the one-split result}}.
  """
  names = split_names(split)
  train_root = root if train_root is None else train_root
  _check_inputs([("--root", root), ("--train-root", train_root),
                 *(("--held-out-root", r) for r in held_out_roots)], max_files)
  splits = flcc.Splits(validation=validation_fraction, test=test_fraction)
  # Everything that can fail does so before the n-gram is fitted.
  models = {name: [model_predictions(pathlib.Path(d), name, pathlib.Path(root).resolve().name)
                   for d in model_dirs] for name in names}
  inputs = {name: _split_points(root, split_files, name, max_files)
            for name, split_files in _read_splits(root, splits, names).items()}
  model = ngram_model(train_root, splits, ngram_cache, echo,
                      flcc.Filters(held_out_roots=tuple(str(r) for r in held_out_roots)))
  results = {name: _evaluate_split(root, name, train_root, model, models[name], model_dirs,
                                   *inputs[name], max_files, examples, checkpoints, echo, rungs)
             for name in names}
  held_out = {"held_out_roots": [_shown(r) for r in held_out_roots]} if held_out_roots else {}
  if len(names) == 1:
    return {**results[names[0]], **held_out}
  return {"root": _shown(root), "train_root": _shown(train_root), **held_out, "splits": results}


def _read_splits(root, splits: flcc.Splits, names: Sequence[str]
                 ) -> Dict[str, List[flcc.SourceFile]]:
  """The files of each split of `names` (in their order): several in one pass over the root (a
  read of one split reads the splits before it too, for the duplicate filter)."""
  if len(names) == 1:
    return {names[0]: list(flcc.read_files(root, splits=splits, only_split=names[0]))}
  found = {name: [] for name in names}
  last = max(flcc.SPLITS.index(name) for name in names)
  for source_file in flcc.read_files(root, splits=splits):  # train, validation, then test
    if flcc.SPLITS.index(source_file.split) > last:
      break
    if source_file.split in found:
      found[source_file.split].append(source_file)
  return found


def _check_inputs(roots: Sequence[Tuple[str, object]], max_files: Optional[int]) -> None:
  """One line naming the flag for a root (flag, path) that does not exist or a --max-files below
  1, before anything is read."""
  for flag, path in roots:
    if not pathlib.Path(path).exists():
      if pathlib.Path(path) == default_root():  # a package pip installed (not an editable one)
        raise BaselineError(f"{flag} was not given, and its default, dataset-dev/, comes with the "
                            "checkout, not with the installed package: give --root "
                            "CHECKOUT/dataset-dev, or another folder that holds v3/")
      raise BaselineError(f"{flag} {path} does not exist: give the folder that holds v3/")
  if max_files is not None and max_files < 1:
    raise BaselineError(f"--max-files must be at least 1, got {max_files}")


def split_points(root, split: str, max_files: Optional[int] = None,
                 splits: flcc.Splits = flcc.Splits(validation=0.05, test=0.05)):
  """(the split's files, the sampled files, their points as (text, point)): the points `evaluate`
  scores, for other judges of the same lines (code_t5.evaluation.keystrokes)."""
  _check_inputs([("--root", root)], max_files)
  try:
    return _split_points(root, _read_splits(root, splits, [split])[split], split, max_files)
  except flcc.FlccError as e:
    raise BaselineError(str(e)) from None


def _split_points(root, split_files: List[flcc.SourceFile], split: str,
                  max_files: Optional[int]):
  """(the split's files, the sampled files, the points as (text, point))."""
  sampled = line_completion.sample_files(split_files, max_files)
  points = [(f.text, p) for f, p in line_completion.points_of_files(sampled)]
  if not points:
    raise BaselineError(f"--root {root}: its {split} split has no completion points")
  return split_files, sampled, points


def _evaluate_split(root, split, train_root, model, models, model_dirs, split_files, sampled,
                    points, max_files, examples, checkpoints, echo, rungs) -> dict:
  targets = [p.target(text) for text, p in points]
  kinds = [p.kind for _, p in points]
  start = time.time()
  due = _Every()
  ngram = []
  for text, p in points:
    ngram.append(model.complete(p.context(text)))
    if due():
      rate = len(ngram) / (time.time() - start)
      echo(f"n-gram {split}: {len(ngram)}/{len(points)} points, {rate:.0f}/s, "
           f"ETA {(len(points) - len(ngram)) / rate:.0f} s")
  echo(f"n-gram {split}: {len(points)} completions in {time.time() - start:.1f} s")
  train_files = model.stats.get("files")

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
                          f"{split} points of --root {root} (another root, split or scheme, or "
                          "an eval run with --max-files: give baseline the same --max-files?)")
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
  engine_features: Dict[str, List[Optional[List[float]]]] = {}
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
    engine_features[f"engine:{found['threshold']['rung']}{suffix}"] = found["features"]
    # Each rung against the engine without the repository (the engine before it read one).
    reference = "engine:" + engine_eval.WITHOUT_REPOSITORY
    if reference in found["predictions"]:
      for key, predictions in found["predictions"].items():
        if key != reference:
          systems[key + suffix][f"vs_{reference}"] = paired.compare(
              targets, predictions, found["predictions"][reference], files)
    engine[str(checkpoint)] = {"filters": found["filters"], "autopairs": found["autopairs"],
                               "listed": found["listed"], "threshold": found["threshold"]}
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
      "per_point": _per_point(points, system_predictions, engine_scores, engine_features),
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
               scores: Dict[str, List[Optional[float]]],
               features: Dict[str, List[Optional[List[float]]]]) -> List[dict]:
  """Every point with its target and each system's line (and the engine's score of it, and for
  the engine's last rung the confidence features of its lines: code_t5.engine.confidence)."""
  return [{"repo": point.repo, "path": point.path, "line": point.line, "kind": point.kind,
           "target": point.target(text),
           "predictions": {name: predictions[i] for name, predictions in
                           system_predictions.items() if i < len(predictions)},
           "scores": {name: values[i] for name, values in scores.items()},
           **({"confidence_features": {name: values[i] for name, values in features.items()}}
              if features else {})}
          for i, (text, point) in enumerate(points)]


def _shown(root) -> str:
  """A root as results show it: relative to the repository when inside it, with bytes of its name
  that are not UTF-8 as `\\xff` (printing it, or writing it in the results, raised
  UnicodeEncodeError after all the scoring)."""
  root = pathlib.Path(root).resolve()
  repository = default_root().parent
  shown = str(root.relative_to(repository) if root.is_relative_to(repository) else root)
  return os.fsencode(shown).decode("utf-8", "backslashreplace")


def write_json(results: dict, out: pathlib.Path, force: bool) -> None:
  """Writes to a temporary file beside `out`, then renames (no half-written results)."""
  out = pathlib.Path(out)
  if out.exists() and not force:
    raise BaselineError(f"--out {out} exists: pass --force to replace it")

  def write(f):
    json.dump(results, f, indent=1, ensure_ascii=False)
    f.write("\n")

  with errors.writing(f"the results {out}", out.parent, "give another --out"):
    processes.write_file_beside(out, write, replace=force, make_parents=True)


def note_points_trained_on(model_dir, root, splits: flcc.Splits, scored: Sequence[str],
                           command: str) -> None:
  """Says on stderr where the `scored` splits of `root`, split by `splits`, hold repositories
  that `model_dir` trained on: its operative config's root is `root`, split by other fractions
  (helper-52's audit: a model trained with 0 / 0 was scored on its own training files without a
  word). A folder scan, no file read; nothing said where the config does not tell."""
  from code_t5.training import operative_config  # pylint: disable=g-import-not-at-top
  try:
    config = operative_config.OperativeConfig.of_model_dir(model_dir)
    trained_root = config.value("flcc_dataset.root", kind=str)
    trained = flcc.Splits(
        validation=config.value("flcc_dataset.validation_fraction", 0.05, kind=(int, float)),
        test=config.value("flcc_dataset.test_fraction", 0.05, kind=(int, float)))
  except (errors.UserError, ValueError, TypeError):  # (a stranger's config: no note, no error)
    return
  if trained_root is None or os.path.realpath(trained_root) != os.path.realpath(root):
    return
  if trained == splits:
    return
  repo_ids = [repo.repo_id for repo in flcc.list_repositories(root)]  # (one folder scan)
  trained_split = flcc.assign_splits(repo_ids, trained)
  seen = [repo for repo, split in flcc.assign_splits(repo_ids, splits).items()
          if split in scored and trained_split[repo] == "train"]
  if seen:
    print(f"code-t5 {command}: note: {model_dir} trained on {len(seen)} of the repositories "
          f"scored here ({root} split {trained.validation:g} / {trained.test:g} when it trained, "
          f"{splits.validation:g} / {splits.test:g} here): give --validation-fraction "
          f"{trained.validation:g} --test-fraction {trained.test:g} to score what it did not see",
          file=sys.stderr)


def _cli(args) -> int:
  # Every flag is checked before the minutes of fitting and scoring.
  # Its folder now, not after the minutes of scoring (a file there: one line, not a traceback).
  processes.check_output_file(args.out, args.force, f"the results {args.out}", BaselineError)
  # flcc.Splits would name its own fields ("Splits.validation must be ...").
  flcc.check_fractions(args.validation_fraction, args.test_fraction)
  for checkpoint in args.checkpoint:
    complete.check_loadable(complete.model_info(checkpoint))
  if args.rungs and not args.checkpoint:  # the engine's rungs: without a checkpoint, none runs
    raise BaselineError("--rungs needs --checkpoint: give the model dir to run the rungs on, "
                        "or --checkpoint alone for the shipped model")
  if args.rungs:
    from code_t5.evaluation import engine_eval  # pylint: disable=g-import-not-at-top  (as below)
    engine_eval.check_rungs(args.rungs.split(","))
  names = split_names(args.split)
  root = args.root or default_root()
  splits = flcc.Splits(validation=args.validation_fraction, test=args.test_fraction)
  for model_dir in [*args.checkpoint, *args.model_dir]:
    note_points_trained_on(model_dir, root, splits, names, "baseline")
  try:
    results = evaluate(root, names, args.model_dir,
                       args.validation_fraction, args.test_fraction, args.train_root,
                       args.max_files, checkpoints=args.checkpoint,
                       rungs=args.rungs.split(",") if args.rungs else None,
                       ngram_cache=None if args.no_ngram_cache
                       else args.ngram_cache or default_ngram_cache(),
                       held_out_roots=args.held_out_root)
  except flcc.FlccError as e:
    raise BaselineError(str(e)) from None
  write_json(results, args.out, args.force)
  for name, result in (results["splits"].items() if "splits" in results
                       else [(names[0], results)]):
    if len(names) > 1:
      print()
    _print_split(name, result)
  print(f"wrote {args.out}")
  return 0


def _print_split(split: str, results: dict) -> None:
  count, files = results["points"]["count"], results["points"]["files"]
  print(f"{count} point{'' if count == 1 else 's'} of {files} {split} "
        f"file{'' if files == 1 else 's'}")
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
  whose = "file's" if files == 1 else "files'"
  print(f"intervals: a paired bootstrap over the {files} {whose} points "
        "(code_t5/evaluation/paired.py)")
  for checkpoint, found in results.get("engine", {}).items():
    filters = found["filters"]
    removed = ", ".join(f"{reason} {count}" for reason, count in filters["removed"].items())
    print(f"engine filters on {checkpoint}: of {filters['candidates']} candidate lines removed "
          f"{removed or 'none'}")
    _print_autopairs(found.get("autopairs"))
    _print_listed(found.get("listed"))
    _print_thresholds("--min-score", "min_score", found["threshold"]["rows"])
    if found["threshold"].get("confidence_rows"):
      _print_thresholds("--min-confidence", "min_confidence", found["threshold"]["confidence_rows"])


def _print_autopairs(autopairs: Optional[dict]) -> None:
  """engine_eval's "autopairs" in a sentence (nothing where it has no points)."""
  if not autopairs:
    return
  shown = autopairs["shown"]
  right = (f", {autopairs['shown_exact']} right ({100 * autopairs['shown_exact'] / shown:.0f} %)"
           if shown else "")
  print(f"with an editor's auto-inserted closers after the cursor ({autopairs['points']} points "
        f"whose typed part leaves brackets or a string open): best line exact at "
        f"{autopairs['exact']} ({autopairs['exact_without_closers']} without the closers); the "
        f"model's gate shows {shown}{right}")


def _print_listed(listed: Optional[dict]) -> None:
  """engine_eval's "listed" in a sentence (nothing where no line is shown)."""
  if not listed:
    return
  precision = listed["alternatives_precision"]
  right = f" ({precision:g} %)" if precision is not None else ""
  print(f"the list at --top {listed['top']} ({listed['points']} points with a line shown, the "
        f"best right at {listed['best_correct']}): {listed['alternatives']} lines beside the best "
        f"at {listed['points_with_alternatives']} points, {listed['alternatives_correct']} of them "
        f"right{right}, {listed['correct_only_beside_the_best']} where the best is not; of all "
        f"lines listed {listed['lines_precision']:g} % right")


def _print_thresholds(flag: str, key: str, rows) -> None:
  """One gate's table: per threshold (row[key], None for none) what it shows, the model's own
  gate marked."""
  width = max(12, len(flag))
  print(f"{flag:>{width}} {'shown':>7} {'correct':>8} {'wrong':>7} {'precision':>10}")
  for row in rows:
    precision = "-" if row["precision"] is None else f"{row['precision']:.1f}"
    threshold = "none" if row[key] is None else f"{row[key]:g}"
    mark = "  (the model's gate)" if row.get("model_gate") else ""
    print(f"{threshold:>{width}} {row['shown_percent']:>6.1f}% {row['correct']:>8} "
          f"{row['wrong']:>7} {precision:>10}{mark}")


def register_cli(subparsers) -> None:
  what = ("score a model-free line-completion baseline (token n-gram) and, with --checkpoint "
          "(bare: the shipped model), the completion engine, or with --model-dir a model's "
          "line-completion eval, at the task's points; writes JSON")
  parser = subparsers.add_parser("baseline", help=what, description=what[0].upper() + what[1:]
                                 + ", e.g. `code-t5 baseline --checkpoint --out results.json`.")
  parser.add_argument("--root", type=pathlib.Path, default=None,
                      help="FLCC dataset root (holds v3/); default: dataset-dev/")
  parser.add_argument("--train-root", type=pathlib.Path, default=None,
                      help="count the n-gram on this root's train split (default: --root), "
                      "e.g. the root the model was trained on")
  parser.add_argument("--held-out-root", type=pathlib.Path, action="append", default=[],
                      metavar="ROOT", help="count the n-gram without the train files that copy "
                      "this root's validation or test files, as `code-t5 train --held-out-root` "
                      "trains (repeatable)")
  parser.add_argument("--max-files", type=int, default=None,
                      help="draw the points from this many files of the split (spread over its "
                      "repositories; the same as `code-t5 eval --line-completion --max-files`)")
  parser.add_argument("--split", default="validation",
                      help="validation (default), test, or train (what a model learnt by heart); "
                      "several: validation,test or all (validation and test), scored with one "
                      "n-gram into one JSON of \"splits\"")
  parser.add_argument("--ngram-cache", type=pathlib.Path, default=None, metavar="DIR",
                      help="keep the fitted n-gram here, keyed by the train root's content "
                      "fingerprint and split fractions, and load it instead of refitting "
                      "(default $CODE_T5_CACHE/ngram, else $XDG_CACHE_HOME/code_t5/ngram, else "
                      "~/.cache/code_t5/ngram)")
  parser.add_argument("--no-ngram-cache", action="store_true",
                      help="fit the n-gram afresh and keep nothing")
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
                      "beam+heal+filters+names,+similar")
  parser.add_argument("--model-dir", type=pathlib.Path, action="append", default=[],
                      help="also score this model dir's newest line-completion eval decodes "
                      "(repeatable)")
  flcc.add_fraction_flags(parser)
  parser.set_defaults(func=_cli)
