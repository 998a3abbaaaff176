"""The README's main job, small: `code-t5 train` trains, checkpoints, plots, evaluates, resumes."""

import pathlib
import subprocess
import sys

import numpy as np
import pytest

from code_t5 import test_utils
from code_t5.data import line_completion
from code_t5.data import postprocessors
from code_t5.training import launcher


def _code_t5(*args) -> subprocess.CompletedProcess:
  return subprocess.run([sys.executable, "-m", "code_t5.cli", *args], capture_output=True,
                        text=True)


@pytest.fixture(scope="module")
def trained(tmp_path_factory, prepared_dir):
  model_dir = tmp_path_factory.mktemp("e2e") / "model"
  flags = ["--model-dir", str(model_dir),
           "--gin-param", f"code_t5.flcc_dataset.prepared_dir = '{prepared_dir}'",
           "--gin-param", "utils.run.save_checkpoints_steps = 3",
           "--gin-param", "mesh_eval_dataset_fn.num_eval_examples = 8"]
  first = _code_t5("train", "--steps", "6", *flags)
  assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
  again = _code_t5("train", "--steps", "6", "--no-eval", *flags)
  assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
  return model_dir, first.stdout, again.stdout


def test_prints_the_canonical_mesh_transformer_main_command(trained):
  _, out, _ = trained
  command = next(line for line in out.splitlines() if line.startswith("$ "))
  assert "-m t5.models.mesh_transformer_main --module_import=code_t5" in command
  assert "--gin_file=models/shared-prefix_lm.gin" in command


def test_writes_checkpoints_summaries_and_a_loss_curve(trained):
  model_dir, out, _ = trained
  assert launcher.latest_step(model_dir) == 6
  assert list(model_dir.glob("events.out.tfevents.*"))
  steps = [int(line.split("\t")[0]) for line in
           (model_dir / "logs" / "train_loss.tsv").read_text().splitlines()]
  assert steps == list(range(1, 7))
  assert (model_dir / "loss.png").read_bytes()[:4] == b"\x89PNG"
  assert "loss (mean over" in out and "-> " in out


def test_eval_writes_exact_json_line_decodes_and_metrics(trained):
  model_dir, out, _ = trained
  eval_dir = model_dir / "validation_eval"
  targets = (eval_dir / "flcc_py_prefix_lm_v1_targets").read_text().splitlines()
  predictions = (eval_dir / "flcc_py_prefix_lm_v1_6_predictions").read_text().splitlines()
  assert len(targets) == len(predictions) == 8
  decoded = [postprocessors.from_json_line(t) for t in targets]
  assert any("\n" in t for t in decoded)  # newlines survive, unlike Mesh TF's plain text files
  assert all(isinstance(postprocessors.from_json_line(p), str) for p in predictions)
  assert "eval/flcc_py_prefix_lm_v1/edit_similarity" in out


def test_second_run_resumes_instead_of_starting_over(trained):
  model_dir, _, again = trained
  assert "resuming from step 6" in again
  assert launcher.latest_step(model_dir) == 6


def test_init_from_starts_a_new_run_from_the_weights_with_its_own_steps_and_optimizer(
    trained, tmp_path, prepared_dir):
  source_dir, _, _ = trained
  model_dir = tmp_path / "continued"
  # Learning rate 0: after its first step the new run's weights are still the ones it read.
  result = _code_t5("train", "--steps", "1", "--no-eval", "--model-dir", str(model_dir),
                    "--init-from", str(source_dir),
                    "--gin-param", f"code_t5.flcc_dataset.prepared_dir = '{prepared_dir}'",
                    "--gin-param", "utils.run.learning_rate_schedule = 0.0")
  assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
  assert f"new run from the weights of {source_dir.resolve()}/model.ckpt-6" in result.stdout
  assert launcher.latest_step(model_dir) == 1
  source = test_utils.checkpoint_variables(source_dir / "model.ckpt-6")
  started = test_utils.checkpoint_variables(model_dir / "model.ckpt-1")
  assert set(started) == set(source)
  weights = [name for name in source if "_slot_" not in name and name != "global_step"]
  slots = [name for name in source if "_slot_" in name]
  assert weights and slots
  for name in weights:
    np.testing.assert_array_equal(started[name], source[name], err_msg=name)
  # Adafactor's second moments after one step are that step's alone, not the source's six.
  assert all(not np.array_equal(started[name], source[name]) for name in slots)


