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
import keyword
import re
from typing import Sequence, Set, TypeVar

NAME_BONUS = 3.0  # in the lines' score units: log-probability / sqrt(pieces)
_WORD = re.compile(r"\w+")
_TYPED = re.compile(r"\w+\Z")
_LEADING_WORD = re.compile(r"\w*")
_ATTRIBUTE = re.compile(r"\.\s*(\w+)")
_AFTER_DOT = re.compile(r"\.\s*\w+\Z")
ALWAYS_KNOWN = frozenset(keyword.kwlist) | frozenset(dir(builtins))

Line = TypeVar("Line")  # anything with .text (the rest of the line) and .score


def typed_word(prefix: str) -> str:
  """The part of a word typed before the cursor ("" when the cursor is not inside a word)."""
  match = _TYPED.search(prefix)
  return match.group(0) if match else ""


def known_names(code: str) -> Set[str]:
  """The words of `code`, keywords and builtins."""
  return set(_WORD.findall(code)) | ALWAYS_KNOWN


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
  known = known_attributes(before) if _AFTER_DOT.search(prefix) else known_names(before)

  def key(line):
    completed = typed + _LEADING_WORD.match(line.text).group(0)
    return line.score + (bonus if completed in known else 0.0)

  return sorted(lines, key=key, reverse=True)
