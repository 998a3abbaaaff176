"""Line completion from a trained checkpoint: `code-t5 complete`, `code-t5 export`, and the
library behind `code-t5 serve` and `code-t5 lsp`.

How a completion is made (`Completer`):

1. Once per checkpoint: its weights are written as a NumPy runtime
   (`<model_dir>/runtime/step<N>/`, code_t5/engine/runtime.py; the only step that needs TensorFlow, and
   `code-t5 pack` ships it with the weights). Once per process: the runtime is loaded (no
   TensorFlow: ~0.1 s and ~100 MB for the shipped model).
2. Per request: the context is the code before the cursor, cut from the LEFT to the model's input
   length (the last tokens are kept; one slot is the EOS the model reads after its inputs). With
   token healing (default) its last pieces are taken back and must start the completion
   (decoding.split_heal: those a whole piece would cover, spaces after code with their word).
3. Beam search (code_t5/engine/decoding.py) continues it to the end of the line: a line ends at the
   first newline in any piece, or at EOS. Lines are ranked by log-probability / sqrt(pieces),
   those that complete a half-typed word to a name the file already uses first among near
   equals (code_t5/engine/names.py); lines that cannot be valid Python at the cursor are dropped
   (code_t5/engine/line_filters.py); and where the model is not confident enough that the best
   line is exact (its confidence model, else --min-score) nothing is shown rather than a line
   it doubts.

`code-t5 export` writes Mesh TF's own SavedModel (the canonical
`python -m t5.models.mesh_transformer_main ... --gin_file=runs/export.gin` command, greedy or
Mesh TF's beam search baked in), for TF Serving and other TensorFlow users; completion does not
use it. It takes *strings* and encodes them in the graph with the task's vocabulary (+ EOS).

An empty file (or a cursor at offset 0) is not an error: the model completes from an empty
context, i.e. proposes a first line. Cursor positions are 1-based lines and columns, columns
counted in characters (code points); column len(line) + 1 is the end of the line.
"""

import dataclasses
import errno
import json
import math
import os
import pathlib
import re
import reprlib
import shutil
import signal
import sys
import time
from typing import Dict, List, Optional, Sequence, Tuple

from code_t5 import errors
from code_t5 import processes
from code_t5 import registration
from code_t5 import source_text
from code_t5 import stranger_paths
from code_t5.data import line_completion
from code_t5.data import task_names
from code_t5.engine import confidence
from code_t5.engine import copy_cache
from code_t5.engine import decoding
from code_t5.engine import encoding_memo
from code_t5.engine import imports
from code_t5.engine import line_filters
from code_t5.engine import line_retrieval
from code_t5.engine import names
from code_t5.engine import repository as repository_lib
from code_t5.engine import runtime
from code_t5.engine import saved_pieces
from code_t5.engine import scopes
from code_t5.engine import similar_code
from code_t5.engine import undefined
from code_t5.engine import wanted
from code_t5.training import checkpoints
from code_t5.training import launcher
from code_t5.training import operative_config

EXPORT_DIR = "export"
EXPORT_METADATA = "code_t5_export.json"
_EXPORT_METADATA_MAX_BYTES = 1 << 16  # the export's own is ~300 bytes
# PEP 8's 79 characters plus the newline: a whole line from the byte vocabulary.
DEFAULT_MAX_LENGTH = 80
# The longest line a completion may be, in tokens: ~200 characters of code either way (the 8k
# SentencePiece vocabulary averages 4.3 bytes per piece).
DEFAULT_MAX_TOKENS = {"pieces": 48, "bytes": 200}
DEFAULT_MIN_SCORE = float("-inf")
# Added to the score of a line the file or repository already holds (line_retrieval). Chosen
# on the site-packages corpus's 1,012 validation points: 0.5, 1 and 2 gave EM 22.7, 23.1, 23.0.
RETRIEVAL_BONUS = 1.0
# Completer.context drops the part of a line its pieces begin with when that part is at most this
# share of the context's characters: about always for the shipped model (255 pieces, ~900
# characters), rarely for a model that reads a few dozen pieces, which would lose much of them.
PARTIAL_LINE_SHARE = 1 / 8
# What a model dir says of itself beyond its checkpoint: {"name", "trained_on", "total_steps",
# "date", "min_score", "min_score_chosen_on", "confidence"}, all optional. "confidence" (weights,
# bias and "min": code_t5.engine.confidence) is the model's own gate: its completions show lines
# only where the probability that the best is exact reaches "min", unless --min-confidence or
# --min-score is given; without it, "min_score" is the gate (the --min-score used unless one is
# given).
ABOUT_FILE = "about.json"
# The model that ships with the package: the default of complete, serve, lsp and baseline.
SHIPPED_MODEL = (pathlib.Path(__file__).resolve().parent.parent / "pretrained"
                 / "causal_lm-mini-spm_dev-sitepackages")
SUPPORTED_MODEL_TYPES = ("bitransformer", "delimited_lm")


class CompletionError(errors.UserError):
  """A bad file, cursor, checkpoint or decoding option, said in one line."""


@dataclasses.dataclass(frozen=True)
class DecodeSettings:
  """How the exported graph decodes (baked in at export time; part of the export's key)."""
  beam_size: int = 1
  max_length: int = DEFAULT_MAX_LENGTH
  temperature: float = 0.0


@dataclasses.dataclass(frozen=True)
class ModelInfo:
  """What a model dir says about itself: its operative_config.gin and newest checkpoint."""
  model_dir: pathlib.Path
  step: int
  task: str
  model_type: str
  sequence_length: Dict[str, int]
  vocab_divisor: int

  @property
  def max_context_tokens(self) -> int:
    return self.sequence_length["inputs"] - 1  # the export appends EOS to the inputs


# ------------------------------------------------------------------------------------------------
# Text and cursor (pure functions).


def decode_utf8(data: bytes, name: str) -> str:
  try:
    return data.decode("utf-8")
  except UnicodeDecodeError as e:
    raise CompletionError(f"{name} is not UTF-8 text (byte 0x{data[e.start]:02x} at offset "
                          f"{e.start})") from None


# The most `complete` reads of FILE or stdin, as `serve` takes in a request (serve.py's
# MAX_REQUEST_BYTES): it read any amount, and ran out of memory with a traceback (helper-46's
# audit).
MAX_SOURCE_BYTES = 16 << 20


def read_source(path: str) -> str:
  """The text of FILE, or of stdin for "-"; one-line errors for unreadable or non-UTF-8 input,
  or for more than MAX_SOURCE_BYTES."""
  if path == "-":
    if sys.stdin is None:  # (Python's stream of a closed fd 0)
      raise CompletionError("stdin is closed: pipe the code in, or give FILE")
    data = sys.stdin.buffer.read(MAX_SOURCE_BYTES + 1)
    if len(data) > MAX_SOURCE_BYTES:
      raise CompletionError(f"stdin holds more than {MAX_SOURCE_BYTES:,} bytes, the most "
                            "`complete` reads: pipe in the code near the cursor")
    return _text_of_code(data, "stdin")
  file = pathlib.Path(path)
  if not file.exists():
    raise CompletionError(f"{path} does not exist")
  if not file.is_file():
    raise CompletionError(f"{path} is not a file")
  try:
    data = stranger_paths.read_regular(file, MAX_SOURCE_BYTES)
  except OSError as e:
    if e.errno == errno.EFBIG:
      raise CompletionError(f"{path} holds more than {MAX_SOURCE_BYTES:,} bytes, the most "
                            "`complete` reads: give a smaller file, or pipe in the code near "
                            "the cursor") from None
    raise CompletionError(f"{path} cannot be read: {e.strerror}") from None
  return _text_of_code(data, path)


def _text_of_code(data: bytes, name: str) -> str:
  # A NUL byte is no Python source (the interpreter refuses it; `code-t5 import` drops such files
  # as binary).
  nul = data.find(b"\0")
  if nul >= 0:
    raise CompletionError(f"{name} is binary, not Python source (a NUL byte at offset {nul})")
  return source_text.without_bom(decode_utf8(data, name))


_TARGET = re.compile(r"^(.*):([0-9]+):([0-9]+)$")  # not \d: it takes any script's digits


def parse_target(target: str) -> Tuple[str, Optional[int], Optional[int]]:
  """"FILE:LINE:COL" -> (FILE, LINE, COL); "FILE" or "-" -> (FILE, None, None)."""
  if not target:  # pathlib reads "" as ".", the working folder
    raise CompletionError("give FILE:LINE:COL, FILE, or - for stdin")
  m = _TARGET.match(target)
  if pathlib.Path(target).exists():
    return target, None, None
  if m:
    return m.group(1), int(m.group(2)), int(m.group(3))
  if target.startswith("-:"):  # (-:2 was "-:2 does not exist")
    raise CompletionError(f"{target}: give the cursor in stdin as -:LINE:COL, both from 1")
  # FILE:... that names an existing FILE but no cursor read above (FILE:LINE, FILE:-1:1): not
  # "FILE:... does not exist".
  if any(pathlib.Path(target[:i]).is_file() for i, c in enumerate(target) if c == ":"):
    raise CompletionError(f"{target}: give the cursor as FILE:LINE:COL, both from 1 (or FILE "
                          "with --line and --col)")
  return target, None, None


