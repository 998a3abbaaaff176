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
import pathlib
import re
from typing import Dict, Optional

from code_t5 import errors

FILE_NAME = "operative_config.gin"
# `@code_t5.task_name()` or `@scope/code_t5.task_name()` (gin_configs/dataset.gin).
_TASK_NAME_CALL = re.compile(r"^@(?:([\w.]+)/)?(?:code_t5\.)?task_name\(\)$")


class OperativeConfigError(errors.UserError):
  """A binding the caller needs is missing or not a literal; names the file."""


def parse_bindings(text: str) -> Dict[str, str]:
  """`name = value` statements of gin text, values as text; continuation lines are joined.

  A statement continues over lines ending in a backslash and while brackets are open, as gin
  writes long lists. Comments, imports and includes are skipped.
  """
  bindings = {}
  statement = ""
  for raw in text.splitlines():
    line = raw.rstrip()
    if not statement and (not line.strip() or
                          line.lstrip().startswith(("#", "import ", "include ", "from "))):
      continue
    continued = line.endswith("\\")
    part = (line[:-1] if continued else line).strip()
    statement = f"{statement} {part}" if statement else part
    depth = sum(statement.count(c) for c in "([{") - sum(statement.count(c) for c in ")]}")
    if continued or depth > 0:
      continue
    name, sep, value = statement.partition("=")
    if sep:
      bindings[name.strip()] = value.strip()
    statement = ""
  return bindings


class OperativeConfig:
  """The bindings of one operative_config.gin (none when the file is missing or not given)."""

  def __init__(self, path: Optional[pathlib.Path] = None):
    self.path = pathlib.Path(path) if path else None
    self.exists = bool(path) and self.path.is_file()
    self.bindings = parse_bindings(self._read()) if self.exists else {}

  def _read(self) -> str:
    try:
      data = self.path.read_bytes()
    except OSError as e:
      raise OperativeConfigError(f"{self.path} cannot be read: {e.strerror}") from None
    try:
      return data.decode("utf-8")
    except UnicodeDecodeError as e:
      raise OperativeConfigError(
          f"{self.path} cannot be read: it is not UTF-8 text (byte 0x{data[e.start]:02x} at "
          f"offset {e.start}), so it is damaged: copy it again from the model dir it came "
          "from") from None

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

  def value(self, name: str, default=None, scope: Optional[str] = None):
    """The Python literal bound to `name`, `default` when unbound."""
    text = self.text(name, scope)
    if text is None:
      return default
    try:
      return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError):
      raise OperativeConfigError(f"{self.path} binds {name} to {text!r}, not a literal that "
                                 "code-t5 can read") from None

  def task(self) -> Optional[str]:
    """The seqio task or mixture Mesh TF trained on (get_vocabulary.mixture_or_task_name)."""
    text = self.text("get_vocabulary.mixture_or_task_name")
    if text is None:
      return None
    call = _TASK_NAME_CALL.match(text)
    if not call:
      return self.value("get_vocabulary.mixture_or_task_name")
    # gin evaluates `MACRO = @fn()` in the scope MACRO: the file records "MIXTURE_NAME/task_name.x".
    scope = call.group(1) or self._macro_holding(text)
    from code_t5.data import task_names  # pylint: disable=g-import-not-at-top
    try:
      return task_names.name_of(self.value("task_name.objective", "prefix_lm", scope),
                                self.value("task_name.vocabulary", "byte", scope),
                                self.value("task_name.version", task_names.VERSION, scope))
    except ValueError as e:
      raise OperativeConfigError(f"{self.path}: {e}") from None

  def _macro_holding(self, value_text: str) -> Optional[str]:
    return next((key for key, value in self.bindings.items()
                 if value == value_text and "." not in key and "/" not in key), None)
