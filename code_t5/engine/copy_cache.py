"""A cache of the code around the cursor, mixed into the model's next-piece probabilities.

Code repeats locally: a file reuses its own names and phrases, and a repository its own calls,
imports and idioms (Tu et al. 2014; Hellendoorn & Devanbu 2017 mixed such cache models with a
global one and beat the neural models of their day). The shipped model reads only the last 256
pieces before the cursor and learned names of other projects; the cache reads everything the
editor has: the file above the cursor and the repository's other files.

`PieceCache` holds those texts as the model's own pieces (one array) and answers, for the pieces
written so far, what came next wherever the same pieces occurred before: it finds the places
that end with the last two pieces, extends each match backwards up to MAX_MATCH pieces, and
counts the next piece at the places with the longest match (a copy model, as infini-gram looks
up the longest suffix that occurred). `mix` turns that into a mixture with the model's
distribution, log((1 - w) p_model + w p_cache), with a weight that grows with the matched length
(a two-piece match says little, a twelve-piece match says "this is being copied").

The file is put last, so that when a common context occurs more than MAX_POSITIONS times the
places kept are the file's and the nearest ones. Nothing is written to disk; an index is built
once per line the cursor is on for the file (`complete.Completer.file_cache`) and once per
version of the repository's files (see `RepositoryIndex`): the cursor's own file is left out at
each look-up, so moving to another file of the project costs nothing.
"""

import bisect
import dataclasses
import threading
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from code_t5.engine import encoding_memo

# Longest match looked for, in pieces: beyond ~16 pieces (~60 characters) the next piece is
# settled; a longer window only costs time.
MAX_MATCH = 16
# Places kept per lookup (the last ones: the file and the code nearest it).
MAX_POSITIONS = 4096
# The mixture weight for a longest match of L pieces: WEIGHT * (L - 1) / (L - 1 + HALF_MATCH),
# i.e. half of WEIGHT at a match of HALF_MATCH + 1 pieces. Chosen on held-out repositories
# (docs/engine.md).
WEIGHT = 0.6
HALF_MATCH = 4.0
# The repository part of a cache holds at most this many pieces (~16 MB of code); a repository
# larger than that is cut to the files nearest the cursor's file (same folder first).
MAX_REPOSITORY_PIECES = 4_000_000
# A model sure of its next piece is not overruled by a copy: above a top probability of 1 - SURE
# the cache's weight shrinks to none (a model that learnt a file by heart completes it as
# learnt; tests/learning_test.py).
SURE = 0.5
_SEPARATOR = -1  # between documents: never matches a piece


@dataclasses.dataclass(frozen=True)
class Lookup:
  """What the cache says follows a history: `ids` with probabilities `probs`; `match` pieces of
  the history matched at the `count` places these come from."""
  ids: np.ndarray
  probs: np.ndarray
  match: int
  count: int


