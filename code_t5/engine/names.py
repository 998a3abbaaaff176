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
from typing import Dict, FrozenSet, Iterator, Optional, Sequence, Set, Tuple, TypeVar

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


# Reading a line's bare names (UnknownNames). Identifiers: a word not starting with a digit.
IDENTIFIER = re.compile(r"[^\W\d]\w*")
# Lines whose names are bound, not read (imports, def headers, global, nonlocal), or bound by
# patterns (`match x:`, `case Point(x=0):`) and 3.12's `type X = ...`: not judged. The soft
# keywords start such statements only when a space and an operand follow (not `match = ...`,
# `match.group(1)`).
_NOT_READING = re.compile(r"[ \t]*(?:(?:import|from|(?:async[ \t]+)?def|global|nonlocal)\b"
                          r"|(?:match|case|type)[ \t]+[^\s=.])")
# A class header binds its name, but only once its bases are read (`class Path(Path):` reads the
# Path it is not yet).
_CLASS_NAME = re.compile(r"[ \t]*class[ \t]+([^\W\d]\w*)")
# Names a line binds itself: before an "=" or ":=" (a keyword argument, an assignment's target),
# a `for`'s targets (loops, comprehensions), an `as` name, a lambda's parameters, an annotated
# assignment's target.
_BEFORE_EQUALS = re.compile(r"([^\W\d]\w*)[ \t]*(?::=|=(?!=))")
_FOR_TARGETS = re.compile(r"\bfor\b(.*?)\bin\b")
_AS_NAME = re.compile(r"\bas[ \t]+([^\W\d]\w*)")
_LAMBDA_PARAMETERS = re.compile(r"\blambda\b([^:]*):")
_ANNOTATED = re.compile(r"[ \t]*([^\W\d]\w*)[ \t]*:(?!=)")
# An assignment's "=": not part of ==, !=, <=, >=, := or an augmented operator.
_ASSIGNMENT = re.compile(r"(?<![=!<>:+\-*/%&|^@~])=(?!=)")
_BRACKET_DEPTH = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}
# Code that makes names no line of the file mentions: a star import, globals() or locals()
# written to, exec, names put into builtins. Where the file has any, no name is unknown.
_MAKES_NAMES = re.compile(r"\bimport[ \t(]*\*|\b(?:globals|locals|vars)[ \t]*\(|\bexec\b"
                          r"|__builtins__|\bbuiltins\b")
# Their words: a file without any is not searched with the regex above (substring tests run at C
# speed; the regex took 2 ms on 120 kB).
_MAKES_NAMES_WORDS = ("import", "globals", "locals", "vars", "exec", "builtins")
# Bare names Python knows beyond dir(builtins) on this machine: self and cls (read by
# scopes.Definitions' rule of their own), gettext's `_`, Windows' builtin exception, the soft
# keywords as names.
ALSO_KNOWN = frozenset(["self", "cls", "_", "WindowsError", "match", "case"])


def makes_names(*texts: str) -> bool:
  """Whether any of `texts` (a file's code) makes names no line mentions (_MAKES_NAMES)."""
  return any(any(word in text for word in _MAKES_NAMES_WORDS) and _MAKES_NAMES.search(text)
             for text in texts)


def word_starts(text: str, name: str) -> Iterator[int]:
  """Where the identifier `name` stands as a whole word in `text`, in order (found by its text
  first, at C speed: a search that starts with a word boundary scans every character)."""
  for match in re.finditer(re.escape(name) + r"\b", text):
    start = match.start()
    if not (start and (text[start - 1].isalnum() or text[start - 1] == "_")):
      yield start


def assignment(code: str) -> Optional[Tuple[int, int]]:
  """Where the statement line `code` (its strings written `""` or deleted) assigns: (the end of
  its targets, the index of its first "=" outside brackets), the targets ending at an
  annotation's ":" before it (`x: int = 1`); None where it assigns nothing."""
  depth, annotation = 0, None
  for index, char in enumerate(code):
    if char in _BRACKET_DEPTH:
      depth += _BRACKET_DEPTH[char]
    elif char == ":" and depth == 0 and annotation is None:
      annotation = index
    elif char == "=" and depth == 0 and _ASSIGNMENT.match(code, index):
      return (index if annotation is None else annotation), index
  return None


