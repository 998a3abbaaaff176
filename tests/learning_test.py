"""Proof of learning: models trained on a few files complete those files' lines exactly.

The whole chain runs for real — FLCC files -> seqio task -> mesh_transformer_main training ->
Mesh TF's line-completion eval, and -> the NumPy runtime -> `complete.Completer` — for both
architectures the project ships: the decoder-only causal LM (`models/causal_lm.gin`, the recipe
of docs/training.md) and the shared encoder-decoder trained the same way
(`models/shared-cursor_lm.gin`). Each must learn two short files by heart and then complete the
task's points of them (line starts and half-typed lines) exactly. A misaligned target, an
ignored encoder, a context that never reaches the decode, a decode cut in the wrong place or a
vocabulary mismatch between training and completion each keep exact match far below the bars.

Not passing (docs/testing.md): the decoder-only prefix LM reaches 75 % on
`cursor_lm` and 0 % on t5's prefix_lm objective, the shared encoder-decoder of `make train-dev`
(prefix_lm, rsqrt schedule) 0 %. tests/gin_configs_test.py guards the prefix LM's fixed label
leak.

The files' repository is in the train split, and the line-completion eval runs on that split
(`utils.run.dataset_split = 'train'`), so its points are points of the training files.
"""

import concurrent.futures
import os
import pathlib
import signal
from typing import List, NamedTuple

import pytest

from code_t5 import test_utils
from code_t5.data import line_completion
from code_t5.engine import complete
from code_t5.evaluation import baseline
from code_t5.training import launcher

FILES = {
    "shapes.py": (
        "import math\n"
        "\n"
        "\n"
        "class Circle:\n"
        "    def __init__(self, radius):\n"
        "        self.radius = radius\n"
        "\n"
        "    def area(self):\n"
        "        return math.pi * self.radius ** 2\n"
        "\n"
        "    def scaled(self, factor):\n"
        "        return Circle(self.radius * factor)\n"
    ),
    "inventory.py": (
        "def total_price(items):\n"
        "    total = 0\n"
        "    for name, count, price in items:\n"
        "        if count < 0:\n"
        "            raise ValueError(name)\n"
        "        total += count * price\n"
        "    return round(total, 2)\n"
    ),
}
# Exact match the model must reach through the engine's default search, over the points whose
# context determines their line: 14 of the 16 (8 per file). The other two have nothing before the
# cursor (a file's first line), where either file's first line is right; there the completion
# must be one of them. A model that ignores its context, or a chain that misaligns it, scores
# near 0 at the 14.
ENGINE_BAR = 0.9
# sizes/tiny.gin's network (d_model 64, 2 layers): large enough to learn 500 bytes by heart (both
# models passed at the recipes' steps in every probe, docs/testing.md), at 1.7x the
# steps/s of d_model 128, which needed as many steps. No dropout: the test asks for memorisation,
# and with T5's 0.1 both models kept starting lines a byte early or late after a cursor inside a
# word for thousands of steps more. The learning rate warms up to the model files' 0.03 over 100
# steps, not 200, as the runs are short. The initial weights and the examples (cursors, order)
# are seeded, and the training runs with TensorFlow's op determinism (TF_DETERMINISTIC_OPS), so
# a run repeats exactly on a machine: seeded without it, two encoder-decoder runs had identical
# weights at step 200 and entirely different ones at 1,500 (the examples were identical), and
# one such run decoded 11 of 16 where the others decoded 15; unseeded, a clean-clone CI run
# failed its bar. Another CPU may still round differently, hence the margins in RECIPES. The
# task is cursor_lm v2, which draws no cursor inside leading indentation (about a fifth of these
# files' characters; no point lies there), with a tenth of its cursors at line starts, not half:
# these files have 19 line starts and ~320 other places for a cursor, and what the models learn
# slowly is to place a cursor inside a line exactly (see RECIPES).
COMMON = ["dropout_rate = 0.0", "learning_rate_schedules.linear_warmup.steps_or_fraction = 100",
          "code_t5.train_model.random_seed = 1", "mesh_train_dataset_fn.seed = 1",
          "code_t5.task_name.version = 'v2'", "code_t5.cursor_lm.line_start_rate = 0.1"]


class Recipe(NamedTuple):
  steps: int
  bindings: List[str]
  greedy_bar: float  # Mesh TF's eval and the Completer's greedy line, over all 16 points


# The fewest steps at which every probe reached the bars with a margin (docs/testing.md, "Proof of
# learning"). With a tenth of the cursors at line starts, at seeds 1-3, the causal LM decoded
# 15, 15 and 13 of 16 greedily at 700 steps (14, 10 and 13 at 500), and the encoder-decoder 15
# of 16 in all four runs at 2,000 steps; at 1,500 it decoded 15 at each seed but 11 in a repeat
# of seed 1 (before op determinism), at 1,200 12-14 (128-byte contexts). At half the cursors at
# line starts they had needed 1,000 and 2,000 steps, and the encoder-decoder 128-byte contexts;
# now 32- and 64-byte contexts do (the encoder-decoder at 32: 15 and 13 of 16 at 1,500), and a
# step costs less. Targets hold 48 bytes, more than these files' longest line. Checkpoints only
# at the end: they cost time, not learning.
RECIPES = {
    "causal_lm": Recipe(700, ["utils.run.sequence_length = {'inputs': 32, 'targets': 48}"], 0.75),
    "shared-cursor_lm": Recipe(2000, [
        "utils.run.sequence_length = {'inputs': 64, 'targets': 48}"], 0.75),
}