class PieceCache:
  """Documents as one array of piece ids, indexed by their piece bigrams; `starts[k]` is where
  document k begins in `ids` (its pieces are ids[starts[k]:starts[k] + len(document k)])."""

  def __init__(self, documents: Sequence[Sequence[int]]):
    parts, starts, offset = [], [], 0
    for ids in documents:
      starts.append(offset)
      if len(ids):
        parts.append(np.asarray(ids, dtype=np.int64))
        parts.append(np.array([_SEPARATOR], dtype=np.int64))
        offset += len(ids) + 1
    self.starts = starts
    # The ids after MAX_MATCH separators (`ids` is a view of the rest): a match extended
    # backwards past the first document reads a separator, which never matches, without a bounds
    # check per look-up.
    self._padded = np.concatenate([np.full(MAX_MATCH, _SEPARATOR, np.int64), *parts])
    self.ids = self._padded[MAX_MATCH:]
    n = len(self.ids)
    # Place i (1 <= i < n - 1) is the bigram ids[i - 1], ids[i], followed by ids[i + 1].
    if n >= 3:
      first, second, following = self.ids[:-2], self.ids[1:-1], self.ids[2:]
      valid = (first >= 0) & (second >= 0) & (following >= 0)
      places = np.nonzero(valid)[0] + 1
      self._width = int(self.ids.max()) + 1
      keys = self.ids[places - 1] * self._width + self.ids[places]
      order = np.argsort(keys, kind="stable")  # stable: places stay in document order per key
      self._keys = keys[order]
      self._places = places[order]
    else:
      self._width = 1
      self._keys = np.zeros(0, np.int64)
      self._places = np.zeros(0, np.int64)

  def __len__(self) -> int:
    return len(self.ids)

  _back = np.arange(1, MAX_MATCH - 1)  # offsets back from a bigram's first piece

  def lookup(self, history: Sequence[int], without: Optional[Tuple[int, int]] = None
             ) -> Optional[Lookup]:
    """The next pieces after the longest earlier occurrence of `history`'s end (None if its last
    two pieces never occurred with a piece after them).

    `without`: (start, end), a span of `ids` whose places are left out (a document the caller
    reads elsewhere); where more than MAX_POSITIONS places remain, those nearest the span are
    kept. By default nothing is left out and the last places are kept.
    """
    if len(history) < 2 or not len(self._keys):
      return None
    a, b = int(history[-2]), int(history[-1])
    if not (0 <= a < self._width and 0 <= b < self._width):
      return None
    key = a * self._width + b
    lo, hi = np.searchsorted(self._keys, [key, key + 1])
    if lo == hi:
      return None
    if without is None:
      places = self._places[max(lo, hi - MAX_POSITIONS):hi]
    else:
      places = _nearest(self._places[lo:hi], *without)
      if not len(places):
        return None
    # Extend each match backwards: offsets 2.. of the history against the places' past.
    depth = min(MAX_MATCH, len(history)) - 2
    if depth > 0:
      # places - 1 is the bigram's first piece; _padded is ids shifted by MAX_MATCH.
      where = places[:, None] + (MAX_MATCH - 1) - self._back[None, :depth]
      wanted = np.asarray(history[-3:-3 - depth:-1], dtype=np.int64)
      # The matched length is 2 + the number of leading equal pieces going back.
      run = np.cumprod(self._padded[where] == wanted, axis=1).sum(axis=1)
      longest = int(run.max())
      chosen = places[run == longest]
      longest += 2
    else:
      longest, chosen = 2, places
    if len(chosen) == 1:  # one place matched longest: what np.unique gives, without its sort
      following, counts = self.ids[chosen + 1], np.ones(1, np.int64)
    else:
      following, counts = np.unique(self.ids[chosen + 1], return_counts=True)
    return Lookup(ids=following, probs=counts / counts.sum(), match=longest,
                  count=int(len(chosen)))