def cursor_offset(text: str, line: int, col: int, name: str = "text") -> int:
  """The character offset of 1-based (line, col); col len(line) + 1 is the end of the line. Lines
  end in "\n", "\r\n" or a lone "\r", as the LSP and Python's own reader count them (a lone "\r"
  was no line break here: helper-17's audit)."""
  # Each line with its break: the parts at the odd places.
  parts = re.split(r"(\r\n|\r|\n)", text)
  lines, breaks = parts[0::2], parts[1::2] + [""]
  where = f"{name}:{line}:{col}"
  if not 1 <= line <= len(lines):
    count = "1 line" if len(lines) == 1 else f"{len(lines)} lines, 1-{len(lines)}"
    raise CompletionError(f"{where}: line {line} is outside the file ({count})")
  content = lines[line - 1]
  if not 1 <= col <= len(content) + 1:
    count = ("0 characters, column 1" if not content else
             f"{len(content)} character{'' if len(content) == 1 else 's'}, columns "
             f"1-{len(content) + 1}")
    raise CompletionError(f"{where}: column {col} is outside line {line} ({count})")
  return sum(len(l) + len(b) for l, b in zip(lines[:line - 1], breaks)) + col - 1


def check_offset(text: str, cursor, name: str = "text") -> int:
  if isinstance(cursor, bool) or not isinstance(cursor, int):
    # As a request spells it (true, null, "2"), cut: a request's value may be megabytes, and
    # the error stays one short line.
    try:
      shown = json.dumps(cursor[:40] if isinstance(cursor, str) else cursor)
    except (TypeError, ValueError):  # not from JSON: a caller's Python value
      shown = reprlib.repr(cursor)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    raise CompletionError(f"cursor {shown} is not an integer character offset")
  if not 0 <= cursor <= len(text):
    raise CompletionError(f"cursor {cursor} is outside the {name} ({len(text)} characters, "
                          f"offsets 0-{len(text)})")
  # No line or column is there: a line inserted there split the break (helper-56's audit).
  if cursor > 0 and text[cursor - 1:cursor + 1] == "\r\n":
    raise CompletionError(f"cursor {cursor} is between the \\r and \\n of a line break: give "
                          f"{cursor - 1}, the end of the line")
  return cursor


def num_tokens(text: str, vocabulary) -> int:
  return len(vocabulary.encode(text))


def left_truncate(text: str, vocabulary, max_tokens: int) -> str:
  """The longest suffix of `text` that encodes to at most `max_tokens` tokens.

  Cuts at character boundaries (the SavedModel takes strings), so a multi-byte character is
  kept whole or dropped whole. The search window doubles from the right until it holds too many
  tokens; then the window's own last `max_tokens` pieces say where the suffix begins (one more
  encoding checks that it fits: a suffix may split into other pieces where it begins), else it
  bisects. Cost grows with the context kept, not with the file.
  """
  if max_tokens <= 0:
    return ""
  window = max(16, 4 * max_tokens)
  while True:
    low = max(0, len(text) - window)
    ids = vocabulary.encode(text[low:])
    if len(ids) > max_tokens:
      break
    if low == 0:
      return text
    window *= 2
  # text[low:] is too long (`ids`), text[len(text):] == "" fits: find the first start that fits.
  high = len(text)
  start = _start_of_last_pieces(text, ids[-max_tokens:], vocabulary)
  if (start is not None and low < start < high
      and num_tokens(text[start:], vocabulary) <= max_tokens):
    return text[start:]
  while high - low > 1:
    mid = (low + high) // 2
    if num_tokens(text[mid:], vocabulary) <= max_tokens:
      high = mid
    else:
      low = mid
  return text[high:]


def _start_of_last_pieces(text: str, last_ids: Sequence[int], vocabulary) -> Optional[int]:
  """The offset in `text` where `last_ids`, the last pieces of the encoding of an end of `text`,
  begin (after a character whose bytes they begin inside); None for a vocabulary that does not
  say what bytes its ids stand for, or whose pieces do not join to the text
  (code_t5.engine.tokenizers' do)."""
  piece_of = getattr(vocabulary, "piece_of", None)
  if piece_of is None:
    return None
  pieces = [piece_of(i) for i in last_ids]
  if any(piece is None for piece in pieces):
    return None
  tail = b"".join(pieces).decode("utf-8", errors="ignore")
  return len(text) - len(tail) if text.endswith(tail) else None


def newline_token(vocabulary) -> Optional[int]:
  """The id that decodes to exactly "\\n", if the vocabulary has one (the byte vocabulary does)."""
  try:
    ids = list(vocabulary.encode("\n"))
    if len(ids) == 1 and vocabulary.decode(ids) == "\n":
      return int(ids[0])
  except Exception:  # pylint: disable=broad-except  (a vocabulary that cannot say: no early stop)
    pass
  return None


# ------------------------------------------------------------------------------------------------
# The model dir: operative config, checkpoint, vocabulary.


def model_info(model_dir: pathlib.Path) -> ModelInfo:
  """Reads the model dir; one-line errors for a missing dir, no checkpoints, no operative config."""
  model_dir = pathlib.Path(model_dir)
  if not model_dir.is_dir():
    raise CompletionError(f"--checkpoint {model_dir} is not a directory")
  step = launcher.latest_step(model_dir)
  if step is None:
    raise CompletionError(f"--checkpoint {model_dir} has no checkpoints (model.ckpt-*.index): "
                          "train first or give the model dir that holds them")
  config = operative_config.OperativeConfig.of_model_dir(model_dir)
  if not config.exists:
    raise CompletionError(f"{config.path} is missing: --checkpoint must be a model dir written by "
                          "mesh_transformer_main training")
  task = config.task()
  if task is None:
    raise CompletionError(f"{config.path} names no task (get_vocabulary.mixture_or_task_name)")
  sequence_length = config.sequence_length()
  if sequence_length is None:
    raise CompletionError(f"{config.path} binds no utils.run.sequence_length")
  return ModelInfo(model_dir=model_dir, step=step, task=task,
                   model_type=config.value("run.model_type", "bitransformer", kind=str),
                   sequence_length=sequence_length,
                   vocab_divisor=config.value("Unitransformer.vocab_divisor", 128, kind=int) or 1)


def task_vocabulary(info: ModelInfo):
  """The inputs vocabulary of the task the checkpoint was trained on (from the seqio registry)."""
  import seqio  # pylint: disable=g-import-not-at-top  (imports TensorFlow)
  from code_t5 import registration  # pylint: disable=g-import-not-at-top
  registration.register()  # the tasks (`import code_t5` does not in the `code-t5` command)
  try:
    task = seqio.get_mixture_or_task(info.task)
  except ValueError:
    raise CompletionError(
        f"{info.model_dir / 'operative_config.gin'} names task {info.task!r}, which is not a "
        "registered seqio task or mixture (import the module that registers it)") from None
  features = task.output_features
  feature = features.get("inputs") or features["targets"]
  return feature.vocabulary


def describe_vocabulary(vocabulary) -> str:
  return f"{type(vocabulary).__name__}, {vocabulary.vocab_size} ids"


