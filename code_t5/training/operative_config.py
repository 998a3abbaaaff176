"""What a Mesh TF model dir says about itself: its `operative_config.gin`, read as text.

Mesh TF's training writes every binding it used to `<model_dir>/operative_config.gin`. Tools that
take a model dir (`code-t5 complete`, `export`, `convert`) need a few of them — the task, the
model type, the lengths, the activations — without parsing the file with gin, which would need
every configurable it names registered (and a process that imports all of Mesh TF and t5).

Bindings are looked up by their short name in any scope or module (`run.model_type` matches
`utils.run.model_type` and `decoder/Unitransformer...`), `%MACRO` values are followed, and the
task `MIXTURE_NAME = @code_t5.task_name()` is resolved from the recorded objective and vocabulary.
"""

import ast
import importlib.util
import pathlib
import re
import reprlib
import tokenize
from typing import Dict, List, NamedTuple, Optional

from code_t5 import errors
from code_t5 import registration
from code_t5 import source_text
from code_t5 import stranger_paths

FILE_NAME = "operative_config.gin"
MAX_BYTES = 64 << 20  # Mesh TF writes ~10-30 kB
# What a model dir's gin text may hold when a command hands it to gin (`code-t5 export`): what
# code-t5's trainings record, and nothing else. gin carries out more than bindings: an `import`
# runs a module's code; `from __gin__ import dynamic_registration` lets any attribute of an
# imported module be called (`os.system`); an `@name()` reference calls a configurable when the
# binding is read, and an `@name` reference hands it to code that calls it (Mesh TF calls each
# entry of a layer list). Among the stack's configurables some write files where their bindings
# say (Mesh TF's save_scores), prepare or delete data (the dataset functions) or import any module
# a TFDS folder names. So a stranger's model dir may name only these.
_IMPORTABLE = re.compile(r"code_t5(\.\w+)*|t5\.models\.mesh_transformer|t5\.data(\.\w+)?"
                         r"|mesh_tensorflow(\.\w+)*")
# Configurables that only build the model, its schedule and its optimizer, wherever they are named.
_REFERABLE = frozenset(
    [f"mesh_tensorflow.transformer.transformer_layers.{name}" for name in (
        "SelfAttention", "DenseReluDense", "EncDecAttention")] +
    [f"mesh_tensorflow.transformer.transformer.sublayer_{name}" for name in (
        "rms_norm", "dropout", "residual", "call_layer", "mask_padding", "legacy_rms_norm",
        "legacy_dropout", "legacy_final_rms_norm")] +
    [f"mesh_tensorflow.transformer.learning_rate_schedules.{name}" for name in (
        "product_learning_rate", "linear_warmup", "linear_decay", "learning_rate_schedule_noam",
        "constant", "rsqrt")] +
    ["mesh_tensorflow.optimize.AdafactorOptimizer", "code_t5.updates_after_backward",
     "code_t5.GatherVocabEmbedding", "code_t5.loss_per_target_token", "code_t5.init_from_variable"])
# The only configurables gin may call while reading the text (`@name()`): they return a name, a
# vocabulary of a registered task, a mesh shape, a length.
_CALLABLE = frozenset(["code_t5.task_name", "t5.models.mesh_transformer.get_vocabulary",
                       "mesh_tensorflow.transformer.utils.tpu_mesh_shape",
                       "t5.data.preprocessors.random_spans_targets_length",
                       "t5.data.preprocessors.random_spans_tokens_length"])
# Functions that read or prepare data, or train: only as the whole value of the utils.run
# parameter a training binds them to, which an export never calls.
_PLACED = {
    "t5.models.mesh_transformer.mesh_train_dataset_fn": ("utils.run.train_dataset_fn",),
    "t5.models.mesh_transformer.mesh_eval_dataset_fn": (
        "utils.run.eval_dataset_fn", "code_t5.eval_datasets_without_autotune.eval_dataset_fn"),
    "code_t5.eval_datasets_without_autotune": ("utils.run.eval_dataset_fn",),
    "code_t5.train_model": ("utils.run.train_model_fn",),
}
# `@code_t5.task_name()` or `@scope/code_t5.task_name()` (gin_configs/dataset.gin).
_TASK_NAME_CALL = re.compile(r"^@(?:([\w.]+)/)?(?:code_t5\.)?task_name\(\)$")


