"""Builds and runs `python -m t5.models.mesh_transformer_main` commands for the project's configs.

The launcher only assembles the canonical command (printed before it runs, so it can be copied
and run by hand) and condenses Mesh TF's log into progress lines; all training, eval and
checkpointing is Mesh TF's own.
"""

import contextlib
import dataclasses
import os
import pathlib
import re
import shlex
import subprocess
import sys
import time
from typing import List, Optional, Sequence

from code_t5 import errors
from code_t5 import sources

GIN_CONFIGS = sources.REPO_ROOT / "gin_configs"
MODELS = ("shared-prefix_lm", "prefix_lm", "span_corruption")
SIZES = ("tiny", "small", "base")
RUNS = ("cpu", "cpu_x2", "cpu_x4", "gpu", "gpu_x2", "gpu_x4", "gpu_x8", "tpu_v3_8", "tpu_v3_32")
# Vocabularies (code_t5/vocab.py VOCABULARIES): "byte" is dataset.gin's default, the others switch
# with gin_configs/vocabs/<name>.gin after the model file.
VOCABS = ("byte", "spm_dev")

# Mesh TF's model_fn prints the loss of every step: "step, tf_loss[2.4367][1]".
_LOSS_LINE = re.compile(r"tf_loss\[([^\]]+)\]\[(\d+)\]")
_PROGRESS_SECONDS = 5
_RATE_LINE = re.compile(r"global_step/sec: ([0-9.]+)")
# absl's line prefix ("I1122 19:09:35.188298 140411681078144 saver.py:1413] "), dropped when shown.
_ABSL_PREFIX = re.compile(r"^[IWEF]\d{4} [\d:.]+\s+\d+ \S+:\d+\] ")
# TensorFlow's logger repeats every absl line in this form; shown once is enough.
_TF_LOGGER_PREFIXES = ("INFO:tensorflow:", "WARNING:tensorflow:", "ERROR:tensorflow:")
# Mesh TF lines worth showing: errors and the eval metrics.
_SHOWN = re.compile(r"Error|error:|Traceback|eval/|Skipping training|"
                    r"Saving checkpoints for|Restoring parameters from")


class LaunchError(errors.UserError):
  """A one-line, user-facing reason why a command could not be run."""


@dataclasses.dataclass
class Experiment:
  """One model x size x run composition, as gin files plus extra bindings."""
  model: str = "shared-prefix_lm"
  size: str = "tiny"
  run: str = "cpu"
  vocab: str = "byte"
  model_dir: pathlib.Path = pathlib.Path("runs/dev")
  root: Optional[pathlib.Path] = None
  gin_params: Sequence[str] = ()

  def __post_init__(self):
    for flag, value, choices in (("--model", self.model, MODELS), ("--size", self.size, SIZES),
                                 ("--run", self.run, RUNS), ("--vocab", self.vocab, VOCABS)):
      if value not in choices:
        raise LaunchError(f"{flag} {value!r} is not one of {', '.join(choices)}")
    if self.root is not None and not self.root.exists():
      raise LaunchError(f"--root {self.root} does not exist: give the folder that holds v3/")

  def gin_files(self) -> List[str]:
    vocab = [] if self.vocab == "byte" else [f"vocabs/{self.vocab}.gin"]
    return (["dataset.gin", f"models/{self.model}.gin"] + vocab +
            [f"sizes/{self.size}.gin", f"runs/{self.run}.gin"])

  def command(self, extra_gin_files=(), extra_gin_params=()) -> List[str]:
    params = list(self.gin_params) + list(extra_gin_params)
    if self.root is not None:
      params.insert(0, f"code_t5.flcc_dataset.root = '{self.root.resolve()}'")
    return ([sys.executable, "-m", "t5.models.mesh_transformer_main", "--module_import=code_t5",
             f"--gin_location_prefix={GIN_CONFIGS}/", f"--model_dir={self.model_dir}"] +
            [f"--gin_file={f}" for f in self.gin_files() + list(extra_gin_files)] +
            [f"--gin_param={p}" for p in params])

  def train_command(self, steps: int) -> List[str]:
    return self.command(extra_gin_params=[f"utils.run.train_steps = {steps}"])

  def eval_command(self, line_completion: bool = False) -> List[str]:
    """Decodes the validation repositories: the training task (runs/eval.gin) or, with
    line_completion, every line-completion point (runs/eval_line_completion.gin)."""
    return self.command(extra_gin_files=[
        "runs/eval_line_completion.gin" if line_completion else "runs/eval.gin"])

  def export_command(self, export_path, extra_gin_files=(), extra_gin_params=()) -> List[str]:
    """A SavedModel of the newest checkpoint in <export_path>/<timestamp>/ (runs/export.gin)."""
    return self.command(extra_gin_files=list(extra_gin_files) + ["runs/export.gin"],
                        extra_gin_params=[f"utils.run.export_path = '{export_path}'"] +
                        list(extra_gin_params))


