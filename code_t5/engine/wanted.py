"""What the file reads and nothing binds: the imports and definitions its code wants.

A user often writes the code first and then goes up to write what it needs: `io.open(path)` in a
function, then `import io` at the top; `self.close()` in one method, then `def close(self):`;
`return header + body`, then `header = ...` above it. The model's lines at such a cursor often
hold the wanted line, ranked below a line its training code wrote more often there (`import os`,
`def __enter__(self):`). `Wanted(prefix, below).wants(name)` says whether the file's lines read
a name (a word of their code, strings and comments aside) that nothing in the file binds: no
import, no def or class header (its name and parameters), no assignment, `for` or `as` target;
it reads each name a candidate line binds, once, at its occurrences in the file.
`first(lines, wanted)` ranks a line that binds a wanted name as if its score were
names.NAME_BONUS higher. Where the user writes the import or the definition first, no line reads
the name yet and nothing changes.

The converse, `Wanted.leaves_unbound(statement)`: where the code a line serves (the whole file for
an import at the top level, the block of a def header, the rest of the function for a statement
in one) reads wanted names, a line binding none of them is wrong there (`import os` where the file
reads `Image.core` and nothing imports Image); code_t5.engine.complete then shows no line. For a
def header and a statement in a function, a name is read by namespace (code_t5.engine.namespaces):
only the function, the functions around it and the module bind its names, not another method (a
parameter `debug` of one method binds no `debug` that another one's body reads).

Measured at the held-out points of the site-packages corpus and dataset-dev (docs/engine.md,
"The imports and definitions the code wants", and the filters' list): the ranking made 12 best
lines exact, none inexact (corpus EM 29.5 -> 30.6, dataset-dev validation 25.0 -> 25.5, test
unchanged); leaves_unbound marked the best line at 48 of the 1,276 points (33 before names were
read by namespace), never right, and no target.
"""

import keyword
import re
from typing import Dict, FrozenSet, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

from code_t5.engine import decoding
from code_t5.engine import docstrings as docstrings_lib
from code_t5.engine import imports
from code_t5.engine import line_filters
from code_t5.engine import names
from code_t5.engine import namespaces as namespaces_lib
from code_t5.engine import scopes

# An assignment's target name: a bare name (not an attribute, nor a subscript's), or an attribute
# of self.
_TARGET = re.compile(r"(?<![\w.])self[ \t]*\.[ \t]*([^\W\d]\w*)"
                     r"|(?<![\w.\[])([^\W\d]\w*)(?![\w.\[(])")
_KEYWORDS = frozenset(keyword.kwlist) | {"self", "cls"}
# The names read by the code a line serves (Wanted.leaves_unbound): bare names (not attributes,
# not a string's prefix); at the top level, the names of modules and functions only (before a dot
# or a call: reading every name of a 95 kB file took 65 ms).
_BARE_NAME = re.compile(r"(?<![\w.])[^\W\d]\w*(?![\w'\"])")
_USED_NAME = re.compile(r"(?<![\w.])([^\W\d]\w*)[ \t]*[.(]")
_DOT_THEN_SPACE = re.compile(r"\.[ \t\\]*\n[ \t]*")
_CHAINED_TARGET = re.compile(r"(?<![\w.])([^\W\d]\w*)[ \t]*=(?!=)")
# Never wanted: names Python knows (names.ALWAYS_KNOWN and its own), and Python 2's builtins,
# which old branches of a file read (`unicode`, `xrange`).
_NEVER_WANTED = names.ALWAYS_KNOWN | names.ALSO_KNOWN | frozenset(
    ["unicode", "long", "xrange", "basestring", "buffer", "unichr", "raw_input", "file", "reduce",
     "cmp", "execfile", "intern", "apply", "coerce", "reload", "StandardError"])
_MAX_ENCLOSING_LINES = 2000
# The function a line serves, among the namespaces (Wanted._unbound_in).
_FUNCTION = object()
_DECLARES = re.compile(r"[ \t]*(?:global|nonlocal)\b")
_ATTRIBUTE_BEFORE = re.compile(r"\.[ \t]*\Z")