REPO = test_utils.repo_in_split("train", prefix="learning/files")


@pytest.fixture(scope="module")
def root(tmp_path_factory):
  return test_utils.make_flcc_tree(tmp_path_factory.mktemp("learning"), {REPO: FILES})


def _points():
  return [(text, point) for path, text in FILES.items()
          for point in line_completion.select_points(text, REPO, path)]


def _train_and_eval(model, root, model_dir, prepared_dir):
  """Trains `model`'s recipe, then runs Mesh TF's line-completion eval on the files' points."""
  recipe = RECIPES[model]
  experiment = launcher.Experiment(
      model=model, size="tiny", run="cpu", model_dir=model_dir, root=root,
      gin_params=COMMON + recipe.bindings + [
          f"utils.run.save_checkpoints_steps = {recipe.steps}",
          f"code_t5.flcc_dataset.prepared_dir = '{prepared_dir}'"])
  log = model_dir.parent / f"{model}.log"
  # Op determinism for the training only: Mesh TF's decode graph has unseeded random ops, which
  # determinism refuses (its greedy decode draws nothing).
  for command, env in (
      (experiment.train_command(recipe.steps), {"TF_DETERMINISTIC_OPS": "1"}),
      (experiment.eval_command(True, extra_gin_params=["utils.run.dataset_split = 'train'"]), {})):
    code = launcher.run(command, log, echo=lambda *_: None, env=env)
    assert code == 0, log.read_text()[-3000:]
  return experiment


@pytest.fixture(scope="module")
def experiments(request, root, tmp_path_factory, prepared_dir):
  """Both models' training and eval, started at once, each model's on its own thread here.

  A tiny model's step is ~1,800 small ops that leave part of two cores idle, and each launch's
  imports run on one core, so side by side the chains took 112-121 s against 131-143 s one after
  the other (docs/testing.md). Each test waits for its own model's chain, whose
  failure fails it alone.
  """
  # Only the models of the tests pytest selected (`-k causal_lm` trains one). Under pytest-xdist,
  # `--dist loadfile` (as `make test` runs the suite) keeps both tests in one worker.
  models = {item.callspec.params["model"] for item in request.session.items
            if item.module is request.module and hasattr(item, "callspec")}
  model_dirs = tmp_path_factory.mktemp("models")
  with concurrent.futures.ThreadPoolExecutor(len(models)) as pool:
    chains = {model: pool.submit(_train_and_eval, model, root, model_dirs / model, prepared_dir)
              for model in sorted(models)}
    try:
      yield chains
    finally:
      if not all(chain.done() for chain in chains.values()):  # the session was interrupted
        _kill_commands_naming(model_dirs)


def _kill_commands_naming(path):
  """Kills this process's children (and their groups) whose command line names `path`.

  launcher.run forwards Ctrl-C to its command only from the main thread; from the fixture's
  threads the commands would otherwise run on to the end of their training after an interrupt.
  """
  children = [int(pid) for children in pathlib.Path("/proc/self/task").glob("*/children")
              for pid in children.read_text().split()]
  for pid in children:
    try:
      if str(path) in pathlib.Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"):
        os.killpg(pid, signal.SIGKILL)  # launcher.run starts each in its own group
    except OSError:
      pass  # already ended


@pytest.mark.parametrize("model", sorted(RECIPES))
def test_model_learns_files_and_completes_their_lines_exactly(model, root, experiments):
  recipe = RECIPES[model]
  experiment = experiments[model].result()

  # Mesh TF's eval decoded every point of the files.
  results = baseline.evaluate(root, "train", model_dirs=[experiment.model_dir],
                              echo=lambda _: None)
  system = results["systems"][f"model:{model}"]
  assert system["points"] == results["points"]["count"] == 16
  assert system["metrics"]["all"]["exact_match"] >= 100 * recipe.greedy_bar, system

  # The model, through the Completer that `complete` and `serve` use, at the same points: greedy,
  # as the eval decodes, then the engine's default search (beam, healing, filters).
  greedy = complete.EngineOptions(top=1, beam_size=1, heal=False, filters=False, similar=False)
  completer = complete.Completer(experiment.model_dir, greedy)
  completions = [(completer.complete_at(test_utils.as_typed(text, point.cursor),
                                        point.cursor).completion, point.target(text))
                 for text, point in _points()]
  exact = sum(got == want for got, want in completions) / len(completions)
  assert exact >= recipe.greedy_bar, completions
  engine = complete.Completer(experiment.model_dir)
  completions = [(point.cursor, engine.complete_at(test_utils.as_typed(text, point.cursor),
                                                   point.cursor).completion,
                  point.target(text)) for text, point in _points()]
  determined = [(got, want) for cursor, got, want in completions if cursor > 0]
  assert len(determined) == 14
  exact = sum(got == want for got, want in determined) / len(determined)
  assert exact >= ENGINE_BAR, completions
  first_lines = {text.split("\n")[0] for text in FILES.values()}
  assert all(got in first_lines for cursor, got, _ in completions if cursor == 0), completions
