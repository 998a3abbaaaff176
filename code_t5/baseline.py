"""A line-completion baseline that needs no model, and `code-t5 baseline`, which scores it.

The baseline is a token n-gram model (order 4, "stupid backoff" to shorter contexts) counted on
the TRAIN split of an FLCC root and decoded greedily until it predicts a newline. Tokens are
identifiers/numbers, single punctuation characters, runs of spaces/tabs, and "\\n" (TOKEN_RE). When
the cursor is right after a word character, the typed part of that word is "healed": the context
drops the partial word and the first prediction must extend it (only the untyped rest is output).

`code-t5 baseline` judges it at exactly the task's points (code_t5/line_completion.py) of a split,
next to an empty prediction, with the task's metrics (metrics.line_completion_metrics), and — with
--model-dir — a trained model's eval decodes of the same points (the Mesh TF eval of
runs/eval_line_completion.gin), into one JSON results file.
"""

import collections
import json
import os
import pathlib
import re
import tempfile
import time
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from code_t5 import errors
from code_t5 import flcc
from code_t5 import line_completion
from code_t5 import metrics
from code_t5 import postprocessors

TOKEN_RE = re.compile(r"\n|[ \t]+|\w+|[^\w\s]|\s")
ORDER = 4
TOP_CONTINUATIONS = 32  # kept per context: enough for healing a typed prefix
MAX_TOKENS = 40
MAX_CHARS = 240


def default_root() -> pathlib.Path:
  """dataset-dev/ of the repository (the tasks' default root)."""
  return pathlib.Path(__file__).resolve().parent.parent / "dataset-dev"


class BaselineError(errors.UserError):
  """A bad `code-t5 baseline` argument; the message is one line."""


def tokenize(text: str) -> List[str]:
  return TOKEN_RE.findall(text)


class NgramModel:
  """Counts of the next token after each context of up to ORDER - 1 tokens."""

  def __init__(self, order: int = ORDER):
    self.order = order
    self._counts: Dict[Tuple[str, ...], collections.Counter] = collections.defaultdict(
        collections.Counter)
    self._best: Dict[Tuple[str, ...], List[Tuple[str, int]]] = {}

  def fit(self, texts: Iterable[str]) -> "NgramModel":
    for text in texts:
      tokens = ["\n"] + tokenize(text)  # a file starts like a line
      for i in range(1, len(tokens)):
        for n in range(0, self.order):
          if i - n < 0:
            break
          self._counts[tuple(tokens[i - n:i])][tokens[i]] += 1
    # Keep only the most frequent continuations (memory, and speed of healing).
    self._best = {context: counter.most_common(TOP_CONTINUATIONS)
                  for context, counter in self._counts.items()}
    self._counts.clear()
    return self

  def next_token(self, context: Sequence[str], prefix: str = "") -> Optional[str]:
    """The most frequent token after the longest known context that starts with `prefix`."""
    for n in range(min(self.order - 1, len(context)), -1, -1):
      candidates = self._best.get(tuple(context[len(context) - n:]) if n else ())
      for token, _ in candidates or ():
        if token.startswith(prefix):
          return token
    return None

  def complete(self, context_text: str) -> str:
    """The predicted rest of the line after `context_text`."""
    context = ["\n"] + tokenize(context_text[-4000:])  # as in fit: a file starts like a line
    prefix = ""
    if context[-1][0].isalnum() or context[-1][0] == "_":
      prefix = context.pop()  # maybe a partial word: heal it (spaces are whole tokens)
    out = []
    for _ in range(MAX_TOKENS):
      token = self.next_token(context, prefix)
      if token is None or token == "\n":
        break
      context.append(token)
      out.append(token[len(prefix):])
      prefix = ""
      if sum(map(len, out)) >= MAX_CHARS:
        break
    return postprocessors.first_line("".join(out))


def _score(targets: Sequence[str], predictions: Sequence[str]) -> Dict[str, float]:
  line = postprocessors.to_json_line
  result = metrics.line_completion_metrics([line(t) for t in targets],
                                           [line(p) for p in predictions])
  return {k: round(v, 3) for k, v in result.items()}


