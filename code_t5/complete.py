"""Line completion from a trained checkpoint: `code-t5 complete`, `code-t5 export`, and the
library behind `code-t5 serve`.

How a completion is made:

1. Export, once per checkpoint and decoding settings. The canonical
   `python -m t5.models.mesh_transformer_main ... --gin_file=runs/export.gin` command (the model's
   own training composition, recovered from `<model_dir>/commands/`, plus decoding bindings)
   writes a TF SavedModel to `<model_dir>/export/<key>/`; later calls find and reuse it.
2. Load, once per process, into a TF1 session (the SavedModel is an Estimator export). It takes
   *strings* and encodes them in the graph with the task's vocabulary (+ EOS), so newlines and
   indentation reach the model exactly; its "inputs" output decodes what it read.
   (Mesh TF's file-based infer path, decode_from_file, reads one stripped example per line: a code
   context with newlines cannot go through it.)
3. Per request: the context is the code before the cursor, cut from the LEFT to the model's input
   length (the last tokens are kept; one slot is the EOS the export appends), and the completion is
   the model's continuation cut at the first newline. With a vocabulary that has a newline token
   (the byte vocabulary does) decoding also *stops* at the first newline.

An empty file (or a cursor at offset 0) is not an error: the model completes from an empty
context, i.e. proposes a first line. Cursor positions are 1-based lines and columns, columns
counted in characters (code points); column len(line) + 1 is the end of the line.
"""

import dataclasses
import json
import pathlib
import re
import reprlib
import shutil
import sys
import time
from typing import Dict, List, Optional, Sequence, Tuple

from code_t5 import errors
from code_t5 import launcher
from code_t5 import operative_config
from code_t5 import postprocessors
from code_t5 import processes

EXPORT_DIR = "export"
EXPORT_METADATA = "code_t5_export.json"
# PEP 8's 79 characters plus the newline: a whole line from the byte vocabulary.
DEFAULT_MAX_LENGTH = 80
SUPPORTED_MODEL_TYPES = ("bitransformer", "delimited_lm")
# Recorded gin params that describe how training ran, not the model: an export replaces them.
_RUN_ONLY_PARAMS = ("utils.run.batch_size", "utils.run.mode", "utils.run.mesh_shape",
                    "utils.run.mesh_devices", "utils.run.train_steps")


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


def read_source(path: str) -> str:
  """The text of FILE, or of stdin for "-"; one-line errors for unreadable or non-UTF-8 input."""
  if path == "-":
    return decode_utf8(sys.stdin.buffer.read(), "stdin")
  file = pathlib.Path(path)
  if not file.exists():
    raise CompletionError(f"{path} does not exist")
  if not file.is_file():
    raise CompletionError(f"{path} is not a file")
  try:
    data = file.read_bytes()
  except OSError as e:
    raise CompletionError(f"{path} cannot be read: {e.strerror}") from None
  return decode_utf8(data, path)


_TARGET = re.compile(r"^(.*):(\d+):(\d+)$")


def parse_target(target: str) -> Tuple[str, Optional[int], Optional[int]]:
  """"FILE:LINE:COL" -> (FILE, LINE, COL); "FILE" or "-" -> (FILE, None, None)."""
  m = _TARGET.match(target)
  if m and not pathlib.Path(target).exists():
    return m.group(1), int(m.group(2)), int(m.group(3))
  return target, None, None


def cursor_offset(text: str, line: int, col: int, name: str = "text") -> int:
  """The character offset of 1-based (line, col); col len(line) + 1 is the end of the line."""
  lines = text.split("\n")
  where = f"{name}:{line}:{col}"
  if not 1 <= line <= len(lines):
    raise CompletionError(f"{where}: line {line} is outside the file ({len(lines)} lines, "
                          f"1-{len(lines)})")
  content = lines[line - 1]
  if content.endswith("\r"):  # CRLF: the \r belongs to the line break
    content = content[:-1]
  if not 1 <= col <= len(content) + 1:
    raise CompletionError(f"{where}: column {col} is outside line {line} ({len(content)} "
                          f"characters, columns 1-{len(content) + 1})")
  return sum(len(l) + 1 for l in lines[:line - 1]) + col - 1


def check_offset(text: str, cursor, name: str = "text") -> int:
  if isinstance(cursor, bool) or not isinstance(cursor, int):
    # reprlib: a request's value may be megabytes; the error stays one short line.
    raise CompletionError(f"cursor {reprlib.repr(cursor)} is not an integer character offset")
  if not 0 <= cursor <= len(text):
    raise CompletionError(f"cursor {cursor} is outside the {name} ({len(text)} characters, "
                          f"offsets 0-{len(text)})")
  return cursor


def num_tokens(text: str, vocabulary) -> int:
  return len(vocabulary.encode(text))


