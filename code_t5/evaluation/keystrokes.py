"""Typing held-out lines with the completion engine beside the cursor, as a user would.

EM and ES judge one guess at one cursor. An IDE team judges what typing with a completer is like
(JetBrains' "completion golf", ../shared/notes FLCC.md): the user types a line one character at
a time; after each keystroke the editor asks for a completion and shows the engine's best line
where its gate lets it; when the line shown is exactly the rest of the line, the user takes it
with one key (Tab). `code-t5 keystrokes` types the lines of a split's completion points (the
lines of `code-t5 baseline`'s points, each from its indentation on, with the file's code below
it and the rest of its repository open, as the engine's default rung reads them) and reports
for the model's own gate, and for others beside it:

    keys saved        the share of the lines' characters the user did not type (a key to accept)
    completed         the share of lines the engine finished; at start: before any key; half
                      left: with at least half of the line's characters still to type
    wrong lines/line  the wrong lines shown, per line typed: what a user reads and types past (a
                      line shown again as the user types what it said is still one line)
    keys under one    the share of the keys pressed after which a wrong line was on screen
    lines right       of the lines shown, the share exactly right (taken)

Every keystroke's best line is recorded once, with the number its gate reads (the probability
that it is exact, code_t5.engine.confidence; a model without a confidence model: its score), so
each gate's typing is worked out from the same requests (`summary`). The line is typed into the
file as an editor holds it: nothing after the cursor on its line.
"""

import dataclasses
import math
import pathlib
import time
from typing import Callable, List, Optional, Sequence, Tuple

from code_t5 import processes
from code_t5.data import flcc
from code_t5.engine import complete
from code_t5.engine import repository as repository_lib
from code_t5.evaluation import engine_eval

# A keystroke: the engine's best line after the cursor (None where it would show nothing
# whatever the gate: no line kept, the best one ranked unlikely, the line complete as it stands),
# and the number its gate reads.
Keystroke = Tuple[Optional[str], Optional[float]]

PROGRESS_SECONDS = 10.0


@dataclasses.dataclass(frozen=True)
class TypedLine:
  repo: str
  path: str
  line: int  # 1-based
  text: str  # the line after its indentation: what is typed
  keystrokes: Tuple[Keystroke, ...]  # before each character of `text` is typed


def type_line(completer: complete.Completer, text: str, start: int, end: int,
              repository=None, path: str = "") -> List[Keystroke]:
  """The engine's best line before each character of text[start:end] (one line, no newline) is
  typed, `text`'s lines below it read as the code below the cursor; `completer` shows every line
  it keeps (every_line_options)."""
  below = text[end + 1:]
  target = text[start:end]
  keystrokes = []
  for typed in range(len(target)):
    result = completer.complete(text[:start + typed], "", repository=repository, path=path,
                                below=below)
    if not result.candidates:
      keystrokes.append((None, None))
      continue
    best = result.candidates[0]
    keystrokes.append((best.text, result.confidence if completer.confidence_model
                       else best.score))
  return keystrokes


def every_line_options(model_dir) -> complete.EngineOptions:
  """The engine's default rung (engine_eval.DEFAULT_RUNG) with a gate that shows every kept line:
  the gates are applied afterwards (`summary`)."""
  rung = engine_eval.RUNGS[engine_eval.DEFAULT_RUNG].options
  has_confidence = "confidence" in complete.model_about(model_dir)
  return dataclasses.replace(rung, top=1, min_score=None if has_confidence else -math.inf,
                             min_confidence=0.0 if has_confidence else None)