# Where a name stands, read one occurrence at a time (a name occurs a few dozen times in a file at
# most; reading the whole file's bindings took 9 ms for 120 kB at every line the cursor moved to):
# a line that is an import statement, or a def or class header, binds all its words; a name binds
# before "=" or ":=" (a target, a keyword argument), after `as`, between `for` and `in`, alone
# before ":" at a line's start (an annotated target, a parameter on a line of its own), or among
# names and commas before an "=" (`a, b = ...`), as a lambda's parameter; and on the lines of an
# import's brackets or of a def header's (`def f(\n    a,\n    *args,\n):`).
_HEADER_OR_IMPORT = re.compile(r"[ \t]*(?:from|import|(?:async[ \t]+)?def|class)\b")
_ASSIGNED_AFTER = re.compile(r"[ \t]*:?=(?!=)")
_AS_BEFORE = re.compile(r"\bas[ \t]+\Z")
_LAMBDA_BEFORE = re.compile(r"\blambda\b[^:]*\Z")  # a lambda's parameters
_FOR_BEFORE = re.compile(r"\bfor\b(?!.*\bin\b)")
_IN_AFTER = re.compile(r".*?\bin\b")
_ANNOTATED_AFTER = re.compile(r"[ \t]*:(?!=)")
_NAMES_BEFORE = re.compile(r"[ \t]*[\w \t,(\[*.]*")
_NAMES_THEN_EQUALS = re.compile(r"[\w \t,()\[\]*.]*=(?!=)")
# Targets in brackets over lines: lines of names and commas (`(a, b,`), the last closing the
# brackets before "=" (`c) = ...`).
_NAMES_TO_END = re.compile(r"[\w \t,()\[\]*]*")
_CLOSED_THEN_EQUALS = re.compile(r"[\w \t,*]*[)\]][ \t]*=(?!=)")
_MAX_TARGET_LINES = 20
# In an import's brackets: `a as b,`, the last `c)`; opened by `from m import (`, names may follow.
_IMPORTED_NAMES_LINE = re.compile(r"[ \t]*[\w., \t]*\)?[ \t]*")
_OPENS_IMPORT = re.compile(r"[ \t]*(?:from[ \t]+[\w.]+[ \t]+)?import[ \t]*\([\w., \t]*\Z")
# Lines read back for the start of an import's brackets, and of a def header's.
_MAX_IMPORTED_NAMES_LINES = 200
_MAX_HEADER_LINES = 40
_DEF = re.compile(r"[ \t]*(?:async[ \t]+)?def\b")


def _binds_there(line: str, start: int, end: int) -> bool:
  """Whether the name at line[start:end] is bound there (see above)."""
  before = line[:start]
  return bool(_HEADER_OR_IMPORT.match(line) or _ASSIGNED_AFTER.match(line, end)
              or _AS_BEFORE.search(before) or _LAMBDA_BEFORE.search(before)
              or (_FOR_BEFORE.search(before) and _IN_AFTER.match(line, end))
              or (not before.strip() and _ANNOTATED_AFTER.match(line, end))
              or (_NAMES_BEFORE.fullmatch(before) and _NAMES_THEN_EQUALS.match(line, end)))