def loop_and_as_targets(code: str) -> Set[str]:
  """The names the `for`s (loops, comprehensions) and `as`es of the line `code` bind."""
  bound = set(_AS_NAME.findall(code))
  for targets in _FOR_TARGETS.findall(code):
    bound.update(IDENTIFIER.findall(targets))
  return bound


def bound_names(code: str) -> Set[str]:
  """The names the statement line `code` (its strings written `""`) binds itself."""
  bound = set(_BEFORE_EQUALS.findall(code)) | loop_and_as_targets(code)
  assigns = assignment(code)
  if assigns is not None:  # an assignment's targets: all before its "=", annotation included
    bound.update(IDENTIFIER.findall(code, 0, assigns[1]))
  for targets in _LAMBDA_PARAMETERS.findall(code):
    bound.update(IDENTIFIER.findall(targets))
  annotated = _ANNOTATED.match(code)
  if annotated:
    bound.add(annotated.group(1))
  return bound


def read_names(code: str) -> Set[str]:
  """The bare names the statement line `code` (its strings and comments written `""`) reads:
  not attributes (after a dot), not string prefixes (`f""`), not bound by the line itself."""
  found = set()
  for match in IDENTIFIER.finditer(code):
    start, end = match.span()
    if (code[end:end + 1] in ("'", '"') or (start and (code[start - 1].isalnum()
                                                       or code[start - 1] == "_"))
        or code[:start].rstrip().endswith(".")):
      continue  # a string's prefix, the end of a number (`1e5`, `0x1f`), an attribute
    found.add(match.group())
  return found - bound_names(code) if found else found


class UnknownNames:
  """Whether a candidate line reads a bare name that nothing can have bound: no line of the file
  (above the cursor's line, below it, or its own as typed) mentions it, and it is no keyword,
  builtin or dunder. Python raises NameError there, so such a line is wrong as the user would
  keep it: `if TYPE_CHECKING:` where nothing imports TYPE_CHECKING,
  `Image.register_open(IcnsImageFile.format, ...)` copied from a sibling plugin. The engine ranks
  such lines last, and shows no line where the best one is such a line
  (code_t5.engine.complete.unlikely_last).

  Measured on the held-out points of the site-packages corpus and dataset-dev (docs/engine.md):
  the best line read such a name at 38 of 1,276 points, never right; of the 25,750 targets of
  the corpus's train split (first 3,000 files) and dataset-dev's train split, 2 would be (`cmp`
  and `unicode` in Python 2 branches). Only where the file's lines below the cursor's are known:
  without them a call to a function defined further down reads an unknown name (58 of those
  targets). Where the file makes names no line mentions (`from m import *`, exec, globals(),
  builtins) no name is unknown.
  """

  def __init__(self, prefix: str, suffix: str, below: str):
    line_start = prefix.rfind("\n") + 1
    self._above = prefix[:line_start]
    head = prefix[line_start:]
    self._below = below
    # The user's own text on the cursor's line, the word being typed left out (the candidate
    # completes it), and the text after the cursor.
    typed = typed_word(prefix)
    self._typed = set(_WORD.findall(head, 0, len(head) - len(typed))) | set(_WORD.findall(suffix))
    self._makes_names = None  # whether the file has code that makes names (read once, if asked)
    self._mentions: Dict[str, bool] = {}  # name -> whether the file's other lines have it

  def _mentioned(self, name: str) -> bool:
    """Whether a line of the file other than the cursor's has the word `name` (read once a
    name; a search for the name's text first, at C speed, where a set of the file's words took
    2 ms for 95 kB at every line the cursor moved to)."""
    found = self._mentions.get(name)
    if found is None:
      found = self._mentions[name] = any(
          name in text and next(word_starts(text, name), None) is not None
          for text in (self._above, self._below))
    return found

  def read_in(self, code: Optional[str]) -> bool:
    """Whether the statement line `code` (LineContext.code_of: the completed cursor's line, its
    strings and comments written `""`; None where that is not read) reads an unknown name."""
    if code is None or _NOT_READING.match(code):
      return False
    header = _CLASS_NAME.match(code)
    if header:
      code = code[:header.start(1)] + code[header.end(1):]
    names = read_names(code) - ALWAYS_KNOWN - ALSO_KNOWN - self._typed
    names = [name for name in names if not (name.startswith("__") and name.endswith("__"))]
    if not names:
      return False
    names = [name for name in names if not self._mentioned(name)]
    if not names:
      return False
    if self._makes_names is None:
      self._makes_names = makes_names(self._above, self._below)
    return not self._makes_names

