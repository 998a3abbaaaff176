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
places kept are the file's and the nearest ones. The indexes live in memory (only the
repository's pieces are kept on disk, code_t5.engine.saved_pieces); one is built once per line
the cursor is on for the file (`complete.Completer.file_cache`) and once per version of the
repository's files (see `RepositoryIndex`): the cursor's own file is left out at each look-up,
so moving to another file of the project costs nothing.
"""

import bisect
import dataclasses
import threading
from typing import Dict, List, Optional, Sequence, Set, Tuple

import numpy as np

from code_t5.engine import encoding_memo
from code_t5.engine import path_index
from code_t5.engine import sorting

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
# larger than that is cut to the files nearest the cursor's folder (that folder's first).
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
  """Documents as one array of piece ids, indexed by their piece bigrams; document k's pieces are
  ids[starts[k]:ends[k]]."""

  def __init__(self, documents: Sequence[Sequence[int]]):
    parts, self.starts, self.ends, offset = [], [], [], 0
    for ids in documents:
      self.starts.append(offset)
      self.ends.append(offset + len(ids))
      if len(ids):
        parts.append(np.asarray(ids, dtype=np.int64))
        parts.append(np.array([_SEPARATOR], dtype=np.int64))
        offset += len(ids) + 1
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
      # places of one context in document order (a look-up keeps the last or the nearest)
      self._keys, self._places = sorting.by_key(keys, places)
    else:
      self._width = 1
      self._keys = np.zeros(0, np.int64)
      self._places = np.zeros(0, np.int64)

  def __len__(self) -> int:
    return len(self.ids)

  _back = np.arange(1, MAX_MATCH - 1)  # offsets back from a bigram's first piece

  def lookup(self, history: Sequence[int], without: Optional["Without"] = None
             ) -> Optional[Lookup]:
    """The next pieces after the longest earlier occurrence of `history`'s end (None if its last
    two pieces never occurred with a piece after them).

    `without`: spans of `ids` whose places are left out; where more than MAX_POSITIONS places
    remain, those nearest its `own` span are kept. By default nothing is left out and the last
    places are kept.
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
      places = _nearest(self._places[lo:hi], without)
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


@dataclasses.dataclass(frozen=True)
class Without:
  """What a look-up leaves out of a PieceCache: `own`, the (start, end) of the cursor's file in
  its ids (an empty span where it would be if it is not there), and `stale`, the spans of files
  changed or removed since the cache was built, as an array of (start, end) rows."""
  own: Tuple[int, int]
  stale: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 2), np.int64))