class Wanted:
  """The names a file wants bound, around one cursor: `prefix` (the code before the cursor,
  ending in the typed part of its line) and `below` (the lines after the cursor's)."""

  def __init__(self, prefix: str, below: str):
    line_start = prefix.rfind("\n") + 1
    self._head = prefix[line_start:]
    self._above = prefix[:line_start]
    self._below = below
    self._text: Optional[str] = None  # the file but the cursor's line, joined when first asked
    self._docstrings: Optional[docstrings_lib.Docstrings] = None  # its docstrings, read with it
    self._wanted: Dict[str, bool] = {}
    self._served_by: Dict[Tuple[str, int], FrozenSet[str]] = {}
    self._namespaces: Optional[namespaces_lib.Namespaces] = None  # read when first needed

  def wants(self, name: str) -> bool:
    """Whether the file's lines other than the cursor's read `name` (as a word of their code, not
    of a string or comment) and none binds it."""
    found = self._wanted.get(name)
    if found is None:
      found = self._wanted[name] = self._read_unbound(name)
    return found

  def _read_unbound(self, name: str) -> bool:
    read = False
    for _, binds, _ in self._occurrences(name):
      if binds:
        return False
      read = True
    return read

  def _occurrences(self, name: str, starts: Optional[Iterable[int]] = None
                   ) -> Iterator[Tuple[int, bool, Optional[int]]]:
    """(where it starts, whether it binds the name there, the start of its line where that line
    is a def or class header defining the name, else None) for each occurrence of `name` in the
    file's code (not in a string or comment), in the order of `starts` (default: the file's)."""
    self._join()
    text = self._text
    for start in names.word_starts(text, name) if starts is None else starts:
      if self._docstrings.inside(start):
        continue
      line_start = text.rfind("\n", 0, start) + 1
      line_end = text.find("\n", start)
      line = text[line_start:line_end if line_end >= 0 else len(text)]
      column = start - line_start
      if line_filters.in_string_or_comment(line, column):
        continue
      binds = bool(_binds_there(line, column, column + len(name))
                   or self._in_import_brackets(line, line_start)
                   or self._continues_import(line_start)
                   or self._in_def_brackets(line_start)
                   or self._targets_over_lines(line, line_end))
      defined = scopes.defined_name(line) if binds else None
      header = line_start if defined is not None and defined[0] == name else None
      yield start, binds, header

  def _join(self) -> None:
    """The file but the cursor's line, and where its docstrings are (once)."""
    if self._text is None:
      self._text = self._above + self._below
      self._docstrings = docstrings_lib.Docstrings(self._above, self._below)

  @property
  def docstrings(self) -> docstrings_lib.Docstrings:
    """The file's docstrings around the cursor's line (read once, with the file)."""
    self._join()
    return self._docstrings

  @property
  def above(self) -> str:
    """The file's lines above the cursor's."""
    return self._above

  @property
  def text(self) -> str:
    """The file but the cursor's line: the lines above it, then those below (joined once)."""
    self._join()
    return self._text

  @property
  def namespaces(self) -> namespaces_lib.Namespaces:
    """The namespaces of the file but the cursor's line (read once, when first asked)."""
    if self._namespaces is None:
      self._join()
      self._namespaces = namespaces_lib.Namespaces(self._text, self._docstrings)
    return self._namespaces

  def _in_import_brackets(self, line: str, line_start: int) -> bool:
    """Whether `line` (starting at line_start in the text) is one of the lines inside an
    import's brackets (`from m import (`, then lines of names and commas)."""
    if not _IMPORTED_NAMES_LINE.fullmatch(line):
      return False
    text, end = self._text, line_start - 1
    for _ in range(_MAX_IMPORTED_NAMES_LINES):
      if end < 0:
        return False
      start = text.rfind("\n", 0, end) + 1
      above = text[start:end]
      if not _IMPORTED_NAMES_LINE.fullmatch(above):
        return bool(_OPENS_IMPORT.match(above))
      end = start - 1
    return False

  def _targets_over_lines(self, line: str, line_end: int) -> bool:
    """Whether a name of `line` (ending at line_end in the text) is one of the targets of an
    assignment whose bracketed targets run over lines (`(a, b,` then `c) = ...`; tomllib's `(`
    then `year_str,` ... `) = match.groups()`)."""
    if not (_NAMES_TO_END.fullmatch(line) and line.rstrip().endswith(",")):
      return False
    text = self._text
    for _ in range(_MAX_TARGET_LINES):
      if line_end < 0:
        return False
      start, line_end = line_end + 1, text.find("\n", line_end + 1)
      below = text[start:line_end if line_end >= 0 else len(text)]
      if _CLOSED_THEN_EQUALS.match(below):
        return True
      if not below.strip() or not _NAMES_TO_END.fullmatch(below):
        return False
    return False

  def _continues_import(self, line_start: int) -> bool:
    """Whether the line starting at line_start in the text continues an import statement after a
    backslash (`from errno import EAGAIN, \\` then names)."""
    text, end = self._text, line_start - 1
    for _ in range(_MAX_IMPORTED_NAMES_LINES):
      if end < 0 or not text.endswith("\\", 0, end):
        return False
      start = text.rfind("\n", 0, end) + 1
      if _HEADER_OR_IMPORT.match(text, start):
        return _DEF.match(text, start) is None and not text.startswith("class", start)
      end = start - 1
    return False

  def _in_def_brackets(self, line_start: int) -> bool:
    """Whether the line starting at line_start in the text is inside a def header's brackets
    that opened on a line above (a parameter on a line of its own)."""
    text, end, depth = self._text, line_start - 1, 0
    for _ in range(_MAX_HEADER_LINES):
      if end < 0:
        return False
      start = text.rfind("\n", 0, end) + 1
      above = text[start:end]
      code = line_filters.code_only(above)
      depth += code.count("(") - code.count(")")
      if _HEADER_OR_IMPORT.match(above):
        return depth > 0 and _DEF.match(above) is not None
      if code.rstrip().endswith(":") or not above.strip():
        return False  # a block header or a blank line: no header's brackets span it
      end = start - 1
    return False

  def binds(self, line: str) -> bool:
    """Whether the cursor's line completed with `line` binds a wanted name: an import statement,
    a def or class header (its name not typed whole before the cursor: then every line defines
    it), an assignment to a bare name or to an attribute of self, a `for` or `as` target."""
    statement = self._head + line
    imported = imports.bound_by(statement.strip())
    if imported is not None:
      return any(self.wants(name.split(".")[0]) for name in imported)
    defined = scopes.defined_name(statement)
    if defined is not None:
      return len(statement) - len(line) < defined[1] and self.wants(defined[0])
    targets = _targets(line_filters.code_only(statement)) - _KEYWORDS
    return any(self.wants(name) for name in targets)

  def leaves_unbound(self, statement: str) -> bool:
    """Whether the cursor's line completed as `statement` (a whole statement that starts on it:
    line_filters.LineContext.code_of) leaves unbound a name the code it serves needs: that code
    reads bare names nothing in the file binds (`wants`), where the line is an import at the top
    level (the code: the whole file), a def header (its block below) or a statement in a
    function (the function's lines below it), and the line binds none of them (an import's
    names, the header's name and words, a target). The line `from . import Image` was, completed
    as `import os`; `palette = ...` as `colortable = ...` above a loop that reads palette. False
    elsewhere, and where the lines below start inside a string or the file makes names."""
    if "\n" in statement or not statement.strip():
      return False
    column = len(statement) - len(statement.lstrip(" \t"))
    code = line_filters.code_only(statement)
    imported = imports.bound_by(statement.strip())
    if imported is not None:
      key = ("import", 0) if not column else None
      bound = {name.split(".")[0] for name in imported}
    elif scopes.defined_name(statement) is not None:
      key = ("header", column) if _DEF.match(statement) else None  # a class header: not judged
      bound = set(names.IDENTIFIER.findall(code))
    else:
      key = ("statement", column) if column else None  # a top-level statement: not judged
      bound = _targets(code)
      if names.assignment(code) is not None:
        bound.update(_CHAINED_TARGET.findall(code))  # `a = b = ...`, and keyword arguments
    served = self._served(*key) if key is not None else frozenset()
    return bool(served) and not bound & served

  def _served(self, kind: str, column: int) -> FrozenSet[str]:
    """The wanted names read by the code a completed cursor's line of `kind` ("import", "header"
    or "statement") at `column` serves (see leaves_unbound), found once per kind and column."""
    found = self._served_by.get((kind, column))
    if found is None:
      found = self._served_by[(kind, column)] = self._read_served(kind, column)
    return found

  def _read_served(self, kind: str, column: int) -> FrozenSet[str]:
    self._join()
    if self._docstrings.below_inside:
      return frozenset()  # the lines below start inside a string
    text, cursor = self._text, len(self._above)
    if kind == "import":
      code = _DOT_THEN_SPACE.sub(".", line_filters.strings_emptied(text))
      found = frozenset(name for name in set(_USED_NAME.findall(code)) - _NEVER_WANTED
                        if not name.startswith("__") and self.wants(name))
    else:
      start = cursor  # a header's block starts below it
      enclosing = _enclosing_def(self._above, column)
      if kind == "statement":
        if enclosing is None:
          return frozenset()
        start, column = enclosing
      end = cursor + _block_end(self._below, column)
      # An attribute's dot may end the line above (`ml_transform.\\` then `with_transform(...)`).
      code = _DOT_THEN_SPACE.sub(".", line_filters.strings_emptied(text[cursor:end]))
      # Where the function is nested in another (a closure), that one's names are its too.
      around = {namespaces_lib.MODULE}
      if enclosing is not None:
        around.add(self.namespaces.of(enclosing[0]))
      found = frozenset(name for name in set(_BARE_NAME.findall(code)) - _NEVER_WANTED
                        if not name.startswith("__") and self._unbound_in(name, start, end, around))
    # Where the file makes names no line binds (import *, exec), none is wanted; read last: its
    # search took 8 ms in an 87 kB file.
    return found if not found or not names.makes_names(text) else frozenset()

  def _unbound_in(self, name: str, start: int, end: int, around: Set) -> bool:
    """Whether the function text[start:end] reads `name` and neither it nor the namespaces
    `around` it (namespaces.Namespaces.of) binds it, where no other namespace reads it unbound
    there too: a name the file reads elsewhere and nothing binds is the file's (a module whose
    import is not written yet), not this line's to bind; nor is one a `global` or `nonlocal`
    statement names."""
    text = self._text
    positions = list(names.word_starts(text, name))
    # The function's own occurrences first: most of its names are bound there.
    inside = [k for k in positions if start <= k < end]
    bound, read_elsewhere, read_inside = set(), set(), False
    for at, binds, header in self._occurrences(
        name, inside + [k for k in positions if not start <= k < end]):
      namespace = _FUNCTION if start <= at < end else self.namespaces.of(at, header)
      if binds:
        if namespace is _FUNCTION or namespace in around:
          return False
        bound.add(namespace)
      elif _DECLARES.match(text, text.rfind("\n", 0, at) + 1):
        return False
      elif _ATTRIBUTE_BEFORE.search(text, max(0, at - 20), at):
        continue  # an attribute of that name (`test.debug()`), not the name
      elif namespace is _FUNCTION:
        read_inside = True
      else:
        read_elsewhere.add(namespace)
    return read_inside and not read_elsewhere - bound


