"""Where a file's functions are: the namespace a bare name stands in, read by indentation.

A name bound in one function is not bound in another: `debug`, a parameter of one method of
unittest's suite.py, does not bind the `debug` another method's body reads. `Namespaces(text,
docstrings)` finds the file's top-level functions, its top-level classes' bodies and their
methods (where each starts and ends), and `of(position)` says which one holds a position of the
text: the innermost of them, or MODULE (the top level, and everything deeper than a method,
which belongs to the method). Functions nested in a function, and classes and functions under a
top-level `if` or `try`, are not namespaces of their own: a name bound there counts for the
whole function, or for the module, as it may.

Reading is by indentation only (no parse), as the rest of the engine reads the file around the
cursor: a top-level line starts with a character that is not a space, a comment's `#` or a closing
bracket, outside the file's triple-quoted strings (docstrings.Docstrings); a function ends at
the first such line at its column or less. The file given is the text around the cursor without
the cursor's line (code_t5.engine.wanted): a def header typed there is not in it.
"""

import bisect
import re
from typing import List, Optional, Tuple, Union

from code_t5.engine import docstrings as docstrings_lib

MODULE = "module"
Span = Tuple[int, int]  # where a namespace starts in the text (its header's line) and ends

# A line's start that is not blank, a comment or a closing bracket's line (`) -> None:`).
_CODE_LINE_CHARACTER = r"(?=[^ \t\r\n#)\]}])"
_TOP_LEVEL_LINE = re.compile(r"^" + _CODE_LINE_CHARACTER, re.M)
_DEF = re.compile(r"(?:async[ \t]+)?def\b")
_CLASS = re.compile(r"class\b")
_INDENTED_DEF = re.compile(r"^([ \t]+)(?:async[ \t]+)?def\b", re.M)


class Namespaces:
  """The top-level functions, top-level classes' bodies and their methods of `text`, whose
  triple-quoted strings are `docstrings` (for the text read from its start)."""

  def __init__(self, text: str, docstrings: docstrings_lib.Docstrings):
    self._text, self._docstrings = text, docstrings
    tops = [match.start() for match in _TOP_LEVEL_LINE.finditer(text)
            if not docstrings.inside(match.start())]
    tops.append(len(text))
    spans: List[Span] = []
    for start, end in zip(tops, tops[1:]):
      if _DEF.match(text, start):
        spans.append((start, end))
      elif _CLASS.match(text, start):
        spans.append((start, end))
        spans.extend(self._methods(start, end))
    spans.sort()
    self._spans = spans
    self._starts = [start for start, _ in spans]

  def _methods(self, start: int, end: int) -> List[Span]:
    """The spans of the methods of the class body text[start:end]: its defs at the least
    indentation any def of it has."""
    defs = [(match.start(), len(match.group(1)))
            for match in _INDENTED_DEF.finditer(self._text, start, end)
            if not self._docstrings.inside(match.start())]
    if not defs:
      return []
    column = min(indent for _, indent in defs)
    return [(at, self._end(at, column, end)) for at, indent in defs if indent == column]

  def _end(self, header: int, column: int, limit: int) -> int:
    """Where the function whose header starts at `header`, at `column`, ends: the first code line
    after its header at that column or less (at most at `limit`)."""
    shallower = re.compile(r"^[ \t]{0,%d}" % column + _CODE_LINE_CHARACTER, re.M)
    position = self._text.find("\n", header, limit)
    while 0 <= position < limit:
      match = shallower.search(self._text, position + 1, limit)
      if match is None:
        break
      if not self._docstrings.inside(match.start()):
        return match.start()
      position = self._text.find("\n", match.start(), limit)
    return limit

  def of(self, position: int, outside: Optional[int] = None) -> Union[Span, str]:
    """The innermost namespace holding `position`: a span of the text, or MODULE; `outside` (the
    start of a header's line) skips the namespace that header opens, for the name it defines,
    which is bound in the namespace around it."""
    k = bisect.bisect_right(self._starts, position) - 1
    while k >= 0:
      start, end = self._spans[k]
      if position < end and start != outside:
        return start, end
      k -= 1
    return MODULE
