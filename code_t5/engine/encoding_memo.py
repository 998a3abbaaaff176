"""Remembered encodings of a file's parts: moving to another line does not encode the file again.

The copy cache reads the file above and below the cursor's line as the model's pieces
(`Completer.file_cache`). Both texts change whenever the cursor moves to another line, and
encoding them afresh took 56-70 ms a request in 100-120 kB files on the slower 2-core machine,
a third of the request. The project's SentencePiece vocabularies never join pieces across a word
start (a space after a non-space; `tokenizers._word_chunks`), so the pieces of a text cut at word
starts are its parts' pieces one after another. `EncodingMemo` cuts at the first word start of
lines chosen by their own content (their length), not by their place, so that an edit moves no
cut outside its own part, and remembers each part's pieces, least recently used out first.
"""

import collections
import itertools
import re
import threading
import weakref
from typing import Dict, List, Sequence

import numpy as np

from code_t5.engine import tokenizers

# A line whose length is a multiple of CUT_EVERY is cut at its first word start (its indentation's
# first space, or the first space after a non-space): parts of ~8 such lines, a few hundred
# characters, so an edit re-encodes little and a file is a few hundred look-ups.
CUT_EVERY = 8
# Characters of parts remembered (~2 MB of code: the files around the last few cursors).
MAX_CHARS = 2_000_000
# A line's first word start: after the non-spaces it begins with (none for an indented line).
_LINE_TO_FIRST_SPACE = re.compile(r"^([^ \n]*) [^\n]*", re.MULTILINE)


def parts(text: str, cut_every: int = CUT_EVERY) -> List[str]:
  """`text` cut at the first word start of each line whose length is a multiple of `cut_every`
  (never at its very start): the parts' pieces, one after another, are the text's."""
  cuts = [match.end(1) for match in _LINE_TO_FIRST_SPACE.finditer(text)
          if (match.end() - match.start()) % cut_every == 0 and match.end(1) > 0]
  bounds = [0, *cuts, len(text)]
  return [text[start:end] for start, end in zip(bounds, bounds[1:])]


class EncodingMemo:
  """`encode`: the tokenizer's ids as an int64 array (what the copy cache indexes), from the
  remembered pieces of the text's parts. A tokenizer
  other than `tokenizers.Pieces` (bytes: nothing to save, any cut would do) encodes directly.
  Thread-safe: the LSP server's reader adds the documents it opens (through the repository's
  index) while its model thread completes in them; parts are encoded outside the lock."""

  def __init__(self, tokenizer: tokenizers.Tokenizer, max_chars: int = MAX_CHARS):
    self.tokenizer = tokenizer
    self.max_chars = max_chars
    self._parts: "collections.OrderedDict[str, np.ndarray]" = collections.OrderedDict()
    self._chars = 0
    self._lock = threading.Lock()
    self.encoded_chars = 0  # characters the tokenizer was given (tests and benchmarks read it)

  def encode(self, text: str) -> np.ndarray:
    return self.encode_many([text])[0]

  def encode_many(self, texts: Sequence[str]) -> List[np.ndarray]:
    """`encode` of each text; the parts none of them had before are given to the tokenizer
    together (tokenizers.Pieces.encode_many: on all cores)."""
    if not isinstance(self.tokenizer, tokenizers.Pieces):
      self.encoded_chars += sum(len(text) for text in texts)
      return [np.asarray(self.tokenizer.encode(text), dtype=np.int64) for text in texts]
    cut = [parts(text) for text in texts]
    found: Dict[str, np.ndarray] = {}
    with self._lock:
      for part in itertools.chain.from_iterable(cut):
        ids = self._parts.get(part)
        if ids is not None:
          self._parts.move_to_end(part)
          found[part] = ids
    missing = [part for part in dict.fromkeys(itertools.chain.from_iterable(cut))
               if part not in found]
    for part, ids in zip(missing, self.tokenizer.encode_many(missing)):
      found[part] = np.asarray(ids, dtype=np.int32)
    with self._lock:
      for part in missing:
        if part not in self._parts:
          self._parts[part] = found[part]
          self._chars += len(part)
          self.encoded_chars += len(part)
      while self._chars > self.max_chars:  # the least recently used parts out first
        part, _ = self._parts.popitem(last=False)
        self._chars -= len(part)
    return [np.concatenate([found[part] for part in text_parts]).astype(np.int64)
            for text_parts in cut]

  def clear(self) -> None:
    with self._lock:
      self._parts.clear()
      self._chars = 0

  def __len__(self) -> int:
    return len(self._parts)


_SHARED: "weakref.WeakKeyDictionary[tokenizers.Tokenizer, EncodingMemo]" = (
    weakref.WeakKeyDictionary())
_SHARED_LOCK = threading.Lock()


def shared(tokenizer: tokenizers.Tokenizer) -> EncodingMemo:
  """The memo of `tokenizer` that the repository's index and the Completer share: a file the
  editor opens is encoded once, as the repository's copy of it, and the first completion in it
  finds all of its parts but the cursor's line's."""
  with _SHARED_LOCK:
    memo = _SHARED.get(tokenizer)
    if memo is None:
      memo = _SHARED[tokenizer] = EncodingMemo(tokenizer)
    return memo
