"""The code most like the lines above the cursor, found in the file below and the repository.

RepoCoder (Zhang et al., EMNLP 2023) puts the repository's code most similar to the lines before
the cursor, with the lines that followed it, into the model's prompt: where a file or a project
repeats a pattern (a block of assignments, a family of methods, a test written like its
neighbour), the model reads how the pattern went on there and continues the same way. The copy
cache (code_t5.engine.copy_cache) repeats pieces that follow the same last pieces; this gives the
model a whole window to read, so it can also follow a pattern whose names differ.

`find` compares the last QUERY_LINES lines above the cursor (and what is typed on its line) with
every window of QUERY_LINES lines, STRIDE lines apart, of the file's lines below the cursor's line
and of the repository's other files (`WindowIndex`), by the Jaccard similarity of their sets of
identifiers; the most similar window, if more alike than MIN_SIMILARITY, is returned with the
FOLLOWING_LINES lines after it, and the engine puts its last MAX_PIECES pieces before the
context (complete.Completer.context_ids). MIN_SIMILARITY was chosen on the site-packages corpus's
validation points (docs/engine.md, "Code like the cursor's"); the sizes are first choices, not
tuned.
"""

import bisect
import re
import threading
from typing import Dict, List, Optional, Sequence, Set, Tuple

import numpy as np

from code_t5.engine import path_index
from code_t5.engine import sorting

QUERY_LINES = 10
STRIDE = 2
FOLLOWING_LINES = 10
# A window must be more alike than this. On the corpus's validation points, EM / ES at 0.2, 0.3
# and 0.4: 25.8 / 49.7, 25.9 / 49.8, 25.8 / 49.7 (25.0 / 49.1 without similar code).
MIN_SIMILARITY = 0.3
MAX_PIECES = 192
# Windows of the file below the cursor are made on every request: only its first lines.
MAX_BELOW_LINES = 2000
# How far (lines) the cursor may move down before the windows of the file below are made again
# (`_Below`): they are made for this many lines more than MAX_BELOW_LINES.
BELOW_MARGIN = 500

# The name of the file's lines below the cursor in their own index: no repository path, so never
# the path a look-up leaves out.
_BELOW = "<below>"
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _line_words(lines: Sequence[str]) -> List[set]:
  return [set(_IDENTIFIER.findall(line)) for line in lines]


def query_words(prefix: str) -> frozenset:
  """The identifiers of the last QUERY_LINES lines above the cursor and of its line's typed part."""
  return frozenset(_IDENTIFIER.findall("\n".join(prefix.split("\n")[-QUERY_LINES - 1:])))


def _snippet(lines: Sequence[str], start: int) -> str:
  return "\n".join(lines[start:start + QUERY_LINES + FOLLOWING_LINES]).rstrip("\n") + "\n"