def type_lines(completer: complete.Completer, points: Sequence[Tuple[str, object]],
               repository_files=None, echo: Callable[[str], None] = print) -> List[TypedLine]:
  """Each distinct line of `points` ((file text, line_completion.Point)) typed from its
  indentation by `completer` (every_line_options); repository_files: repo id -> its (path, text)
  files (each line's own file is left out of its repository). Progress (characters, rate, ETA)
  goes to `echo`."""
  repositories = {}
  for repo, files in (repository_files or {}).items():
    repositories[repo] = repository_lib.Repository(completer.tokenizer)
    for path, file_text in files:
      repositories[repo].add(path, file_text)
  lines, seen = [], set()
  for text, point in points:
    if (point.repo, point.path, point.line) in seen:
      continue
    seen.add((point.repo, point.path, point.line))
    line_start = text.rfind("\n", 0, point.cursor) + 1
    line = text[line_start:point.end]
    lines.append((text, point, line_start + len(line) - len(line.lstrip(" \t"))))
  chars = sum(point.end - code_start for _, point, code_start in lines)
  done, start, last = 0, time.monotonic(), time.monotonic()
  typed_lines = []
  for text, point, code_start in lines:
    keystrokes = type_line(completer, text, code_start, point.end,
                           repositories.get(point.repo), point.path)
    typed_lines.append(TypedLine(point.repo, point.path, point.line, text[code_start:point.end],
                                 tuple(keystrokes)))
    done += len(keystrokes)
    if time.monotonic() - last >= PROGRESS_SECONDS:
      last = time.monotonic()
      rate = done / (last - start)
      echo(f"keystrokes: {len(typed_lines)}/{len(lines)} lines, {done:,}/{chars:,} characters, "
           f"{rate:.1f}/s, ETA {(chars - done) / rate:.0f} s")
  echo(f"keystrokes: {len(lines)} lines, {chars:,} characters in {time.monotonic() - start:.0f} s")
  return typed_lines


def summary(lines: Sequence[TypedLine], gate: float) -> dict:
  """Typing `lines` with the lines shown whose gate number is at least `gate` (-inf: every kept
  line), each taken where it is the rest of the line (a key). A wrong line shown again as the user
  types what it said (`retu|rn x` after `ret|urn x`) is one wrong line, on several keystrokes."""
  if not lines:
    raise ValueError("no lines typed")  # a figure from nothing is a bug, not a 0
  chars = sum(len(line.text) for line in lines)
  keys = completed = at_start = half_left = wrong = wrong_keystrokes = 0
  for line in lines:
    typed, before = len(line.text), None
    for position, (text, value) in enumerate(line.keystrokes):
      if text is None or value is None or value < gate:
        before = None
        continue
      if text == line.text[position:]:
        completed += 1
        at_start += position == 0
        half_left += 2 * position <= len(line.text)
        typed = position + 1  # the characters typed, and the key that takes the line
        break
      wrong_keystrokes += 1
      wrong += before is None or before != line.text[position - 1] + text
      before = text
    keys += typed
  return {"keys_saved_percent": round(100 * (chars - keys) / chars, 1),
          "completed_percent": round(100 * completed / len(lines), 1),
          "completed_at_start_percent": round(100 * at_start / len(lines), 1),
          "completed_half_left_percent": round(100 * half_left / len(lines), 1),
          "wrong_lines": wrong, "wrong_per_line": round(wrong / len(lines), 2),
          "wrong_keystrokes_percent": round(100 * wrong_keystrokes / keys, 1),
          "right_percent": (round(100 * completed / (completed + wrong), 1) if completed + wrong
                            else None)}


# The gates reported beside the model's own: every kept line shown, then the confidence gates
# of `code-t5 baseline` (engine_eval.CONFIDENCE_THRESHOLDS), or its score thresholds for a model
# without a confidence model.
def gates(completer: complete.Completer) -> Tuple[str, Optional[float], List[float]]:
  """(what the gate reads: "confidence" or "score", the model's own gate, the gates to report),
  for the model `completer` loaded."""
  own_confidence, own_score = completer.gates(complete.EngineOptions())
  if own_confidence is not None:
    return "confidence", own_confidence, sorted(
        {-math.inf, own_confidence, *engine_eval.CONFIDENCE_THRESHOLDS[1:]})
  return "score", own_score, sorted({own_score, *engine_eval.THRESHOLDS})


def evaluate(root, split: str = "validation", model_dir=complete.SHIPPED_MODEL,
             max_files: Optional[int] = None, echo: Callable[[str], None] = print,
             splits: flcc.Splits = flcc.Splits()) -> dict:
  """The lines of `split`'s completion points in `root` (split as `splits` say, as the model's
  training split it) typed with the engine on `model_dir`: each gate's summary, and every line's
  keystrokes."""
  # Imported here: baseline's points, without the n-gram's imports at `code-t5 --help`.
  from code_t5.evaluation import baseline  # pylint: disable=g-import-not-at-top
  split_files, sampled, points = baseline.split_points(root, split, max_files, splits)
  repository_files = {}
  for source_file in split_files:
    repository_files.setdefault(source_file.repo, []).append((source_file.path, source_file.text))
  completer = complete.Completer(model_dir, every_line_options(model_dir), echo=echo)
  typed = type_lines(completer, points, repository_files, echo)
  reads, own, reported = gates(completer)
  return {
      "root": str(root), "split": split, "model_dir": str(model_dir), "max_files": max_files,
      "files": len(sampled), "lines": len(typed), "characters": sum(len(t.text) for t in typed),
      "gate_reads": reads, "model_gate": own,
      "rows": [{"gate": None if math.isinf(gate) else gate, "model_gate": gate == own,
                **summary(typed, gate)} for gate in reported],
      # Each number as the engine's gate read it, not rounded: the file's rows are what
      # `summary` makes of its lines, and each line is judged as the engine would (numbers
      # rounded to 4 places, 11 of the corpus's onto the gate 0.083, were judged one way in the
      # rows and recorded the other: helper-47's audit, helper-53's review).
      "per_line": [{"repo": t.repo, "path": t.path, "line": t.line, "text": t.text,
                    "keystrokes": [list(k) for k in t.keystrokes]} for t in typed]}