def left_truncate(text: str, vocabulary, max_tokens: int) -> str:
  """The longest suffix of `text` that encodes to at most `max_tokens` tokens.

  Cuts at character boundaries (the SavedModel takes strings), so a multi-byte character is
  kept whole or dropped whole. The search window doubles from the right, then bisects: cost grows
  with the context kept, not with the file.
  """
  if max_tokens <= 0:
    return ""
  window = max(16, 4 * max_tokens)
  while True:
    if window >= len(text):
      if num_tokens(text, vocabulary) <= max_tokens:
        return text
      low = 0
      break
    if num_tokens(text[-window:], vocabulary) > max_tokens:
      low = len(text) - window
      break
    window *= 2
  # text[low:] is too long, text[len(text):] == "" fits: find the first start that fits.
  high = len(text)
  while high - low > 1:
    mid = (low + high) // 2
    if num_tokens(text[mid:], vocabulary) <= max_tokens:
      high = mid
    else:
      low = mid
  return text[high:]


def model_context(text: str, cursor: int, vocabulary, max_tokens: int) -> str:
  """What the model reads: the code before the cursor, keeping its last `max_tokens` tokens."""
  return left_truncate(text[:cursor], vocabulary, max_tokens)


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
  sequence_length = config.value("run.sequence_length")
  if sequence_length is None:
    raise CompletionError(f"{config.path} binds no utils.run.sequence_length")
  if isinstance(sequence_length, int):
    sequence_length = {"inputs": sequence_length, "targets": sequence_length}
  return ModelInfo(model_dir=model_dir, step=step, task=task,
                   model_type=config.value("run.model_type", "bitransformer"),
                   sequence_length=dict(sequence_length),
                   vocab_divisor=config.value("Unitransformer.vocab_divisor", 128) or 1)


