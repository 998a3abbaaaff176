"""code_t5/evaluation/examples.py: the held-out points `code-t5 train` shows after its eval."""

import json

import pytest

from code_t5 import test_utils
from code_t5.data import flcc
from code_t5.data import line_completion
from code_t5.engine import complete
from code_t5.engine import repository as repository_lib
from code_t5.evaluation import baseline
from code_t5.evaluation import examples
from code_t5.training import launcher

REPO = test_utils.repo_in_split("validation")
TEXT = ("import os\n\n\ndef home():\n    path = os.path.expanduser('~')\n    return path\n\n\n"
        "def names(folder):\n    return sorted(os.listdir(folder))\n")


@pytest.fixture
def root(tmp_path):
  # Two train repositories, so the split of three keeps REPO held out.
  return test_utils.make_flcc_tree(tmp_path / "flcc", {
      REPO: {"tools.py": TEXT},
      test_utils.repo_in_split("train"): {"a.py": "x = 1\n"},
      test_utils.repo_in_split("train", skip=1): {"b.py": "y = 2\n"}})


def _decodes(model_dir, root, predictions):
  """An eval dir as Mesh TF's line-completion eval writes it, at step 7."""
  points = [(f.text, p) for f, p in line_completion.points_of_files(
      flcc.read_files(root, only_split="validation"))]
  eval_dir = model_dir / f"validation_eval_{line_completion.eval_dir_suffix(root.name)}"
  eval_dir.mkdir(parents=True)
  (eval_dir / "flcc_py_line_completion_v1_targets").write_text(
      "".join(json.dumps(p.target(text)) + "\n" for text, p in points[:len(predictions)]))
  (eval_dir / "flcc_py_line_completion_v1_7_predictions").write_text(
      "".join(json.dumps(p) + "\n" for p in predictions))
  return points


def test_picks_decoded_points_with_their_context_target_and_line(root, tmp_path):
  points = _decodes(tmp_path / "model", root, [f"line {i}\nnext line" for i in range(6)])
  found = examples.pick(tmp_path / "model", root, count=3, shipped=None)
  assert (found.step, found.points, len(found.examples)) == (7, 6, 3)
  for e in found.examples:
    i = int(e.prediction.split()[1])  # the decode's first line only
    assert e.prediction == f"line {i}"
    text, point = points[i]
    assert (e.path, e.line, e.kind, e.target) == ("tools.py", point.line, point.kind,
                                                 point.target(text))
    assert point.context(text).endswith(e.context_tail) and e.shipped is None
  assert len({e.target for e in found.examples}) == 3
  out = []
  examples.show(found, root.name, out.append)
  assert out[0].startswith("3 of the 6 held-out points (flcc, validation split)")
  assert sum(line.startswith("    this run  'line ") for line in out) == 3


def test_the_shipped_model_completes_the_same_points(root, tmp_path):
  """As the line is typed: completed with the whole file, the target was the text after the
  cursor, and the engine showed '' wherever its line was the target (`make train-dev`'s five
  examples, all '')."""
  points = _decodes(tmp_path / "model", root, ["", "x", "y"])
  found = examples.pick(tmp_path / "model", root, count=2)
  completer = complete.Completer(
      complete.SHIPPED_MODEL, complete.EngineOptions(top=1, min_score=complete.DEFAULT_MIN_SCORE))
  repository = repository_lib.Repository(completer.tokenizer)
  repository.add("tools.py", TEXT)
  for e in found.examples:
    [(text, point)] = [(t, p) for t, p in points if p.line == e.line and p.kind == e.kind]
    assert e.shipped == completer.complete(
        point.context(text), repository=repository, path="tools.py",
        below=text[point.end + 1:]).completion
  assert any(e.shipped for e in found.examples)
  out = []
  examples.show(found, root.name, out.append)
  assert sum(line.startswith("    shipped   ") for line in out) == 2


def test_after_training_shows_the_points_and_how_to_score_them_all(root, tmp_path, capsys):
  experiment = launcher.Experiment(model="causal_lm", model_dir=tmp_path / "model", root=root)
  out = []
  examples.show_after_training(experiment, 24, out.append, shipped=None)
  assert "no held-out points to show" in capsys.readouterr().err and not out  # no eval yet
  _decodes(tmp_path / "model", root, ["a", "b", "c", "d", "e", "f"])
  examples.show_after_training(experiment, 24, out.append, shipped=None)
  assert out[0].startswith(f"{examples.COUNT} of the 6 held-out points")
  assert out[-1].startswith(f"every point against a token 4-gram and the shipped model: "
                            f"code-t5 baseline --model-dir {tmp_path / 'model'} --checkpoint ")
  assert out[-1].endswith(f" --root {root} --max-files 24 --out results.json")


def test_decodes_of_other_points_are_refused(root, tmp_path):
  _decodes(tmp_path / "model", root, ["a", "b"])
  targets = next((tmp_path / "model").rglob("*_targets"))
  targets.write_text('"not a target"\n"nor this"\n')
  with pytest.raises(baseline.BaselineError, match="not of the validation points"):
    examples.pick(tmp_path / "model", root, shipped=None)


@pytest.mark.parametrize("context, tail", [
    ("", ""),
    ("a = 1\nb = 2\nc = 3\n    ", "b = 2\nc = 3\n    "),
    ("a = 1\n\n\n", "a = 1\n\n\n"),  # blank lines do not count
    ("x" * 100, "x" * examples.CONTEXT_CHARS),
])
def test_the_context_tail_is_its_last_lines_of_code(context, tail):
  assert examples._tail(context) == tail  # pylint: disable=protected-access
