"""Where a file's triple-quoted strings (its docstrings) are, around the cursor's line.

The engine reads the file above the cursor's line and below it, without the line itself, which
the candidates complete. `Docstrings(above, below)` says which characters of `above + below` lie
inside a triple-quoted string (`inside`), whether the lines below start inside one (the cursor's
line opens it, or the lines above opened it and the cursor's line is its text), and whether a
completed line's triple quotes fit those two sides (`misplaced`): a lone triple quote as the first
line of a method whose code follows opens a docstring over that code; and whether a line without
them leaves the lines below in a string nothing opens (`unopened`).

Strings are read with the other strings and comments (line_filters.strings_and_comments), so
that triple quotes inside another string (tomllib tests `src.startswith` with three quotes in
quotes) or a comment delimit nothing; counting triple quotes alone had turned tomllib's parser's
code into docstring text.

Measured at the held-out points (docs/engine.md, the filters' list): a best line that misplaced a
docstring at 28 of 1,276 points, never right, and no target of the 180 that hold triple quotes; a
best line that left the text below unopened (`unopened`: `from __future__ import annotations` as a
module's first line, above its docstring's text) at 3, never right, and no target.
"""

import bisect
import re
from typing import List, NamedTuple

from code_t5.engine import line_filters

_TRIPLE_QUOTES = re.compile(r'"""|\'\'\'')


class _Strings(NamedTuple):
  """The triple-quoted strings of a text read from its start as code (_triple_quoted)."""
  starts: List[int]
  ends: List[int]
  open_at_end: bool  # the last one is never closed: it runs to the text's end
  unclosed: int  # one-line strings never closed: prose read as code, where the start was wrong


def _triple_quoted(text: str) -> _Strings:
  """The triple-quoted strings of `text`, read as code from its start."""
  starts, ends, unclosed = [], [], 0
  for match in line_filters.strings_and_comments(text):
    found = match.group()
    quote = found[:3]
    if quote in ('"""', "'''"):
      starts.append(match.start())
      if len(found) < 6 or not found.endswith(quote):
        ends.append(len(text))
        return _Strings(starts, ends, True, unclosed)
      ends.append(match.end())
    elif found[0] in "'\"" and (len(found) < 2 or found[-1] != found[0]):
      unclosed += 1
  return _Strings(starts, ends, False, unclosed)


class Docstrings:
  """The triple-quoted strings of a file around the cursor's line: `above` (the lines above it,
  the file's start included) and `below` (the lines after it)."""

  def __init__(self, above: str, below: str):
    self._text_below = bool(below.strip())
    read_above = _triple_quoted(above)
    # The quotes of the string the lines above end inside ("" if none).
    self._open_above = (above[read_above.starts[-1]:read_above.starts[-1] + 3]
                        if read_above.open_at_end else "")
    # The cursor's line is not in the text: where it opens or closes a docstring, the lines below
    # start on the other side of the one the lines above end on (at the corpus's GdImageFile.py:26,
    # a class's docstring opened there; at jsonpickle's handlers.py:110, a method's). The lines
    # below are read both ways, from outside any string and from inside one to their first
    # triple quotes: prose read as code leaves one-line strings unclosed (`the object's`), code
    # read either way does not. Where both ways leave as many, the file's triple quotes are
    # taken to pair up without the cursor's line.
    outside = _triple_quoted(below)
    closing = _TRIPLE_QUOTES.search(below)
    close = closing.end() if closing else len(below)
    inside = _triple_quoted(below[close:])
    if outside.unclosed != inside.unclosed:
      self.below_inside = inside.unclosed < outside.unclosed
    else:
      quotes = (2 * len(read_above.starts) - read_above.open_at_end
                + 2 * len(outside.starts) - outside.open_at_end)
      self.below_inside = read_above.open_at_end != bool(quotes % 2)
    if self.below_inside:
      below_starts = [0] + [close + k for k in inside.starts]
      below_ends = [close] + [close + k for k in inside.ends]
    else:
      below_starts, below_ends = outside.starts, outside.ends
    self._starts = read_above.starts + [len(above) + k for k in below_starts]
    self._ends = read_above.ends + [len(above) + k for k in below_ends]

  @property
  def line_starts_inside(self) -> bool:
    """Whether the cursor's line starts inside a triple-quoted string that the lines above open."""
    return bool(self._open_above)

  def inside(self, position: int) -> bool:
    """Whether the character at `position` of `above + below` is in a triple-quoted string."""
    k = bisect.bisect(self._starts, position) - 1
    return k >= 0 and position < self._ends[k]

  def misplaced(self, line: str) -> bool:
    """Whether the cursor's line completed as `line` (the whole line, the text after the cursor
    included), holding triple quotes, leaves the file's docstrings wrong: it opens one over the
    code below, closes one where the lines below are the docstring's text, or leaves open the one
    the lines above opened where the lines below are code. False for a line without triple
    quotes, and where no line below has text: at the file's end, a docstring's opener alone is
    how a docstring starts (its closer not typed yet)."""
    if not self._text_below or not _TRIPLE_QUOTES.search(line):
      return False
    if self._open_above:  # the line starts inside that string: its quotes close it
      close = line.find(self._open_above)
      if close < 0:
        return not self.below_inside
      line = line[close + 3:]
    return _triple_quoted(line).open_at_end != self.below_inside

  def unopened(self, line: str) -> bool:
    """Whether the cursor's line completed as `line`, without triple quotes, leaves the lines
    below in a string no line opens: they start inside one (a docstring's text, then its closing
    quotes) while the lines above end outside any, so the cursor's line was to open it (the
    model's `from __future__ import annotations` as a module's first line, above the text of the
    module's docstring). False for a line with triple quotes (`misplaced` judges those) and where
    no line below has text."""
    return (self._text_below and not self._open_above and self.below_inside
            and not _TRIPLE_QUOTES.search(line))
