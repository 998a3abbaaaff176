"""What a model dir says of itself (about.json): its name everywhere and its confidence gate."""

import json
import shutil

import pytest

from code_t5 import test_utils
from code_t5.engine import complete


def test_the_shipped_model_is_the_default_and_names_itself():
  assert complete.SHIPPED_MODEL == test_utils.PRETRAINED
  engine = complete.Completer(complete.SHIPPED_MODEL)
  assert engine.description == ("causal_lm-mini-spm_dev-sitepackages (27,568 training steps in "
                                "all, on the "
                                "site-packages corpus (133 Python distributions' train split), "
                                "then on a GPU with 80 more distributions and dataset-dev's train "
                                "split (the last 18,068 steps, with 16x the batch), 2026-11-28)")
  assert engine.min_score == engine.about["min_score"] == -1.9


def test_the_gate_shows_nothing_below_it_and_every_line_can_be_asked_for():
  prefix = "import os\nimport sys\n\n\ndef main(argv):\n    "
  every = complete.Completer(complete.SHIPPED_MODEL, complete.EngineOptions(
      top=5, min_score=complete.DEFAULT_MIN_SCORE)).complete(prefix).candidates
  gated = complete.Completer(complete.SHIPPED_MODEL,
                             complete.EngineOptions(top=5)).complete(prefix).candidates
  # The model's gate is its confidence: here sure enough to show the best line, and beside it
  # the alternatives that pass its score gate (-1.9) too.
  engine = complete.Completer(complete.SHIPPED_MODEL, complete.EngineOptions(top=5))
  assert engine.complete(prefix).confidence >= engine.min_confidence
  assert [every[0]] + [c for c in every[1:] if c.score >= -1.9] == list(gated)
  assert len(every) > len(gated)  # the gate left lines out here
  scored = complete.Completer(complete.SHIPPED_MODEL, complete.EngineOptions(
      top=5, min_score=-1.9)).complete(prefix).candidates  # the score gate, asked for
  assert [c for c in every if c.score >= -1.9] == list(scored)


@pytest.fixture
def model_copy(tmp_path):
  copy = tmp_path / "model"
  shutil.copytree(complete.SHIPPED_MODEL, copy)
  return copy


@pytest.mark.parametrize("content", ["{", '{"min_score": "high"}', '{"min_score": 5}', "[1]"])
def test_a_bad_about_file_is_a_one_line_error(model_copy, content):
  (model_copy / complete.ABOUT_FILE).write_text(content)
  with pytest.raises(complete.CompletionError, match=f"^{model_copy / 'about.json'}"):
    complete.Completer(model_copy)


def test_a_model_without_about_file_shows_every_line_and_names_its_step(model_copy):
  (model_copy / complete.ABOUT_FILE).unlink()
  engine = complete.Completer(model_copy)
  assert engine.min_score == complete.DEFAULT_MIN_SCORE
  assert engine.description == f"{model_copy} (step {test_utils.PRETRAINED_STEP})"
  (model_copy / complete.ABOUT_FILE).write_text(json.dumps({"min_score": -1.0}))
  assert complete.Completer(model_copy).min_score == -1.0
