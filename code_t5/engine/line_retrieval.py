"""Whole lines the file and its repository already hold, as candidates for the cursor's line.

A third to two fifths of the lines completed at held-out points of the site-packages corpus
already occur, whole, in the file above the cursor or in another file of the same repository
(`self.assertEqual(result, expected)`, `raise ValueError(msg)`, an import). The model's beam
search finds some of them; `candidates` proposes them outright:

- inside a line (something typed after the indentation): the lines, stripped, that start with
  what is typed and go on; the candidate is their rest;
- at a line start (only indentation before the cursor): the lines that followed the same
  previous non-blank line elsewhere.

Each is weighted by how often it occurs, the file's own occurrences FILE_WEIGHT times a
repository's; the best MAX_CANDIDATES are scored by the model (decoding.LineSearch.score) and
ranked with the search's own lines, a retrieved line getting RETRIEVAL_BONUS (complete.py).
"""

import bisect
import collections
import dataclasses
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from code_t5.engine import path_index

MAX_CANDIDATES = 6
FILE_WEIGHT = 3.0
# Lines that start with a short typed text can be thousands: only this many are counted.
MAX_MATCHES = 4000
# A stripped line longer than this is not proposed (a data table, a long string).
MAX_LINE_CHARS = 200
# LineIndex sorts all its lines again when those first seen since the last sort outnumber this
# many plus this share of the sorted ones (until then they are a short list of their own).
_RESORT_MIN = 1000
_RESORT_SHARE = 0.1


def _stripped_lines(text: str) -> List[str]:
  return [line.strip() for line in text.split("\n")]


def _successions(lines: Sequence[str]) -> Iterator[Tuple[str, str]]:
  """(non-blank line, the next non-blank line) of `lines`, where the next is short enough to be
  proposed (MAX_LINE_CHARS)."""
  non_blank = [line for line in lines if line]
  return ((previous, line) for previous, line in zip(non_blank, non_blank[1:])
          if len(line) <= MAX_LINE_CHARS)


def _following(lines: Sequence[str]) -> Dict[str, Dict[str, int]]:
  """previous non-blank line -> {non-blank line that followed it: how often}. Plain dicts: a
  Counter per line made reading numpy's 489 files take twice as long."""
  result: Dict[str, Dict[str, int]] = {}
  for previous, line in _successions(lines):
    after = result.get(previous)
    if after is None:
      result[previous] = {line: 1}
    else:
      after[line] = after.get(line, 0) + 1
  return result


@dataclasses.dataclass
class _FileLines:
  counts: collections.Counter  # stripped non-blank line -> occurrences
  following: Dict[str, Dict[str, int]]


def _file_lines(text: str) -> _FileLines:
  lines = _stripped_lines(text)
  return _FileLines(collections.Counter(l for l in lines if l and len(l) <= MAX_LINE_CHARS),
                    _following(lines))


