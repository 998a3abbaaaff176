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
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from code_t5.engine import path_index

MAX_CANDIDATES = 6
FILE_WEIGHT = 3.0
# Lines that start with a short typed text can be thousands: only this many are counted.
MAX_MATCHES = 4000
# A stripped line longer than this is not proposed (a data table, a long string).
MAX_LINE_CHARS = 200


def _stripped_lines(text: str) -> List[str]:
  return [line.strip() for line in text.split("\n")]


def _following(lines: Sequence[str]) -> Dict[str, collections.Counter]:
  """previous non-blank line -> Counter of the non-blank lines that followed it."""
  result: Dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
  previous = None
  for line in lines:
    if not line:
      continue
    if previous is not None and len(line) <= MAX_LINE_CHARS:
      result[previous][line] += 1
    previous = line
  return result


@dataclasses.dataclass
class _FileLines:
  counts: collections.Counter  # stripped non-blank line -> occurrences
  following: Dict[str, collections.Counter]


def _file_lines(text: str) -> _FileLines:
  lines = _stripped_lines(text)
  return _FileLines(collections.Counter(l for l in lines if l and len(l) <= MAX_LINE_CHARS),
                    _following(lines))


class LineIndex(path_index.PathIndex):
  """The stripped lines of a repository's files, for prefix look-ups and "what followed" (per
  path: code_t5.engine.path_index)."""

  def _entry(self, text: str) -> _FileLines:
    return _file_lines(text)

  def _tables(self, path: str):
    with self._lock:
      if self._merged is None:
        counts: collections.Counter = collections.Counter()
        following: Dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        for lines in self._files.values():
          counts.update(lines.counts)
          for previous, after in lines.following.items():
            following[previous].update(after)
        ordered = sorted(counts)
        self._merged = (ordered, [counts[l] for l in ordered], following)
      return self._merged, self._files.get(path)

  def counts_without(self, path: str):
    """(sorted lines, their counts, following) of every file, and `path`'s own tables to
    subtract (None if the index does not hold it)."""
    (ordered, counts, following), own = self._tables(path)
    return ordered, counts, following, own


def candidates(prefix: str, index: Optional[LineIndex] = None, path: str = "",
               below: str = "", limit: int = MAX_CANDIDATES) -> List[str]:
  """Rests of the cursor's line that the file (above it, and `below`: the lines after the
  cursor's line) and the repository (`index`, without `path`) suggest, most frequent first (the
  file's occurrences weighing FILE_WEIGHT)."""
  line_start = prefix.rfind("\n") + 1
  typed = prefix[line_start:]
  above = prefix[:line_start]
  file_lines = _stripped_lines(above) + _stripped_lines(below)
  weights: collections.Counter = collections.Counter()
  if typed.strip():
    head = typed.lstrip()
    file_counts = collections.Counter(l for l in file_lines
                                      if len(head) < len(l) <= MAX_LINE_CHARS)
    for line, count in file_counts.items():
      if line.startswith(head):
        weights[line[len(head):]] += FILE_WEIGHT * count
    if index is not None and len(index):
      ordered, counts, _, own = index.counts_without(path)
      start = bisect.bisect_left(ordered, head)
      for k in range(start, min(len(ordered), start + MAX_MATCHES)):
        line = ordered[k]
        if not line.startswith(head):
          break
        count = counts[k] - (own.counts.get(line, 0) if own else 0)
        if count > 0 and len(line) > len(head):
          weights[line[len(head):]] += count
  else:
    previous = next((l for l in reversed(_stripped_lines(above)) if l), None)
    if previous is None:
      return []
    for part in (above, below):
      for line, count in _following(_stripped_lines(part)).get(previous, {}).items():
        weights[line] += FILE_WEIGHT * count
    if index is not None and len(index):
      _, _, following, own = index.counts_without(path)
      mine = own.following.get(previous, {}) if own else {}
      for line, count in following.get(previous, {}).items():
        count -= mine.get(line, 0)
        if count > 0:
          weights[line] += count
  # Most frequent first; ties by text, so the choice does not depend on dict order.
  return [text for text, _ in sorted(weights.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]]