class _File:
  """A file's lines and its windows (QUERY_LINES lines, `stride` lines apart): the (word id,
  window) pairs of the identifiers each holds, and each window's first line and size."""

  def __init__(self, text: str, word_ids: Dict[str, int], stride: int = STRIDE):
    self.lines = text.split("\n")
    line_words = _line_words(self.lines)
    self.starts = np.arange(0, max(1, len(self.lines) - QUERY_LINES + 1), stride, dtype=np.int32)
    # Each (line, word) pair goes to every window holding the line: windows k with
    # k * stride <= line < k * stride + QUERY_LINES. Built as arrays, not a set per window
    # (their unions were most of a request's look-up in the file below the cursor).
    line = np.repeat(np.arange(len(self.lines)), [len(words) for words in line_words])
    word = np.array([word_ids.setdefault(w, len(word_ids)) for words in line_words for w in words],
                    np.int64)
    first = np.maximum(0, -(-(line - QUERY_LINES + 1) // stride))
    count = np.maximum(0, np.minimum(len(self.starts) - 1, line // stride) - first + 1)
    offset = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)
    width = len(word_ids) + 1  # a (window, word) pair as one number, window * width + word
    pairs = np.unique((np.repeat(first, count) + offset) * width + np.repeat(word, count))
    self.windows = (pairs // width).astype(np.int32)
    self.words = (pairs % width).astype(np.int32)
    self.sizes = np.bincount(self.windows, minlength=len(self.starts)).astype(np.int32)


def _query_ids(query: frozenset, word_ids: Dict[str, int]) -> np.ndarray:
  """The ids of the query's words that some window holds (the others count only in its size)."""
  return np.array([word_ids[w] for w in query if w in word_ids], np.int64)


def _similarities(words: np.ndarray, windows: np.ndarray, sizes: np.ndarray,
                  query_ids: np.ndarray, query_size: int) -> Optional[np.ndarray]:
  """Each window's Jaccard similarity to the query, from the (word, window) pairs sorted by word
  and the windows' sizes; None if no window holds a word of the query."""
  # In the table's own dtype: numpy would otherwise convert the whole table to the query's for
  # each search (int32 -> int64: 3.8 ms a search in pandas' 1,411 files, 15 ms a request).
  query_ids = query_ids.astype(words.dtype)
  lo = np.searchsorted(words, query_ids, "left")
  hi = np.searchsorted(words, query_ids, "right")
  hits = [windows[a:b] for a, b in zip(lo, hi) if b > a]
  if not hits:
    return None
  common = np.bincount(np.concatenate(hits), minlength=len(sizes))
  return common / (query_size + sizes - common)


class _Merged:
  """Every file's windows in one table, the (word, window) pairs sorted by word."""

  def __init__(self, files: Dict[str, _File]):
    self.paths = sorted(files)
    self.files = [files[path] for path in self.paths]
    offsets = np.cumsum([0] + [len(f.sizes) for f in self.files])
    self.offsets = offsets[:-1]
    self.sizes = np.concatenate([f.sizes for f in self.files])
    self.owners = np.repeat(np.arange(len(self.files)), [len(f.sizes) for f in self.files])
    # Windows ascend through the files (path order) and through each file's pairs, so a word's
    # windows come out in order.
    words, windows = sorting.by_key(
        np.concatenate([f.words for f in self.files]),
        np.concatenate([f.windows + offset for f, offset in zip(self.files, self.offsets)]))
    self.words, self.windows = words.astype(np.int32), windows

  def span(self, path: str) -> Tuple[int, int]:
    """The rows of `path`'s windows (an empty span if it is not here)."""
    k = bisect.bisect_left(self.paths, path)
    if k == len(self.paths) or self.paths[k] != path:
      return 0, 0
    return int(self.offsets[k]), int(self.offsets[k]) + len(self.files[k].sizes)

  def best(self, query_ids: np.ndarray, query_size: int, path: str,
           left_out: Optional[np.ndarray] = None) -> Optional[Tuple[float, str, str]]:
    """(similarity, its file's path, snippet) of the window most like the query, the first in
    path order of the most alike, in any file but `path` and outside `left_out` (a mask of
    windows); None where none shares a word with it."""
    similarity = _similarities(self.words, self.windows, self.sizes, query_ids, query_size)
    if similarity is None:
      return None
    start, end = self.span(path)
    similarity[start:end] = -1.0
    if left_out is not None:
      similarity[left_out] = -1.0
    k = int(np.argmax(similarity))
    if similarity[k] <= 0:
      return None
    owner = self.owners[k]
    entry = self.files[owner]
    return (float(similarity[k]), self.paths[owner],
            _snippet(entry.lines, int(entry.starts[k - self.offsets[owner]])))


class WindowIndex(path_index.PathIndex):
  """The windows of a repository's files, for `best` (per path: code_t5.engine.path_index). Files
  that change once the windows are merged (an editor's saves) are merged on their own, and the
  merged table's windows of them left out, until they hold more than path_index.FRESH_SHARE of its
  windows: a save costs the changed files' windows, not a merge of all (0.14 s in numpy)."""

  def __init__(self):
    super().__init__()
    self._word_ids: Dict[str, int] = {}
    self._changed: Set[str] = set()  # paths added, changed or removed since _merged was merged
    # (the changed files' own table or None, the mask of _merged's windows of changed files or
    # None): None until asked for after a change.
    self._fresh: Optional[Tuple[Optional[_Merged], Optional[np.ndarray]]] = None

  def _entry(self, text: str) -> _File:
    return _File(text, self._word_ids)  # under the lock: it adds to the shared word ids

  def _note_change(self, path: str) -> None:
    self._fresh = None
    if self._merged is not None:
      self._changed.add(path)
      fresh = sum(len(self._files[p].sizes) for p in self._changed if p in self._files)
      if fresh > path_index.FRESH_SHARE * len(self._merged.sizes):
        self._merged = None  # merged again, whole, when next asked for

  def _tables(self) -> Tuple[_Merged, Optional[_Merged], Optional[np.ndarray]]:
    """(every file's windows as they were merged, the files changed since, the mask of the
    first's windows of those), merged now where a change left them unmerged (under the lock)."""
    if self._merged is None:
      self._merged = _Merged(self._files)
      self._changed = set()
    if self._fresh is None:
      fresh = {p: self._files[p] for p in self._changed if p in self._files}
      left_out = None
      if self._changed:
        left_out = np.zeros(len(self._merged.sizes), bool)
        for path in self._changed:
          start, end = self._merged.span(path)
          left_out[start:end] = True
      self._fresh = (_Merged(fresh) if fresh else None, left_out)
    return (self._merged, *self._fresh)

  def prepare(self) -> None:
    """Merges the files' windows now (else the next `best` does)."""
    with self._lock:
      if self._files:
        self._tables()

  def best(self, query: frozenset, path: str = "") -> Tuple[float, Optional[str]]:
    """(similarity, snippet) of the window most like `query` in any file but `path`."""
    with self._lock:
      if not query or not self._files:
        return 0.0, None
      merged, fresh, left_out = self._tables()
      query_ids = _query_ids(query, self._word_ids)
    found = merged.best(query_ids, len(query), path, left_out)
    other = fresh.best(query_ids, len(query), path) if fresh is not None else None
    if other is not None and (found is None or (-other[0], other[1]) < (-found[0], found[1])):
      found = other  # as one table of all the files would choose: the most alike, then path order
    return (0.0, None) if found is None else (found[0], found[2])


class _Below:
  """The windows of a file's lines below some line, at every line (not STRIDE lines apart), kept
  while the user moves down the file.

  Moving down a line takes the first line off the lines below the cursor's: they are then a
  suffix of the lines these windows were made from, and their windows (STRIDE lines apart from
  their own first line, within their first MAX_BELOW_LINES) are among these. `best` compares the
  query with those alone, in their order, so it finds the window and the snippet a fresh `_File`
  of those lines would (tests/similar_code_test.py). Making them was ~10 ms a request in a
  3,000-line file on the slower machine; choosing among them is under a millisecond.
  """

  def __init__(self, below: str):
    self.below = below
    self.total_lines = below.count("\n") + 1
    self.word_ids: Dict[str, int] = {}
    kept = "\n".join(below.split("\n")[:MAX_BELOW_LINES + BELOW_MARGIN])
    self.file = _File(kept, self.word_ids, stride=1)
    self.table = _Merged({_BELOW: self.file})  # its (word, window) pairs sorted by word

  def _lines(self, moved: int) -> int:
    """How many of the lines `moved` under the first of these have windows (at most
    MAX_BELOW_LINES, as a fresh index of the lines below would)."""
    return min(self.total_lines - moved, MAX_BELOW_LINES)

  def offset(self, below: str) -> Optional[int]:
    """How many lines above `below` these windows start, if `below` is a suffix of their lines
    whose windows they all hold (else None: make them again)."""
    cut = len(self.below) - len(below)
    if cut < 0 or not self.below.endswith(below) or (cut and self.below[cut - 1] != "\n"):
      return None  # not the lines below one of these lines (an edit, or the user moved up)
    moved = self.total_lines - (below.count("\n") + 1)
    lines = self._lines(moved)
    if lines < QUERY_LINES or moved + lines > len(self.file.lines):
      return None  # one short window, or past the lines kept
    return moved

  def best(self, query: frozenset, moved: int) -> Tuple[float, Optional[str]]:
    """(similarity, snippet) of the window most like `query` among those of the lines below,
    `moved` lines under the first of these."""
    similarity = _similarities(self.table.words, self.table.windows, self.table.sizes,
                               _query_ids(query, self.word_ids), len(query))
    if similarity is None:
      return 0.0, None
    lines = self._lines(moved)
    chosen = np.arange(moved, moved + lines - QUERY_LINES + 1, STRIDE)
    similarity = similarity[chosen]
    k = int(np.argmax(similarity))
    if similarity[k] <= 0:
      return 0.0, None
    return float(similarity[k]), _snippet(self.file.lines[:moved + lines], int(chosen[k]))


class _BelowSource:
  """The lines below the cursor as a source of windows for `find`: the last few `_Below`s made,
  or one file's WindowIndex where they cannot serve (a few lines, or the user moved up)."""
  KEPT = 2

  def __init__(self):
    self._lock = threading.Lock()
    self._kept: List[_Below] = []

  def best(self, query: frozenset, below: str) -> Tuple[float, Optional[str]]:
    with self._lock:
      for kept in self._kept:
        moved = kept.offset(below)
        if moved is not None:
          return kept.best(query, moved)
      if below.count("\n") + 1 < QUERY_LINES:
        index = WindowIndex()
        index.add(_BELOW, below)
        return index.best(query)
      made = _Below(below)
      self._kept = [made] + self._kept[:self.KEPT - 1]
      return made.best(query, 0)


_BELOW_SOURCE = _BelowSource()


def find(prefix: str, below: str = "", index: Optional[WindowIndex] = None,
         path: str = "") -> str:
  """The window (with the lines after it) most like the code before the cursor, from `below`
  (the file's lines after the cursor's line) and `index` (the repository, without `path`), if
  it is more alike than MIN_SIMILARITY; else ""."""
  query = query_words(prefix)
  if not query:
    return ""
  best, snippet = MIN_SIMILARITY, ""
  # The file below first (it wins a tie); one Jaccard serves both.
  found = []
  if below:
    found.append(_BELOW_SOURCE.best(query, below))
  if index is not None and len(index):
    found.append(index.best(query, path))
  for similarity, window in found:
    if window is not None and similarity > best:
      best, snippet = similarity, window
  return snippet
