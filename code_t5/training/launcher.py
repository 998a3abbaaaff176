"""Builds and runs `python -m t5.models.mesh_transformer_main` commands for the project's configs.

The launcher only assembles the canonical command (printed before it runs, so it can be copied
and run by hand) and condenses Mesh TF's log into progress lines; all training, eval and
checkpointing is Mesh TF's own.
"""

import contextlib
import dataclasses
import glob
import os
import pathlib
import re
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import time
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from code_t5 import errors
from code_t5 import processes
from code_t5 import registration
from code_t5 import stranger_paths
from code_t5.data import flcc
from code_t5.data import line_completion as line_completion_lib
from code_t5.training import checkpoints
from code_t5.training import operative_config

# sources.REPO_ROOT and sources.DEV_ROOT: sources is not imported here, as it imports TensorFlow
# and the `code-t5` command line imports this module to build its parser.
_REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
_DEV_ROOT = _REPO_ROOT / "dataset-dev"
GIN_CONFIGS = pathlib.Path(registration.GIN_CONFIGS)  # one place says where gin_configs/ is
MODELS = ("shared-prefix_lm", "shared-cursor_lm", "prefix_lm", "causal_lm", "span_corruption")
SIZES = ("tiny", "mini", "small", "base")
RUNS = ("cpu", "cpu_x2", "cpu_x4", "gpu", "gpu_x2", "gpu_x4", "gpu_x8", "tpu_v3_8", "tpu_v3_32")
# Vocabularies (code_t5/data/vocab.py VOCABULARIES): "byte" is dataset.gin's default, the others
# switch with gin_configs/vocabs/<name>.gin after the model file.
VOCABS = ("byte", "spm_dev")

# The first run: what `code-t5 train` without --model trains (`make train-dev`), and what
# `code-t5 eval` without --model evaluates -- a model that learns on dataset-dev within a few
# minutes of a 2-core CPU, in its model dir runs/first_run-<size>[-<vocab>]-<run>. The causal LM
# (models/causal_lm.gin: loss on every token, warm-up/constant/decay to 0.03, no dropout) on
# cursor_lm, as the proof of learning trains it (tests/learning_test.py), at sizes/tiny.gin's
# network and these bindings, which the printed command shows:
FIRST_RUN = "first_run"
FIRST_RUN_MODEL = "causal_lm"
FIRST_RUN_GIN_PARAMS = (
    # cursor_lm v2: no training cursor inside a line's leading indentation, where no completion
    # is asked for. On v1 (models/causal_lm.gin's default, kept for the shipped model's recipe)
    # the same 3,000 steps decoded 27 of dataset-dev's 192 held-out lines as blanks, on v2 11.
    "code_t5.task_name.version = 'v2'",
    # 128 bytes of context, 64 of target: 27-32 steps/s on this 2-core machine, against 5-7.5 at
    # sizes/tiny.gin's 256 + 256 (a probe while the machine was busier), so the run sees about
    # four times the examples in its minutes.
    "utils.run.sequence_length = {'inputs': 128, 'targets': 64}",
)
FIRST_RUN_STEPS = 3000
# The line-completion eval after `code-t5 train` decodes the points of at most this many files of
# the validation split: all of dataset-dev's 24 (192 points); on a larger root about as many
# points, spread over its repositories (`code-t5 baseline --max-files 24` scores the same ones).
TRAIN_EVAL_MAX_FILES = 24