def _nearest(places: np.ndarray, start: int, end: int) -> np.ndarray:
  """Of `places` (ascending), those outside [start, end), at most MAX_POSITIONS of them: the
  nearest on each side of the span, half before it and half after, or more of one side where
  the other has fewer."""
  before, after = np.searchsorted(places, [start, end])
  left, right = int(before), len(places) - int(after)
  if left + right <= MAX_POSITIONS:
    return places if before == after else np.concatenate([places[:before], places[after:]])
  take_left = min(left, max(MAX_POSITIONS // 2, MAX_POSITIONS - right))
  return np.concatenate([places[before - take_left:before],
                         places[after:after + MAX_POSITIONS - take_left]])


def weight(lookup: Optional[Lookup]) -> float:
  """How much of the mixture the cache gets for this lookup."""
  if lookup is None:
    return 0.0
  longer = lookup.match - 1
  return WEIGHT * longer / (longer + HALF_MATCH)


def mix(logprobs: np.ndarray, lookup: Optional[Lookup]) -> np.ndarray:
  """The mixture's log-probabilities for one step: log((1 - w) p_model + w p_cache), w the
  lookup's weight, less where the model is sure of its top piece (SURE)."""
  w = weight(lookup)
  if w:
    # The cache's weight shrinks from full at a model top probability of 1 - SURE to none at 1.
    w *= min(1.0, (1.0 - float(np.exp(np.max(logprobs)))) / SURE)
  if not w:
    return logprobs
  mixed = logprobs + np.float32(np.log1p(-w))
  ids = lookup.ids[lookup.ids < len(logprobs)]
  probs = lookup.probs[:len(ids)] if len(ids) == len(lookup.ids) else lookup.probs[
      lookup.ids < len(logprobs)]
  mixed[ids] = np.logaddexp(mixed[ids], np.log(w * probs)).astype(mixed.dtype)
  return mixed


class FileCache:
  """A request's cache: the repository's pieces (indexed once per file being completed) and the
  file's (`file`: the lines below the cursor's, then those above it, the nearest places last;
  indexed once per line the cursor is on). A look-up asks both and keeps the longer match; on
  equal matches the file's, the nearer code."""

  def __init__(self, repository: Optional["RepositoryPieces"], file: PieceCache):
    self.repository = repository
    self.file = file

  def lookup(self, history: Sequence[int]) -> Optional[Lookup]:
    found = self.file.lookup(history)
    if self.repository is not None:
      other = self.repository.cache.lookup(history, self.repository.without)
      if other is not None and (found is None or other.match > found.match):
        found = other
    return found


@dataclasses.dataclass(frozen=True)
class RepositoryPieces:
  """A repository's files but one (the cursor's): `cache` looked up `without` the span of ids
  that file holds there (None: the cache holds only the others, the nearest last)."""
  cache: PieceCache
  files: int
  pieces: int
  truncated: bool
  without: Optional[Tuple[int, int]] = None


def _nearness(path: str, anchor: str) -> Tuple[int, str]:
  """Sorts files nearest `anchor` first: the most folders in common, then by path."""
  a, p = anchor.split("/")[:-1], path.split("/")[:-1]
  common = 0
  for x, y in zip(a, p):
    if x != y:
      break
    common += 1
  return (-common, path)


class RepositoryIndex:
  """Piece ids of a repository's Python files, encoded once and kept per path; `pieces_for`
  gives them without the cursor's own file. Where they all fit in MAX_REPOSITORY_PIECES they are
  indexed once, in path order, until the files change: moving to another file builds nothing.
  A larger repository is cut to the files nearest the cursor's, indexed for that file (the last
  one is kept until the files change). Thread-safe: the LSP server updates it from its reader
  while completions read it.
  """

  def __init__(self, tokenizer, max_pieces: int = MAX_REPOSITORY_PIECES):
    self.tokenizer = tokenizer
    self.max_pieces = max_pieces
    self._files: Dict[str, np.ndarray] = {}
    self._lock = threading.Lock()
    self._version = 0
    # Every file in path order: (paths, their PieceCache or None where they do not fit, pieces);
    # None until asked for after a change.
    self._whole: Optional[Tuple[List[str], Optional[PieceCache], int]] = None
    self._memo: Dict[Tuple[int, str], RepositoryPieces] = {}  # a larger repository's, per file
    self.builds = 0  # how many times `pieces_for` indexed the pieces (tests read it)

  def add(self, path: str, text: str) -> None:
    # Through the tokenizer's shared memo: the Completer finds the parts of a file the editor
    # opened already encoded (code_t5.engine.encoding_memo).
    ids = encoding_memo.shared(self.tokenizer).encode(text)
    with self._lock:
      self._files[path] = ids
      self._changed()

  def remove(self, path: str) -> None:
    with self._lock:
      if self._files.pop(path, None) is not None:
        self._changed()

  def _changed(self) -> None:
    self._version += 1
    self._whole = None
    self._memo.clear()

  @property
  def paths(self) -> List[str]:
    with self._lock:
      return sorted(self._files)

  def pieces_for(self, path: str) -> RepositoryPieces:
    """The repository without `path` (see FileCache). In the index of every file, path order
    puts a folder's files side by side, so the places kept for a context that occurs too often,
    those nearest `path`'s span, are its own folder's first."""
    with self._lock:
      if self._whole is None:
        paths = sorted(self._files)
        total = sum(len(self._files[p]) for p in paths)
        cache = None
        if total <= self.max_pieces:
          self.builds += 1
          cache = PieceCache([self._files[p] for p in paths])
        self._whole = (paths, cache, total)
      paths, cache, total = self._whole
      if cache is None:
        return self._nearest_files(path)
      k = bisect.bisect_left(paths, path)
      own = k < len(paths) and paths[k] == path
      start = cache.starts[k] if k < len(paths) else len(cache.ids)
      end = start + len(self._files[path]) if own else start
      return RepositoryPieces(cache=cache, files=len(paths) - own, pieces=total - (end - start),
                              truncated=False, without=(start, end))

  def _nearest_files(self, path: str) -> RepositoryPieces:
    """A repository larger than max_pieces: the files nearest `path` that fit, indexed for it,
    the nearest last (a look-up keeps the last places). Called with the lock held."""
    key = (self._version, path)
    if key in self._memo:
      return self._memo[key]
    others = sorted((p for p in self._files if p != path), key=lambda p: _nearness(p, path))
    chosen, total = [], 0
    for p in others:
      ids = self._files[p]
      if total + len(ids) > self.max_pieces:
        continue
      chosen.append(ids)
      total += len(ids)
    self.builds += 1
    result = RepositoryPieces(cache=PieceCache(list(reversed(chosen))), files=len(chosen),
                              pieces=total, truncated=len(chosen) < len(others))
    self._memo = {key: result}
    return result
