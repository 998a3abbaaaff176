"""A few held-out points with a trained model's lines beside the shipped model's.

`code-t5 train` prints them after its line-completion eval, so a first run shows what it learnt,
point by point, and what more training buys: at each point the end of the context, the rest of
the line as written (the target), the line the run's eval decoded there (Mesh TF's greedy
decode, cut at the newline) and the line the shipped model completes (complete.SHIPPED_MODEL,
through `code-t5 complete`'s engine as an editor runs it: beam search, token healing, filters, names, and
the point's repository (its other files in the split) read by the copy cache and retrieval; the
best line whether or not the model's confidence gate would show it -- the model as it is used,
not a like-for-like greedy decode).
"""

import dataclasses
import pathlib
import random
import shlex
import sys
from typing import Callable, List, Optional

from code_t5.data import flcc
from code_t5.data import line_completion
from code_t5.data import postprocessors
from code_t5.engine import complete
from code_t5.engine import repository as repository_lib
from code_t5.evaluation import baseline
from code_t5.evaluation import engine_eval
from code_t5.training import launcher

COUNT = 5
# The context is shown from the start of its last CONTEXT_LINES lines that hold code (blank lines
# after them included), at most its last CONTEXT_CHARS characters.
CONTEXT_LINES = 2
CONTEXT_CHARS = 72
_SEED = 0


@dataclasses.dataclass(frozen=True)
class Example:
  path: str
  line: int  # 1-based
  kind: str  # line_completion.KINDS
  context_tail: str
  target: str
  prediction: str  # the model dir's eval decode
  shipped: Optional[str] = None  # the shipped model's completion


@dataclasses.dataclass(frozen=True)
class Examples:
  step: int  # the checkpoint step of the decodes
  points: int  # how many points the eval decoded
  examples: List[Example]


def _tail(context: str) -> str:
  lines = context.split("\n")
  start, code_lines = len(lines), 0
  while start > 0 and code_lines < CONTEXT_LINES:
    start -= 1
    code_lines += bool(lines[start].strip())
  return "\n".join(lines[start:])[-CONTEXT_CHARS:]


def pick(model_dir: pathlib.Path, root=None, splits: flcc.Splits = flcc.Splits(),
         max_files: Optional[int] = None, count: int = COUNT,
         shipped: Optional[pathlib.Path] = complete.SHIPPED_MODEL) -> Examples:
  """`count` of the points the newest line-completion eval of `root`'s validation split in
  `model_dir` decoded (a fixed draw), with the shipped model's completions unless `shipped` is
  None. The points are those of `max_files` files, as `code-t5 eval --line-completion
  --max-files` draws them; raises baseline.BaselineError when the decodes are not of them."""
  root = pathlib.Path(root) if root is not None else baseline.default_root()
  _, step, targets, predictions = baseline.model_predictions(
      pathlib.Path(model_dir), "validation", root.resolve().name)
  split_files = list(flcc.read_files(root, splits=splits, only_split="validation"))
  files = line_completion.sample_files(split_files, max_files)
  points = [(f, p) for f, p in line_completion.points_of_files(files)][:len(predictions)]
  if [p.target(f.text) for f, p in points] != targets:
    raise baseline.BaselineError(f"the decodes in {model_dir} are not of the validation points "
                                 f"of {root} (another root, split or --max-files?)")
  chosen = sorted(random.Random(_SEED).sample(range(len(points)), min(count, len(points))))
  completer = None
  if shipped is not None:
    # Its best line, shown or not (the model's confidence gate would hide the doubtful ones),
    # with the point's repository (its other files in the split) as an editor would give it.
    completer = complete.Completer(
        shipped, complete.EngineOptions(top=1, min_score=complete.DEFAULT_MIN_SCORE),
        echo=lambda _: None)
    repositories = {}
    for f in split_files:
      repositories.setdefault(f.repo, repository_lib.Repository(completer.tokenizer)).add(
          f.path, f.text)
  examples = []
  for i in chosen:
    source_file, point = points[i]
    examples.append(Example(
        path=source_file.path, line=point.line, kind=point.kind,
        context_tail=_tail(point.context(source_file.text)), target=targets[i],
        prediction=postprocessors.first_line(predictions[i]),
        shipped=(completer.complete_at(point.as_typed(source_file.text), point.cursor,
                                       repository=repositories[source_file.repo],
                                       path=source_file.path).completion
                 if completer else None)))
  return Examples(step=step, points=len(points), examples=examples)


def show(found: Examples, root_name: str, echo: Callable[[str], None] = print) -> None:
  """Prints the examples: per point the context's end and the three lines, as Python literals
  (a blank line is visible as '    ')."""
  echo(f"{len(found.examples)} of the {found.points} held-out points ({root_name}, validation "
       "split): the end of the context, then the rest of the line as written (target), as this "
       f"run decoded it (step {found.step}, greedy)"
       + (", and as the shipped model completes it (`code-t5 complete`'s engine with the "
          "point's repository; its best line, shown or not)"
          if any(e.shipped is not None for e in found.examples) else "") + ":")
  for e in found.examples:
    echo(f"  {e.path}:{e.line} ({e.kind.replace('_', ' ')})")
    echo(f"    context   ...{e.context_tail!r}")
    echo(f"    target    {e.target!r}")
    echo(f"    this run  {e.prediction!r}")
    if e.shipped is not None:
      echo(f"    shipped   {e.shipped!r}")


def show_after_training(experiment: launcher.Experiment, max_files: Optional[int] = None,
                        echo: Callable[[str], None] = print,
                        shipped: Optional[pathlib.Path] = complete.SHIPPED_MODEL) -> None:
  """What `code-t5 train` prints after launcher.train_and_eval's line-completion eval (of the
  points of `max_files` validation files): COUNT of its points with the shipped model's lines,
  then how to score every point against the baselines."""
  root = experiment.root if experiment.root is not None else baseline.default_root()
  try:
    found = pick(experiment.model_dir, root, experiment.splits(), max_files, shipped=shipped)
  except (baseline.BaselineError, flcc.FlccError) as error:
    print(f"code-t5 train: no held-out points to show: {error}", file=sys.stderr)
    return
  show(found, pathlib.Path(root).resolve().name, echo)
  # A bare --checkpoint is the shipped model, wherever the command is run from; the two rungs
  # are the engine without and with the project (the whole ladder takes minutes).
  echo("every point against a token 4-gram and the shipped model: code-t5 baseline "
       f"--model-dir {shlex.quote(str(experiment.model_dir))} --checkpoint --rungs "
       f"{engine_eval.WITHOUT_REPOSITORY},{engine_eval.DEFAULT_RUNG}"
       + ("" if experiment.root is None else f" --root {shlex.quote(str(experiment.root))}")
       + ("" if max_files is None else f" --max-files {max_files}") + " --out results.json")