# Mesh TF's model_fn prints the loss of every step: "step, tf_loss[2.4367][1]".
_LOSS_LINE = re.compile(r"tf_loss\[([^\]]+)\]\[(\d+)\]")
# code_t5/training/losses.py prints the same step's loss per target byte:
# "loss_per_byte [Tensor[...]][1.2]".
_BYTE_LOSS_LINE = re.compile(r"^loss_per_byte .*\]\[([-+.0-9eE]+|nan|inf)\]$")
_PROGRESS_SECONDS = 5
# In the model dir while `code-t5 train` runs there; holds the trainer's pid (processes.py).
TRAIN_LOCK = "train.lock"
# absl's line prefix ("I1122 19:09:35.188298 140411681078144 saver.py:1413] "), dropped when shown.
_ABSL_PREFIX = re.compile(r"^[IWEF]\d{4} [\d:.]+\s+\d+ \S+:\d+\] ")
# TensorFlow's logger repeats every absl line in this form; shown once is enough.
_TF_LOGGER_PREFIXES = ("INFO:tensorflow:", "WARNING:tensorflow:", "ERROR:tensorflow:")
# Mesh TF lines worth showing: errors and the eval metrics.
_SHOWN = re.compile(r"Error|error:|Traceback|eval/|Skipping training|Restoring parameters from")
# ... but not the decodes Mesh TF logs (mesh_tensorflow.transformer.utils.decode: "decoded 8: ..."
# then "            -> ..."), whose code may say "Error" (helper-19's audit).
_DECODE_LOG = re.compile(r"^(?:decoded \d+: |\s+-> )")
# A checkpoint saved (every 100 steps on CPU): the first is shown, the rest go into the progress
# lines (the first run's 3,000 steps would show 30 of them), and the last after the run.
_SAVE_LINE = re.compile(r"Saving checkpoints for (\d+) into ")
# The last line of the traceback of a code_t5 error (every one is an errors.UserError) raised in
# Mesh TF's process: what `run` reports as the one-line error.
_CHILD_USER_ERROR = re.compile(r"^code_t5\.(?:\w+\.)*\w*Error: (.+)$")


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
  # The dataset flags (add_dataset_flags); None keeps dataset.gin's value.
  validation_fraction: Optional[float] = None
  test_fraction: Optional[float] = None
  prepared_dir: Optional[pathlib.Path] = None
  held_out_roots: Sequence[pathlib.Path] = ()
  # `code-t5 train --init-from`: a model dir (its newest checkpoint) or a checkpoint prefix whose
  # weights a new run starts from.
  init_from: Optional[pathlib.Path] = None

  def __post_init__(self):
    for flag, value, choices in (("--model", self.model, MODELS), ("--size", self.size, SIZES),
                                 ("--run", self.run, RUNS), ("--vocab", self.vocab, VOCABS)):
      if value not in choices:
        raise LaunchError(f"{flag} {value!r} is not one of {', '.join(choices)}")
    # Here, not once the trainer has started: its traceback, and a model dir begun for nothing.
    check_root(self.root)
    flcc.check_fractions(self.validation_fraction, self.test_fraction)
    check_held_out_roots(self.held_out_roots)
    check_gin_params(self.gin_params)
    if self.init_from is not None:
      self.init_from = _checkpoint_prefix(self.init_from)

  def gin_files(self) -> List[str]:
    vocab = [] if self.vocab == "byte" else [f"vocabs/{self.vocab}.gin"]
    return (["dataset.gin", f"models/{self.model}.gin"] + vocab +
            [f"sizes/{self.size}.gin", f"runs/{self.run}.gin"])

  def command(self, extra_gin_files=(), extra_gin_params=()) -> List[str]:
    # The dataset bindings come first, so an explicit --gin-param still overrides them.
    params = dataset_gin_params(self.root, self.validation_fraction, self.test_fraction,
                                self.prepared_dir, self.held_out_roots) + list(self.gin_params) + \
        list(extra_gin_params)
    # -P: the working folder is not put on the module path, so a t5/, seqio.py or gin/ there
    # (a project of the user's, or a stranger's folder) cannot stand in for the stack's own.
    return ([sys.executable, "-P", "-m", "t5.models.mesh_transformer_main",
             "--module_import=code_t5",
             f"--gin_location_prefix={GIN_CONFIGS}/", f"--model_dir={self.model_dir}"] +
            [f"--gin_file={f}" for f in self.gin_files() + list(extra_gin_files)] +
            [f"--gin_param={p}" for p in params])

  def train_command(self, steps: int) -> List[str]:
    params = [f"utils.run.train_steps = {steps}"]
    if self.init_from is not None:
      # Mesh TF reads these variables of the checkpoint into a run's first graph (a resumed run
      # then restores its own checkpoint over them): the weights only -- the new run counts its
      # own steps from 0 (its learning-rate schedule starts again) and starts its optimizer
      # state afresh, whether the source is a packed model (no slots) or a whole model dir.
      # code_t5.init_from_variable refuses a checkpoint of another model, which Mesh TF would
      # read in part. The import: runs/tpu*.gin do not import code_t5.training.training.
      params += [f"utils.run.init_checkpoint = {str(self.init_from)!r}",
                 f"tpu_estimator_model_fn.init_variable_filter = '{_WEIGHTS_ONLY}'",
                 "import code_t5.training.training",
                 "init_checkpoint_variable_mapping.mapping_fn = @code_t5.init_from_variable"]
    return self.command(extra_gin_params=params)

  def eval_command(self, line_completion: bool = False, max_files: Optional[int] = None,
                   extra_gin_params=()) -> List[str]:
    """Decodes the validation repositories: the training task (runs/eval.gin) or, with
    line_completion, every line-completion point (runs/eval_line_completion.gin) of the root,
    or of `max_files` of its files, into <model_dir>/validation_eval_line_completion-<root name>/
    (so a model keeps its decodes of each root it is judged on)."""
    if not line_completion:
      return self.command(extra_gin_files=["runs/eval.gin"], extra_gin_params=extra_gin_params)
    params = [f"utils.run.eval_dir_suffix = {self._eval_dir_suffix()!r}"]
    if max_files is not None:
      params.append(f"code_t5.line_completion_points.max_files = {max_files}")
    return self.command(extra_gin_files=["runs/eval_line_completion.gin"],
                        extra_gin_params=params + list(extra_gin_params))

  def _eval_dir_suffix(self) -> str:
    return line_completion_lib.eval_dir_suffix((self.root or _DEV_ROOT).resolve().name)

  def splits(self) -> flcc.Splits:
    """The held-out shares the run's dataset gets (dataset.gin's where no flag gives one)."""
    return flcc.Splits(**{name: value for name, value in (
        ("validation", self.validation_fraction), ("test", self.test_fraction))
                          if value is not None})

  def no_validation(self, points: bool = False) -> Optional[str]:
    """Why the root's validation split holds nothing to evaluate on (an eval of it printed
    metrics of 0.000 from zero points), or None where it holds a repository and, with `points`
    (the line-completion eval), a file with a completion point (helper-58's audit: a split of
    one-line files printed every metric as nan and exited 0)."""
    root = self.root if self.root is not None else _DEV_ROOT
    splits = self.splits()
    try:
      repos = flcc.repositories_per_split(root, splits)
      if repos["validation"] and points:
        # Up to the first file with a point: at once on any root but such a one.
        if not any(line_completion_lib.select_points(f.text, f.repo, f.path)
                   for f in flcc.read_files(root, splits=splits, only_split="validation")):
          return (f"--root {root}: its validation split has no completion points (no file has "
                  f"a line of {line_completion_lib.MIN_LINE_CHARS} characters or more), so "
                  "there is nothing to evaluate on: import repositories of more code")
    except flcc.FlccError as e:
      raise LaunchError(f"--root: {e}") from None
    if repos["validation"]:
      return None
    fix = ("pass --validation-fraction above 0" if not splits.validation else
           f"a held-out split gets a repository of its own from {flcc.MIN_REPOS_FOR_HELD_OUT} "
           f"repositories on: import more repositories into the root")
    return (f"--root {root}: its validation split holds no repository ({sum(repos.values())} in "
            f"all), so there is nothing to evaluate on: {fix}")

  def line_completion_dir(self) -> pathlib.Path:
    """Where eval_command(line_completion=True) writes its decodes (the validation split)."""
    return self.model_dir / f"validation_eval_{self._eval_dir_suffix()}"

  def export_command(self, export_path, extra_gin_files=(), extra_gin_params=()) -> List[str]:
    """A SavedModel of the newest checkpoint in <export_path>/<timestamp>/ (runs/export.gin)."""
    # runs/export.gin's mode again, after every other binding: a --gin_param of the experiment
    # (from a model dir's recorded command, which may be a stranger's) comes after the gin files
    # and would otherwise decide what the command does (train, score files, ...).
    return self.command(extra_gin_files=list(extra_gin_files) + ["runs/export.gin"],
                        extra_gin_params=["utils.run.mode = 'export_infer'",
                                          f"utils.run.export_path = {str(export_path)!r}"] +
                        list(extra_gin_params))


