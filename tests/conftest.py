"""Shared fixtures: real tiny checkpoints trained once per test session through mesh_transformer_main."""

import atexit
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

# TensorFlow's C++ log off before anything loads TensorFlow -- `import code_t5` below does (it
# registers the tasks) -- in this process, in each pytest-xdist worker (each imports this file)
# and in every subprocess a test starts (they inherit it). Its "Unable to register cuDNN factory"
# and "TF-TRT Warning: Could not find TensorRT" lines reach the terminal past pytest's capture
# from the workers, and are about GPU libraries a CPU run does not use. A test that needs the log
# sets the variable itself (tests/cli_test.py's `--verbose` test removes it). The Python warnings
# that are noise are filtered in pytest.ini.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# The project's caches (code_t5.cache_dirs: the engine's saved pieces of a --repo, n-grams,
# prepared shards) in a folder of this process's own, removed at its end, unless the caller chose
# one: the suite writes nothing to ~/.cache. Subprocesses of a test inherit it.
if "CODE_T5_CACHE" not in os.environ:
  os.environ["CODE_T5_CACHE"] = tempfile.mkdtemp(prefix="code_t5_test_cache_")
  atexit.register(shutil.rmtree, os.environ["CODE_T5_CACHE"], ignore_errors=True)

# pylint: disable=wrong-import-position
import gin
import numpy as np
import pytest

from code_t5.training import launcher

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
      # launcher.run, as `code-t5 train`: the trainer dies with pytest.
      code = launcher.run(experiment.train_command(TINY_STEPS), log, echo=lambda *_: None)
      assert code == 0, log.read_text()[-3000:]
      runs[model] = (experiment, model_dir)
    return runs[model]

  return get


# ------------------------------------------------------------------ Mesh TF's own logits

LOGITS_MODELS = ("shared-prefix_lm", "prefix_lm", "span_corruption")


@pytest.fixture(scope="session")
def logits_batch():
  """Two unpacked examples per row; the second row padded. Byte-vocabulary ids, EOS = 1."""
  rng = np.random.default_rng(0)

  def rows(lengths, width):
    out = np.zeros((len(lengths), width), np.int32)
    for i, n in enumerate(lengths):
      out[i, :n - 1] = rng.integers(3, 259, n - 1)
      out[i, n - 1] = 1
    return out
  # Up to 60 positions: relative distances cross the bucket boundaries at 8, 16 and 32.
  return {"inputs": rows([40, 23], 40), "targets": rows([20, 9], 20)}


@pytest.fixture(scope="session")
def mesh_tf_logits(tiny_run, tmp_path_factory, logits_batch):
  """{model: {"logits", "targets"}} from Mesh TF itself (tests/mesh_tf_logits.py) for
  logits_batch, at each tiny run's checkpoint; one subprocess for the three models.

  For delimited_lm (prefix_lm) the targets are the concatenated inputs + targets."""
  work = tmp_path_factory.mktemp("mesh_tf_logits")
  np.savez(work / "batch.npz", **logits_batch)
  jobs = [{"gin_files": tiny_run(model)[0].gin_files(),
           "checkpoint": str(tiny_run(model)[1] / f"model.ckpt-{TINY_STEPS}"),
           "batch": str(work / "batch.npz"), "out": str(work / f"{model}.npz")}
          for model in LOGITS_MODELS]
  (work / "jobs.json").write_text(json.dumps(jobs))
  result = subprocess.run([sys.executable, str(pathlib.Path(__file__).parent / "mesh_tf_logits.py"),
                           str(work / "jobs.json")], capture_output=True, text=True,
                          env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"), check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  return {model: dict(np.load(work / f"{model}.npz")) for model in LOGITS_MODELS}


DEV_DATASET = pathlib.Path(__file__).resolve().parent.parent / "dataset-dev"


@pytest.fixture(scope="session")
def dev_points():
  """Every line-completion point of dataset-dev's files as (point, prefix, target, below): the
  code before the cursor, the rest of its line, and the file's lines after the cursor's (a rule
  the engine applies to the lines the model writes is checked against the targets: code that
  runs)."""
  from code_t5.data import flcc  # pylint: disable=g-import-not-at-top
  from code_t5.data import line_completion  # pylint: disable=g-import-not-at-top
  points = []
  for source, point in line_completion.points_of_files(flcc.read_files(DEV_DATASET)):
    text = source.text
    line_end = text.find("\n", point.cursor)
    points.append((point, text[:point.cursor], point.target(text),
                   text[line_end + 1:] if line_end >= 0 else ""))
  return points


@pytest.fixture(scope="module")
def dev_cursor():
  """at(path, typed, rest, repo=None, with_repository=True) -> (text, cursor, repository): a real
  cursor of dataset-dev as an editor holds the file there. The cursor is after `typed` in the file
  `path` (of repository `repo`, if paths repeat), and `rest`, the text after it in the file (what
  is to be completed), is taken out. With `with_repository`, `repository` is the file's
  repository read as an editor's workspace (code_t5.engine.repository, the shipped model's
  pieces), else None."""
  from code_t5 import test_utils  # pylint: disable=g-import-not-at-top
  from code_t5.data import flcc  # pylint: disable=g-import-not-at-top
  from code_t5.engine import complete  # pylint: disable=g-import-not-at-top
  from code_t5.engine import repository as repository_lib  # pylint: disable=g-import-not-at-top
  files = list(flcc.read_files(DEV_DATASET))
  tokenizer = complete.Completer(test_utils.PRETRAINED).tokenizer

  def at(path, typed, rest, repo=None, with_repository=True):
    [source] = [f for f in files if f.path == path and repo in (None, f.repo)]
    cursor = source.text.index(typed + rest) + len(typed)
    text = source.text[:cursor] + source.text[cursor + len(rest):]
    repository = None
    if with_repository:
      repository = repository_lib.Repository(tokenizer)
      for f in files:
        if f.repo == source.repo:
          repository.add(f.path, f.text)
    return text, cursor, repository

  return at


@pytest.fixture(scope="module")
def shipped_best_line(dev_cursor):  # pylint: disable=redefined-outer-name
  """best_line(path, typed, rest, repo=None, with_repository=True): the shipped model's best line
  (the engine's default, every line shown) at a real cursor of dataset-dev (dev_cursor's), as a
  function of no arguments, so that a test can change the engine between calls."""
  from code_t5 import test_utils  # pylint: disable=g-import-not-at-top
  from code_t5.engine import complete  # pylint: disable=g-import-not-at-top
  completer = complete.Completer(test_utils.PRETRAINED,
                                 complete.EngineOptions(top=5, min_score=float("-inf")))

  def best_line(path, typed, rest, repo=None, with_repository=True):
    text, cursor, repository = dev_cursor(path, typed, rest, repo, with_repository)
    return lambda: completer.complete_at(text, cursor, repository=repository,
                                         path=path).completion

  return best_line