def _nearest(places: np.ndarray, without: Without) -> np.ndarray:
  """Of `places` (ascending), those outside the spans `without` names, at most MAX_POSITIONS of
  them: the nearest on each side of its `own` span, half before it and half after, or more of
  one side where the other has fewer."""
  start, end = without.own
  before, after = (int(k) for k in np.searchsorted(places, [start, end]))
  if len(without.stale):
    first = np.searchsorted(places, without.stale[:, 0])
    last = np.searchsorted(places, without.stale[:, 1])
    if (last > first).any():  # some of these places are in a stale file's span
      keep = np.ones(len(places), bool)
      keep[before:after] = False
      for a, b in zip(first, last):
        keep[a:b] = False
      places = places[keep]
      before = after = int(np.searchsorted(places, start))
  left, right = before, len(places) - after
  if left + right <= MAX_POSITIONS:
    return places if before == after else np.concatenate([places[:before], places[after:]])
  take_left = min(left, max(MAX_POSITIONS // 2, MAX_POSITIONS - right))
  return np.concatenate([places[before - take_left:before],
                         places[after:after + MAX_POSITIONS - take_left]])


def _together(a: Optional[Lookup], b: Optional[Lookup]) -> Optional[Lookup]:
  """Two look-ups of the same history in two caches as one cache holding both would answer:
  the longer match, or on equal matches the places of both (when neither kept fewer than it
  found)."""
  if a is None or b is None or a.match != b.match:
    return b if a is None or (b is not None and b.match > a.match) else a
  ids, where = np.unique(np.concatenate([a.ids, b.ids]), return_inverse=True)
  counts = np.bincount(where, weights=np.concatenate([np.rint(a.probs * a.count),
                                                      np.rint(b.probs * b.count)]))
  return Lookup(ids=ids, probs=counts / counts.sum(), match=a.match, count=a.count + b.count)


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
      other = self.repository.lookup(history)
      if other is not None and (found is None or other.match > found.match):
        found = other
    return found


@dataclasses.dataclass(frozen=True)
class RepositoryPieces:
  """A repository's files but one (the cursor's): `cache` looked up `without` what it holds of
  that file and of files changed since it was built, and `fresh`, the files changed since,
  looked up `fresh_without`."""
  cache: PieceCache
  files: int
  pieces: int
  truncated: bool
  without: Without
  fresh: Optional[PieceCache] = None
  fresh_without: Optional[Without] = None

  def lookup(self, history: Sequence[int]) -> Optional[Lookup]:
    found = self.cache.lookup(history, self.without)
    if self.fresh is None:
      return found
    return _together(found, self.fresh.lookup(history, self.fresh_without))


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
  """Piece ids of a repository's Python files, encoded once and kept per path; `pieces_for` gives
  them without the cursor's own file. Where they all fit in MAX_REPOSITORY_PIECES they are indexed
  once, in path order: moving to another file builds nothing, and a change (a save) indexes only
  the files changed since, on their own, until they hold more than path_index.FRESH_SHARE of the
  pieces. A larger repository is cut to the files nearest the cursor's folder, indexed in path
  order once per folder (the last one is kept until the files change), the cursor's own file left
  out at each look-up as in the whole index: moving between a folder's files builds nothing.
  Thread-safe: the LSP server updates it from its reader while completions read it.
  """

  def __init__(self, tokenizer, max_pieces: int = MAX_REPOSITORY_PIECES):
    self.tokenizer = tokenizer
    self.max_pieces = max_pieces
    self._files: Dict[str, np.ndarray] = {}
    self._total = 0  # the files' pieces
    self._lock = threading.Lock()
    self._version = 0
    # The files as they were when indexed: (their paths in order, their PieceCache); None until
    # asked for, and again once the files changed since hold more than path_index.FRESH_SHARE of
    # its pieces.
    self._base: Optional[Tuple[List[str], PieceCache]] = None
    self._changed: Set[str] = set()  # paths added, changed or removed since _base was built
    # The changed files' own index (their paths, their PieceCache or None) and the spans _base
    # holds of them: None until asked for after a change.
    self._fresh: Optional[Tuple[List[str], Optional[PieceCache], np.ndarray]] = None
    # A larger repository's index of the files nearest one folder: ((version, folder), their
    # paths in order, their PieceCache, their pieces).
    self._nearby: Optional[Tuple[Tuple[int, str], List[str], PieceCache, int]] = None
    self.builds = 0  # how many times `pieces_for` indexed pieces (tests read it)

  def add(self, path: str, text: str) -> None:
    # Through the tokenizer's shared memo: the Completer finds the parts of a file the editor
    # opened already encoded (code_t5.engine.encoding_memo).
    self.add_pieces(path, encoding_memo.shared(self.tokenizer).encode(text))

  def add_pieces(self, path: str, ids: np.ndarray) -> None:
    """`path` holds these piece ids from now on."""
    with self._lock:
      old = self._files.get(path)
      self._files[path] = ids
      self._total += len(ids) - (len(old) if old is not None else 0)
      self._note_change(path)

  def remove(self, path: str) -> None:
    with self._lock:
      old = self._files.pop(path, None)
      if old is not None:
        self._total -= len(old)
        self._note_change(path)

  def _note_change(self, path: str) -> None:
    self._version += 1
    self._nearby = None
    self._fresh = None
    if self._base is not None:
      self._changed.add(path)
      fresh = sum(len(self._files[p]) for p in self._changed if p in self._files)
      if fresh > path_index.FRESH_SHARE * len(self._base[1]):
        self._base = None  # indexed again, whole, when next asked for

  @property
  def paths(self) -> List[str]:
    with self._lock:
      return sorted(self._files)

  @property
  def total_pieces(self) -> int:
    """The pieces of all the files (a look-up may read fewer: MAX_REPOSITORY_PIECES)."""
    with self._lock:
      return self._total

  def pieces_for(self, path: str) -> RepositoryPieces:
    """The repository without `path` (see FileCache). In the index of every file, path order
    puts a folder's files side by side, so the places kept for a context that occurs too often,
    those nearest `path`'s span, are its own folder's first."""
    with self._lock:
      if self._total > self.max_pieces:
        return self._nearest_files(path)
      if self._base is None:
        paths = sorted(self._files)
        self._base = (paths, PieceCache([self._files[p] for p in paths]))
        self._changed = set()
        self.builds += 1
      paths, cache = self._base
      if self._fresh is None:
        fresh_paths = sorted(p for p in self._changed if p in self._files)
        fresh = None
        if fresh_paths:
          fresh = PieceCache([self._files[p] for p in fresh_paths])
          self.builds += 1
        stale = [_span(paths, cache, p) for p in sorted(self._changed)]
        self._fresh = (fresh_paths, fresh, np.array([span for span in stale if span[1] > span[0]],
                                                    np.int64).reshape(-1, 2))
      fresh_paths, fresh, stale = self._fresh
      own = self._files.get(path)
      return RepositoryPieces(
          cache=cache, files=len(self._files) - (own is not None),
          pieces=self._total - (len(own) if own is not None else 0), truncated=False,
          without=Without(_span(paths, cache, path), stale), fresh=fresh,
          fresh_without=Without(_span(fresh_paths, fresh, path)) if fresh is not None else None)

  def _nearest_files(self, path: str) -> RepositoryPieces:
    """A repository larger than max_pieces: the files nearest `path`'s folder (most folders in
    common, then by path) that fit, indexed in path order once per folder, `path`'s own pieces
    left out at each look-up (so the places kept for a too-common context are those nearest it,
    its own folder's first). Called with the lock held."""
    folder = path.rpartition("/")[0]
    key = (self._version, folder)
    if self._nearby is None or self._nearby[0] != key:
      anchor = f"{folder}/" if folder else ""  # _nearness reads the folders of a path
      chosen, total = [], 0
      for p in sorted(self._files, key=lambda p: _nearness(p, anchor)):
        if total + len(self._files[p]) > self.max_pieces:
          continue
        chosen.append(p)
        total += len(self._files[p])
      paths = sorted(chosen)
      self._nearby = (key, paths, PieceCache([self._files[p] for p in paths]), total)
      self.builds += 1
    _, paths, cache, total = self._nearby
    k = bisect.bisect_left(paths, path)
    own = len(self._files[path]) if k < len(paths) and paths[k] == path else None
    others = len(self._files) - (path in self._files)
    files = len(paths) - (own is not None)
    return RepositoryPieces(cache=cache, files=files, pieces=total - (own or 0),
                            truncated=files < others, without=Without(_span(paths, cache, path)))


def _span(paths: List[str], cache: PieceCache, path: str) -> Tuple[int, int]:
  """Where `cache`, the PieceCache of `paths` (sorted), holds `path`'s pieces, or the empty span
  where they would be."""
  k = bisect.bisect_left(paths, path)
  if k == len(paths):
    return len(cache.ids), len(cache.ids)
  if paths[k] != path:
    return cache.starts[k], cache.starts[k]
  return cache.starts[k], cache.ends[k]