# Mesh TF's mesh_transformer_main writes the command it ran to <model_dir>/commands/command[.N],
# one line each.
COMMANDS_DIR = "commands"
_MAX_COMMAND_BYTES = 1 << 20
# Recorded gin params that belong to one run, not to the model: the steps, the device layout,
# where a run started from, what an eval decoded. The dataset's own come from the flags
# (dataset_gin_params).
RUN_ONLY_PARAMS = ("utils.run.batch_size", "utils.run.mode", "utils.run.mesh_shape",
                   "utils.run.mesh_devices", "utils.run.train_steps", "utils.run.init_checkpoint",
                   "utils.run.eval_dir_suffix", "tpu_estimator_model_fn.init_variable_filter",
                   "init_checkpoint_variable_mapping.mapping_fn",
                   "code_t5.line_completion_points.max_files")
_DATASET_CONFIGURABLE = "code_t5.flcc_dataset"


def binding_parts(param: str) -> Tuple[str, str, str]:
  """(selector, parameter name, value text) of a gin binding `[scope/]selector.name = value`,
  spaces out of the key: `scope/utils.run.mode = 'x'` -> ("utils.run", "mode", "'x'")."""
  key, _, value = param.partition("=")
  selector, _, name = key.replace(" ", "").rpartition("/")[2].rpartition(".")
  return selector, name, value.strip()


def _same_name(a: str, b: str) -> bool:
  """Whether two dotted names may name the same thing (gin takes any dotted suffix)."""
  return a == b or a.endswith("." + b) or b.endswith("." + a)


@dataclasses.dataclass(frozen=True)
class RecordedTraining:
  """What a model dir's newest recorded training command composed (a stranger's model dir may
  hold it: the files are read as regular files, up to a size limit, and never run)."""
  path: pathlib.Path  # the command file
  model: Optional[str]  # models/<model>.gin; None if no --gin_file names one
  size: Optional[str]
  vocab: str  # "byte" when no vocabs/*.gin is named
  extra_gin_files: Tuple[str, ...]  # beyond dataset.gin, models/, sizes/, vocabs/, runs/
  gin_params: Tuple[str, ...]  # every --gin_param, in order

  def model_params(self) -> List[str]:
    """The gin params that describe the model trained, not one run (RUN_ONLY_PARAMS, the
    dataset's flags and the `import` lines of --init-from left out), however a binding names
    its configurable (`utils.run.mode`, `run.mode`, `scope/run.mode`)."""
    kept = []
    for param in self.gin_params:
      selector, name, _ = binding_parts(param)
      key = f"{selector}.{name}" if selector else name
      if (param.lstrip().startswith("import ") or any(_same_name(key, k) for k in RUN_ONLY_PARAMS)
          or _same_name(selector, _DATASET_CONFIGURABLE)):
        continue
      kept.append(param)
    return kept

  def dataset_params(self) -> Dict[str, str]:
    """{binding's name: its value as text} of the dataset's flags it was trained with (--root,
    the split fractions, --held-out-root; the prepared shards' folder, a cache, left out)."""
    params = {}
    for param in self.gin_params:
      selector, name, value = binding_parts(param)
      if _same_name(selector, _DATASET_CONFIGURABLE) and name != "prepared_dir":
        params[name] = value
    return params

  def is_first_run(self) -> bool:
    """Whether `code-t5 train` without --model trained it."""
    return is_first_run(self.model, self.gin_params)


def is_first_run(model: Optional[str], gin_params: Sequence[str]) -> bool:
  """Whether a composition is the first run's: its model with FIRST_RUN_GIN_PARAMS bound."""
  return model == FIRST_RUN_MODEL and all(p in gin_params for p in FIRST_RUN_GIN_PARAMS)


def _split_recorded(command: str) -> List[str]:
  # mesh_transformer_main records " ".join(sys.argv): unquoted, so split before each "--flag=".
  return [part.strip() for part in re.split(r"\s(?=--[a-z_]+(?:=|\s|$))", command)]


# A recorded command that is an eval's or an export's (Experiment.eval_command's and
# export_command's run files): in a packed model dir, whose training command stayed behind, an
# export's was read as the training's, its bindings named as missing and its task version
# asked of a resume (helper-58's audit).
_NOT_TRAINING = re.compile(r"--gin_file=\S*runs/(?:eval|eval_line_completion|export)\.gin")


def recorded_training(model_dir: pathlib.Path) -> Optional[RecordedTraining]:
  """The newest training command recorded in model_dir/commands/ (else its first command that
  is no eval's or export's), or None when there is none."""
  commands = []
  for path in (pathlib.Path(model_dir) / COMMANDS_DIR).glob("command*"):
    m = re.fullmatch(r"command(?:\.(\d+))?", path.name)
    if m:
      try:
        text = stranger_paths.read_regular(path, _MAX_COMMAND_BYTES)
      except OSError as e:
        raise LaunchError(f"{path} cannot be read ({e.strerror}): remove it, or give the "
                          "--model and --size the model dir was trained with") from None
      commands.append((int(m.group(1) or 0), path, text.decode("utf-8", errors="replace")))
  if not commands:
    return None
  commands.sort(key=lambda c: c[0])
  trains = [c for c in commands if not _NOT_TRAINING.search(c[2])]
  training = [c for c in trains if "train_steps" in c[2]] or trains[:1]
  if not training:
    return None
  _, path, command = training[-1]
  files, params = [], []
  for part in _split_recorded(command):
    if part.startswith("--gin_file="):
      files.append(part[len("--gin_file="):])
    elif part.startswith("--gin_param="):
      params.append(part[len("--gin_param="):])
  named = {"models": None, "sizes": None, "vocabs": "byte"}
  extra = []
  for f in files:
    if m := re.fullmatch(r"(models|sizes|vocabs)/(.+)\.gin", f):
      named[m.group(1)] = m.group(2)
    elif f != "dataset.gin" and not re.fullmatch(r"runs/.+\.gin", f):
      extra.append(f)
  return RecordedTraining(path=path, model=named["models"], size=named["sizes"],
                          vocab=named["vocabs"], extra_gin_files=tuple(extra),
                          gin_params=tuple(params))


