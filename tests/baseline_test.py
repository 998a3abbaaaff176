"""The model-free line-completion baseline and `code-t5 baseline`."""

import json

import pytest

from code_t5 import baseline
from code_t5 import cli
from code_t5 import flcc
from code_t5 import line_completion
from code_t5 import sources


@pytest.fixture(scope="module")
def dev_results():
  return baseline.evaluate(sources.DEV_ROOT, echo=lambda _: None)


def test_tokens_cover_the_text_exactly():
  for f in flcc.read_files(sources.DEV_ROOT, only_split="validation"):
    assert "".join(baseline.tokenize(f.text)) == f.text
  assert baseline.tokenize("    x_1 = f(a)\n") == ["    ", "x_1", " ", "=", " ", "f", "(", "a",
                                                     ")", "\n"]


def test_ngram_completes_lines_it_has_seen_and_heals_a_typed_word():
  model = baseline.NgramModel().fit(["def f(x):\n    return x + 1\n"] * 3)
  assert model.complete("def f(x):\n    ") == "return x + 1"
  assert model.complete("def f(x):\n    ret") == "urn x + 1"
  assert model.complete("def f(x):\n    return x ") == "+ 1"
  assert model.complete("") == "def f(x):"


def test_baseline_beats_an_empty_prediction_at_the_task_points(dev_results):
  empty = dev_results["systems"]["empty"]["metrics"]["all"]
  ngram = dev_results["systems"]["ngram"]["metrics"]["all"]
  assert empty["exact_match"] == empty["edit_similarity"] == empty["prefix_match_chars"] == 0
  assert ngram["exact_match"] > 3 and ngram["edit_similarity"] > 15
  assert ngram["prefix_match_chars"] > 1
  files = list(flcc.read_files(sources.DEV_ROOT, only_split="validation"))
  assert dev_results["points"]["count"] == len(list(line_completion.points_of_files(files)))
  assert dev_results["points"]["by_kind"] == {"line_start": 96, "inside": 96}


def test_cli_writes_json_and_refuses_to_overwrite(tmp_path, capsys):
  out = tmp_path / "results" / "lc.json"
  assert cli.main(["baseline", "--out", str(out), "--split", "test"]) == 0
  results = json.loads(out.read_text())
  assert results["split"] == "test" and results["points"]["count"] > 0
  assert "ngram" in capsys.readouterr().out
  before = out.read_bytes()
  assert cli.main(["baseline", "--out", str(out)]) == 2
  assert "exists: pass --force" in capsys.readouterr().err
  assert out.read_bytes() == before and len(list(out.parent.iterdir())) == 1


@pytest.mark.parametrize("argv,message", [
    (["--root", "{tmp}/missing"], "--root {tmp}/missing does not exist"),
    (["--split", "train"], "--split must be validation or test"),
    (["--model-dir", "{tmp}"], "no line-completion decodes"),
])
def test_cli_bad_input_is_one_line(tmp_path, capsys, argv, message):
  argv = [a.format(tmp=tmp_path) for a in argv]
  assert cli.main(["baseline", "--out", str(tmp_path / "out.json"), *argv]) == 2
  error = capsys.readouterr().err.strip()
  assert "\n" not in error and error.startswith("code-t5 baseline: ")
  assert message.format(tmp=tmp_path) in error
  assert not (tmp_path / "out.json").exists()
