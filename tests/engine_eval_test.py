"""`code-t5 baseline --checkpoint`: the engine's ladder scored at the n-gram's points."""

import argparse

import pytest

from code_t5 import test_utils
from code_t5.data import flcc
from code_t5.data import line_completion
from code_t5.data import sources
from code_t5.engine import complete
from code_t5.engine import confidence
from code_t5.engine import line_filters
from code_t5.engine import lsp
from code_t5.engine import repository as repository_lib
from code_t5.engine import serve
from code_t5.evaluation import baseline
from code_t5.evaluation import engine_eval

FILES = 2  # 16 points of dataset-dev's validation split


@pytest.fixture(scope="module")
def results():
  return baseline.evaluate(sources.DEV_ROOT, max_files=FILES,
                           checkpoints=[test_utils.PRETRAINED], examples=16, echo=lambda _: None)


def test_every_rung_is_scored_at_the_ngrams_points(results):
  points = results["points"]["count"]
  assert points == FILES * 8
  rungs = [f"engine:{rung}" for rung in engine_eval.RUNGS]
  assert [key for key in results["systems"] if key.startswith("engine:")] == rungs
  for key in rungs:
    system = results["systems"][key]
    assert system["step"] == complete.model_info(test_utils.PRETRAINED).step
    assert set(system["metrics"]) == set(results["systems"]["ngram"]["metrics"])
    assert 0 <= system["metrics"]["all"]["exact_match"] <= 100
  # The examples hold every rung's line at every point: one line each, what `complete` shows.
  assert len(results["examples"]) == points
  for example in results["examples"]:
    assert all("\n" not in example[key] for key in rungs)


def test_the_greedy_rungs_are_what_complete_gives_with_those_options(results):
  # The README's figures are what `code-t5 complete` shows: greedy is `--beam-size 1
  # --no-healing --no-filters`, greedy+heal the same with healing (the n-gram's decoding).
  files = line_completion.sample_files(
      list(flcc.read_files(sources.DEV_ROOT, only_split="validation")), FILES)
  points = list(line_completion.points_of_files(files))
  assert [(p.line, p.kind) for _, p in points] == [
      (e["line"], e["kind"]) for e in results["examples"]]
  for rung in ("greedy", "greedy+heal"):
    completer = complete.Completer(test_utils.PRETRAINED, engine_eval.RUNGS[rung].options,
                                   echo=lambda _: None)
    for (source_file, point), example in zip(points, results["examples"]):
      # The file as the point's line is typed: the rest of that line (the target) not there yet.
      completion = completer.complete_at(test_utils.as_typed(source_file.text, point.cursor),
                                         point.cursor).completion
      assert completion == example[f"engine:{rung}"], (rung, example)


def test_confidence_thresholds_count_what_they_show(results):
  [engine] = results["engine"].values()
  rows = engine["threshold"]["rows"]
  assert rows[0]["min_score"] is None and engine["threshold"]["points"] == FILES * 8
  shown = [row["shown"] for row in rows]
  assert shown == sorted(shown, reverse=True)  # a higher bar shows fewer lines
  for row in rows:
    assert row["correct"] + row["wrong"] == row["shown"]
  assert engine["filters"]["candidates"] >= shown[0]
  # The shipped model's own gate is its confidence: among the confidence rows, marked.
  assert not any(row["model_gate"] for row in rows)
  sure = engine["threshold"]["confidence_rows"]
  assert [row["shown"] for row in sure] == sorted((row["shown"] for row in sure), reverse=True)
  [gate] = [row for row in sure if row["model_gate"]]
  assert gate["min_confidence"] == complete.Completer(test_utils.PRETRAINED).min_confidence
  assert sure[0]["min_confidence"] == 0 and sure[0]["shown"] == shown[0]
  # Every point's confidence features, where a line was kept, for scripts/fit_confidence.py.
  features = [p["confidence_features"]["engine:+similar"] for p in results["per_point"]]
  assert sum(f is not None for f in features) == shown[0]
  assert all(len(f) == len(confidence.FEATURES) for f in features if f is not None)


def test_the_points_an_auto_pairing_editor_has_closers_at_are_scored_again_with_them(results):
  """The ladder's points have nothing after the cursor. Where the typed part of the line leaves
  a bracket open (`def _callTearDown(|`), an auto-pairing editor has its ")" there: the last rung
  is scored again with it. Until the engine's lines could replace such closers, `self):` was
  dropped there (inserted before the ")", it read `self):)`)."""
  files = line_completion.sample_files(
      list(flcc.read_files(sources.DEV_ROOT, only_split="validation")), FILES)
  points = list(line_completion.points_of_files(files))
  paired = [i for i, (source_file, point) in enumerate(points)
            if line_filters.auto_closers(source_file.text[:point.cursor].rsplit("\n", 1)[-1])]
  assert len(paired) == 2  # `def _callTearDown(|)` and `entry.applies_to(u|)`
  [engine] = results["engine"].values()
  autopairs = engine["autopairs"]
  best = [example["engine:+similar"] for example in results["examples"]]
  exact = [best[i] == points[i][1].target(points[i][0].text) for i in paired]
  assert autopairs["points"] == len(paired)
  assert autopairs["exact_without_closers"] == sum(exact)
  assert autopairs["shown_exact"] <= autopairs["shown"] <= autopairs["kept"] <= len(paired)
  # `self):` replaces the ")" at `def _callTearDown(|)`, as it is without it.
  assert autopairs["exact"] >= 1 and autopairs["exact"] == autopairs["exact_without_closers"]


def test_the_list_figures_are_what_an_editors_default_list_shows(results):
  """`listed`: at each point, the lines `lsp` and `serve` list with their default --top (5) and
  the model's gates, with the point's repository read, counted against the target."""
  validation = list(flcc.read_files(sources.DEV_ROOT, only_split="validation"))
  points = list(line_completion.points_of_files(line_completion.sample_files(validation, FILES)))
  completer = complete.Completer(test_utils.PRETRAINED, echo=lambda _: None)
  commands = argparse.ArgumentParser().add_subparsers()
  lsp.register_cli(commands)
  serve.register_cli(commands)
  for command in ("lsp", "serve"):  # the --top they list with when none is given
    assert commands.choices[command].parse_args([]).top == engine_eval.LIST_TOP
  repositories = {}
  for source_file in validation:
    repositories.setdefault(source_file.repo, repository_lib.Repository(completer.tokenizer)).add(
        source_file.path, source_file.text)
  lists = []
  for source_file, point in points:
    text, cursor = source_file.text, point.cursor
    line_end = text.find("\n", cursor)
    lines = completer.complete(text[:cursor], "", repository=repositories[point.repo],
                               path=point.path, below=text[line_end + 1:]).candidates
    if lines:
      lists.append(([line.text for line in lines], point.target(text)))
  [engine] = results["engine"].values()
  listed = engine["listed"]
  assert listed["points"] == len(lists) > 0
  assert listed["best_correct"] == sum(lines[0] == target for lines, target in lists)
  assert listed["alternatives"] == sum(len(lines) - 1 for lines, _ in lists)
  assert listed["alternatives_correct"] == sum(target in lines[1:] for lines, target in lists)
  assert listed["points_with_alternatives"] <= listed["points"]
  assert listed["correct_only_beside_the_best"] <= listed["alternatives_correct"]