def add_dataset_flags(parser,
                      root_help: str = "FLCC dataset root (holds v3/); default: dataset-dev/"):
  """The one set of flags for every command that reads an FLCC root: which root, how it is split,
  where its prepared shards go. A run must split as `prepare` did, or it trains on other data."""
  parser.add_argument("--root", type=pathlib.Path, help=root_help)
  parser.add_argument("--validation-fraction", type=float, default=None,
                      help="share of repositories held out for validation (default 0.05; gin "
                      "code_t5.flcc_dataset.validation_fraction)")
  parser.add_argument("--test-fraction", type=float, default=None,
                      help="share held out for test (default 0.05)")
  parser.add_argument("--prepared-dir", type=pathlib.Path, default=None,
                      help="where prepared TFRecord shards are cached (default "
                      "$CODE_T5_CACHE/prepared, else $XDG_CACHE_HOME/code_t5/prepared, else "
                      "~/.cache/code_t5/prepared; gin code_t5.flcc_dataset.prepared_dir)")
  parser.add_argument("--held-out-root", type=pathlib.Path, action="append", default=[],
                      metavar="ROOT", help="drop the train files that hold near-copies of this "
                      "FLCC root's validation or test files (half of one file's long lines or "
                      "more: vendored or backported code), so that it stays unseen; repeatable "
                      "(gin code_t5.flcc_dataset.held_out_roots)")


def check_root(root, flag: str = "--root") -> None:
  """LaunchError (one line) unless `root` (None: the default, dataset-dev) is an FLCC root."""
  if root is None:
    return
  try:
    flcc.check_root(pathlib.Path(root).expanduser())
  except flcc.FlccError as e:
    raise LaunchError(f"{flag}: {e}") from None


def check_devices(run: str) -> None:
  """LaunchError (one line) where `run` (a runs/*.gin name) asks for devices this machine lacks:
  TensorFlow then placed the mesh on the CPU without a word (`--run gpu` trained there, and
  `--run tpu_v3_8` too, its bfloat16 made float32: helper-44's audit)."""
  if run.startswith("tpu"):
    raise LaunchError(f"--run {run}: a TPU run is Mesh TF's command run with --tpu=<name> "
                      "--gcp_project=... --tpu_zone=... and a gs:// --model_dir; add --dry-run "
                      "to print the command")
  if run.startswith("gpu"):
    wanted = int(run.partition("_x")[2] or 1)
    found = len(glob.glob("/dev/nvidia[0-9]*"))
    if not found and os.path.exists("/dev/dxg"):
      return  # WSL 2 shows its GPUs through /dev/dxg alone: not counted here
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:  # (TensorFlow sees these alone; "" or "-1": none)
      found = min(found, len([d for d in visible.split(",") if d.strip() not in ("", "-1")]))
    if found < wanted:
      raise LaunchError(f"--run {run} needs {wanted} NVIDIA GPU{'s' if wanted > 1 else ''}, and "
                        f"this machine has {found or 'none'} (/dev/nvidia*"
                        f"{', CUDA_VISIBLE_DEVICES' if visible is not None else ''}): TensorFlow "
                        "would run it on the CPU; use --run cpu (cpu_x2 and cpu_x4 split the CPU "
                        "into devices as gpu_x2 and gpu_x4 do GPUs)")


def check_held_out_roots(roots) -> None:
  for root in roots or ():
    check_root(root, "--held-out-root")


def check_gin_params(params: Sequence[str]) -> None:
  """LaunchError (one line) for a --gin-param gin cannot parse: the trainer refused it in a
  traceback, after beginning the model dir (helper-19's audit). Whether the names it binds exist
  is the trainer's to say (it knows the configurables)."""
  for param in params:
    problem = operative_config.unparsable(param)
    if problem:
      raise LaunchError(f"--gin-param {errors.printable(param)[:200]!r}: gin cannot read it "
                        f"({problem}); give a binding such as \"name.param = value\"")


def dataset_gin_params(root=None, validation_fraction=None, test_fraction=None,
                       prepared_dir=None, held_out_roots=()) -> List[str]:
  """gin bindings of `code_t5.flcc_dataset` for the dataset flags that were given."""
  params = []
  for name, value in (("root", root), ("prepared_dir", prepared_dir)):
    if value is not None:
      params.append(f"code_t5.flcc_dataset.{name} = "
                    f"{str(pathlib.Path(value).expanduser().resolve())!r}")
  for name, value in (("validation_fraction", validation_fraction),
                      ("test_fraction", test_fraction)):
    if value is not None:
      params.append(f"code_t5.flcc_dataset.{name} = {float(value)!r}")
  if held_out_roots:
    roots = [str(pathlib.Path(r).expanduser().resolve()) for r in held_out_roots]
    params.append(f"code_t5.flcc_dataset.held_out_roots = {roots!r}")
  return params


# Every checkpoint variable but the global step and the optimizer's slots ("<var>_slot_vr").
_WEIGHTS_ONLY = r"^(?!global_step$)(?!.*_slot_[a-z]+$)"


def _checkpoint_prefix(path: pathlib.Path) -> pathlib.Path:
  """`--init-from`'s checkpoint: a prefix given as is, or a model dir's newest checkpoint."""
  try:
    return pathlib.Path(checkpoints.find_checkpoint(path)).resolve()
  except checkpoints.ConvertError as error:
    raise LaunchError(f"--init-from: {error}") from None