def _model_predictions(model_dir: pathlib.Path, split: str) -> Tuple[str, int, List[str],
                                                                     List[str]]:
  """(task, step, targets, predictions) of the newest line-completion eval in model_dir."""
  eval_dir = model_dir / f"{split}_eval"
  found = []
  for targets_file in sorted(eval_dir.glob("flcc_py_line_completion*_targets")):
    task = targets_file.name[:-len("_targets")]
    for predictions_file in eval_dir.glob(f"{task}_*_predictions"):
      step = predictions_file.name[len(task) + 1:-len("_predictions")]
      if step.isdigit():
        found.append((int(step), task, targets_file, predictions_file))
  if not found:
    raise BaselineError(f"--model-dir {model_dir}: no line-completion decodes in {eval_dir}; run "
                        "its eval with --gin_file=runs/eval_line_completion.gin first")
  step, task, targets_file, predictions_file = max(found)

  def read(path):
    return [postprocessors.from_json_line(line) for line in
            path.read_text(encoding="utf-8").splitlines()]

  return task, step, read(targets_file), read(predictions_file)


def evaluate(root, split: str = "validation", model_dirs: Sequence[pathlib.Path] = (),
             validation_fraction: float = 0.05, test_fraction: float = 0.05,
             echo=print) -> dict:
  """Scores the baselines (and the models' eval decodes) at the split's completion points."""
  if split not in ("validation", "test"):
    raise BaselineError(f"--split must be validation or test, got {split!r}")
  if not pathlib.Path(root).exists():
    raise BaselineError(f"--root {root} does not exist: give the folder that holds v3/")
  splits = flcc.Splits(validation=validation_fraction, test=test_fraction)
  models = [_model_predictions(pathlib.Path(d), split) for d in model_dirs]  # fail early

  files = list(flcc.read_files(root, splits=splits, only_split=split))
  points = [(f.text, p) for f, p in line_completion.points_of_files(files)]
  if not points:
    raise BaselineError(f"--root {root}: its {split} split has no completion points")
  targets = [p.target(text) for text, p in points]
  kinds = [p.kind for _, p in points]

  start = time.time()
  train_files = 0

  def train_texts():
    nonlocal train_files
    for source_file in flcc.read_files(root, splits=splits, only_split="train"):
      train_files += 1
      yield source_file.text

  model = NgramModel().fit(train_texts())
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
      "ngram": {"description": f"token {ORDER}-gram, stupid backoff, greedy to the newline, "
                             f"trained on the train split ({train_files} files)",
                "metrics": scored(ngram)},
  }
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
  root = pathlib.Path(root).resolve()
  repository = default_root().parent
  return {
      "root": str(root.relative_to(repository) if root.is_relative_to(repository) else root),
      "split": split,
      "points": {"version": line_completion.POINTS_VERSION, "seed": line_completion.DEFAULT_SEED,
                 "start_points_per_file": line_completion.START_POINTS_PER_FILE,
                 "inside_points_per_file": line_completion.INSIDE_POINTS_PER_FILE,
                 "min_line_chars": line_completion.MIN_LINE_CHARS, "files": len(files),
                 "count": len(points),
                 "by_kind": dict(collections.Counter(kinds))},
      "systems": systems,
  }


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
                       args.validation_fraction, args.test_fraction)
  except flcc.FlccError as e:
    raise BaselineError(str(e)) from None
  write_json(results, args.out, args.force)
  print(f"{results['points']['count']} points of {results['points']['files']} {args.split} files")
  print(f"{'system':<40} {'EM':>6} {'ES':>6} {'prefix':>7}")
  for name, system in results["systems"].items():
    m = system["metrics"]["all"]
    print(f"{name[:40]:<40} {m['exact_match']:6.1f} {m['edit_similarity']:6.1f} "
          f"{m['prefix_match_chars']:7.2f}")
  print(f"wrote {args.out}")
  return 0


def register_cli(subparsers) -> None:
  parser = subparsers.add_parser(
      "baseline", help="score a model-free line-completion baseline (token n-gram) and, with "
      "--model-dir, a model's line-completion eval, at the task's points; writes JSON")
  parser.add_argument("--root", type=pathlib.Path, default=None,
                      help="FLCC dataset root (holds v3/); default: dataset-dev/")
  parser.add_argument("--split", default="validation", help="validation (default) or test")
  parser.add_argument("--out", type=pathlib.Path, required=True, help="JSON results file")
  parser.add_argument("--force", action="store_true", help="replace --out if it exists")
  parser.add_argument("--model-dir", type=pathlib.Path, action="append", default=[],
                      help="also score this model dir's newest line-completion eval decodes "
                      "(repeatable)")
  parser.add_argument("--validation-fraction", type=float, default=0.05)
  parser.add_argument("--test-fraction", type=float, default=0.05)
  parser.set_defaults(func=_cli)
