"""What the block around the cursor already defines: the engine's check on `def`/`class` lines.

At the start of a method the model often writes one the class already has (`def setUp(self):`
where `setUp` is defined above and `tearDown` is wanted; `def server_close(self):` twice in
socketserver.py). `Definitions(prefix, below).redefines(line)` says whether a candidate line
defines a function or class that its block (the lines at the same indentation under the same
header, above and below the cursor) already defines. Decorators often make real redefinitions (a
property's setter, `typing.overload`, `functools.singledispatch`'s `register`, a registry's or a
cache's decorator in tests that define `f` again and again), so a definition under a decorator on
either side does not count, unless its decorators are only `property`, `staticmethod`,
`classmethod` and their kin (`@property def username(self):` in a class that has that property,
where `password` was due: urllib/parse.py). Such lines are ranked after the others
(code_t5.engine.complete), not dropped.

Reading is by indentation only (no parse): the block ends at the first line indented less than the
candidate that is not blank or a comment, so a docstring's text at a lower indentation ends it
early (a redefinition is then missed, never invented). At most MAX_LINES lines are read each way.
"""

import re
from typing import Optional, Set, Tuple

MAX_LINES = 2_000

_DEFINITION = re.compile(r"([ \t]*)(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_]\w*)")
# `self` as a name (not an attribute of that name).
_SELF = re.compile(r"(?<![\w.])self\b")
_DEF_PARAMETERS = re.compile(r"[ \t]*(?:async[ \t]+)?def[ \t]+\w+[ \t]*\((.*)")
_COMMENT = re.compile(r"#.*")
# Decorators that change what a def makes, not its name's binding: a def under these (or none)
# in a block that defines its name already is a redefinition. Others often make real ones (a
# property's setter, `typing.overload`, `functools.singledispatch`'s `register`, a registry's or
# a cache's decorator in tests that define `f` again and again).
_PLAIN = re.compile(r"@[ \t]*(?:(?:abc|functools|builtins)\.)?"
                    r"(?:property|cached_property|staticmethod|classmethod|abstractmethod"
                    r"|abstractproperty)[ \t]*(?:#.*)?$")


def defined_name(line: str) -> Optional[Tuple[str, int]]:
  """The name a def or class header defines, and where it ends in `line`; None for other lines."""
  match = _DEFINITION.match(line)
  return None if match is None else (match.group(2), match.end(2))


def _indent(line: str) -> str:
  return line[:len(line) - len(line.lstrip(" \t"))]


def _block_names(lines, indent: str, redefining) -> Set[str]:
  """The names that `lines` (read away from the cursor) define at `indent` before the block
  ends; `redefining(i)` says whether the definition at lines[i] has a decorator that makes
  redefinitions (_redefining_decorator), whose name does not count."""
  names = set()
  for i, line in enumerate(lines):
    stripped = line.strip()
    if not stripped or stripped.startswith("#"):
      continue
    own = _indent(line)
    if len(own) < len(indent):
      break  # the block's header, or a line after the block
    if own != indent:
      continue
    match = _DEFINITION.match(line)
    if match and not redefining(i):
      names.add(match.group(2))
  return names


class Definitions:
  """The code around one cursor, read for `redefines`: the lines above and below are split once,
  and each indentation's block names read once, however many candidate lines are judged."""

  def __init__(self, prefix: str, below: str):
    head_start = prefix.rfind("\n") + 1
    self._head = prefix[head_start:]
    self._above = prefix[:head_start]
    self._below = below
    self._lines = None  # (above, nearest first; below, in order): split for the first definition
    self._names = {}  # indentation -> names its block defines, redefining decorators aside
    self._self_taken = None  # whether a function around the cursor takes `self` (read once)

  def reads_absent_self(self, line: str) -> bool:
    """Whether the cursor's line completed with `line` reads `self` where no function around the
    cursor takes it (helper-22's audit: `self._judge(...)` in a plain function, taken whole from
    another file). The functions around it are the headers above at lower indentations, up to
    the margin; where that chain cannot be read with confidence (a header's parameters over
    several lines, a line above at a lower indentation that opens no block: a string's text or a
    continuation line), `self` counts as there. False where the typed part reads `self` itself."""
    if (not _SELF.search(line) or _SELF.search(self._head)
        or _DEF_PARAMETERS.match(self._head + line)):  # a method's header takes `self`
      return False
    if self._self_taken is None:
      self._self_taken = self._self_in_scope()
    return not self._self_taken

  def _self_in_scope(self) -> bool:
    level = len(_indent(self._head).expandtabs())
    above = self._above.rsplit("\n", MAX_LINES + 1)[-MAX_LINES - 1:-1]
    for text in reversed(above):
      code = _COMMENT.sub("", text).rstrip()
      if not code:
        continue
      own = len(_indent(text).expandtabs())
      if own >= level:
        continue
      if not code.endswith(":"):
        return True  # not a block's header: the chain is not read with confidence
      level = own
      match = _DEF_PARAMETERS.match(code)
      if match:
        parameters = match.group(1)
        if ")" not in parameters or re.match(r"[ \t]*self\b", parameters):
          return True
      if level == 0:
        return False
    return level > 0  # lines run out before the margin: not read

  def redefines(self, line: str) -> bool:
    """Whether the cursor's line (its typed part + `line`) defines a name that its block already
    defines, above the cursor or below it, neither under a decorator that makes redefinitions."""
    match = _DEFINITION.match(self._head + line)
    if match is None:
      return False
    indent, name = match.group(1), match.group(2)
    if self._lines is None:
      above = self._above.rsplit("\n", MAX_LINES + 1)[-MAX_LINES - 1:-1]
      self._lines = (above[::-1], self._below.split("\n", MAX_LINES)[:MAX_LINES])
    above, after = self._lines
    if _redefining_decorator(above, 0, indent):
      return False  # the candidate itself is a setter, an overload...
    names = self._names.get(indent)
    if names is None:
      before_after = after[::-1]
      names = (_block_names(above, indent, lambda i: _redefining_decorator(above, i + 1, indent))
               | _block_names(after, indent,
                              lambda i: _redefining_decorator(before_after, len(after) - i,
                                                             indent)))
      self._names[indent] = names
    return name in names


def _redefining_decorator(lines, start: int, indent: str) -> bool:
  """Whether the definition at `indent` whose lines above it are lines[start:] (nearest first)
  has a decorator other than the _PLAIN ones: one line, or a decorator whose arguments take
  several lines (a `)` at `indent` whose line that opened it, the nearest above at `indent`,
  starts with `@`; a deeper `)`, or one that closes a statement, is no decorator's)."""
  for k, line in enumerate(lines[start:start + 20], start):
    stripped = line.strip()
    if not stripped or stripped.startswith("#"):
      continue
    if stripped.startswith(")") and _indent(line) == indent:
      opener = next((above for above in lines[k + 1:k + 50]
                     if above.strip() and _indent(above) == indent), "")
      return opener.lstrip().startswith("@")
    if not stripped.startswith("@"):
      return False
    if not _PLAIN.match(stripped):
      return True
  return False
