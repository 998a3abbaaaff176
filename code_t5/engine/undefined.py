"""Names a completed line reads that nothing binds where it stands: the engine's check, by pyflakes.

`names.UnknownNames` hides a line that reads a bare name no line of the file mentions. A name the
file mentions elsewhere can still be unbound where the line stands: `if _is_json_key(k):` in a
method of jsonpickle's unpickler.py, where `k` is another function's loop variable and this one's
is `key`; `self.hdrs = hdrs` in urllib/error.py's `HTTPError.__init__`, whose parameter is
`headers`; `return response` in a method of urllib/request.py that binds no `response`. Which
names a line can see (its function's, those of the functions around it, the module's and the
builtins, not a class body's from its methods; comprehensions, `global`, star imports,
annotations) is Python's scoping, which pyflakes, the checker behind flake8 and many editors'
linters, reads as Python does. `UndefinedNames(wanted).read_by(line, typed)` asks it whether the
cursor's line completed as `line` reads a name it reports undefined there, in the part the engine
wrote: a name the user typed whole (the first `typed` characters) is the user's business.

Pyflakes reads urllib/request.py (87 kB) in ~70 ms, so it reads a smaller file: every top-level
def and class but the one around the cursor becomes a binding of its name (`name = None`), the
top-level decorators go, the other methods of the class around the cursor become stubs of one
line (`def name(): pass`, under their decorators), and the names that `global` statements
declare are bound at its end; in the parsed tree, the defs and classes nested away from the
cursor's line become bindings too. What the cursor's block can see stays bound; a check takes
1.0 ms at the median of the held-out points' best lines, 4.4 ms at the 95th percentile (1.2 and
5.4 before the methods' stubs). A file that does not parse with the line (a
bracket it opens for the lines below to close, or one the typed part left open) is not judged,
nor one that binds names at run time (`globals().update(...)`, `exec(`), nor a line inside a
triple-quoted string or opening one, nor one whose reduced file is over 30,000 characters (a
function of a thousand lines around the cursor, or a module of as many top-level statements).
"""

import ast
import re
import warnings
from typing import Dict, Optional, Tuple

from pyflakes import checker
from pyflakes import messages

from code_t5.engine import wanted as wanted_lib

# A top-level def or class header (scopes.defined_name reads them at any indentation).
_DEFINITION = re.compile(r"(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)")
_GLOBAL = re.compile(r"^[ \t]+global[ \t]+(\w+(?:[ \t]*,[ \t]*\w+)*)", re.MULTILINE)
# Code that binds names no reader sees: re/_constants.py's `globals().update(...)` makes
# `AT_LOC_NON_BOUNDARY` and the rest. A file that does this is not judged.
_DYNAMIC = re.compile(r"\b(?:globals|vars|locals)\(\)|\bexec\(|sys\.modules\[__name__\]")
# A larger reduced file is not judged: before the other methods became stubs, a class of a
# thousand lines around the cursor took pyflakes 10-35 ms (above this, 51 of the 5,295 best lines
# shown at the collected points, and 1 of the 121 that read a name nothing binds there).
MAX_CHARS = 30_000


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _bind_only(body: list, number: int) -> None:
  """In the statements `body`, every def and class whose lines do not hold line `number` becomes
  a binding of its name (`name = None`), in the blocks around that line too: what the line can
  see of them is their names; their bodies, decorators and defaults are what pyflakes would read
  for nothing (a method of a large class, the class's other methods). In place."""
  for k, statement in enumerate(body):
    first = min([statement.lineno] + [decorator.lineno for decorator
                                      in getattr(statement, "decorator_list", ())])
    holds = first <= number <= (statement.end_lineno or statement.lineno)
    if isinstance(statement, _DEFINITIONS) and not holds:
      binding = ast.Assign(targets=[ast.Name(statement.name, ast.Store())],
                           value=ast.Constant(None))
      body[k] = ast.copy_location(binding, statement)
      ast.fix_missing_locations(body[k])
      continue
    for field in ("body", "orelse", "finalbody"):
      inner = getattr(statement, field, None)
      if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
        _bind_only(inner, number)
    for block in getattr(statement, "handlers", None) or getattr(statement, "cases", None) or ():
      _bind_only(block.body, number)


