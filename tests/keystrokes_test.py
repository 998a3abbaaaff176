"""keystrokes: typing held-out lines with the engine beside the cursor, as a user would."""

import json
import math
import pathlib
import subprocess
import sys

import pytest

from code_t5 import test_utils
from code_t5.data import flcc
from code_t5.engine import complete
from code_t5.engine import repository as repository_lib
from code_t5.evaluation import keystrokes

DEV_DATASET = pathlib.Path(__file__).resolve().parent.parent / "dataset-dev"


def _line(text, *shown):
  return keystrokes.TypedLine("r", "a.py", 1, text, tuple(shown))


def test_a_line_is_taken_where_the_line_shown_is_its_rest():
  # `pass` shown before a key (wrong), then after the `r` the rest: taken with one key.
  typed = [_line("return x", ("pass", 0.5), ("eturn x", 0.9), ("turn x", 0.9))]
  row = keystrokes.summary(typed, 0.3)
  assert row["keys_saved_percent"] == pytest.approx(100 * (8 - 2) / 8, abs=0.05)
  assert (row["completed_percent"], row["completed_at_start_percent"]) == (100.0, 0.0)
  assert row["completed_half_left_percent"] == 100.0  # taken after 1 of 8 characters
  assert (row["wrong_lines"], row["right_percent"]) == (1, 50.0)
  # Behind a gate the wrong line passes and the right one does not: the user types it all.
  row = keystrokes.summary(typed, 0.95)
  assert (row["keys_saved_percent"], row["completed_percent"], row["wrong_lines"]) == (0.0, 0.0, 0)
  assert row["right_percent"] is None  # no line shown: no share of them
  assert keystrokes.summary(typed, -math.inf) == keystrokes.summary(typed, 0.3)


def test_a_wrong_line_shown_again_as_the_user_types_along_it_is_one_line():
  # `return y` stays on screen while `r`, `e` are typed; then the engine shows the right rest.
  typed = [_line("rest = 1", ("return y", 0.5), ("eturn y", 0.5), ("turn y", 0.5),
                 ("t = 1", 0.5))]
  row = keystrokes.summary(typed, 0.0)
  assert (row["wrong_lines"], row["completed_percent"]) == (1, 100.0)
  assert row["completed_half_left_percent"] == 100.0  # taken with 5 of its 8 characters left
  late = _line("ab = 12", *[(None, None)] * 5, ("12", 0.5))  # taken with 2 of 7 left
  assert keystrokes.summary([late], 0.0)["completed_half_left_percent"] == 0.0
  assert row["wrong_keystrokes_percent"] == pytest.approx(100 * 3 / 4, abs=0.05)
  # Another line, not the one before minus the key typed, is a new wrong line.
  typed = [_line("rest = 1", ("return y", 0.5), ("aise", 0.5), (None, None), ("t = 1", 0.01))]
  row = keystrokes.summary(typed, 0.1)
  assert (row["wrong_lines"], row["completed_percent"], row["keys_saved_percent"]) == (2, 0.0, 0.0)


def test_no_lines_is_an_error_not_a_figure():
  with pytest.raises(ValueError):
    keystrokes.summary([], 0.0)


def test_the_shipped_model_completes_a_line_it_knows_before_a_key_is_typed():
  # dataset-dev's urllib/robotparser.py:163, `for entry in self.entries:` in crawl_delay (the
  # method above starts the same way): shown at the line's start, and right.
  files = list(flcc.read_files(DEV_DATASET))
  [source] = [f for f in files if f.path == "urllib/robotparser.py"]
  repository = repository_lib.Repository(complete.Completer(test_utils.PRETRAINED).tokenizer)
  for f in files:
    if f.repo == source.repo:
      repository.add(f.path, f.text)
  line = "for entry in self.entries:"
  end = source.text.index("        " + line + "\n            if entry.applies_to(useragent):\n"
                          "                return entry.delay")
  start = end + len("        ")
  end = start + len(line)
  completer = complete.Completer(test_utils.PRETRAINED,
                                 keystrokes.every_line_options(test_utils.PRETRAINED))
  shown = keystrokes.type_line(completer, source.text, start, end, repository, source.path)
  assert len(shown) == len(line)
  text, confidence = shown[0]
  assert text == line and confidence >= completer.about["confidence"]["min"]
  row = keystrokes.summary([_line(line, *shown)], completer.about["confidence"]["min"])
  assert row["completed_at_start_percent"] == 100.0
  assert row["keys_saved_percent"] == pytest.approx(100 * (len(line) - 1) / len(line), abs=0.05)