def _targets(code: str) -> Set[str]:
  """The names the statement line `code` (strings and comments deleted) binds as targets: its
  `for`s' and `as`es', and an assignment's bare names and attributes of self (not the
  annotation)."""
  targets = names.loop_and_as_targets(code)
  assigns = names.assignment(code)
  if assigns is not None:
    targets.update(match.group(1) or match.group(2)
                   for match in _TARGET.finditer(code, 0, assigns[0]))
  return targets


def _enclosing_def(above: str, column: int) -> Optional[Tuple[int, int]]:
  """(where its line starts in `above`, its column) of the def header whose block holds a line at
  `column` after `above` (the lines above it), None if no def does (a class body, the top
  level)."""
  end = len(above) - 1
  for _ in range(_MAX_ENCLOSING_LINES):
    if end < 0:
      return None
    start = above.rfind("\n", 0, end) + 1
    line = above[start:end]
    end = start - 1
    code = line.lstrip(" \t")
    if not code or code.startswith("#"):
      continue
    indent = len(line) - len(code)
    if indent < column:
      if _DEF.match(line):
        return start, indent
      if not indent:
        return None
      column = indent
  return None


def _block_end(below: str, column: int) -> int:
  """Where in `below` the block ends whose lines are deeper than `column`: at its first code line
  at `column` or less."""
  start = 0
  while start < len(below):
    end = below.find("\n", start)
    end = len(below) if end < 0 else end
    code = below[start:end].lstrip(" \t")
    if code and not code.startswith("#") and end - start - len(code) <= column:
      return start
    start = end + 1
  return len(below)


def first(lines: Sequence[decoding.Line], wanted: Wanted) -> List[decoding.Line]:
  """`lines` best first, a line that binds a name `wanted` (the file around the cursor) wants
  (Wanted.binds) ranked as if its score were names.NAME_BONUS higher (stable; unchanged where no
  line does)."""
  binds = [wanted.binds(line.text) for line in lines]
  if not any(binds):
    return list(lines)
  order = sorted(range(len(lines)),
                 key=lambda k: lines[k].score + names.NAME_BONUS * binds[k], reverse=True)
  return [lines[k] for k in order]
