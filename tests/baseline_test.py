"""`code-t5 baseline`: the model-free line-completion baseline scored at the task's points."""

import json

import pytest

from code_t5 import cli
from code_t5.data import flcc
from code_t5.data import line_completion
from code_t5.data import sources
from code_t5.evaluation import baseline


@pytest.fixture(scope="module")
def dev_results():
  return baseline.evaluate(sources.DEV_ROOT, echo=lambda _: None)


def test_baseline_beats_an_empty_prediction_at_the_task_points(dev_results):
  empty = dev_results["systems"]["empty"]["metrics"]["all"]
  ngram = dev_results["systems"]["ngram"]["metrics"]["all"]
  assert empty["exact_match"] == empty["edit_similarity"] == empty["prefix_match_chars"] == 0
  assert ngram["exact_match"] > 3 and ngram["edit_similarity"] > 15
  assert ngram["prefix_match_chars"] > 1
  files = list(flcc.read_files(sources.DEV_ROOT, only_split="validation"))
  assert dev_results["points"]["count"] == len(list(line_completion.points_of_files(files)))
  assert dev_results["points"]["by_kind"] == {"line_start": 96, "inside": 96}


def test_every_system_is_compared_with_the_ngram_at_the_same_points(dev_results):
  systems = dev_results["systems"]
  assert "vs_ngram" not in systems["ngram"]
  versus = systems["empty"]["vs_ngram"]
  ngram = systems["ngram"]["metrics"]["all"]
  assert versus["points"] == dev_results["points"]["count"] == 192
  assert versus["groups"] == dev_results["points"]["files"] == 24
  for name in ("exact_match", "edit_similarity"):
    # Predicting nothing is worse than the n-gram by exactly its score, beyond the noise.
    assert versus[name]["difference"] == pytest.approx(-ngram[name], abs=0.01)
    low, high = versus[name]["ci95"]
    assert low < versus[name]["difference"] < high < 0
  assert versus["exact_match"]["only_this"] == 0
  assert versus["exact_match"]["only_reference"] == round(ngram["exact_match"] * 192 / 100)


def test_cli_writes_json_and_refuses_to_overwrite(tmp_path, capsys):
  out = tmp_path / "results" / "lc.json"
  assert cli.main(["baseline", "--out", str(out), "--split", "test"]) == 0
  results = json.loads(out.read_text())
  assert results["split"] == "test" and results["points"]["count"] > 0
  printed = capsys.readouterr().out
  assert "ngram" in printed and "EM - n-gram [95 % interval]" in printed
  before = out.read_bytes()
  assert cli.main(["baseline", "--out", str(out)]) == 2
  assert "exists: pass --force" in capsys.readouterr().err
  assert out.read_bytes() == before and len(list(out.parent.iterdir())) == 1


@pytest.mark.parametrize("argv,message", [
    (["--root", "{tmp}/missing"], "--root {tmp}/missing does not exist"),
    (["--split", "dev"], "--split must be one of train, validation, test"),
    (["--model-dir", "{tmp}"], "no line-completion decodes"),
])
def test_cli_bad_input_is_one_line(tmp_path, capsys, argv, message):
  argv = [a.format(tmp=tmp_path) for a in argv]
  assert cli.main(["baseline", "--out", str(tmp_path / "out.json"), *argv]) == 2
  error = capsys.readouterr().err.strip()
  assert "\n" not in error and error.startswith("code-t5 baseline: ")
  assert message.format(tmp=tmp_path) in error
  assert not (tmp_path / "out.json").exists()