def test_the_command_types_a_splits_lines_and_writes_every_keystroke(tmp_path):
  out = tmp_path / "keystrokes.json"
  command = [sys.executable, "-m", "code_t5.cli", "keystrokes", "--max-files", "1", "--out",
             str(out)]
  result = subprocess.run(command, capture_output=True, text=True, check=False)
  assert result.returncode == 0, result.stderr[-2000:]
  results = json.loads(out.read_text())
  assert results["gate_reads"] == "confidence" and results["lines"] == len(results["per_line"]) > 0
  assert results["characters"] == sum(len(line["text"]) for line in results["per_line"])
  for line in results["per_line"]:
    assert len(line["keystrokes"]) == len(line["text"])
  # The file reproduces its own rows: each is `summary` of the keystrokes it records.
  recorded = [keystrokes.TypedLine(line["repo"], line["path"], line["line"], line["text"],
                                   tuple(map(tuple, line["keystrokes"])))
              for line in results["per_line"]]
  for row in results["rows"]:
    gate = -math.inf if row["gate"] is None else row["gate"]
    assert {k: v for k, v in row.items() if k not in ("gate", "model_gate")} == \
        keystrokes.summary(recorded, gate)
  [own] = [row for row in results["rows"] if row["model_gate"]]
  assert "(the model's)" in result.stdout and f"{own['keys_saved_percent']:.1f} %" in result.stdout
  # Never over a file without --force, and a bad root is one line naming the flag.
  again = subprocess.run(command, capture_output=True, text=True, check=False)
  assert again.returncode != 0 and "--force" in again.stderr
  assert len(again.stderr.strip().splitlines()) == 1
  missing = subprocess.run(command[:-2] + ["--root", str(tmp_path / "none"), "--out",
                                           str(tmp_path / "x.json")],
                           capture_output=True, text=True, check=False)
  assert missing.returncode != 0 and "--root" in missing.stderr
  assert len(missing.stderr.strip().splitlines()) == 1
  # An --out inside a file is refused before any typing, in one line.
  blocked = subprocess.run(command[:-1] + [str(out / "k.json")], capture_output=True, text=True,
                           check=False)
  assert blocked.returncode != 0 and "give another --out" in blocked.stderr
  assert len(blocked.stderr.strip().splitlines()) == 1


def test_the_lines_typed_are_of_the_split_the_fractions_give(tmp_path):
  # keystrokes split every root 5 % / 5 %: a model trained with other shares had its
  # "validation" lines drawn from its train split (helper-52's audit).
  from code_t5.evaluation import baseline  # pylint: disable=g-import-not-at-top
  out = tmp_path / "keystrokes.json"
  result = subprocess.run([sys.executable, "-m", "code_t5.cli", "keystrokes", "--max-files", "1",
                           "--validation-fraction", "0.5", "--test-fraction", "0", "--out",
                           str(out)], capture_output=True, text=True, check=False)
  assert result.returncode == 0, result.stderr[-2000:]
  _, sampled, _ = baseline.split_points(DEV_DATASET, "validation", 1,
                                        flcc.Splits(validation=0.5, test=0))
  _, default, _ = baseline.split_points(DEV_DATASET, "validation", 1)
  typed = {(line["repo"], line["path"]) for line in json.loads(out.read_text())["per_line"]}
  assert typed == {(f.repo, f.path) for f in sampled} != {(f.repo, f.path) for f in default}