def _print(results: dict) -> None:
  print(f"typed {results['lines']} lines of {results['files']} {results['split']} files "
        f"({results['characters']:,} characters), a line shown where its "
        f"{results['gate_reads']} reaches the gate:")
  print(f"  {'gate':<20} {'keys saved':>10} {'completed':>10} {'half left':>9} {'at start':>9} "
        f"{'wrong lines/line':>16} {'keys under one':>14} {'lines right':>11}")
  for row in results["rows"]:
    gate = ("every line" if row["gate"] is None
            else f"{row['gate']:g}" + (" (the model's)" if row["model_gate"] else ""))
    right = "-" if row["right_percent"] is None else f"{row['right_percent']:.1f} %"
    print(f"  {gate:<20} {row['keys_saved_percent']:>8.1f} % {row['completed_percent']:>8.1f} % "
          f"{row['completed_half_left_percent']:>7.1f} % "
          f"{row['completed_at_start_percent']:>7.1f} % {row['wrong_per_line']:>16.2f} "
          f"{row['wrong_keystrokes_percent']:>12.1f} % {right:>11}")


def _cli(args) -> int:
  from code_t5.evaluation import baseline  # pylint: disable=g-import-not-at-top  (as in evaluate)
  # Its folder now, not after the minutes of typing (a file there: one line, not a traceback).
  processes.check_output_file(args.out, args.force, f"the results {args.out}",
                              baseline.BaselineError)
  flcc.check_fractions(args.validation_fraction, args.test_fraction)
  complete.check_loadable(complete.model_info(args.checkpoint))
  root = args.root or baseline.default_root()
  splits = flcc.Splits(validation=args.validation_fraction, test=args.test_fraction)
  baseline.note_points_trained_on(args.checkpoint, root, splits, [args.split], "keystrokes")
  results = evaluate(root, args.split, args.checkpoint, args.max_files, splits=splits)
  baseline.write_json(results, args.out, args.force)
  _print(results)
  print(f"wrote {args.out}")
  return 0


def register_cli(subparsers) -> None:
  what = ("type the lines of a split's line-completion points with the completion engine "
          "beside the cursor, as a user would, taking a line shown when it is the rest of the "
          "line: the keys it saves and the wrong lines it shows, per gate; writes JSON")
  parser = subparsers.add_parser("keystrokes", help=what, description=what[0].upper() + what[1:]
                                 + ", e.g. `code-t5 keystrokes --out keystrokes.json`.")
  parser.add_argument("--root", type=pathlib.Path, default=None,
                      help="FLCC dataset root (holds v3/); default: dataset-dev/")
  parser.add_argument("--split", default="validation", choices=("validation", "test", "train"),
                      help="the split whose points' lines are typed (default %(default)s)")
  parser.add_argument("--max-files", type=int, default=None,
                      help="type the lines of this many files of the split (as `code-t5 "
                      "baseline --max-files` draws them)")
  parser.add_argument("--checkpoint", type=pathlib.Path, default=complete.SHIPPED_MODEL,
                      metavar="DIR", help="the model dir (default: the shipped model)")
  parser.add_argument("--out", type=pathlib.Path, required=True, help="JSON results file")
  parser.add_argument("--force", action="store_true", help="replace --out if it exists")
  # As `baseline` and `train` take them: a root trained with other shares has other held-out
  # repositories, and the fixed 5 % drew "validation" lines from its train split (helper-52).
  flcc.add_fraction_flags(parser)
  parser.set_defaults(func=_cli)