def task_vocabulary(info: ModelInfo):
  """The inputs vocabulary of the task the checkpoint was trained on (from the seqio registry)."""
  import seqio  # pylint: disable=g-import-not-at-top
  import code_t5  # pylint: disable=g-import-not-at-top,unused-import  (registers the tasks)
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
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  checkpoint = str(info.model_dir / f"model.ckpt-{info.step}")
  try:
    variables = tf.train.list_variables(checkpoint)
  except (tf.errors.OpError, ValueError) as e:
    raise CompletionError(f"{checkpoint} cannot be read: {str(e).splitlines()[0]}") from None
  rows = [shape[0] for name, shape in variables
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
  if settings.temperature < 0:
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


# ------------------------------------------------------------------------------------------------
# Export: the canonical mesh_transformer_main command, once per checkpoint and settings.


def export_key(info: ModelInfo, settings: DecodeSettings, run: str) -> str:
  return (f"step{info.step}-beam{settings.beam_size}-len{settings.max_length}"
          f"-temp{settings.temperature:g}-{run}")


def _recorded_commands(model_dir: pathlib.Path) -> List[Tuple[int, str]]:
  commands = []
  for path in (model_dir / "commands").glob("command*"):
    m = re.fullmatch(r"command(?:\.(\d+))?", path.name)
    if m:
      commands.append((int(m.group(1) or 0), path.read_text(encoding="utf-8", errors="replace")))
  return sorted(commands)


def _split_recorded(command: str) -> List[str]:
  # mesh_transformer_main records " ".join(sys.argv): unquoted, so split before each "--flag=".
  return [part.strip() for part in re.split(r"\s(?=--[a-z_]+(?:=|\s|$))", command)]


def experiment_from_model_dir(model_dir: pathlib.Path, run: str = "cpu", model=None, size=None,
                              gin_params: Sequence[str] = ()
                              ) -> Tuple[launcher.Experiment, List[str]]:
  """The Experiment that trained model_dir (from its recorded training command) on `run`.

  Returns the Experiment and any further gin files the training command used. model/size
  override what is recorded; gin_params are added after the recorded ones.
  """
  commands = _recorded_commands(model_dir)
  training = [c for _, c in commands if "train_steps" in c] or [c for _, c in commands[:1]]
  files, params = [], []
  if training:
    for part in _split_recorded(training[-1]):
      if part.startswith("--gin_file="):
        files.append(part[len("--gin_file="):])
      elif part.startswith("--gin_param="):
        params.append(part[len("--gin_param="):])
  recorded = {"model": None, "size": None, "vocab": "byte"}
  extra_files = []
  for f in files:
    if m := re.fullmatch(r"(models|sizes|vocabs)/(.+)\.gin", f):
      recorded[{"models": "model", "sizes": "size", "vocabs": "vocab"}[m.group(1)]] = m.group(2)
    elif f != "dataset.gin" and not re.fullmatch(r"runs/.+\.gin", f):
      extra_files.append(f)
  model = model or recorded["model"]
  size = size or recorded["size"]
  if model is None or size is None:
    config = operative_config.OperativeConfig.of_model_dir(model_dir)
    if not model and not size and config.exists:
      # E.g. a model dir copied without commands/: operative_config.gin is the whole composition.
      return _OperativeConfigExperiment(run=run, model_dir=model_dir,
                                        gin_params=list(gin_params)), []
    raise CompletionError(
        f"cannot tell which model and size {model_dir} holds (no recorded training command "
        f"naming models/*.gin and sizes/*.gin in {model_dir / 'commands'}, and no "
        f"{operative_config.FILE_NAME}): give `code-t5 export` --model and --size, or copy the "
        f"model dir's commands/ or {operative_config.FILE_NAME} along with its checkpoints")
  kept = [p for p in params if not p.replace(" ", "").startswith(
      tuple(r.replace(" ", "") + "=" for r in _RUN_ONLY_PARAMS))]
  try:
    experiment = launcher.Experiment(model=model, size=size, run=run, vocab=recorded["vocab"],
                                     model_dir=model_dir, gin_params=kept + list(gin_params))
  except launcher.LaunchError as e:
    raise CompletionError(f"{model_dir}: {e}") from None
  return experiment, extra_files


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
  try:
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
  except (OSError, ValueError):
    raise CompletionError(f"{meta_path} is missing or unreadable: remove {path} to export "
                          "again") from None
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
           vocabulary=None) -> pathlib.Path:
  """Exports model_dir's newest checkpoint as a SavedModel (reused if it exists); returns it."""
  check_run(run)
  info = model_info(model_dir)
  check_settings(info, settings)
  vocabulary = vocabulary or task_vocabulary(info)
  check_vocabulary(info, vocabulary)
  existing = find_export(info, settings, run)
  if existing:
    check_export(existing, info, vocabulary)
    return existing
  experiment, extra_files = experiment_from_model_dir(info.model_dir, run, model, size,
                                                      gin_params)
  key = export_key(info, settings, run)
  exports = info.model_dir / EXPORT_DIR
  processes.remove_stale_temporaries(exports, echo)  # of exports that were killed
  tmp = exports / processes.temporary_name(key)
  shutil.rmtree(tmp, ignore_errors=True)
  command = experiment.export_command(tmp, extra_gin_files=extra_files,
                                      extra_gin_params=decode_bindings(info, settings, vocabulary))
  log = info.model_dir / "logs" / "export.log"
  echo(f"exporting {info.model_dir} step {info.step} ({key}); log: {log}")
  start = time.time()
  code = launcher.run(command, log, echo)
  written = [p for p in tmp.glob("*") if (p / "saved_model.pb").exists()] if tmp.exists() else []
  if code or len(written) != 1:
    shutil.rmtree(tmp, ignore_errors=True)
    raise CompletionError(f"mesh_transformer_main export exited with status {code} and wrote "
                          f"{len(written)} SavedModels; full log: {log}")
  (written[0] / EXPORT_METADATA).write_text(
      json.dumps(_metadata(info, settings, vocabulary, run), indent=1) + "\n", encoding="utf-8")
  final = exports / key
  try:
    written[0].rename(final)
  except OSError:
    if not (final / "saved_model.pb").exists():  # else a concurrent export got there first
      raise
  shutil.rmtree(tmp, ignore_errors=True)
  echo(f"exported in {time.time() - start:.0f} s: {final}")
  return final


# ------------------------------------------------------------------------------------------------
# Loading once, completing many.


@dataclasses.dataclass(frozen=True)
class Completion:
  completion: str  # the rest of the current line, no newline
  context_chars: int  # characters of code before the cursor the model read
  truncated: bool  # whether the context was cut on the left
  ms: float

  def reply(self) -> dict:
    """The JSON object `complete --json` prints and `serve` answers."""
    return {"completion": self.completion, "context_chars": self.context_chars,
            "truncated": self.truncated, "ms": round(self.ms, 1)}