# A method's header line: its indentation and what its stub keeps (`async def name`).
_METHOD = re.compile(r"([ \t]*)((?:async[ \t]+)?def[ \t]+\w+)")


class UndefinedNames:
  """The file around one cursor (a wanted.Wanted's: its lines above and below the cursor's line,
  their docstrings and namespaces), reduced once per indentation of the cursor's line."""

  def __init__(self, wanted: wanted_lib.Wanted):
    self._wanted = wanted
    # The cursor's line indented -> the lines above and below, reduced (None: not judged).
    self._reduced: Dict[bool, Optional[Tuple[str, str]]] = {}

  def read_by(self, line: str, typed: int) -> bool:
    """Whether the cursor's line, completed as `line` (the whole line), reads a name that nothing
    binds where it stands, ending after its first `typed` characters."""
    indented = line[:1] in (" ", "\t")
    if indented not in self._reduced:
      self._reduced[indented] = self._reduce(indented)
    if self._reduced[indented] is None:
      return False
    above, below = self._reduced[indented]
    try:
      with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SyntaxWarning: an invalid escape in the file's strings
        tree = ast.parse(above + line + "\n" + below)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
      return False
    number = above.count("\n") + 1
    _bind_only(tree.body, number)
    # Pyflakes' columns count the line's UTF-8 bytes, as ast's do.
    written = len(line[:typed].encode("utf-8"))
    return any(isinstance(message, messages.UndefinedName) and message.lineno == number
               and message.col + len(message.message_args[0].encode("utf-8")) > written
               for message in checker.Checker(tree, withDoctest=False).messages)

  def _stubbed(self, start: int, end: int, above: bool) -> str:
    """text[start:end], the lines `above` or below the cursor in the top-level block that holds
    it, with each method wholly inside them replaced by a stub of one line (`def name(): pass`,
    its decorators kept above it): what the cursor's method can see of the others is their names
    (a class's body is no scope for its methods), and the parse of a large class was most of a
    check. Above, a method that ends where the cursor's line stands stays: that line may be its
    last."""
    text = self._wanted.text
    pieces, position = [], start
    for method_start, method_end in self._wanted.namespaces.methods:
      if method_start < start or method_end > end or (above and method_end == end):
        continue
      header = _METHOD.match(text, method_start)
      if header is None:
        continue
      pieces.append(text[position:method_start])
      pieces.append(f"{header.group(1)}{header.group(2)}(): pass\n")
      position = method_end
    pieces.append(text[position:end])
    return "".join(pieces)

  def _reduce(self, indented: bool) -> Optional[Tuple[str, str]]:
    """The lines above and below the cursor's, each top-level def and class replaced by a binding
    of its name and each top-level decorator dropped, but for the block an `indented` cursor's
    line is in, whose other methods are stubs (_stubbed); the names `global` statements declare
    bound after all. None for a file that binds names at run time (_DYNAMIC), where the cursor's
    line is in a triple-quoted string or opens one (its text is no code), and where it is longer
    than MAX_CHARS."""
    wanted = self._wanted
    text, cursor = wanted.text, len(wanted.above)
    if (_DYNAMIC.search(text) or wanted.docstrings.line_starts_inside
        or wanted.docstrings.below_inside):
      return None  # names made at run time; the cursor's line in a string, or opening one
    starts = sorted({0, *wanted.namespaces.top_level}) + [len(text)]
    above, below = [], []
    for start, end in zip(starts, starts[1:]):
      chunk = text[start:end]
      definition = _DEFINITION.match(chunk)
      holds_cursor = start < cursor < end or (indented and start < cursor == end)
      if holds_cursor and (indented or definition is None):  # it reads as it is
        above.append(self._stubbed(start, cursor, above=True))
        below.append(self._stubbed(cursor, end, above=False))
        continue
      if definition is not None:
        chunk = f"{definition.group(1)} = None\n"
      elif chunk.startswith("@"):
        chunk = ""
      (above if start < cursor else below).append(chunk)
    declared = sorted({name.strip() for match in _GLOBAL.finditer(text)
                       for name in match.group(1).split(",")})
    before, after = "".join(above), "".join(below)
    if declared:
      after += ("" if after.endswith("\n") or not after else "\n") + "".join(
          f"{name} = None\n" for name in declared)
    return (before, after) if len(before) + len(after) <= MAX_CHARS else None