class OperativeConfigError(errors.UserError):
  """A binding the caller needs is missing or not a literal; names the file."""


# What decides a statement's extent in a line: a string literal (its brackets are no brackets;
# one left open runs to the line's end: matched only when closed, a line of 32,000 escaped quotes
# was scanned again from each of them, 3.3 s: helper-53's review), a comment (nor are its), a
# bracket.
_EXTENT = re.compile(r"""'(?:\\.|[^'\\])*'?|"(?:\\.|[^"\\])*"?|#.*|[()\[\]{}]""")
_OPENING, _CLOSING = frozenset("([{"), frozenset(")]}")


def _code_and_depth(line: str):
  """`line` without its comment, and the brackets it leaves open (negative: closes)."""
  depth = 0
  for match in _EXTENT.finditer(line):
    token = match.group()
    if token[0] == "#":
      return line[:match.start()].rstrip(), depth
    if token in _OPENING:
      depth += 1
    elif token in _CLOSING:
      depth -= 1
  return line, depth


def parse_bindings(text: str) -> Dict[str, str]:
  """`name = value` statements of gin text, values as text; continuation lines are joined.

  A statement continues over lines ending in a backslash and while brackets are open, as gin
  writes long lists; brackets in strings and comments do not count (`x = '('` swallowed the
  bindings after it), and comments are left out. Comments, imports and includes are skipped.
  Linear in the text: each line is scanned once (the statement was recounted whole at each of
  its lines, and a stranger's 200 kB of open brackets took 24 s: helper-50's audit).
  """
  bindings = {}
  parts, depth = [], 0
  for raw in text.splitlines():
    line = raw.rstrip()
    if not parts and (not line.strip() or
                      line.lstrip().startswith(("#", "import ", "include ", "from "))):
      continue
    continued = line.endswith("\\")
    code, opened = _code_and_depth(line[:-1] if continued else line)
    if code.strip():  # (a comment line inside brackets adds nothing)
      parts.append(code.strip())
    depth += opened
    if continued or depth > 0:
      continue
    name, sep, value = " ".join(parts).partition("=")
    if sep:
      bindings[name.strip()] = value.strip()
    parts, depth = [], 0
  return bindings


def read_text(path: pathlib.Path) -> str:
  """The text of an operative config: a regular UTF-8 file of at most MAX_BYTES (the model dir
  may be a stranger's); OperativeConfigError, one line, otherwise."""
  try:
    data = stranger_paths.read_regular(path, MAX_BYTES)
  except OSError as e:
    raise OperativeConfigError(f"{path} cannot be read: {e.strerror}") from None
  try:
    return data.decode("utf-8")
  except UnicodeDecodeError as e:
    raise OperativeConfigError(
        f"{path} cannot be read: it is not UTF-8 text (byte 0x{data[e.start]:02x} at "
        f"offset {e.start}), so it is damaged: copy it again from the model dir it came "
        "from") from None


def unparsable(text: str) -> Optional[str]:
  """Why gin's parser refuses `text` (one line), or None where it reads every statement; nothing
  is looked up, imported or called."""
  from gin import config_parser  # pylint: disable=g-import-not-at-top  (as below)
  parser = config_parser.ConfigParser(source_text.lf_line_ends(text), _References())
  try:
    while parser.parse_statement() is not None:
      pass
  except _PARSE_ERRORS as e:
    return _parse_error(e)
  return None


# What gin's parser raises on text it cannot read (RecursionError: nested past the limit).
_PARSE_ERRORS = (SyntaxError, ValueError, tokenize.TokenError, RecursionError)


def _parse_error(error: BaseException) -> str:
  """A parse error as one short line (TokenError's text is its arguments' tuple:
  ('EOF in multi-line statement', (2, 0)))."""
  why = error.args[0] if isinstance(error, tokenize.TokenError) and error.args else str(error)
  return " ".join(str(why).split())[:300] or type(error).__name__