class Completer:
  """A model dir's SavedModel, exported if missing and loaded once; `complete` per request."""

  def __init__(self, model_dir: pathlib.Path, settings: DecodeSettings = DecodeSettings(),
               run: str = "cpu", echo=None):
    echo = echo or (lambda line: print(line, file=sys.stderr))
    check_run(run)
    self.info = model_info(pathlib.Path(model_dir))
    check_settings(self.info, settings)
    self.settings = settings
    self.vocabulary = task_vocabulary(self.info)
    self.export_dir = export(self.info.model_dir, settings, run, echo=echo,
                             vocabulary=self.vocabulary)
    import tensorflow as tf  # pylint: disable=g-import-not-at-top
    try:  # SentencePiece vocabularies encode with tensorflow_text ops in the graph
      import tensorflow_text  # pylint: disable=g-import-not-at-top,unused-import
    except ImportError:
      pass
    # A TF1 session on the SavedModel's own graph (an Estimator export): loads faster than
    # tf.saved_model.load's function wrapping, and works whether or not eager mode is on.
    graph = tf.Graph()
    self._session = tf.compat.v1.Session(graph=graph)
    logger = tf.get_logger()
    level = logger.level
    logger.setLevel("ERROR")  # the v1 loader's deprecation notice
    try:
      with graph.as_default():
        meta_graph = tf.compat.v1.saved_model.loader.load(self._session, ["serve"],
                                                          str(self.export_dir))
    finally:
      logger.setLevel(level)
    signature = meta_graph.signature_def["serving_default"]
    self._input = signature.inputs["inputs"].name
    self._outputs = {key: signature.outputs[key].name for key in ("inputs", "outputs")}

  def context(self, prefix: str) -> str:
    return left_truncate(prefix, self.vocabulary, self.info.max_context_tokens)

  def predict(self, context: str) -> Tuple[str, str]:
    """(the input as the exported graph read it, its decode) for one context, uncut."""
    outputs = self._session.run(self._outputs, {self._input: [context.encode("utf-8")]})
    return tuple(outputs[key][0].decode("utf-8", errors="ignore") for key in ("inputs", "outputs"))

  def complete(self, prefix: str) -> Completion:
    """Completes the line that `prefix` (all the code before the cursor) ends in."""
    start = time.perf_counter()
    context = self.context(prefix)
    _, decoded = self.predict(context)
    return Completion(completion=postprocessors.first_line(decoded), context_chars=len(context),
                      truncated=len(context) < len(prefix),
                      ms=(time.perf_counter() - start) * 1000)

  def complete_at(self, text: str, cursor: int) -> Completion:
    return self.complete(text[:check_offset(text, cursor)])


# ------------------------------------------------------------------------------------------------
# Command line.


def add_decode_flags(parser) -> None:
  parser.add_argument("--checkpoint", type=pathlib.Path, required=True, metavar="DIR",
                      help="the model dir (checkpoints + operative_config.gin)")
  parser.add_argument("--beam-size", type=int, default=1)
  parser.add_argument("--max-length", type=int, default=DEFAULT_MAX_LENGTH,
                      help="most tokens decoded (default %(default)s)")
  parser.add_argument("--temperature", type=float, default=0.0,
                      help="0 = greedy (default); > 0 samples")
  parser.add_argument("--run", default="cpu", choices=EXPORT_RUNS,
                      help="device of the exported graph (default cpu)")


def settings_from(args) -> DecodeSettings:
  return DecodeSettings(beam_size=args.beam_size, max_length=args.max_length,
                        temperature=args.temperature)


def _complete(args) -> int:
  path, line, col = parse_target(args.target)
  if args.line is not None or args.col is not None:
    if line is not None:
      raise CompletionError(f"{args.target} gives a cursor already; drop --line/--col")
    if args.line is None or args.col is None:
      raise CompletionError("--line and --col go together")
    line, col = args.line, args.col
  text = read_source(path)
  name = "stdin" if path == "-" else path
  cursor = len(text) if line is None else cursor_offset(text, line, col, name)
  completer = Completer(args.checkpoint, settings_from(args), args.run)
  result = completer.complete(text[:cursor])
  if args.json:
    print(json.dumps(result.reply(), ensure_ascii=False))
  else:
    print(result.completion)
  return 0


def _export(args) -> int:
  settings = settings_from(args)
  path = export(args.checkpoint, settings, args.run, model=args.model, size=args.size,
                gin_params=args.gin_param)
  print(path)
  return 0


def register_cli(subparsers) -> None:
  complete = subparsers.add_parser(
      "complete", help="complete the current line at FILE:LINE:COL (or at the end of FILE / "
      "stdin) with a trained checkpoint; exports it to a SavedModel the first time")
  complete.add_argument("target", metavar="FILE:LINE:COL",
                        help="FILE:LINE:COL (1-based, columns in characters), FILE (cursor at "
                        "the end, or --line/--col), or - for stdin")
  complete.add_argument("--line", type=int)
  complete.add_argument("--col", type=int)
  complete.add_argument("--json", action="store_true",
                        help="print the JSON reply `serve` gives instead of the bare line")
  add_decode_flags(complete)
  complete.set_defaults(func=_complete)

  export_parser = subparsers.add_parser(
      "export", help="export a model dir's newest checkpoint as a TF SavedModel for "
      "complete/serve (mesh_transformer_main with runs/export.gin); reused if it exists")
  add_decode_flags(export_parser)
  export_parser.add_argument("--model", help="default: recorded in the model dir's commands/")
  export_parser.add_argument("--size", help="default: recorded in the model dir's commands/")
  export_parser.add_argument("--gin-param", action="append", default=[],
                             help="extra gin binding for the export")
  export_parser.set_defaults(func=_export)