def test_init_from_refuses_a_checkpoint_of_another_model(trained, tmp_path, prepared_dir):
  """Mesh TF would read the weights whose names match and leave a third layer random."""
  source_dir, _, _ = trained
  model_dir = tmp_path / "deeper"
  result = _code_t5("train", "--steps", "1", "--no-eval", "--model-dir", str(model_dir),
                    "--init-from", str(source_dir), "--gin-param", "num_layers = 3",
                    "--gin-param", f"code_t5.flcc_dataset.prepared_dir = '{prepared_dir}'")
  error = _one_line_error(result)
  assert error.startswith(f"code-t5 train: --init-from: {source_dir.resolve()}/model.ckpt-6 is "
                          "a checkpoint of another model: "), error
  assert "weights are not in it (e.g. " in error and "block_002" in error, error
  assert launcher.latest_step(model_dir) is None  # no step was trained from a partial start


def _one_line_error(result) -> str:
  # TensorFlow's own start-up chatter may precede it; the error is the last line, no traceback.
  assert result.returncode == 2
  assert "Traceback" not in result.stderr
  return result.stderr.strip().splitlines()[-1]


def test_bad_flag_values_give_one_line_errors(tmp_path):
  error = _one_line_error(_code_t5("train", "--model", "gpt", "--model-dir", str(tmp_path)))
  assert error.startswith("code-t5 train: --model 'gpt' is not one of")
  error = _one_line_error(_code_t5("train", "--root", str(tmp_path / "missing")))
  assert error.startswith("code-t5 train: --root") and "missing" in error
  error = _one_line_error(_code_t5("train", "--init-from", str(tmp_path / "nothing")))
  assert error.startswith("code-t5 train: --init-from") and "nothing" in error
  error = _one_line_error(_code_t5("train", "--vocab", "t5", "--model-dir", str(tmp_path)))
  assert error.startswith("code-t5 train: --vocab 't5' is not one of byte, spm_dev")


def test_code_vocabulary_trains_and_evaluates_line_completion(tmp_path, prepared_dir):
  """`--vocab spm_dev` trains the `_spm_dev_v1` task; `eval --line-completion` decodes its points."""
  flags = ["--vocab", "spm_dev", "--model-dir", str(tmp_path / "model"),
           "--gin-param", f"code_t5.flcc_dataset.prepared_dir = '{prepared_dir}'",
           "--gin-param", "mesh_eval_dataset_fn.num_eval_examples = 8",
           "--gin-param", "Bitransformer.decode.max_decode_length = 8"]
  trained = _code_t5("train", "--steps", "2", "--no-eval", *flags)
  assert trained.returncode == 0, trained.stdout[-3000:] + trained.stderr[-3000:]
  assert "--gin_file=vocabs/spm_dev.gin" in trained.stdout
  evaluated = _code_t5("eval", "--line-completion", *flags)
  assert evaluated.returncode == 0, evaluated.stdout[-3000:] + evaluated.stderr[-3000:]
  assert "eval/flcc_py_line_completion_spm_dev_v1/exact_match" in evaluated.stdout
  eval_dir = tmp_path / "model" / f"validation_eval_{line_completion.eval_dir_suffix('dataset-dev')}"
  targets = (eval_dir / "flcc_py_line_completion_spm_dev_v1_targets").read_text().splitlines()
  assert len(targets) == 8 and all("\n" not in postprocessors.from_json_line(t) for t in targets)
