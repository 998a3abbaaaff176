"""Where a file's functions are: the namespace a bare name stands in, read by indentation.

A name bound in one function is not bound in another: `debug`, a parameter of one method of
unittest's suite.py, does not bind the `debug` another method's body reads. `Namespaces(text,
docstrings)` finds the file's top-level functions, its top-level classes' bodies and their
methods (where each starts and ends), and `of(position)` says which one holds a position of the
text: the innermost of them, else MODULE (the top level). Functions nested in a function or a
method are not namespaces of their own, nor are classes and functions under a top-level `if` or
`try`: a name bound there counts for the whole function around them, or for the module.

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

# A line's start that is not blank, a comment or a closing bracket's line (`) -> None:`). The
# patterns start with the newline before a line, not with "^" in multi-line mode: a search for a
# literal first skips to the next newline at C speed, where "^" is tried at every character (the
# namespaces of urllib/request.py, 87 kB, took 2.1 ms that way).
_CODE_LINE_CHARACTER = r"(?=[^ \t\r\n#)\]}])"
_TOP_LEVEL_LINE = re.compile(r"\n" + _CODE_LINE_CHARACTER)
_DEF = re.compile(r"(?:async[ \t]+)?def\b")
_CLASS = re.compile(r"class\b")
_DEF_WORD = re.compile(r"def\b")
_INDENT_BEFORE_DEF = re.compile(r"\n([ \t]+)(?:async[ \t]+)?\Z")


class Namespaces:
  """The top-level functions, top-level classes' bodies and their methods of `text`, whose
  triple-quoted strings are `docstrings` (for the text read from its start)."""

  def __init__(self, text: str, docstrings: docstrings_lib.Docstrings):
    self._text, self._docstrings = text, docstrings
    tops = [0] if re.match(_CODE_LINE_CHARACTER, text) else []
    tops.extend(match.start() + 1 for match in _TOP_LEVEL_LINE.finditer(text)
                if not docstrings.inside(match.start() + 1))
    # Where each top-level statement starts (code_t5.engine.undefined reduces the file by them).
    self.top_level: List[int] = list(tops)
    tops.append(len(text))
    spans: List[Span] = []
    # The methods of the top-level classes (code_t5.engine.undefined stubs those away from the
    # cursor), in the text's order.
    self.methods: List[Span] = []
    for start, end in zip(tops, tops[1:]):
      if _DEF.match(text, start):
        spans.append((start, end))
      elif _CLASS.match(text, start):
        spans.append((start, end))
        self.methods.extend(self._methods(start, end))
    spans.extend(self.methods)
    spans.sort()
    self._spans = spans
    self._starts = [start for start, _ in spans]

  def _methods(self, start: int, end: int) -> List[Span]:
    """The spans of the methods of the class body text[start:end]: its defs at the least
    indentation any def of it has."""
    defs = []
    for match in _DEF_WORD.finditer(self._text, start, end):
      line_start = self._text.rfind("\n", start, match.start())
      indent = (_INDENT_BEFORE_DEF.match(self._text, line_start, match.start())
                if line_start >= 0 else None)
      if indent is not None and not self._docstrings.inside(line_start + 1):
        defs.append((line_start + 1, len(indent.group(1))))
    if not defs:
      return []
    column = min(indent for _, indent in defs)
    return [(at, self._end(at, column, end)) for at, indent in defs if indent == column]

  def _end(self, header: int, column: int, limit: int) -> int:
    """Where the function whose header starts at `header`, at `column`, ends: the first code line
    after its header at that column or less (at most at `limit`)."""
    shallower = re.compile(r"\n[ \t]{0,%d}" % column + _CODE_LINE_CHARACTER)
    position = header
    while True:
      match = shallower.search(self._text, position, limit)
      if match is None:
        return limit
      if not self._docstrings.inside(match.start() + 1):
        return match.start() + 1
      position = match.end()

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
