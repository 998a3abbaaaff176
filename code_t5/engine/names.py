"""Completing a half-typed word: prefer the names the file already uses.

When the cursor is inside a word (`self.stream.f|`, `return re|`, `applies_to(u|`), the word is
most often one the code above already uses (`flush`, `result`, `useragent`). The model reads only
its context window (256 pieces for the shipped model, a few dozen lines), so a name used further
up may be out of its sight, and a small model often prefers a common word of its training code
even when the name is in sight (`self.stream.file`; `return retfp` two lines below `result`).
The engine sees the whole prefix: among the lines the search found, `rank` adds NAME_BONUS to
the score of each line that completes the typed word to a known name — one the code before the
typed word uses, a keyword or a builtin — and sorts by that. After a dot (`self.stream.f|`) only
names the code uses as attributes count: a builtin such as `format` is no attribute's name
(`flush`, used as `sys.stdout.flush()` above, is). The lines' own scores (what
`--min-score` and clients see) are unchanged.

NAME_BONUS was chosen on the site-packages corpus's 1,012 held-out points, re-ranking the lines
the shipped model's search kept at each point (docs/engine.md): 1, 2, 3 and 5
gave +3, +4, +6 and +6 exact lines; 3 is the smallest of the best.
"""

import builtins
import functools
import keyword
import re
from typing import FrozenSet, Sequence, Set, TypeVar

NAME_BONUS = 3.0  # in the lines' score units: log-probability / sqrt(pieces)
_WORD = re.compile(r"\w+")
_LEADING_WORD = re.compile(r"\w*")
_ATTRIBUTE = re.compile(r"\.\s*(\w+)")
ALWAYS_KNOWN = frozenset(keyword.kwlist) | frozenset(dir(builtins))

Line = TypeVar("Line")  # anything with .text (the rest of the line) and .score


def word_before(text: str, end: int, start: int = 0) -> str:
  """The word characters (regex `\\w`, Unicode letters and digits included) just before `end`,
  none before `start`: what `re.compile(r"\\w+\\Z").search(text, start, end)` finds ("" for
  None), in time linear in the word's length."""
  # That search tries every offset of a run of word characters ended before `end` by another
  # character, each to the run's end: quadratic (a 40,000-character base64 literal on the
  # cursor's line took 5 s a request). Here the same `\w` is matched forwards on the text before
  # `end` reversed, in a window that doubles while the word fills it.
  size = 64
  while True:
    low = max(start, end - size)
    reversed_window = text[low:end][::-1]
    length = _LEADING_WORD.match(reversed_window).end()
    if length < len(reversed_window) or low <= start:
      return text[end - length:end]
    size *= 2


def typed_word(prefix: str) -> str:
  """The part of a word typed before the cursor ("" when the cursor is not inside a word)."""
  # Searched in the cursor's line only (no word spans lines).
  return word_before(prefix, len(prefix), prefix.rfind("\n") + 1)


def known_names(code: str) -> Set[str]:
  """The words of `code`, keywords and builtins."""
  return set(_WORD.findall(code)) | ALWAYS_KNOWN


@functools.lru_cache(maxsize=2)
def _known_names_above(above: str) -> FrozenSet[str]:
  """known_names of the lines above the cursor's: the same while the user types on a line."""
  return frozenset(known_names(above))


def known_attributes(code: str) -> Set[str]:
  """The names `code` uses after a dot."""
  return set(_ATTRIBUTE.findall(code))


def rank(lines: Sequence[Line], prefix: str, bonus: float = NAME_BONUS) -> list:
  """`lines` best first, a line that completes the typed word to a known name ranked as if its
  score were `bonus` higher (stable: equal keys keep the search's order). Without a typed word
  the order is the search's."""
  typed = typed_word(prefix)
  if not typed or len(lines) < 2:
    return list(lines)
  before = prefix[:-len(typed)]
  if before.rstrip().endswith("."):  # after a dot (and perhaps spaces): an attribute
    attributes = known_attributes(before)
    is_known = attributes.__contains__
  else:
    # No word spans lines: the lines above are read once per line the cursor is on (~5 ms per
    # keystroke in a 120 kB file on the slower 2-core machine), the cursor's line each time.
    line_start = before.rfind("\n") + 1
    above, on_line = _known_names_above(before[:line_start]), set(_WORD.findall(before, line_start))
    is_known = lambda name: name in above or name in on_line

  def key(line):
    completed = typed + _LEADING_WORD.match(line.text).group(0)
    return line.score + (bonus if is_known(completed) else 0.0)

  return sorted(lines, key=key, reverse=True)