def unsafe_statement(text: str) -> Optional[str]:
  """The first statement of gin `text` that could make gin run code, call a configurable or read
  a file that no code-t5 training records (see _REFERABLE); None if none. Text gin cannot parse
  is refused too: gin would refuse it, after carrying out the statements before."""
  # Here, not at the top: the data tools read operative configs where gin is not installed.
  from gin import config_parser  # pylint: disable=g-import-not-at-top
  delegate = _References()
  # gin reads a file with open(), whose lines also end at a lone "\r": read as one comment here,
  # `# note\r<statement>` hid the statement (helper-24's audit).
  parser = config_parser.ConfigParser(source_text.lf_line_ends(text), delegate)
  while True:
    try:
      statement = parser.parse_statement()
    except _PARSE_ERRORS as e:
      return f"text gin cannot read ({_parse_error(e)})"
    if statement is None:
      return None
    references, delegate.references = delegate.references, []
    # What the refusal quotes: the statement's first line.
    shown = statement.location.line_content.strip() or type(statement).__name__
    if isinstance(statement, config_parser.BlockDeclaration):
      # `selector:` then indented `param = value` lines: its bindings came back from the parser
      # later, without the references read in the block, so an `@name()` there passed (helper-
      # 20's audit: Mesh TF's save_scores wrote where the block said). No training writes one.
      return shown
    if isinstance(statement, config_parser.IncludeStatement):
      # Only a gin file of the project's or t5's own: gin takes any other name to its file
      # readers, which read `file:///...` and import the package a `pkg/sub/x.gin` names.
      if not _own_gin_file(statement.filename):
        return shown
    elif isinstance(statement, config_parser.ImportStatement):
      if statement.is_from or not _IMPORTABLE.fullmatch(statement.module):
        return shown
    elif isinstance(statement, config_parser.BindingStatement):
      key = f"{statement.selector}.{statement.arg_name}"
      for reference in references:
        whole_value_of = key if statement.value is reference else None
        if not _allowed(reference.name, reference.called, whole_value_of):
          named = f"@{reference.name}{'()' if reference.called else ''}"
          return shown if named in shown else f"{key} = ... {named} ..."


def _own_gin_file(name: str) -> bool:
  """Whether `name` is a gin file of the project's gin_configs/ or of t5's (t5/models/gin, on
  mesh_transformer_main's search path), named relatively without `..` or a scheme, exactly as
  pathlib writes it (`dataset.gin/` was a file to pathlib, and `dataset` a package to import to
  gin's resource reader: helper-24's audit)."""
  parts = pathlib.PurePosixPath(name).parts
  if (not parts or name.startswith(("/", "~")) or ":" in name or ".." in parts or "\\" in name
      or str(pathlib.PurePosixPath(name)) != name):
    return False
  return any((folder / name).is_file() for folder in _gin_folders())


def _gin_folders() -> List[pathlib.Path]:
  """The folders gin's search path gives mesh_transformer_main: the project's and t5's."""
  folders = [pathlib.Path(registration.GIN_CONFIGS)]
  spec = importlib.util.find_spec("t5")  # found, not imported
  if spec is not None and spec.submodule_search_locations:
    folders.append(pathlib.Path(list(spec.submodule_search_locations)[0]) / "models" / "gin")
  return folders


class _Reference(NamedTuple):
  name: str  # as written, scope included
  called: bool  # `@name()`


class _References:
  """gin's ParserDelegate (the two methods its parser calls; not a subclass, so that gin is
  imported only where text is checked): records the configurables a statement names, and stands
  for them in its value, so that nothing is looked up or called."""

  def __init__(self):
    self.references = []

  def configurable_reference(self, scoped_configurable_name, evaluate):
    reference = _Reference(scoped_configurable_name, evaluate)
    self.references.append(reference)
    return reference

  def macro(self, macro_name):
    return macro_name


def _named(selector: str, full_names) -> Optional[str]:
  """The full name gin resolves `selector` (any dotted suffix, scope dropped) to among
  full_names, or None."""
  selector = selector.rpartition("/")[2]
  return next((n for n in full_names if n == selector or n.endswith("." + selector)), None)


def _allowed(name: str, called: bool, whole_value_of: Optional[str]) -> bool:
  if called:
    return _named(name, _CALLABLE) is not None
  if _named(name, _REFERABLE):
    return True
  placed = _named(name, _PLACED)
  return bool(placed and whole_value_of and _named(whole_value_of, _PLACED[placed]))