def _trained_task(checkpoint_prefix: pathlib.Path) -> Optional[str]:
  """The task the model of a checkpoint was trained on, from the operative_config.gin beside it
  (None when there is none or it does not say)."""
  try:
    return operative_config.OperativeConfig.of_model_dir(checkpoint_prefix.parent).task()
  except (OSError, ValueError, errors.UserError):
    return None


# TensorFlow's Saver names each checkpoint in the model dir's `checkpoint` state file.
_CHECKPOINT_NAME = re.compile(r"model\.ckpt-\d+")
# The folder TensorFlow's Saver writes a checkpoint's shards into ("<prefix>_temp/part-...") and
# renames them out of: left where a save failed.
_UNFINISHED_SAVE = re.compile(r"model\.ckpt-\d+_temp")


def _checkpoint_state_paths(text: str) -> List[str]:
  """The paths a `checkpoint` state file names, read as TensorFlow reads it: protobuf's text
  format (`text_format.Merge` into tensorflow.CheckpointState, in
  checkpoint_management.get_checkpoint_state), so single quotes, escapes, adjacent strings and
  list syntax count as they do there. ValueError where it does not parse."""
  from google.protobuf import descriptor_pb2  # pylint: disable=g-import-not-at-top
  from google.protobuf import descriptor_pool  # pylint: disable=g-import-not-at-top
  from google.protobuf import message_factory  # pylint: disable=g-import-not-at-top
  from google.protobuf import text_format  # pylint: disable=g-import-not-at-top
  # tensorflow/python/training/checkpoint_state.proto, built here: its module imports TensorFlow.
  proto = descriptor_pb2.FileDescriptorProto(name="checkpoint_state.proto", package="tensorflow",
                                             syntax="proto3")
  state = proto.message_type.add(name="CheckpointState")
  for number, (name, kind, repeated) in enumerate([
      ("model_checkpoint_path", "TYPE_STRING", False),
      ("all_model_checkpoint_paths", "TYPE_STRING", True),
      ("all_model_checkpoint_timestamps", "TYPE_DOUBLE", True),
      ("last_preserved_timestamp", "TYPE_DOUBLE", False)], start=1):
    state.field.add(name=name, number=number, type=getattr(descriptor_pb2.FieldDescriptorProto,
                                                           kind),
                    label=descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED if repeated
                    else descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
  pool = descriptor_pool.DescriptorPool()
  pool.Add(proto)
  message = message_factory.GetMessageClass(
      pool.FindMessageTypeByName("tensorflow.CheckpointState"))()
  try:
    text_format.Merge(text, message)
  except text_format.ParseError as e:
    raise ValueError(str(e)) from None
  return ([message.model_checkpoint_path] if message.model_checkpoint_path else []) + list(
      message.all_model_checkpoint_paths)


def check_model_dir(model_dir: pathlib.Path) -> None:
  """LaunchError (one line) unless the model dir a training or eval is about to write in holds
  what runs write there, and nothing that would lead them elsewhere: the model dir may be a
  stranger's. Mesh TF, TensorFlow and the launcher write through a link at any name they write
  (the lock, a log, the operative config, a command, an eval's decodes); a FIFO where they read
  blocks them for good; TensorFlow's Saver restores, then deletes, the checkpoints its
  `checkpoint` file names, wherever they are; and its reader trusts what an index claims."""
  if not model_dir.exists():
    return
  for entry, _ in stranger_paths.walk(model_dir):
    mode = entry.stat(follow_symlinks=False).st_mode
    if stat.S_ISLNK(mode):
      raise LaunchError(f"{entry.path} is a link: code-t5 trains and evaluates in a model dir "
                        "that holds no links (runs write through them); remove it")
    if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
      raise LaunchError(f"{entry.path} is not a regular file or folder: remove it")
  state = model_dir / "checkpoint"
  if state.exists():
    _check_checkpoint_state(model_dir, state)
  # TensorFlow's reader trusts an index (checkpoints.check_checkpoint): a stranger's resumed or
  # judged checkpoint claiming a 2 TiB embedding was an out-of-memory error or an abort
  # (helper-20's audit); --init-from's was checked already.
  for index in sorted(model_dir.glob("model.ckpt-*.index")):
    checkpoints.check_checkpoint(str(index)[:-len(".index")],
                                 lambda message: LaunchError(f"--model-dir: {message}"))


def _check_checkpoint_state(model_dir: pathlib.Path, state: pathlib.Path) -> None:
  """LaunchError unless the `checkpoint` state file names only model_dir's own checkpoints."""
  try:
    text = stranger_paths.read_regular(state, 1 << 20).decode("utf-8")
  except (OSError, UnicodeDecodeError) as e:
    raise LaunchError(f"{state} cannot be read ({e}): remove it (the newest checkpoint is "
                      "found without it)") from None
  try:
    paths = _checkpoint_state_paths(text)
  except ValueError as e:
    raise LaunchError(f"{state} is not a checkpoint state TensorFlow reads ({e}): remove it (the "
                      "newest checkpoint is found without it)") from None
  for path in paths:
    if not (_CHECKPOINT_NAME.fullmatch(path) or (
        os.path.isabs(path) and _CHECKPOINT_NAME.fullmatch(os.path.basename(path))
        and stranger_paths.same_or_inside(os.path.dirname(path), model_dir)
        and stranger_paths.same_or_inside(model_dir, os.path.dirname(path)))):
      raise LaunchError(f"{state} names {path[:200]!r}, not a checkpoint of {model_dir} "
                        f"(TensorFlow would restore it, then delete it): remove {state}; the "
                        "newest checkpoint is found without it")


def latest_step(model_dir: pathlib.Path) -> Optional[int]:
  """The step of the newest checkpoint in model_dir (None if there is none)."""
  steps = [int(m.group(1)) for p in model_dir.glob("model.ckpt-*.index")
           if (m := re.search(r"model\.ckpt-(\d+)\.index$", p.name))]
  return max(steps) if steps else None


def _flag_value(command: Sequence[str], flag: str) -> Optional[str]:
  """The value of the last `--flag=value` in a command (None if absent)."""
  values = [c[len(flag) + 1:] for c in command if c.startswith(flag + "=")]
  return values[-1] if values else None


@dataclasses.dataclass(frozen=True)
class RunShape:
  """What a training run's operative_config.gin says about its size: batch and lengths."""
  sequences: int  # per step, all replicas
  lengths: Dict[str, int]  # per feature (inputs, targets), packed
  train_steps: Optional[int]
  batch_binding: tuple  # utils.run.batch_size as bound, e.g. ("tokens_per_batch", 65536)
  task: Optional[str] = None  # the task it trains on (None when not recorded)

  @property
  def token_slots(self) -> int:
    """Token slots per step: sequences x (inputs + targets lengths), padding included.

    A decoder-only (delimited_lm) model reads inputs and targets as one sequence of that length.
    """
    return self.sequences * sum(self.lengths.values())

  def describe(self) -> str:
    return (f"{self.sequences} sequences x ({'+'.join(str(v) for v in self.lengths.values())}) "
            f"= {self.token_slots:,} token slots per step (utils.run.batch_size = "
            f"{self.batch_binding!r})")


def run_shape(model_dir: pathlib.Path, written_after: float = 0.0) -> Optional[RunShape]:
  """The shape of the run that wrote model_dir/operative_config.gin at or after `written_after`.

  Mesh TF writes that file once the training session exists, before the first step; None while
  it is missing, older than the run, or not readable.
  """
  from code_t5.training import operative_config  # pylint: disable=g-import-not-at-top
  path = model_dir / operative_config.FILE_NAME
  try:
    if path.stat().st_mtime < written_after - 1:  # -1: coarse file system clocks
      return None
    config = operative_config.OperativeConfig(path)
    lengths = config.value("run.sequence_length")
    method, value = config.value("run.batch_size")
    mesh_shape = config.value("run.mesh_shape", "") or ""
    train_steps = config.value("run.train_steps")
    task = config.task()
  except (OSError, ValueError, TypeError, errors.UserError):
    return None
  if isinstance(lengths, int):
    lengths = {"inputs": lengths, "targets": lengths}
  if not isinstance(lengths, dict) or not lengths:
    return None
  # Data-parallel replicas: the size of the mesh's "batch" dimension (Mesh TF's default layout).
  replicas = int(m.group(1)) if (m := re.search(r"\bbatch:(\d+)", str(mesh_shape))) else 1
  sequences = {"sequences_per_batch": value, "tokens_per_batch": value // max(lengths.values()),
               "sequences_per_replica": value * replicas,
               "tokens_per_replica": value // max(lengths.values()) * replicas}.get(method)
  if not sequences:
    return None
  return RunShape(sequences=int(sequences), lengths=dict(lengths),
                  train_steps=train_steps if isinstance(train_steps, int) else None,
                  batch_binding=(method, value), task=task)


def _duration(seconds: float) -> str:
  seconds = int(seconds)
  return (f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600
          else f"{seconds // 60}:{seconds % 60:02d}")


def _memory(num_bytes: Optional[int]) -> str:
  return "unknown" if num_bytes is None else f"{num_bytes / 2**30:.1f} GiB"


class _Progress:
  """Progress lines: step, loss, steps/s and token slots/s since the last line, ETA."""

  def __init__(self, model_dir: Optional[pathlib.Path], echo, clock=time.time,
               init_task: Optional[str] = None):
    self._model_dir, self._echo, self._clock = model_dir, echo, clock
    self._init_task = init_task  # the task --init-from's model was trained on
    self.start = clock()
    self._last = None  # (time, step) of the previous line (or of the first loss)
    self.shape: Optional[RunShape] = None
    self._saves = 0
    # The last checkpoint's (step, line), if no progress line told of it.
    self.unshown_save: Optional[Tuple[int, str]] = None

  def saved(self, line: str) -> bool:
    """A checkpoint's line (_SAVE_LINE): True for the first (show it: it says where they go); the
    others are told of in the next progress line."""
    self._saves += 1
    self.unshown_save = (None if self._saves == 1
                         else (int(_SAVE_LINE.search(line).group(1)), line))
    return self._saves == 1

  def step(self, step: int, loss: float, loss_per_byte: Optional[float] = None) -> None:
    now = self._clock()
    if self._last is None:
      self._last = (now, step)
      self._note_task_change()
      return
    then, then_step = self._last
    if now - then < _PROGRESS_SECONDS:
      return
    self._last = (now, step)
    if self.shape is None and self._model_dir is not None:
      self.shape = run_shape(self._model_dir, self.start)
    rate = (step - then_step) / (now - then)
    per_byte = "" if loss_per_byte is None else f" ({loss_per_byte:.3f}/byte)"
    parts = [f"  step {step:>6}  loss {loss:.4f}{per_byte}", f"{rate:.2f} steps/s"]
    if self.shape:
      parts.append(f"{rate * self.shape.token_slots:,.0f} tokens/s")
      if self.shape.train_steps and rate > 0:
        remaining = max(0, self.shape.train_steps - step)
        parts.append(f"ETA {_duration(remaining / rate)} to step {self.shape.train_steps}")
    if self.unshown_save is not None:
      parts.append(f"checkpoint {self.unshown_save[0]}")
      self.unshown_save = None
    self._echo("  ".join(parts) + f"  [{now - self.start:.0f} s]")

  def _note_task_change(self) -> None:
    """Says so when the run trains on another task than --init-from's model did: the weights
    come from the model, the task from this run's gin (the model file's default version unless
    `code_t5.task_name.version` is given), which is easy to miss."""
    if self._init_task is None or self._model_dir is None:
      return
    self.shape = run_shape(self._model_dir, self.start)
    if self.shape and self.shape.task and self.shape.task != self._init_task:
      self._echo(f"  note: --init-from's model was trained on {self._init_task}; this run trains "
                 f"on {self.shape.task} (--gin-param \"code_t5.task_name.version = ...\" picks "
                 "the version)")


def _exit_reason(returncode: int, signals: Sequence[int], shape: Optional[RunShape],
                 after_a_stop: str = "") -> str:
  if signals:
    return (f"stopped by {signal.Signals(signals[0]).name} (forwarded to mesh_transformer_main)"
            + (f"; {after_a_stop}" if after_a_stop else ""))
  if returncode == -signal.SIGKILL:
    batch = (f"the batch is {shape.describe()}; lower it with --gin-param \"utils.run.batch_size"
             f" = ('sequences_per_batch', {max(1, shape.sequences // 2)})\"" if shape else
             "lower the batch with --gin-param \"utils.run.batch_size = ('sequences_per_batch', "
             "N)\"")
    return (f"killed (SIGKILL), probably out of memory (peak RSS "
            f"{_memory(processes.child_peak_rss_bytes())}): {batch}")
  if returncode < 0:
    return f"killed by {signal.Signals(-returncode).name}"
  return f"exit code {returncode}"


def run(command: Sequence[str], log_path: pathlib.Path, echo=print,
        loss_table: Optional[pathlib.Path] = None, first_step: Optional[int] = None,
        env: Optional[Mapping[str, str]] = None, init_task: Optional[str] = None,
        cwd: Optional[pathlib.Path] = None, after_a_stop: str = "") -> int:
  """Runs a Mesh TF command (in `cwd`, default this process's working folder); full log to
  `log_path`, condensed progress to `echo`.

  With `loss_table`, every step's printed loss is appended to it as "step<TAB>loss", written
  through line by line (a killed run keeps its curve). Progress lines give the step, loss,
  steps/s and token slots/s since the previous line, and the ETA to the run's train_steps (both
  read from the model dir's fresh operative_config.gin).

  A code_t5 error that ends the command is raised here as a LaunchError with its message, and a
  failed write into the model dir (a full disk, named after the command's last traceback) as an
  errors.WriteError. The command runs in its own process group and dies with this process
  (processes.start_child); SIGTERM/SIGINT are forwarded to it. `env`: variables set for the
  command on top of this process's environment (they win, TF_CPP_MIN_LOG_LEVEL included).
  `init_task`: the task of the model a new run starts from (--init-from), noted at the first
  step if the run's differs.
  `after_a_stop`: what a rerun does after a signal stopped the command (said after it).
  Returns its exit status (negative: killed by that signal).
  """
  echo("$ " + " ".join(shlex.quote(c) for c in command))
  # PYTHONUTF8: gin reads gin files with open(), in the locale's encoding unless UTF-8 mode is on;
  # the model folder's gin text is checked as UTF-8 (operative_config.unsafe_statement), and under
  # a GBK locale a file read both ways hid a call from the check (helper-25's audit).
  env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": os.environ.get("TF_CPP_MIN_LOG_LEVEL", "3"),
         **(env or {}), "PYTHONUTF8": "1"}
  log_path.parent.mkdir(parents=True, exist_ok=True)
  model_dir = _flag_value(command, "--model_dir")
  progress = _Progress(pathlib.Path(model_dir) if model_dir else None, echo,
                       init_task=init_task)
  with contextlib.ExitStack() as stack:
    # Line-buffered: a killed launcher still leaves every line it read on disk.
    log = stack.enter_context(open(log_path, "a", encoding="utf-8", buffering=1))
    losses = (stack.enter_context(open(loss_table, "a", encoding="utf-8", buffering=1))
              if loss_table else None)
    forwarder = stack.enter_context(processes.forward_signals())
    process = stack.enter_context(processes.start_child(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True,
        errors="replace", cwd=cwd))
    forwarder.attach(process)
    loss_per_byte = None
    user_error = None
    # A write into the model dir that failed (a full disk): TensorFlow names the file and the
    # strerror, 27 lines below a "ResourceExhaustedError" that reads as memory (helper-54's
    # audit); that errno, raised as a WriteError once the command failed. Only one named after
    # the last traceback began explains the exit (helper-57's review: a warning the trainer went
    # on from hid the traceback of what ended it).
    write_errno = None
    in_model_dir = (re.compile(r"(?:^|[\s'\"=:])" + re.escape(model_dir.rstrip("/")) + "/")
                    if model_dir else None)
    # The shown lines of a traceback are held until its last line says what ended it: a code_t5
    # error becomes the one-line LaunchError alone, anything else is shown whole.
    held: Optional[List[str]] = None
    # A finished traceback's shown lines, shown before the next line shown, or at the end unless
    # a failed write explains them (its line comes later: the one-line WriteError says it all).
    ended: List[str] = []

    def show_ended() -> None:
      for earlier in ended:
        echo("  " + _ABSL_PREFIX.sub("", earlier).rstrip()[-300:])
      ended.clear()

    def show(line: str) -> None:
      show_ended()
      echo("  " + _ABSL_PREFIX.sub("", line).rstrip()[-300:])

    try:
      for line in process.stdout:
        log.write(line)
        if write_errno is None and in_model_dir and in_model_dir.search(line):
          write_errno = errors.write_errno_named(line)
        if m := _CHILD_USER_ERROR.match(line.rstrip()):
          user_error = m.group(1)
        if held is not None:  # inside a traceback
          if line.startswith(" "):
            if _SHOWN.search(line):
              held.append(line)
            continue
          if m:  # a code_t5 error: its message alone is raised below
            held = None
            continue
          # A forwarded Ctrl-C ends in KeyboardInterrupt: the "stopped by SIGINT" line says it
          # (the traceback's first line alone was shown: helper-19's audit).
          if not line.startswith("KeyboardInterrupt"):
            ended.extend(held)
            if _SHOWN.search(line) and not line.startswith("Traceback"):  # its last line
              ended.append(line)
              held = None
              continue
          held = None
        if line.startswith("Traceback (most recent call last):"):
          held = [line]
          write_errno = None
          continue
        if line.startswith(_TF_LOGGER_PREFIXES):
          continue
        if m := _BYTE_LOSS_LINE.match(line.rstrip()):
          loss_per_byte = float(m.group(1))
        elif m := _LOSS_LINE.search(line):
          step, loss = int(m.group(2)), float(m.group(1))
          if first_step is not None:
            # Mesh TF reads the step it prints unordered with that step's increment, so the
            # printed number is sometimes one less; one loss line per step, in order, is exact.
            step, first_step = first_step, first_step + 1
          if losses:
            losses.write(f"{step}\t{loss}" +
                         ("" if loss_per_byte is None else f"\t{loss_per_byte}") + "\n")
          # The run went on: what came before ended nothing (shown now, not hours later).
          show_ended()
          write_errno = None
          progress.step(step, loss, loss_per_byte)
        elif _SAVE_LINE.search(line):
          if progress.saved(line):
            show(line)
        elif _SHOWN.search(line) and not _DECODE_LOG.match(_ABSL_PREFIX.sub("", line)):
          show(line)
      ended.extend(held or ())  # (the output ended inside a traceback)
      process.wait()  # with SIGTERM/SIGINT still forwarded
      if not (process.returncode and write_errno is not None):
        show_ended()
      ended.clear()  # (a failed save's traceback: the WriteError below says it in one line)
      if progress.unshown_save is not None:
        show(progress.unshown_save[1])
    except BaseException:
      processes.kill_group(process)  # an error here must not leave the trainer running
      raise
  if process.returncode and user_error:
    raise LaunchError(f"{user_error} (full log: {log_path})")
  if process.returncode and write_errno is not None and not forwarder.received:
    raise errors.WriteError(f"cannot write {model_dir}: {os.strerror(write_errno)} (full log: "
                            f"{log_path})", write_errno)
  if process.returncode:
    if progress.shape is None and model_dir:
      progress.shape = run_shape(pathlib.Path(model_dir), progress.start)
    echo(f"{_exit_reason(process.returncode, forwarder.received, progress.shape, after_a_stop)}; "
         f"full log: {log_path}")
  return process.returncode


def _mean(points):
  return sum(loss for _, loss in points) / len(points)


def train_and_eval(experiment: Experiment, steps: int, evaluate: bool = True, echo=print) -> int:
  """Trains to `steps` (resuming from the newest checkpoint), plots the loss, then runs the
  line-completion eval on the points of TRAIN_EVAL_MAX_FILES validation files.

  Holds the model dir's train lock throughout: a second trainer there is refused (LockedError).
  """
  model_dir = experiment.model_dir
  check_model_dir(model_dir)
  if experiment.init_from is not None:
    # Mesh TF reads it with TensorFlow's reader, which blocks on a FIFO and trusts the index.
    checkpoints.check_checkpoint(experiment.init_from,
                                 lambda message: LaunchError(f"--init-from: {message}"))
  # A model dir that cannot be written (a file on its way, a read-only or full disk, as the lock
  # is taken or as the trainer writes): one line, not a traceback (helper-54's audit).
  with errors.writing(f"the model dir {model_dir}", model_dir, "give another --model-dir"):
    model_dir.mkdir(parents=True, exist_ok=True)
    # Two trainers on one model dir would overwrite each other's checkpoints.
    with processes.exclusive_lock(model_dir / TRAIN_LOCK, f"--model-dir {model_dir} is being "
                                  "trained"):
      try:
        return _train_and_eval(experiment, steps, evaluate, echo)
      finally:
        _remove_unfinished_saves(model_dir)


def _remove_unfinished_saves(model_dir: pathlib.Path) -> None:
  """Removes what TensorFlow's Saver left of a save that failed (a full disk): the folder
  `model.ckpt-N_temp/` it writes a checkpoint's shards into before renaming them, which no
  reader takes. Under the train lock: no save is under way."""
  for entry in os.scandir(model_dir):
    if _UNFINISHED_SAVE.fullmatch(entry.name) and entry.is_dir(follow_symlinks=False):
      shutil.rmtree(entry.path, ignore_errors=True)


def _train_and_eval(experiment: Experiment, steps: int, evaluate: bool, echo) -> int:
  from code_t5.training import curves  # pylint: disable=g-import-not-at-top  (imports TensorFlow)

  model_dir = experiment.model_dir
  resumed = latest_step(model_dir)
  # At or past --steps, Mesh TF trains nothing ("resuming from step 40, training to step 20"
  # read as a run that would go back: helper-19's audit).
  echo(f"model dir {model_dir}: " +
       (f"at step {resumed}, --steps {steps}: nothing to train (give --steps above {resumed} to "
        "train on)" if resumed is not None and resumed >= steps else
        f"resuming from step {resumed}, training to step {steps}" if resumed is not None else
        "new run" + (f" from the weights of {experiment.init_from}" if experiment.init_from
                     else "") + f", training to step {steps}"))
  init_task = (_trained_task(experiment.init_from)
               if resumed is None and experiment.init_from is not None else None)
  if resumed is None or resumed < steps:  # (else Mesh TF's start-up, ~10 s, for nothing)
    code = run(experiment.train_command(steps), model_dir / "logs" / "train.log", echo,
               loss_table=model_dir / curves.LOSS_TABLE, first_step=(resumed or 0) + 1,
               init_task=init_task, after_a_stop="a rerun resumes from the newest checkpoint")
    if code:
      return code
  losses = curves.read_loss(model_dir)
  if losses:
    png = model_dir / "loss.png"
    curves.plot_loss(model_dir, png)
    first, last = losses[:10], losses[-10:]
    if len(losses) <= len(first):  # one window: "x at steps 1-3 -> x at steps 1-3" (helper-58)
      echo(f"loss (mean over {len(first)} steps): {_mean(first):.4f} at steps "
           f"{first[0][0]}-{first[-1][0]}; curve: {png}")
    else:
      echo(f"loss (mean over {len(first)} steps): {_mean(first):.4f} at steps "
           f"{first[0][0]}-{first[-1][0]} -> {_mean(last):.4f} at steps "
           f"{last[0][0]}-{last[-1][0]}; curve: {png}")
  if not evaluate:
    return 0
  code = run(experiment.eval_command(line_completion=True, max_files=TRAIN_EVAL_MAX_FILES),
             model_dir / "logs" / "eval.log", echo)
  if not code:
    decodes = sorted(experiment.line_completion_dir().glob("*_predictions"))
    echo("eval decodes (JSON lines): " + ", ".join(str(p) for p in decodes))
  return code