def latest_step(model_dir: pathlib.Path) -> Optional[int]:
  """The step of the newest checkpoint in model_dir (None if there is none)."""
  steps = [int(m.group(1)) for p in model_dir.glob("model.ckpt-*.index")
           if (m := re.search(r"model\.ckpt-(\d+)\.index$", p.name))]
  return max(steps) if steps else None


def run(command: Sequence[str], log_path: pathlib.Path, echo=print,
        loss_table: Optional[pathlib.Path] = None, first_step: Optional[int] = None) -> int:
  """Runs a Mesh TF command; full log to `log_path`, condensed progress to `echo`.

  With `loss_table`, every step's printed loss is appended to it as "step<TAB>loss".
  """
  echo("$ " + " ".join(shlex.quote(c) for c in command))
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL=os.environ.get("TF_CPP_MIN_LOG_LEVEL", "3"))
  log_path.parent.mkdir(parents=True, exist_ok=True)
  start = last_shown = time.time()
  rate = None
  with contextlib.ExitStack() as stack:
    log = stack.enter_context(open(log_path, "a", encoding="utf-8"))
    losses = stack.enter_context(open(loss_table, "a", encoding="utf-8")) if loss_table else None
    process = stack.enter_context(subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True,
        errors="replace"))
    for line in process.stdout:
      log.write(line)
      if line.startswith(_TF_LOGGER_PREFIXES):
        continue
      if m := _RATE_LINE.search(line):
        rate = float(m.group(1))
      if m := _LOSS_LINE.search(line):
        step, loss = int(m.group(2)), float(m.group(1))
        if first_step is not None:
          # Mesh TF reads the step it prints unordered with that step's increment, so the printed
          # number is sometimes one less; one loss line per step, in order, is exact.
          step, first_step = first_step, first_step + 1
        if losses:
          losses.write(f"{step}\t{loss}\n")
        if time.time() - last_shown > _PROGRESS_SECONDS:
          last_shown = time.time()
          speed = f", {rate:.1f} steps/s" if rate else ""
          echo(f"  step {step:>6}  loss {loss:.4f}{speed}  [{time.time() - start:.0f} s]")
      elif _SHOWN.search(line):
        echo("  " + _ABSL_PREFIX.sub("", line).rstrip()[-300:])
  if process.returncode:
    echo(f"exit code {process.returncode}; full log: {log_path}")
  return process.returncode


def _mean(points):
  return sum(loss for _, loss in points) / len(points)


def train_and_eval(experiment: Experiment, steps: int, evaluate: bool = True, echo=print) -> int:
  """Trains to `steps` (resuming from the newest checkpoint), plots the loss, then evaluates."""
  from code_t5 import curves  # pylint: disable=g-import-not-at-top  (imports TensorFlow)

  model_dir = experiment.model_dir
  model_dir.mkdir(parents=True, exist_ok=True)
  resumed = latest_step(model_dir)
  echo(f"model dir {model_dir}: " +
       (f"resuming from step {resumed}" if resumed is not None else "new run") +
       f", training to step {steps}")
  code = run(experiment.train_command(steps), model_dir / "logs" / "train.log", echo,
             loss_table=model_dir / curves.LOSS_TABLE, first_step=(resumed or 0) + 1)
  if code:
    return code
  losses = curves.read_loss(model_dir)
  if losses:
    png = model_dir / "loss.png"
    curves.plot_loss(model_dir, png)
    first, last = losses[:10], losses[-10:]
    echo(f"loss (mean over {len(first)} steps): {_mean(first):.4f} at steps "
         f"{first[0][0]}-{first[-1][0]} -> {_mean(last):.4f} at steps {last[0][0]}-{last[-1][0]};"
         f" curve: {png}")
  if not evaluate:
    return 0
  code = run(experiment.eval_command(), model_dir / "logs" / "eval.log", echo)
  if not code:
    decodes = sorted((model_dir / "validation_eval").glob("*_predictions"))
    echo("eval decodes (JSON lines): " + ", ".join(str(p) for p in decodes))
  return code
