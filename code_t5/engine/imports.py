"""Which modules a project can import: the engine's check on import lines the model guesses.

A small model trained on a corpus writes the corpus's packages into unrelated code (`from
huggingface_hub.utils import namedtuple` in the standard library's socketserver.py). An import
line is worth showing when the module it names is one the project knows: the standard library, a
module or package of the repository itself, one that another file of the repository or the file
around the cursor already imports, or a relative import. `ModuleIndex` keeps, per path of a
repository, the top-level modules its files import and the names its paths give;
`ImportCheck.unknown` says whether a candidate line imports a module none of them knows. Such lines
are ranked after the others (code_t5.engine.complete), not dropped: a new dependency is possible, but a guess.

`ImportCheck.repeats` says whether a candidate import line is one the file already has at module
level (visible everywhere in it: `import sys` again, in an `if` block under `import sys`, at
unittest/__main__.py:5) or names one name twice (`from . import Image, Image`, where `Image,
Im|` was typed towards `ImageFile`). Ranked after the others too: at the corpus's and
dataset-dev's held-out points such a line had never been the target.
"""

import collections
import re
import sys
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

# An import line's first module: `import a.b as c, d` -> a, `from a.b import c` -> a (relative
# imports name none).
_IMPORT_LINE = re.compile(r"[ \t]*(?:from|import)[ \t]+([A-Za-z_]\w*)")
_IMPORTS = re.compile(r"^[ \t]*(?:from[ \t]+([A-Za-z_]\w*)[\w. \t]*import\b|import[ \t]+([^\n#;]+))",
                      re.M)
_FIRST_NAME = re.compile(r"[ \t]*([A-Za-z_]\w*)")
# The names an import line binds, compared for repeats: `import a.b as c, d` -> c, d; `from m
# import (x, y as z)` -> x, z (`import a.b` counts as a.b).
_IMPORT_STATEMENT = re.compile(r"(?:from[ \t]+[\w.]+[ \t]+)?import[ \t]+(.*)")
_BOUND = re.compile(r"[ \t(]*([\w.]+)(?:[ \t]+as[ \t]+(\w+))?[ \t)]*")

STANDARD_LIBRARY = frozenset(sys.stdlib_module_names) | {"__future__"}


def _bound_names(imported: str) -> List[str]:
  """The names an import statement's list after `import` (`a, b as c`) binds, in order."""
  bound = [_BOUND.fullmatch(part) for part in imported.split(",")]
  return [m.group(2) or m.group(1) for m in bound if m is not None]


def bound_by(statement: str) -> Optional[List[str]]:
  """The names an import statement (a stripped line) binds, in order (`import a.b as c, d` -> c,
  d; `import a.b` -> a.b); None for a line that is not a whole import statement."""
  match = _IMPORT_STATEMENT.fullmatch(statement)
  return None if match is None else _bound_names(match.group(1))


def imported_modules(code: str) -> FrozenSet[str]:
  """The top-level modules that the import statements of `code` name (absolute imports only)."""
  modules = set()
  for match in _IMPORTS.finditer(code):
    if match.group(1):
      modules.add(match.group(1))
    else:
      for part in match.group(2).split(","):
        name = _FIRST_NAME.match(part)
        if name:
          modules.add(name.group(1))
  return frozenset(modules)


def line_module(line: str) -> Optional[Tuple[str, int]]:
  """The first top-level module an import line names and where its name ends; None for other
  lines and relative imports (`import a.b, c` -> ("a", 8); `from .x import y` -> None)."""
  match = _IMPORT_LINE.match(line)
  return (match.group(1), match.end(1)) if match else None


def path_names(path: str) -> FrozenSet[str]:
  """What a repository path lets its files import: every folder on it and the module's name
  (`src/pkg/mod.py` -> src, pkg, mod)."""
  parts = path.split("/")
  parts[-1] = parts[-1][:-3] if parts[-1].endswith(".py") else parts[-1]
  return frozenset(part for part in parts if part.isidentifier())


class ModuleIndex:
  """Per path of a repository, the modules it imports and the names its path gives; counts over
  all paths, so that one path can be left out (the cursor's file, read from the editor instead)."""

  def __init__(self):
    self._known: Dict[str, FrozenSet[str]] = {}
    self._counts = collections.Counter()

  def add(self, path: str, text: str) -> None:
    self.remove(path)
    known = imported_modules(text) | path_names(path)
    self._known[path] = known
    self._counts.update(known)

  def remove(self, path: str) -> None:
    known = self._known.pop(path, None)
    if known is not None:
      self._counts.subtract(known)

  def knows(self, module: str, path: str = "") -> bool:
    """Whether a file of the repository other than `path` imports `module` or is part of it."""
    return self._counts[module] - (module in self._known.get(path, ())) > 0


class ImportCheck:
  """One cursor's check of import lines: `prefix` (the code before the cursor, ending in the typed
  part of its line), `below` (the lines after the cursor's), the repository's `modules` (or None)
  and the cursor's `path` in it. The file's own imports are read once, when a line needs them."""

  def __init__(self, prefix: str, below: str, modules: Optional[ModuleIndex], path: str):
    line_start = prefix.rfind("\n") + 1
    self._head = prefix[line_start:]
    self._above = prefix[:line_start]
    self._below = below
    self._modules = modules
    self._path = path
    self._file_modules: Optional[FrozenSet[str]] = None
    self._module_level: Optional[Set[str]] = None
    self._from_imported: Set[str] = set()

  def unknown(self, line: str) -> bool:
    """Whether the cursor's line completed with `line` imports a module that the standard
    library, the repository (leaving out the cursor's path) and the file's own imports do not
    know; never when the module's name was typed (it ends before the cursor)."""
    found = line_module(self._head + line)
    if found is None or found[1] <= len(self._head):
      return False
    module = found[0]
    if module in STANDARD_LIBRARY or (self._modules is not None
                                      and self._modules.knows(module, self._path)):
      return False
    if self._file_modules is None:
      self._file_modules = imported_modules(self._above) | imported_modules(self._below)
    return module not in self._file_modules

  def repeats(self, line: str) -> bool:
    """Whether the cursor's line completed with `line` is an import statement that the file has
    at module level already (above the cursor or below it), that binds one name twice, or a
    `from` import of a name that a module-level `from` import of the file binds already
    (`from .loader import TestLoader` four lines under `from .loader import TestLoader,
    defaultTestLoader`). Not `import a.b` after `import a`: that binds `a` again on purpose."""
    statement = (self._head + line).strip()
    match = _IMPORT_STATEMENT.fullmatch(statement)
    if match is None:
      return False
    if self._module_level is None:
      self._module_level = {text.rstrip() for text in (self._above + self._below).split("\n")
                            if text[:1] in ("i", "f")}  # unindented import lines start so
      for text in self._module_level:
        found = _IMPORT_STATEMENT.fullmatch(text)
        if found is not None and text.startswith("from "):
          self._from_imported.update(_bound_names(found.group(1)))
    if statement in self._module_level:
      return True
    names = _bound_names(match.group(1))
    return len(names) != len(set(names)) or (
        statement.startswith("from ") and not self._from_imported.isdisjoint(names))
