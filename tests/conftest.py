"""Shared fixtures: real tiny checkpoints trained once per test session through mesh_transformer_main."""

import os
import pathlib
import subprocess

import gin
import pytest

from code_t5 import launcher

# Few steps: the fixtures prove the pipeline and give real checkpoint files, not a good model.
TINY_STEPS = 4


@pytest.fixture(scope="session")
def prepared_dir(tmp_path_factory) -> pathlib.Path:
  """Prepared-shard cache of this session (keeps tests away from ~/.cache)."""
  return tmp_path_factory.mktemp("prepared")


@pytest.fixture(scope="module")
def tasks_use_prepared_dir(prepared_dir):
  """Binds the registered tasks' dataset (gin) to this session's prepared dir, for one module.

  Use with `pytestmark = pytest.mark.usefixtures("tasks_use_prepared_dir")`.
  """
  with gin.unlock_config():
    gin.bind_parameter("code_t5.flcc_dataset.prepared_dir", str(prepared_dir))
  yield
  gin.clear_config()


def _tiny_experiment(model, model_dir, prepared):
  return launcher.Experiment(
      model=model, size="tiny", run="cpu", model_dir=model_dir,
      gin_params=[f"code_t5.flcc_dataset.prepared_dir = '{prepared}'",
                  "utils.run.save_checkpoints_steps = 2"])


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory, prepared_dir):
  """tiny_run(model) -> (Experiment, model_dir) trained for TINY_STEPS steps; cached per session.

  model is one of launcher.MODELS ("shared-prefix_lm", "prefix_lm", "span_corruption").
  """
  runs = {}

  def get(model):
    if model not in runs:
      model_dir = tmp_path_factory.mktemp(model)
      experiment = _tiny_experiment(model, model_dir, prepared_dir)
      log = model_dir / "train.log"
      with open(log, "w") as out:
        result = subprocess.run(experiment.train_command(TINY_STEPS), stdout=out,
                                stderr=subprocess.STDOUT, env=dict(os.environ,
                                                                   TF_CPP_MIN_LOG_LEVEL="3"))
      assert result.returncode == 0, log.read_text()[-3000:]
      runs[model] = (experiment, model_dir)
    return runs[model]

  return get