class OperativeConfig:
  """The bindings of one operative_config.gin (none when the file is missing or not given)."""

  def __init__(self, path: Optional[pathlib.Path] = None):
    self.path = pathlib.Path(path) if path else None
    self.exists = bool(path) and self.path.is_file()
    self.bindings = parse_bindings(self._read()) if self.exists else {}

  def _read(self) -> str:
    return read_text(self.path)

  @classmethod
  def of_model_dir(cls, model_dir) -> "OperativeConfig":
    return cls(pathlib.Path(model_dir) / FILE_NAME)

  def _keys(self, name: str):
    """Keys that bind `name`: exactly, in a module (`a.name`) or in a scope (`s/name`)."""
    return [key for key in self.bindings
            if key == name or key.endswith("." + name) or key.endswith("/" + name)]

  def text(self, name: str, scope: Optional[str] = None) -> Optional[str]:
    """The value text bound to `name` (preferring `scope/...` when given), macros followed."""
    keys = self._keys(name)
    if scope:
      keys = sorted(keys, key=lambda k: not k.startswith(scope + "/"))
    if not keys:
      return None
    value, seen = self.bindings[keys[0]], set()
    while value.startswith("%") and value not in seen:
      seen.add(value)
      value = self.bindings.get(value[1:], value)
    return value

  def value(self, name: str, default=None, scope: Optional[str] = None, kind=None):
    """The Python literal bound to `name`, `default` when unbound; with `kind` (a type or a
    tuple of types, as isinstance takes), an OperativeConfigError for a literal of another type
    than those or None (a bool is no int here): the file may be a stranger's."""
    text = self.text(name, scope)
    if text is None:
      return default
    try:
      value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
      raise OperativeConfigError(f"{self.path} binds {name} to {reprlib.repr(text)}, not a literal "
                                 "that code-t5 can read") from None
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if kind is not None and value is not None and (not isinstance(value, kinds) or (
        isinstance(value, bool) and bool not in kinds)):
      raise OperativeConfigError(f"{self.path} binds {name} to {reprlib.repr(text)}, not "
                                 f"{' or '.join(k.__name__ for k in kinds)}: mend it")
    return value

  def sequence_length(self) -> Optional[Dict[str, int]]:
    """utils.run.sequence_length as {"inputs": n, "targets": n} (an int binds both); None
    when unbound."""
    lengths = self.value("run.sequence_length", kind=(int, dict))
    if isinstance(lengths, int):
      lengths = {"inputs": lengths, "targets": lengths}
    if lengths is not None and not all(
        isinstance(lengths.get(k), int) and not isinstance(lengths[k], bool) and lengths[k] > 0
        for k in ("inputs", "targets")):
      raise OperativeConfigError(f"{self.path} binds run.sequence_length to "
                                 f"{reprlib.repr(self.text('run.sequence_length'))}, not positive "
                                 "'inputs' and 'targets' lengths: mend it")
    return None if lengths is None else {"inputs": lengths["inputs"],
                                         "targets": lengths["targets"]}

  def batch_size(self):
    """utils.run.batch_size: an int, or (method, count) as Mesh TF takes it; None when
    unbound."""
    batch = self.value("run.batch_size", kind=(int, tuple))
    if isinstance(batch, tuple) and not (
        len(batch) == 2 and isinstance(batch[0], str) and isinstance(batch[1], int)
        and not isinstance(batch[1], bool)):
      raise OperativeConfigError(f"{self.path} binds run.batch_size to "
                                 f"{reprlib.repr(self.text('run.batch_size'))}, not (method, "
                                 "count): mend it")
    return batch

  def task(self) -> Optional[str]:
    """The seqio task or mixture Mesh TF trained on (get_vocabulary.mixture_or_task_name)."""
    text = self.text("get_vocabulary.mixture_or_task_name")
    if text is None:
      return None
    call = _TASK_NAME_CALL.match(text)
    if not call:
      return self.value("get_vocabulary.mixture_or_task_name", kind=str)
    # gin evaluates `MACRO = @fn()` in the scope MACRO: the file records "MIXTURE_NAME/task_name.x".
    scope = call.group(1) or self._macro_holding(text)
    from code_t5.data import task_names  # pylint: disable=g-import-not-at-top
    try:
      return task_names.name_of(self.value("task_name.objective", "prefix_lm", scope, str),
                                self.value("task_name.vocabulary", "byte", scope, str),
                                self.value("task_name.version", task_names.VERSION, scope, str))
    except ValueError as e:
      raise OperativeConfigError(f"{self.path}: {e}") from None

  def _macro_holding(self, value_text: str) -> Optional[str]:
    return next((key for key, value in self.bindings.items()
                 if value == value_text and "." not in key and "/" not in key), None)