def check_vocabulary(info: ModelInfo, vocabulary) -> None:
  """The checkpoint's embedding must have the rows the task's vocabulary needs."""
  checkpoint = str(info.model_dir / f"model.ckpt-{info.step}")
  shapes = checkpoints.open_checkpoint(checkpoint, CompletionError).get_variable_to_shape_map()
  rows = [shape[0] for name, shape in shapes.items()
          if name.split("/")[-1] == "embedding" and len(shape) == 2]
  if not rows:
    return
  size = vocabulary.vocab_size
  divisor = max(1, int(info.vocab_divisor))
  needed = -(-size // divisor) * divisor
  if rows[0] != needed:
    raise CompletionError(
        f"{checkpoint} has a {rows[0]}-row embedding, but task {info.task!r}'s vocabulary "
        f"({describe_vocabulary(vocabulary)}) needs {needed}: the checkpoint was trained with "
        "another vocabulary")


EXPORT_RUNS = ("cpu", "gpu")


def check_run(run: str) -> None:
  if run not in EXPORT_RUNS:
    raise CompletionError(f"--run {run!r}: an export serves one request at a time on one "
                          f"device: use {' or '.join(EXPORT_RUNS)}")


def check_settings(info: ModelInfo, settings: DecodeSettings) -> None:
  if info.model_type not in SUPPORTED_MODEL_TYPES:
    raise CompletionError(f"model type {info.model_type!r} ({info.model_dir}) is not supported: "
                          f"completion needs one of {', '.join(SUPPORTED_MODEL_TYPES)}")
  if settings.beam_size < 1:
    raise CompletionError(f"--beam-size {settings.beam_size} must be 1 or more")
  if settings.max_length < 1:
    raise CompletionError(f"--max-length {settings.max_length} must be 1 or more")
  if not 0 <= settings.temperature < math.inf:  # (NaN too: Mesh TF's gin failed on it)
    raise CompletionError(f"--temperature {settings.temperature:g} must be 0 (greedy) or more")
  if settings.beam_size > 1 and settings.temperature:
    raise CompletionError("--beam-size > 1 needs --temperature 0 (Mesh TF's beam search does "
                          "not sample)")
  if info.model_type == "delimited_lm":
    if settings.beam_size > 1:
      raise CompletionError(
          "--beam-size > 1: Mesh TF has no beam search for decoder-only prefix LMs "
          "(delimited_lm); use --beam-size 1 (greedy) or --temperature")
    if settings.max_length > info.sequence_length["targets"]:
      raise CompletionError(
          f"--max-length {settings.max_length} exceeds the decoder-only model's targets length "
          f"({info.sequence_length['targets']})")


def default_max_length(info: ModelInfo) -> int:
  """The --max-length of an export that gives none: DEFAULT_MAX_LENGTH, or a decoder-only model's
  targets length if shorter (check_settings refuses more: the first run's is 64)."""
  if info.model_type == "delimited_lm":
    return min(DEFAULT_MAX_LENGTH, info.sequence_length["targets"])
  return DEFAULT_MAX_LENGTH


# ------------------------------------------------------------------------------------------------
# Export: the canonical mesh_transformer_main command, once per checkpoint and settings.


def export_key(info: ModelInfo, settings: DecodeSettings, run: str) -> str:
  return (f"step{info.step}-beam{settings.beam_size}-len{settings.max_length}"
          f"-temp{settings.temperature:g}-{run}")


def _clipped(statement: str, limit: int = 100) -> str:
  """A statement as an error quotes it: escaped (a stranger wrote it), cut after `limit`."""
  shown = repr(statement[:limit])[1:-1]
  return shown + "..." if len(statement) > limit else shown


def _check_gin_from(model_dir: pathlib.Path, source: str, text: str) -> None:
  """Gin text that the model dir supplies (its operative config, or its recorded command's
  bindings and files) must not import code or read files beyond what training records: the
  model dir may be a stranger's (operative_config.unsafe_statement)."""
  statement = operative_config.unsafe_statement(text)
  if statement:
    raise CompletionError(
        f"{source} has `{_clipped(statement)}`, which no code-t5 training writes and "
        f"which gin would carry out: {model_dir} is not exported; remove that line if you trust "
        "it, or give `code-t5 export` --model and --size")


def experiment_from_model_dir(model_dir: pathlib.Path, run: str = "cpu", model=None, size=None,
                              gin_params: Sequence[str] = ()
                              ) -> Tuple[launcher.Experiment, List[str]]:
  """The Experiment that trained model_dir (from its recorded training command) on `run`.

  Returns the Experiment and any further gin files the training command used. model/size
  override what is recorded; gin_params are added after the recorded ones.
  """
  try:
    recorded = launcher.recorded_training(model_dir)
  except launcher.LaunchError as e:
    raise CompletionError(f"{e}; or give `code-t5 export` --model and --size") from None
  model = model or (recorded and recorded.model)
  size = size or (recorded and recorded.size)
  if model is None or size is None:
    config = operative_config.OperativeConfig.of_model_dir(model_dir)
    if not model and not size and config.exists:
      # E.g. a model dir copied without commands/: operative_config.gin is the whole composition.
      _check_gin_from(model_dir, str(config.path), operative_config.read_text(config.path))
      return _OperativeConfigExperiment(run=run, model_dir=model_dir,
                                        gin_params=list(gin_params)), []
    raise CompletionError(
        f"cannot tell which model and size {model_dir} holds (no recorded training command "
        f"naming models/*.gin and sizes/*.gin in {model_dir / 'commands'}, and no "
        f"{operative_config.FILE_NAME}): give `code-t5 export` --model and --size, or copy the "
        f"model dir's commands/ or {operative_config.FILE_NAME} along with its checkpoints")
  # How training ran (its steps, devices, starting weights, data) is not the model: an export
  # replaces it.
  kept = recorded.model_params() if recorded else []
  extra_files = list(recorded.extra_gin_files) if recorded else []
  recorded_in = model_dir / "commands"
  for param in kept:
    _check_gin_from(model_dir, f"a --gin_param of the command recorded in {recorded_in}", param)
  found = []
  for name in extra_files:
    # mesh_transformer_main reads it from --gin_location_prefix, else as given; gin takes a name
    # that is no file to its file readers, which import the package a `pkg/sub/x.gin` names
    # (helper-20's audit). So the file is found here, checked, and given by its absolute path
    # (the export runs in an empty working folder).
    path = next((p for p in (launcher.GIN_CONFIGS / name, pathlib.Path(name)) if p.is_file()),
                None)
    if path is None:
      raise CompletionError(
          f"{_clipped(name)}, a --gin_file of the command recorded in {recorded_in}, is no file "
          f"here: {model_dir} is not exported; give `code-t5 export` --model and --size")
    _check_gin_from(model_dir, f"{path} (a --gin_file of the command recorded in "
                    f"{recorded_in})", operative_config.read_text(path))
    found.append(str(path.resolve()))
  try:
    experiment = launcher.Experiment(model=model, size=size, run=run,
                                     vocab=recorded.vocab if recorded else "byte",
                                     model_dir=model_dir, gin_params=kept + list(gin_params))
  except launcher.LaunchError as e:
    raise CompletionError(f"{model_dir}: {e}") from None
  return experiment, found


class _OperativeConfigExperiment(launcher.Experiment):
  """The training composition as Mesh TF recorded it: `<model_dir>/operative_config.gin` (every
  binding training used, --gin_param overrides included) instead of dataset/model/size files,
  then the run file, whose device bindings replace the recorded ones."""

  def gin_files(self) -> List[str]:
    return [str((self.model_dir / operative_config.FILE_NAME).resolve()), f"runs/{self.run}.gin"]


def decode_bindings(info: ModelInfo, settings: DecodeSettings, vocabulary) -> List[str]:
  """Gin bindings that bake the decoding settings (and the newline stop) into the export."""
  stop = newline_token(vocabulary)
  bindings = [
      f"utils.run.export_checkpoint_step = {info.step}",
      f"Bitransformer.decode.beam_size = {settings.beam_size}",
      f"Bitransformer.decode.temperature = {float(settings.temperature)!r}",
      f"Bitransformer.decode.max_decode_length = {settings.max_length}",
      # Beam search decodes min(dim, multiplier * input length + constant) tokens: make it the dim.
      "Bitransformer.decode.decode_length_multiplier = 0.0",
      f"Bitransformer.decode.decode_length_constant = {settings.max_length}",
      f"Unitransformer.sample_autoregressive.temperature = {float(settings.temperature)!r}",
      f"Unitransformer.sample_autoregressive.max_steps = {settings.max_length}",
  ]
  if stop is not None:
    # Stop decoding at the first newline: the completion is one line.
    bindings.append(f"Unitransformer.sample_autoregressive.stop_at_token = {stop}")
    if settings.beam_size > 1:
      bindings.append(f"mesh_tensorflow.beam_search.beam_search.eos_id = {stop}")
  return bindings


def _metadata(info: ModelInfo, settings: DecodeSettings, vocabulary, run: str) -> dict:
  return {"task": info.task, "vocabulary": describe_vocabulary(vocabulary),
          "model_type": info.model_type, "sequence_length": info.sequence_length,
          "step": info.step, "run": run, "decode": dataclasses.asdict(settings),
          "newline_token": newline_token(vocabulary)}


def find_export(info: ModelInfo, settings: DecodeSettings, run: str = "cpu"
                ) -> Optional[pathlib.Path]:
  path = info.model_dir / EXPORT_DIR / export_key(info, settings, run)
  return path if (path / "saved_model.pb").exists() else None


def check_export(path: pathlib.Path, info: ModelInfo, vocabulary) -> None:
  """An export must have been made for the task/vocabulary the model dir names now."""
  meta_path = path / EXPORT_METADATA
  try:  # the model folder may be a stranger's: a FIFO there blocked read_text for good
    meta = json.loads(stranger_paths.read_regular(meta_path, _EXPORT_METADATA_MAX_BYTES)
                      .decode("utf-8"))
  except (OSError, ValueError, RecursionError):  # RecursionError: JSON nested past the limit
    meta = None
  if not isinstance(meta, dict):
    raise CompletionError(f"{meta_path} is missing, unreadable or not a JSON object: remove "
                          f"{path} to export again")
  expected = {"task": info.task, "vocabulary": describe_vocabulary(vocabulary),
              "sequence_length": info.sequence_length}
  for key, value in expected.items():
    if meta.get(key) != value:
      raise CompletionError(
          f"export {path} was made with {key} {meta.get(key)!r}, but "
          f"{info.model_dir / 'operative_config.gin'} gives {value!r}: remove the export to "
          "make a new one")


def export(model_dir: pathlib.Path, settings: DecodeSettings = DecodeSettings(), run: str = "cpu",
           model=None, size=None, gin_params: Sequence[str] = (), echo=print,
           vocabulary=None, reused=lambda path: None) -> pathlib.Path:
  """Exports model_dir's newest checkpoint as a SavedModel (reused if it exists, and then
  reused(path) is called); returns it."""
  check_run(run)
  info = model_info(model_dir)
  check_settings(info, settings)
  vocabulary = vocabulary or task_vocabulary(info)
  check_vocabulary(info, vocabulary)
  existing = find_export(info, settings, run)
  if existing:
    check_export(existing, info, vocabulary)
    reused(existing)
    return existing
  if info.model_dir.resolve() == SHIPPED_MODEL:
    # Its folder is the installed package's (in a checkout, tracked files): nothing is written
    # there.
    raise CompletionError(f"{model_dir} is the model shipped in the package, which export would "
                          f"write into: copy it (cp -r {SHIPPED_MODEL} my-model) and export the "
                          "copy")
  with errors.writing(f"the export of {info.model_dir}", info.model_dir,
                      "copy the model dir where you can write and export the copy"):
    return _export_afresh(info, settings, run, model, size, gin_params, echo, vocabulary)


def _export_afresh(info: ModelInfo, settings: DecodeSettings, run: str, model, size,
                   gin_params: Sequence[str], echo, vocabulary) -> pathlib.Path:
  # Absolute: the export runs in an empty working folder (below).
  experiment, extra_files = experiment_from_model_dir(info.model_dir.resolve(), run, model, size,
                                                      gin_params)
  key = export_key(info, settings, run)
  # Written (and leftovers removed) only inside the model folder, which may be a stranger's:
  # never through a link named export, export/<key>, logs or logs/export.log, nor through one in
  # commands/, where mesh_transformer_main records its command at the first free command[.N]
  # (helper-24's audit: it wrote into a folder of the user's that commands linked to).
  exports = stranger_paths.inside(info.model_dir, EXPORT_DIR)
  final = stranger_paths.inside(info.model_dir, EXPORT_DIR, key)
  log = stranger_paths.inside(info.model_dir, "logs", "export.log")
  commands = stranger_paths.inside(info.model_dir, launcher.COMMANDS_DIR)
  if commands.is_dir():
    for entry in os.scandir(commands):
      stranger_paths.inside(commands, entry.name)
  processes.remove_stale_temporaries(exports, echo)  # of exports that were killed
  tmp = stranger_paths.inside(exports, processes.temporary_name(key)).resolve()
  shutil.rmtree(tmp, ignore_errors=True)
  command = experiment.export_command(tmp, extra_gin_files=extra_files,
                                      extra_gin_params=decode_bindings(info, settings, vocabulary))
  echo(f"exporting {info.model_dir} step {info.step} ({key}); log: {log}")
  start = time.time()
  # In an empty folder: gin looks for a relative --gin_file or include in the working folder
  # first, so from inside a stranger's model dir its dataset.gin or runs/cpu.gin would be read
  # (and their imports run) instead of the project's. Inside the temporary, so that a killed
  # export's goes with it (one in $TMPDIR stayed there for good: helper-39's audit).
  # The temporary goes however the export ends: a full disk's error left 8 MB of it there, and
  # the disk full (helper-54's audit).
  try:
    empty = tmp / "working_folder"
    empty.mkdir(parents=True)
    code = launcher.run(command, log, echo, cwd=empty, after_a_stop="nothing was exported")
    if code in (-signal.SIGINT, -signal.SIGTERM):  # forwarded from this process (launcher.run)
      # This process ends as that signal ends it (a Ctrl-C: KeyboardInterrupt, status 130), not
      # with an error about the export (status 2: helper-38's audit).
      shutil.rmtree(tmp, ignore_errors=True)
      signal.raise_signal(-code)
    written = [p for p in tmp.glob("*") if (p / "saved_model.pb").exists()] if tmp.exists() else []
    if code or len(written) != 1:
      raise CompletionError(f"mesh_transformer_main export exited with status {code} and wrote "
                            f"{len(written)} SavedModels; full log: {log}")
    (written[0] / EXPORT_METADATA).write_text(
        json.dumps(_metadata(info, settings, vocabulary, run), indent=1) + "\n", encoding="utf-8")
    try:
      written[0].rename(final)
    except OSError:
      if not (final / "saved_model.pb").exists():  # else a concurrent export got there first
        raise
  finally:
    shutil.rmtree(tmp, ignore_errors=True)
  echo(f"exported in {time.time() - start:.0f} s: {final}")
  return final


# ------------------------------------------------------------------------------------------------
# Loading once, completing many.


@dataclasses.dataclass(frozen=True)
class Candidate:
  text: str  # what goes in at the cursor, no newline: the rest of the line, or of its part before
  # what stays after the cursor
  score: float  # length-normalised log-probability (higher is better)
  # The characters after the cursor that `text` takes the place of (closing brackets the line
  # writes itself: `self) -> None:` at `def push(|)` replaces the ")"); 0 for most lines.
  replaces: int = 0


@dataclasses.dataclass(frozen=True)
class Completion:
  candidates: Tuple[Candidate, ...]  # best first; empty when nothing is worth showing
  context_chars: int  # characters of code before the cursor the model read
  truncated: bool  # whether the context was cut on the left
  ms: float

  # The probability that the best kept line is exact (code_t5.engine.confidence), whether or not
  # it is shown; None when the model has no confidence model or no line was kept.
  confidence: Optional[float] = None
  # When no line is shown, what hid them: "empty" (the model wrote no text), "complete" (its best
  # line is the closers after the cursor: complete.ends_as_it_stands), "filters",
  # "unlikely" (the confidence gate shows no line the engine ranks as unlikely), "confidence" or
  # "score" (the gates), for `complete` to name the flag that shows them: --no-filters shows
  # what only the filters hid.
  hidden_by: str = ""

  @property
  def completion(self) -> str:
    """The best candidate's text ("" when there is none)."""
    return self.candidates[0].text if self.candidates else ""

  def reply(self) -> dict:
    """The JSON object `complete --json` prints and `serve` answers."""
    return {"completion": self.completion,
            "replaces": self.candidates[0].replaces if self.candidates else 0,
            "completions": [{"text": c.text, "score": round(c.score, 4), "replaces": c.replaces}
                            for c in self.candidates],
            "confidence": None if self.confidence is None else round(self.confidence, 4),
            "context_chars": self.context_chars, "truncated": self.truncated,
            "ms": round(self.ms, 1)}


@dataclasses.dataclass(frozen=True)
class EngineOptions:
  """How `Completer` searches and filters lines (per process; nothing is baked into files)."""
  top: int = 5  # candidates returned
  beam_size: int = 5  # open lines kept per step (at least `top`)
  max_tokens: Optional[int] = None  # a line still open after this many tokens is dropped
  # (default: DEFAULT_MAX_TOKENS of the model's vocabulary)
  heal: bool = True  # token healing at the cursor
  filters: bool = True  # drop lines that cannot be valid Python here (code_t5.engine.line_filters)
  # a half-typed word: prefer lines completing it to a name the file uses (code_t5.engine.names);
  # and lines binding a name the file reads and nothing binds (code_t5.engine.wanted)
  names: bool = True
  min_score: Optional[float] = None  # show nothing scoring below this (decoding.Line.score);
  # None: the model's own gate (ABOUT_FILE in its dir), else DEFAULT_MIN_SCORE
  min_confidence: Optional[float] = None  # show nothing where the probability that the best
  # line is exact is below this (code_t5.engine.confidence; the model must have one); None: the
  # model's own gate
  retrieval: bool = True  # also score whole lines the file and repository hold that fit the
  # cursor (code_t5.engine.line_retrieval), ranked with a bonus
  below: bool = True  # the file's lines below the cursor's line count as the file's, for the
  # cache and retrieval, and a model trained to read them (cursor_lm v4) reads their start first
  cache: bool = True  # mix a copy cache of the file above the line and the repository's other
  # files into the model's probabilities (code_t5.engine.copy_cache)
  similar: bool = True  # the model first reads the code most like the lines above the cursor,
  # from the file below and the repository (code_t5.engine.similar_code)
  whole_lines: bool = True  # the context starts at a line's start (Completer.context); off: at
  # its last pieces that fit, as line_completion's tasks cut it


@dataclasses.dataclass(frozen=True)
class Ranking:
  """What `Completer.rank` read and found at a cursor."""
  context: str  # the code the model read
  lines: List[Tuple[decoding.Line, Optional[str]]]  # best first, each with the line_filters
  # reason that drops it (None: it passes, or filters are off)
  where: Optional[line_filters.LineContext]  # the cursor's line and its neighbours (None: filters
  # are off)
  undefined_names: Optional[undefined.UndefinedNames]  # the reader of names nothing binds where
  # the line stands, its reduced file kept for every line checked (None: the lines below are not
  # read)
  line_start: bool  # whether the cursor has only indentation before it on its line


# The most lines one completion returns: each line more widens the beam, and the request's time,
# by one more beam entry. complete, serve (a request's "top") and lsp share it.
MAX_TOP = 20


def check_options(options: EngineOptions) -> None:
  if not 1 <= options.top <= MAX_TOP:
    raise CompletionError(f"--top {options.top} must be from 1 to {MAX_TOP}")
  if options.beam_size < options.top:
    raise CompletionError(f"--beam-size {options.beam_size} must be at least --top "
                          f"{options.top} (the beam holds the candidates)")
  if options.max_tokens is not None and options.max_tokens < 1:
    raise CompletionError(f"--max-tokens {options.max_tokens} must be 1 or more")
  if options.min_confidence is not None and options.min_score is not None:
    raise CompletionError("--min-confidence and --min-score are two gates: give one of them")
  if options.min_confidence is not None and not 0 <= options.min_confidence <= 1:
    raise CompletionError(f"--min-confidence {options.min_confidence:g} must be a probability "
                          "(0 to 1)")
  if options.min_score is not None and not options.min_score <= RETRIEVAL_BONUS:  # (NaN too)
    raise CompletionError(f"--min-score {options.min_score:g} must be {RETRIEVAL_BONUS:g} or less "
                          "(scores are log-probabilities / sqrt(pieces), + "
                          f"{RETRIEVAL_BONUS:g} for a line the file or repository holds)")


def check_loadable(info: ModelInfo) -> None:
  """One line where the checkpoint's runtime is not written and cannot be here: writing it takes
  TensorFlow (the engine alone on a Python newer than 3.11). Commands call it before their other
  work."""
  if (not runtime.runtime_dir(info.model_dir, info.step).is_dir()
      and not registration.tensorflow_installed()):
    raise errors.TrainingStackMissing(
        f"--checkpoint {info.model_dir} has no runtime of step {info.step} (the NumPy weights "
        f"the engine loads; `code-t5 pack {info.model_dir} --out FOLDER` where the stack is "
        "installed writes a folder that has one), and writing it")


def load_network(info: ModelInfo, echo=None) -> runtime.Network:
  """The checkpoint's NumPy runtime, written first (with TensorFlow, ~10 s) if it is missing."""
  network = runtime.load(info.model_dir, info.step)
  if network is None:
    check_loadable(info)
    vocabulary = task_vocabulary(info)
    check_vocabulary(info, vocabulary)
    if echo:
      echo(f"writing the runtime of {info.model_dir} step {info.step} (once)")
    runtime.write(info.model_dir, info.step, {"task": info.task, "model_type": info.model_type,
                                              "sequence_length": info.sequence_length},
                  vocabulary, echo)
    network = runtime.load(info.model_dir, info.step)
  meta = network.meta
  written = (meta["task"], meta["sequence_length"], meta["step"])
  if written != (info.task, info.sequence_length, info.step):
    folder = runtime.runtime_dir(info.model_dir, info.step)
    raise CompletionError(
        f"{folder / runtime.MODEL_FILE} says the runtime was written for task {meta['task']!r}, "
        f"lengths {meta['sequence_length']}, step {meta['step']}, but "
        f"{info.model_dir / operative_config.FILE_NAME} and the checkpoint give {info.task!r}, "
        f"{info.sequence_length}, step {info.step}: remove {folder} to write it again")
  return network


# A line that repeats one group of 3+ characters three times in a row (`"datasettings",
# "datasettings", ...`, `.from_utils.from_utils.from_utils`) or a letter six times (`hugggggg`),
# up to its end: what a looping model writes until the line's token budget cuts it, mid-group
# at worst. A real line that repeats a group goes on with something else (`tuple[int, int,
# int, int],`: `int],` does not begin `int, `), and is kept in its place.
_REPEATS = re.compile(r"(.{3,}?)\1{2,}|(\w)\2{5,}")


def loops_to_its_end(text: str) -> bool:
  """Whether `text` ends in three or more repeats of one group (the last one perhaps cut)."""
  for match in _REPEATS.finditer(text):
    group = match.group(1) or match.group(2)
    if group.startswith(text[match.end():]):
      return True
  return False


def hopeless(text: str) -> bool:
  """Whether a candidate line is not worth showing while another is: nothing (an editor shows
  no text) or a loop."""
  return not text.strip() or loops_to_its_end(text)


def _kept(line: decoding.Line, reason: Optional[str]) -> bool:
  """Whether a (line, reason) pair of `Completer.ranked` is a line the filters kept that shows
  some text."""
  return reason is None and bool(line.text.strip())


def kept_lines(ranked) -> List[decoding.Line]:
  """Of `Completer.ranked`'s (line, reason) pairs, the lines the filters kept that show some
  text, best first: what a gate chooses from."""
  return [line for line, reason in ranked if _kept(line, reason)]


def ends_as_it_stands(ranked, suffix: str) -> bool:
  """Whether, with text after the cursor (`suffix`), the best of `Completer.ranked`'s lines that
  passes the filters inserts nothing: the model ends the line with what already follows the
  cursor (`)` at `f(x|)`, line_filters.fit_before), so the line is complete and no other line is
  shown. (With nothing after the cursor, an empty line is the model's, ranked last: `hopeless`.)"""
  first = next((line for line, reason in ranked if reason is None), None)
  return bool(suffix.strip()) and first is not None and not first.text


def _moved_last(ranked, moved: Sequence[bool]) -> list:
  """(line, reason) pairs with those whose `moved` is true after the others (each group in its
  order), their lines marked `unlikely`."""
  return ([pair for pair, last in zip(ranked, moved) if not last]
          + [(dataclasses.replace(line, unlikely=True), reason)
             for (line, reason), last in zip(ranked, moved) if last])


def _last_if(lines: Sequence[decoding.Line], moved: Sequence[bool]) -> List[decoding.Line]:
  """`lines` with those whose `moved` is true after the others (each group in its order), marked
  `unlikely`."""
  return [line for line, _ in _moved_last([(line, None) for line in lines], moved)]


def _fitted(lines: Sequence[decoding.Line], suffix: str, where
            ) -> List[Tuple[decoding.Line, Optional[str]]]:
  """(line, reason) for each of `lines`, its text now what goes in at the cursor before `suffix`,
  the text after the cursor on its line, and its `replaces` the characters of `suffix` it takes
  the place of (line_filters.fit_before: it may type over closing brackets there, or replace
  them), and the reason it fits nowhere, or fails `where`'s filters (None: it passes, or filters
  are off); a fit a better line makes already is left out."""
  fitted, seen = [], set()
  for line in lines:
    fit, reason = line_filters.fit_before(line.text, suffix, where)
    if fit is not None:
      if fit in seen:
        continue
      seen.add(fit)
      line = dataclasses.replace(line, text=fit.text, replaces=fit.replaces)
    fitted.append((line, reason))
  return fitted


def unlikely_last(ranked, where: line_filters.LineContext,
                  unknown: Optional[names.UnknownNames],
                  wanted_names: Optional[wanted.Wanted] = None,
                  undefined_names: Optional[undefined.UndefinedNames] = None) -> list:
  """(line, reason) pairs of `ranked` (best first) with those unlikely where they stand marked
  `unlikely` and moved after the others (each group in its order): a clause nothing above owns;
  a line leaving its statement open above a line that starts another; a statement the line below
  does not fit; an operand that repeats the one before `and`, `or`, `==`; a name assigned to
  itself. Then the lines that are wrong where they stand: a line that reads a bare name no line
  of the file mentions (`unknown`, None where the lines below are not read), a statement that
  leaves unbound a name the code it serves reads and nothing binds, triple quotes that open a
  docstring over the code below or leave one open, a statement that leaves the docstring text
  below unopened (`wanted_names`, None there too: wanted.Wanted.leaves_unbound,
  docstrings.Docstrings.misplaced and unopened), a jump above code that would never run, a line
  that breaks the brackets below, an element its collection already has (`where`'s
  `jumps_over_code`, `breaks_brackets_below`, `repeats_an_element`). Where the best line that
  passes the filters is one of those, copies the line above or below
  (LineContext.repeats_a_neighbour) or reads a name nothing binds where it stands
  (`undefined_names`, made from `wanted_names` when not given), the search has lost its way: the
  lines after it were seldom better (docs/engine.md). Then all are marked unlikely, so the
  confidence gate shows none, and their order stays."""
  ends = where.ends_before()
  ranked = _moved_last(ranked, [
      where.owns_nothing(line.text) or where.misfits_below(line.text, line.replaces)
      or (ends and where.leaves_open(line.text, line.replaces))
      or where.repeats_operand(line.text) or where.assigns_itself(line.text, line.replaces)
      for line, _ in ranked])
  if undefined_names is None and wanted_names is not None:
    undefined_names = undefined.UndefinedNames(wanted_names)
  starts = wanted_names is not None and where.starts_statement()
  wrong = [_wrong_where_it_stands(line, where, unknown, wanted_names, starts)
           for line, _ in ranked]
  best = next((k for k, (line, reason) in enumerate(ranked) if _kept(line, reason)), None)
  if best is not None and (wrong[best] or where.repeats_a_neighbour(
      ranked[best][0].text, ranked[best][0].replaces)
                           or _reads_undefined(ranked[best][0], where, undefined_names)):
    return [(dataclasses.replace(line, unlikely=True), reason) for line, reason in ranked]
  return _moved_last(ranked, wrong)


def _reads_undefined(line: decoding.Line, where: line_filters.LineContext,
                     undefined_names: Optional[undefined.UndefinedNames]) -> bool:
  """Whether `line` reads, in the part the engine wrote, a name that nothing binds where it stands
  (`undefined_names`, pyflakes over the file around it: a parse per line, so only the best line
  and the lines listed beside it are checked); never where the lines below are not read
  (`undefined_names` None)."""
  if undefined_names is None:
    return False
  return undefined_names.read_by(where.completed(line.text, line.replaces), len(where.head))


def _wrong_beside_the_best(line: decoding.Line, ranking: Ranking) -> bool:
  """Whether `line`, an alternative listed beside the best line, copies the line above or below
  or reads a name nothing binds where it stands (unlikely_last's checks of the best line alone);
  never where filters are off."""
  where = ranking.where
  return where is not None and (where.repeats_a_neighbour(line.text, line.replaces)
                                or _reads_undefined(line, where, ranking.undefined_names))


def _wrong_where_it_stands(line: decoding.Line, where: line_filters.LineContext,
                           unknown: Optional[names.UnknownNames],
                           wanted_names: Optional[wanted.Wanted], starts: bool) -> bool:
  """Whether `line` is one of unlikely_last's lines wrong where they stand. The line's code is
  read once (LineContext.code_of): the unknown names read it, and where the line completes a
  statement that `starts` on the cursor's line and ends there (no bracket left open, no string),
  so do the rules for the code it serves and for the docstring below."""
  code = where.code_of(line.text, line.replaces)
  statement = (code if starts and code is not None
               and not where.leaves_open(line.text, line.replaces) else None)
  return ((unknown is not None and unknown.read_in(code))
          or (statement is not None and wanted_names.leaves_unbound(statement))
          or (wanted_names is not None
              and _misplaces_docstring(line, where, wanted_names, statement is not None))
          or where.jumps_over_code(line.text, line.replaces)
          or where.breaks_brackets_below(line.text, line.replaces)
          or where.repeats_an_element(line.text, line.replaces))


def _misplaces_docstring(line: decoding.Line, where: line_filters.LineContext,
                         wanted_names: wanted.Wanted, whole_statement: bool) -> bool:
  """Whether `line` leaves the file's docstrings wrong: it writes triple quotes that open one over
  the code below, or leave open one the lines below do not close; or, a `whole_statement`
  without triple quotes on the cursor's line, it does not open the one whose text the lines
  below start with."""
  completed = where.completed(line.text, line.replaces)
  if '"""' in line.text or "'''" in line.text:
    return wanted_names.docstrings.misplaced(completed)
  return whole_statement and wanted_names.docstrings.unopened(completed)


def last_if_hopeless(lines: Sequence[decoding.Line]) -> List[decoding.Line]:
  """`lines` with the hopeless ones moved after the others (each group in its order)."""
  return _last_if(lines, [hopeless(line.text) for line in lines])


def last_if_unlikely(lines: Sequence[decoding.Line], prefix: str, below: str, repository,
                     path: str) -> List[decoding.Line]:
  """`lines` with the unlikely ones moved after the others (each group in its order): an import
  of a module the project does not know (code_t5.engine.imports: the training corpus's packages
  guessed into unrelated code) or one the file has already, a `def`/`class` its block already
  has, a line reading `self` where no function around takes it (code_t5.engine.scopes)."""
  modules = repository.modules if repository is not None else None
  guessed = imports.ImportCheck(prefix, below, modules, path)
  defined = scopes.Definitions(prefix, below)
  return _last_if(lines, [guessed.unknown(line.text) or guessed.repeats(line.text)
                          or defined.redefines(line.text) or defined.reads_absent_self(line.text)
                          for line in lines])


# What describe_model prints of ABOUT_FILE, and the types it reads them as.
_ABOUT_FIELDS = {"name": (str,), "total_steps": (int,), "trained_on": (str,), "date": (str,)}
ABOUT_MAX_BYTES = 1 << 20  # the shipped one is ~1 kB


def model_about(model_dir: pathlib.Path) -> dict:
  """The model dir's ABOUT_FILE ({} if it has none); a one-line error if it is unreadable."""
  path = pathlib.Path(model_dir) / ABOUT_FILE
  if not path.exists():
    return {}
  try:
    about = json.loads(stranger_paths.read_regular(path, ABOUT_MAX_BYTES).decode("utf-8"))
  except OSError as e:
    raise CompletionError(f"{path} is unreadable ({e.strerror or type(e).__name__}): mend or "
                          "remove it") from None
  except (ValueError, RecursionError) as e:  # not JSON, not UTF-8, or nested past the limit
    raise CompletionError(f"{path} is unreadable ({type(e).__name__}): mend or remove it") from None
  gate = about.get("min_score") if isinstance(about, dict) else None
  if not isinstance(about, dict) or (gate is not None and (
      not confidence.finite_number(gate) or gate > RETRIEVAL_BONUS)):
    raise CompletionError(f"{path}: not an object with a \"min_score\" of at most "
                          f"{RETRIEVAL_BONUS:g}: mend or remove it")
  for key, kinds in _ABOUT_FIELDS.items():
    value = about.get(key)
    if value is not None and (isinstance(value, bool) or not isinstance(value, kinds)):
      raise CompletionError(f"{path}: its \"{key}\" is {reprlib.repr(value)}, not "
                            f"{' or '.join(k.__name__ for k in kinds)}: mend or remove it")
  problem = confidence.check(about["confidence"]) if "confidence" in about else None
  if problem:
    raise CompletionError(f"{path}: its \"confidence\" is {problem}: mend or remove it")
  return about


def describe_model(info: ModelInfo, about: dict) -> str:
  """How a model names itself everywhere (complete's log, serve's /health, the LSP's banner)."""
  if not about.get("name"):
    return f"{info.model_dir} (step {info.step})"
  # "in all": the checkpoint's own step (serve's /health "step") counts its last stage only.
  facts = [f"{about['total_steps']:,} training steps in all" if about.get("total_steps") else None,
           f"on {about['trained_on']}" if about.get("trained_on") else None,
           about.get("date")]
  return f"{about['name']} ({', '.join(f for f in facts if f)})"


class Completer:
  """A model dir's checkpoint, loaded once into the NumPy runtime; `complete` per request.

  No TensorFlow once the runtime is written (code_t5.engine.runtime): start-up is reading ~10-100 MB of
  arrays, and a request is one pass over the context plus one cached step per piece and beam.
  """

  def __init__(self, model_dir: pathlib.Path, options: EngineOptions = EngineOptions(),
               echo=None, repo: Optional[pathlib.Path] = None):
    echo = echo or (lambda line: print(line, file=sys.stderr))
    if repo is not None and not pathlib.Path(repo).is_dir():
      raise CompletionError(f"--repo {repo} is not a directory: give the project's folder")
    check_options(options)
    self.info = model_info(pathlib.Path(model_dir))
    if self.info.model_type not in SUPPORTED_MODEL_TYPES:
      raise CompletionError(f"model type {self.info.model_type!r} ({self.info.model_dir}) is not "
                            f"supported: completion needs one of {', '.join(SUPPORTED_MODEL_TYPES)}")
    self.options = options
    self.network = load_network(self.info, echo)
    self.tokenizer = self.network.tokenizer
    self.reads_below = task_names.reads_below(self.info.task)
    self.runtime_dir = runtime.runtime_dir(self.info.model_dir, self.info.step)
    self._search = decoding.LineSearch(self.network)
    # What consecutive requests share (see `ranked` and `file_cache`); each is only ever used
    # where it equals what would be computed afresh.
    self._reading: Optional[runtime.Prefix] = None
    self._file_pieces: Optional[Tuple[str, str, copy_cache.PieceCache]] = None
    self._encoding_memo = encoding_memo.shared(self.tokenizer)  # with the repository's index
    max_tokens = options.max_tokens or DEFAULT_MAX_TOKENS[self.network.meta["vocabulary"]["kind"]]
    self.max_tokens = min(max_tokens, self.info.sequence_length["targets"])
    # The project's other files (--repo): indexed once, within repository.INDEX_SECONDS.
    self.repo = pathlib.Path(repo).resolve() if repo is not None else None
    self.repository = (repository_lib.Repository.of_folder(
        self.repo, self.tokenizer, seconds=repository_lib.INDEX_SECONDS,
        saved_dir=saved_pieces.default_dir())
                       if self.repo is not None else None)
    if self.repository is not None and self.repository.cut:
      echo(f"--repo {repo}: indexed {self.repository.files:,} Python files in "
           f"{repository_lib.INDEX_SECONDS:g} s, its limit; the rest of the folder is left out "
           "(give the project's own folder)")
    self.about = model_about(self.info.model_dir)
    self.description = describe_model(self.info, self.about)
    self.confidence_model = self.about.get("confidence")
    if options.min_confidence is not None and self.confidence_model is None:
      raise CompletionError(f"--min-confidence: {self.info.model_dir} has no confidence model "
                            f"(\"confidence\" in its {ABOUT_FILE}): use --min-score")
    self.min_confidence, self.min_score = self.gates(options)

  def gates(self, options: EngineOptions) -> Tuple[Optional[float], float]:
    """(the confidence gate, None for none; the score gate) that `options` ask of this model: the
    confidence gate is the model's unless --min-score chose the score gate; the score gate is
    --min-score, else the model's own (its about.json), else none."""
    gate = self.about.get("min_score")
    min_score = (options.min_score if options.min_score is not None
                 else DEFAULT_MIN_SCORE if gate is None else float(gate))
    min_confidence = (None if options.min_score is not None or self.confidence_model is None
                      else options.min_confidence if options.min_confidence is not None
                      else float(self.confidence_model["min"]))
    return min_confidence, min_score

  def path_in_repo(self, path) -> str:
    """`path` (a file's path, absolute or relative to the working directory) as the repository
    names it; "" when there is no --repo or the file is outside it."""
    if self.repo is None or not path:
      return ""
    try:
      return pathlib.Path(path).resolve().relative_to(self.repo).as_posix()
    except (ValueError, OSError, RuntimeError):  # RuntimeError: a link loop (Python 3.11)
      return ""

  def context(self, prefix: str, below_ids: Sequence[int] = ()) -> str:
    """The end of `prefix` the model reads: as many pieces as the context has room for beside
    `below_ids` and their separator (context_ids), without the part of a line they begin with
    when that part is short (EngineOptions.whole_lines, PARTIAL_LINE_SHARE).

    Whole lines: as the user types on a line the context then starts at the same place until
    a line no longer fits, so the model's reading of it is reused (Network.start) instead of
    redone for every keystroke. It reads half a line less on average; on the held-out points
    of both validation sets as many lines exact or one more (docs/engine.md, "Reading the
    context once per line").
    """
    room = self.info.max_context_tokens - (len(below_ids) + 1 if below_ids else 0)
    context = left_truncate(prefix, self.tokenizer, room)
    cut = self.options.whole_lines and len(context) < len(prefix)
    first_newline = context.find("\n") if cut else -1
    if 0 <= first_newline < len(context) * PARTIAL_LINE_SHARE:
      return context[first_newline + 1:]
    return context

  def below_ids(self, below: str) -> List[int]:
    """The first task_names.BELOW_TOKENS pieces of `below` for a model trained to read them
    (task_names.reads_below), else none."""
    if not below or not self.reads_below:
      return []
    # Encoding the whole rest of a long file would cost more than the request; training cuts the
    # text as many characters as the pieces can hold.
    return self.tokenizer.encode(below[:line_completion.MAX_CHARS_PER_TOKEN *
                                       task_names.BELOW_TOKENS])[:task_names.BELOW_TOKENS]

  def context_ids(self, prefix: str, below: str = "", similar: str = ""
                  ) -> Tuple[str, List[int]]:
    """(the end of `prefix` the model reads, the ids it reads): for a model trained on cursor_lm
    v4 with code below the cursor's line, its first pieces and the separator come first, as in
    training (code_t5.data.preprocessors.below_first); before all, the last
    similar_code.MAX_PIECES pieces of `similar` (similar_code.find), read as code that came
    earlier."""
    below_ids = self.below_ids(below)
    context = self.context(prefix, below_ids)
    ids = self.tokenizer.encode(context)
    if below_ids:
      ids = below_ids + [task_names.below_separator(self.tokenizer.vocab_size)] + ids
    # The similar code may fill what the network's positions leave beside the context, its EOS
    # and the longest line (a model trained on short sequences reads little or none of it).
    room = min(similar_code.MAX_PIECES, self.network.max_length - len(ids) - 1 - self.max_tokens)
    if similar and room > 0:
      ids = self.tokenizer.encode(similar)[-room:] + ids
    return context, ids

  def file_cache(self, prefix: str, repository=None, below: str = ""):
    """The copy cache of a request: `repository` (copy_cache.RepositoryPieces or None) and the
    file around the cursor's line: above it, and `below` it (the line itself is left out: its
    typed part is the context's end, which the cache would otherwise match against itself).
    The file's part is kept while the user types on a line (~4 ms a request to index in
    dataset-dev's files, 6 ms in a 120 kB one); on another line only the changed parts of the
    file are encoded again (encoding_memo)."""
    above = prefix[:prefix.rfind("\n") + 1]
    if self._file_pieces is None or self._file_pieces[:2] != (above, below):
      encode = self._encoding_memo.encode
      self._file_pieces = (above, below, copy_cache.PieceCache(
          [encode(below) if below else (), encode(above)]))  # above last: the nearest places
    return copy_cache.FileCache(repository, self._file_pieces[2])

  def forget_requests(self) -> None:
    """Drops what was kept from the requests before (benchmarks/latency_benchmark.py compares
    requests with and without it)."""
    self._reading = self._file_pieces = None
    self._encoding_memo.clear()

  def _with_retrieved(self, lines, prefix, ids, heal, cache, state, repository, path, below):
    """The search's lines and the retrieved ones (line_retrieval), each line the file or
    repository holds scored RETRIEVAL_BONUS higher, best first."""
    retrieved = line_retrieval.candidates(
        prefix, repository.lines if repository is not None else None, path, below)
    if not retrieved:
      return lines
    found = {line.text: line for line in lines}
    missing = [text for text in retrieved if text not in found]
    for line in self._search.score(ids, missing, heal, self.max_tokens, cache, state):
      found[line.text] = line
    chosen = set(retrieved)
    return sorted((dataclasses.replace(line, score=line.score + RETRIEVAL_BONUS)
                   if line.text in chosen else line for line in found.values()),
                  key=lambda line: -line.score)

  def ranked(self, prefix: str, suffix: str = "", top: Optional[int] = None, repository=None,
             path: str = "", below: str = ""
             ) -> Tuple[str, List[Tuple[decoding.Line, Optional[str]]]]:
    """(the context the model read, its lines best first, each with the line_filters reason that
    drops it, None if it passes or filters are off); the threshold is not applied."""
    ranking = self.rank(prefix, suffix, top, repository, path, below)
    return ranking.context, ranking.lines

  def rank(self, prefix: str, suffix: str = "", top: Optional[int] = None, repository=None,
           path: str = "", below: str = "") -> Ranking:
    """`ranked`'s lines with what judged them (Ranking), for `listed`."""
    options = self.options
    top = options.top if top is None else top
    if top < 1:
      raise CompletionError(f"top {top} must be 1 or more")
    below = below if options.below else ""
    similar = similar_code.find(prefix, below, repository.windows if repository is not None
                                else None, path) if options.similar else ""
    context, ids = self.context_ids(prefix, below, similar)
    heal = b""
    if options.heal:
      ids, heal = decoding.split_heal(ids, self.tokenizer)
    # Filters remove candidates: search for a few more than are shown.
    searched = top + (options.beam_size if options.filters else 0)
    pieces = repository.pieces_for(path) if repository is not None else None
    cache = self.file_cache(prefix, pieces, below) if options.cache else None
    # The last request's reading of its context: what it shares with this one is not read again.
    state = self._reading = self.network.start(ids, reuse=self._reading)
    lines = self._search.search(ids, heal, beam_size=max(options.beam_size, top),
                                top=searched, max_tokens=self.max_tokens, cache=cache,
                                prefix=state)
    if options.retrieval:
      lines = self._with_retrieved(lines, prefix, ids, heal, cache, state, repository, path,
                                   below)
    # What the file reads and nothing binds: for the names' ranking and the filters' checks.
    wanted_names = wanted.Wanted(prefix, below)
    if options.names:
      lines = wanted.first(names.rank(lines, prefix), wanted_names)
    lines = last_if_hopeless(last_if_unlikely(lines, prefix, below, repository, path))
    where = line_filters.LineContext.of(prefix, suffix, below) if options.filters else None
    ranked = _fitted(lines, suffix, where)
    read_below = wanted_names if options.below else None
    undefined_names = undefined.UndefinedNames(read_below) if read_below is not None else None
    if where is not None:
      unknown = names.UnknownNames(prefix, suffix, below) if options.below else None
      ranked = unlikely_last(ranked, where, unknown, read_below, undefined_names)
    return Ranking(context, ranked, where, undefined_names, confidence.at_line_start(prefix))

  def complete(self, prefix: str, suffix: str = "", top: Optional[int] = None,
               repository=None, path: str = "", below: str = "") -> Completion:
    """Completes the line that `prefix` (all the code before the cursor) ends in; `suffix` is the
    rest of that line after the cursor (what the filters check the completed line with),
    `below` the file's lines after it; `repository` (code_t5.engine.repository.Repository) the
    project's files, `path` the file's own path in it (left out of it)."""
    start = time.perf_counter()
    top = self.options.top if top is None else top
    repository = self.repository if repository is None else repository
    prefix, suffix, below = (source_text.lf_line_ends(prefix), source_text.lf_line_ends(suffix),
                             source_text.lf_line_ends(below))
    ranking = self.rank(prefix, suffix, top, repository, path, below)
    context, ranked = ranking.context, ranking.lines
    kept = kept_lines(ranked)
    sure = self.confidence_of(confidence.features(kept, ranking.line_start))
    shown = [] if ends_as_it_stands(ranked, suffix) else self.listed(ranking, kept, sure, top)
    return Completion(candidates=tuple(Candidate(line.text, line.score, line.replaces)
                                       for line in shown),
                      context_chars=len(context), truncated=len(context) < len(prefix),
                      ms=(time.perf_counter() - start) * 1000, confidence=sure,
                      hidden_by="" if shown else self._hidden_by(ranked, kept, sure, suffix))

  def listed(self, ranking: Ranking, kept: Sequence[decoding.Line], sure: Optional[float],
             top: int, gates: Optional[Tuple[Optional[float], float]] = None
             ) -> List[decoding.Line]:
    """The lines shown, best first, at most `top`, of `kept` (kept_lines of `ranking`) whose best
    line has the confidence `sure`, behind `gates` (default: this Completer's; `gates` gives
    them). Behind a confidence gate, whether to show anything is the confidence's call, and each
    alternative beside the best line must pass the same gate (its own probability of being
    exact, confidence.features_of), the score gate too, and not be wrong where it stands: ranked
    unlikely by the engine, or, judged here since they cost a parse each, a copy of the line
    above or below or a line reading a name nothing binds where it stands (the checks that hide
    every line when the best is such a line). Alternatives that passed only the score gate were
    right 6 % of the time (docs/engine.md, "The list an editor shows"). Behind a score gate,
    every kept line that passes it."""
    min_confidence, min_score = (self.min_confidence, self.min_score) if gates is None else gates
    if min_confidence is None:
      return [line for line in kept if line.score >= min_score][:top]
    if sure is None or sure < min_confidence:
      return []
    shown = [kept[0]]
    for k in range(1, len(kept)):
      if len(shown) == top:
        break
      line = kept[k]
      if (line.score >= min_score and not line.unlikely
          and self.confidence_of(confidence.features_of(kept, k, ranking.line_start))
          >= min_confidence
          and not _wrong_beside_the_best(line, ranking)):
        shown.append(line)
    return shown

  def _hidden_by(self, ranked, kept: Sequence[decoding.Line], sure: Optional[float],
                 suffix: str = "") -> str:
    """What hid every line of `ranked` (Completion.hidden_by) when `complete` shows none: `kept`
    are the lines the filters kept, `sure` the best one's confidence, `suffix` the text after the
    cursor on its line."""
    if not any(line.text.strip() for line, _ in ranked):
      return "empty"
    if ends_as_it_stands(ranked, suffix):
      return "complete"
    if not kept:
      return "filters"
    if self.min_confidence is None:
      return "score"
    # confidence.features gives no confidence where the best kept line is unlikely, and the
    # engine ranks unlikely lines last: then every kept line is one.
    return "unlikely" if sure is None else "confidence"

  def confidence_of(self, values: Optional[Sequence[float]]) -> Optional[float]:
    """The probability that the best kept line is exact, from its confidence.features, by the
    model's confidence model (None without one, or without lines: `values` None)."""
    if self.confidence_model is None or values is None:
      return None
    return confidence.probability(values, self.confidence_model)

  def complete_at(self, text: str, cursor: int, top: Optional[int] = None, repository=None,
                  path: str = "") -> Completion:
    cursor = check_offset(text, cursor)
    rest = source_text.lf_line_ends(text[cursor:])
    line_end = rest.find("\n")
    suffix = rest if line_end < 0 else rest[:line_end]
    below = "" if line_end < 0 else rest[line_end + 1:]
    return self.complete(text[:cursor], suffix, top, repository, path, below)


# ------------------------------------------------------------------------------------------------
# Command line.


def add_engine_flags(parser, top: int = EngineOptions.top) -> None:
  """--checkpoint and how lines are searched: complete, serve and lsp share these."""
  parser.add_argument("--checkpoint", type=pathlib.Path, default=SHIPPED_MODEL, metavar="DIR",
                      help="the model dir (checkpoints + operative_config.gin); default: the "
                      "model that ships with the package")
  parser.add_argument("--top", type=int, default=top, metavar="N",
                      help="at most N lines, best first, of those that pass the filters and the "
                      "gate (default %(default)s): behind the model's confidence gate, a line "
                      "beside the best must pass that gate on its own, score at least its "
                      "--min-score and not be one the engine ranks as unlikely, so often fewer; "
                      "--min-score=-inf shows every line the search kept, up to N")
  parser.add_argument("--beam-size", type=int, default=None,
                      help=f"open lines kept per step (default: max(--top, {EngineOptions.beam_size}))")
  parser.add_argument("--max-tokens", type=int, default=None,
                      help="a line still open after this many tokens is dropped (default: "
                      + ", ".join(f"{v} {k}" for k, v in DEFAULT_MAX_TOKENS.items()) + ")")
  parser.add_argument("--no-healing", action="store_true",
                      help="read the context up to the cursor as it is (no token healing)")
  parser.add_argument("--no-filters", action="store_true",
                      help="keep lines that cannot be valid Python at the cursor")
  parser.add_argument("--no-names", action="store_true",
                      help="rank lines by the model alone, not preferring those that complete a "
                      "half-typed word to a name the file already uses, nor imports and "
                      "definitions of names the file reads and nothing binds")
  parser.add_argument("--repo", type=pathlib.Path, default=None, metavar="DIR",
                      help="the project's folder: its *.py files give the engine lines and "
                      "names the file does not (indexed once at start, at most "
                      f"{repository_lib.INDEX_SECONDS:g} s)")
  parser.add_argument("--no-cache", action="store_true",
                      help="do not mix a copy cache of the file and --repo into the model's "
                      "probabilities")
  parser.add_argument("--no-retrieval", action="store_true",
                      help="do not propose whole lines the file and --repo already hold")
  parser.add_argument("--no-similar", action="store_true",
                      help="do not let the model first read the code of the file below and "
                      "--repo most like the lines above the cursor")
  parser.add_argument("--min-score", type=float, default=None,
                      help="show nothing scoring below this (log-probability / sqrt(pieces), + "
                      f"{RETRIEVAL_BONUS:g} for a line the file or repository holds; given, it "
                      "replaces the model's own gate); -inf shows every line")
  parser.add_argument("--min-confidence", type=float, default=None,
                      help="show nothing where the probability that the best line is exact is "
                      f"below this (0-1; default: the model's own gate, in its {ABOUT_FILE}; "
                      "lower shows more lines, less often right)")


def options_from(args) -> EngineOptions:
  return EngineOptions(top=args.top,
                       beam_size=max(args.top, EngineOptions.beam_size)
                       if args.beam_size is None else args.beam_size,
                       max_tokens=args.max_tokens, heal=not args.no_healing,
                       filters=not args.no_filters, names=not args.no_names,
                       min_score=args.min_score, min_confidence=args.min_confidence,
                       cache=not args.no_cache,
                       retrieval=not args.no_retrieval, similar=not args.no_similar)


def add_export_flags(parser) -> None:
  parser.add_argument("--checkpoint", type=pathlib.Path, required=True, metavar="DIR",
                      help="the model dir (checkpoints + operative_config.gin)")
  parser.add_argument("--beam-size", type=int, default=1,
                      help="Mesh TF's beam search over this many lines (default 1: greedy; "
                      "encoder-decoder models only)")
  parser.add_argument("--max-length", type=int, default=None,
                      help=f"most tokens decoded (default {DEFAULT_MAX_LENGTH}, or a decoder-only "
                      "model's targets length if shorter)")
  parser.add_argument("--temperature", type=float, default=0.0,
                      help="0 = greedy (default); > 0 samples")
  parser.add_argument("--run", default="cpu", choices=EXPORT_RUNS,
                      help="device of the exported graph (default cpu)")


def settings_from(args) -> DecodeSettings:
  max_length = (default_max_length(model_info(args.checkpoint)) if args.max_length is None
                else args.max_length)
  return DecodeSettings(beam_size=args.beam_size, max_length=max_length,
                        temperature=args.temperature)


def _stdin_path_in_repo(completer: Completer, stdin_path: Optional[pathlib.Path]) -> str:
  """--stdin-path as --repo names it: the file of --repo it names relative to the working
  directory, else relative to --repo, as `serve`'s "path" is; a one-line error where it names
  none (it was ignored, and the file's saved copy offered back: helper-55's audit and helper-57's
  review)."""
  if stdin_path is None:
    return ""
  for path in (stdin_path, completer.repo / stdin_path):  # (the second is the first if absolute)
    found = completer.path_in_repo(path)
    if found not in ("", ".") and (completer.repo / found).is_file():
      return found
  raise CompletionError(f"--stdin-path {stdin_path} is not a file of --repo {completer.repo}: "
                        "give its path in the project (relative to --repo or to here)")


def _complete(args) -> int:
  path, line, col = parse_target(args.target)
  if args.line is not None or args.col is not None:
    if line is not None:
      raise CompletionError(f"{args.target} gives a cursor already; drop --line/--col")
    if args.line is None or args.col is None:
      raise CompletionError("--line and --col go together")
    line, col = args.line, args.col
  if args.stdin_path is not None and (path != "-" or args.repo is None):
    raise CompletionError("--stdin-path names the file of --repo that stdin's code is: give - "
                          "(or -:LINE:COL) and --repo with it, or drop --stdin-path")
  text = read_source(path)
  name = "stdin" if path == "-" else path
  cursor = len(text) if line is None else cursor_offset(text, line, col, name)
  completer = Completer(args.checkpoint, options_from(args), repo=args.repo)
  result = completer.complete_at(text, cursor, path=(
      _stdin_path_in_repo(completer, args.stdin_path) if path == "-"
      else completer.path_in_repo(path)))
  # The lines in UTF-8 whatever the locale says (a non-UTF-8 stdout, PYTHONIOENCODING=ascii or
  # a Windows pipe, was a UnicodeEncodeError traceback; serve writes UTF-8 too).
  if hasattr(sys.stdout, "reconfigure"):
    sys.stdout.reconfigure(encoding="utf-8")
  if args.json:
    print(json.dumps(result.reply(), ensure_ascii=False))
  else:
    for candidate in result.candidates:  # best first; nothing when no line is worth showing
      print(candidate.text)
    if not result.candidates:  # say why stdout is empty, or a first try looks broken
      print(f"code-t5 complete: {_why_nothing(completer, result)}", file=sys.stderr)
  return 0


def _why_nothing(completer: "Completer", result: Completion) -> str:
  """Why `result` shows no line (Completion.hidden_by), and the flag that shows them."""
  hidden_by = result.hidden_by
  if hidden_by == "empty":
    why = "the model ends the line here (every line it wrote is empty)"
  elif hidden_by == "complete":
    why = ("the model ends the line with the text after the cursor: it is complete as it stands "
           "(--no-filters shows the other lines)")
  elif hidden_by == "filters":
    why = "none of the lines the model wrote passed the filters (--no-filters shows them)"
  elif hidden_by == "unlikely":
    why = ("every line that passed the filters is one the engine ranks as unlikely here (a "
           "guessed or repeated import, a def its block has, a loop, a line that does not fit, "
           "or lines whose best copies the line above or below, reads a name nothing binds, "
           "leaves unbound a name the code below reads, opens a docstring over code or leaves "
           "one's text unopened, jumps over code, breaks the brackets below or repeats an "
           "element), which the confidence gate never shows "
           "(--min-score=-inf shows them)")
  elif hidden_by == "confidence":
    why = (f"the best line is exact with probability {result.confidence:.2f}, below the gate "
           f"{completer.min_confidence:g} (--min-confidence 0 shows it)")
  else:
    why = (f"none of the lines that passed the filters scored at least --min-score "
           f"{completer.min_score:g} (a lower --min-score shows more)")
  return f"no line shown: {why}"


def _export(args) -> int:
  def reused(path: pathlib.Path) -> None:
    # Said, as the folder may be someone else's: their SavedModel is theirs, not made here.
    print(f"reusing the export already in {path.parent} for these settings (made earlier, or by "
          "whoever sent the folder): remove it to export the checkpoint again", file=sys.stderr)

  path = export(args.checkpoint, settings_from(args), args.run, model=args.model, size=args.size,
                gin_params=args.gin_param, reused=reused)
  print(path)
  return 0


def register_cli(subparsers) -> None:
  complete = subparsers.add_parser(
      "complete", help="complete the current line at FILE:LINE:COL (or at the end of FILE / "
      "stdin) with a trained checkpoint: the --top best lines, one per line")
  complete.add_argument("target", metavar="FILE:LINE:COL",
                        help="FILE:LINE:COL (1-based, columns in characters), FILE (cursor at "
                        "the end, or --line/--col), or - for stdin (-:LINE:COL with a cursor)")
  complete.add_argument("--line", type=int, help="the cursor's line (1-based), with --col")
  complete.add_argument("--col", type=int,
                        help="the cursor's column (1-based, in characters), with --line")
  complete.add_argument("--json", action="store_true",
                        help="print the JSON reply `serve` gives instead of the bare line")
  complete.add_argument("--stdin-path", type=pathlib.Path, metavar="FILE",
                        help="with - and --repo: the file of the project whose code stdin holds "
                        "(relative to --repo or to here), left out of the project as the piped "
                        "code replaces it (else a line deleted from the piped code is offered "
                        "back from the saved file)")
  add_engine_flags(complete, top=1)
  complete.set_defaults(func=_complete)

  export_parser = subparsers.add_parser(
      "export", help="export a model dir's newest checkpoint as a TF SavedModel, e.g. for TF "
      "Serving (mesh_transformer_main with runs/export.gin); reused if it exists")
  add_export_flags(export_parser)
  export_parser.add_argument("--model", help="default: recorded in the model dir's commands/")
  export_parser.add_argument("--size", help="default: recorded in the model dir's commands/")
  export_parser.add_argument("--gin-param", action="append", default=[],
                             help="extra gin binding for the export")
  export_parser.set_defaults(func=_export)