class LineIndex(path_index.PathIndex):
  """The stripped lines of a repository's files, for prefix look-ups and "what followed" (per
  path: code_t5.engine.path_index). The counts over all files are kept up to date as files are
  added and removed, so an editor's save costs that file's lines, not the repository's (an 8 MB
  repository's tables took 0.8 s to rebuild at the first completion after each save). Look-ups
  run under the lock: a save on another thread waits for them."""

  def __init__(self):
    super().__init__()
    self._counts: Dict[str, int] = {}  # line -> occurrences in all files
    self._following: Dict[str, Dict[str, int]] = {}
    # The lines for prefix look-ups, sorted: those of the last sort, some perhaps no longer in
    # any file (their count is 0: skipped), and those seen since, in a short list of their own,
    # merged into the first when it grows (_RESORT_SHARE).
    self._sorted: List[str] = []
    self._recent: List[str] = []
    self._recent_sorted = True
    self._listed: set = set()

  def add(self, path: str, text: str) -> None:
    entry = _file_lines(text)
    with self._lock:
      old = self._files.get(path)
      if old is not None:
        self._count(old, -1)
      self._files[path] = entry
      self._count(entry, 1)

  def remove(self, path: str) -> None:
    with self._lock:
      old = self._files.pop(path, None)
      if old is not None:
        self._count(old, -1)

  def _count(self, entry: _FileLines, sign: int) -> None:
    counts, listed = self._counts, self._listed
    for line, n in entry.counts.items():
      count = counts.get(line, 0) + sign * n
      if count > 0:
        counts[line] = count
        if line not in listed:
          listed.add(line)
          self._recent.append(line)
          self._recent_sorted = False
      else:
        counts.pop(line, None)
    following = self._following
    for previous, after in entry.following.items():
      counter = following.get(previous)
      if counter is None:
        if sign > 0:
          following[previous] = dict(after)  # a copy: the entry's own stays as it is
        continue
      for line, n in after.items():
        count = counter.get(line, 0) + sign * n
        if count > 0:
          counter[line] = count
        else:
          counter.pop(line, None)
      if not counter:
        del following[previous]

  def _sort(self) -> None:
    """Before a prefix look-up (under the lock): the recent lines sorted, or all of them again
    when they have grown many (the first look-up after the repository was read)."""
    if len(self._recent) > _RESORT_MIN + _RESORT_SHARE * len(self._sorted):
      self._sorted = sorted(self._counts)
      self._recent = []
      self._listed = set(self._sorted)
    elif not self._recent_sorted:
      self._recent.sort()
    self._recent_sorted = True

  def prepare(self) -> None:
    """Sorts the lines seen since the last look-up now (else the next look-up does)."""
    with self._lock:
      self._sort()

  def starting_with(self, head: str, path: str = "") -> List[Tuple[str, int]]:
    """(line, count) of the lines longer than `head` that start with it, in every file but
    `path`; at most MAX_MATCHES lines are looked at per sorted list."""
    with self._lock:
      self._sort()
      own = self._files.get(path)
      found = []
      for lines in (self._sorted, self._recent):
        start = bisect.bisect_left(lines, head)
        for k in range(start, min(len(lines), start + MAX_MATCHES)):
          line = lines[k]
          if not line.startswith(head):
            break
          count = self._counts.get(line, 0) - (own.counts.get(line, 0) if own else 0)
          if count > 0 and len(line) > len(head):
            found.append((line, count))
      return found

  def followers(self, previous: str, path: str = "") -> List[Tuple[str, int]]:
    """(line, count) of the lines that followed the non-blank line `previous`, in every file
    but `path`."""
    with self._lock:
      own = self._files.get(path)
      mine = own.following.get(previous, {}) if own else {}
      return [(line, count - mine.get(line, 0))
              for line, count in self._following.get(previous, {}).items()
              if count - mine.get(line, 0) > 0]


def candidates(prefix: str, index: Optional[LineIndex] = None, path: str = "",
               below: str = "", limit: int = MAX_CANDIDATES) -> List[str]:
  """Rests of the cursor's line that the file (above it, and `below`: the lines after the
  cursor's line) and the repository (`index`, without `path`) suggest, most frequent first (the
  file's occurrences weighing FILE_WEIGHT)."""
  line_start = prefix.rfind("\n") + 1
  typed = prefix[line_start:]
  # Counted line by line, not through _file_lines' tables of every line: the file changes at
  # every request (10 ms a request in a 120 kB file on the slower 2-core machine).
  parts = (_stripped_lines(prefix[:line_start]), _stripped_lines(below))
  weights: collections.Counter = collections.Counter()
  if typed.strip():
    head = typed.lstrip()
    for lines in parts:
      for line in lines:
        if len(head) < len(line) <= MAX_LINE_CHARS and line.startswith(head):
          weights[line[len(head):]] += FILE_WEIGHT
    if index is not None and len(index):
      for line, count in index.starting_with(head, path):
        weights[line[len(head):]] += count
  else:
    previous = next((l for l in reversed(parts[0]) if l), None)
    if previous is None:
      return []
    for lines in parts:
      for line, after in _successions(lines):
        if line == previous:
          weights[after] += FILE_WEIGHT
    if index is not None and len(index):
      for line, count in index.followers(previous, path):
        weights[line] += count
  # Not the line right above again: the file holds it, so it was proposed with the bonus, and the
  # filters let calls and asserts repeat (helper-22's audit: `echo(f"...")` shown again); nor,
  # inside a line, one of the run of lines right above that start as it does (the next of
  # `echo(f"   context ...")`, `echo(f"   target ...")` is rarely one of them again).
  if typed.strip():
    for line in reversed(parts[0]):  # the run, from the line right above
      if not line:
        continue
      if not line.startswith(head):
        break
      weights.pop(line[len(head):], None)
  else:
    weights.pop(previous, None)
  # Most frequent first; ties by text, so the choice does not depend on dict order.
  return [text for text, _ in sorted(weights.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]]
