"""A token n-gram model of code: the model-free line-completion baseline (`code-t5 baseline`).

The model is a token n-gram model (order 4, "stupid backoff" to shorter contexts), counted on
texts (`code-t5 baseline`: the TRAIN split of an FLCC root) and decoded greedily until it predicts
a newline. Tokens are identifiers/numbers, single punctuation characters, runs of spaces/tabs, and
"\\n" (TOKEN_RE). When the cursor is right after a word character, the typed part of that word is
"healed": the context drops the partial word and the first prediction must extend it (only the
untyped rest is output).

A fitted model is saved and loaded as numpy arrays (`save`, `load`: one uncompressed .npz), so
`code-t5 baseline` counts a root once (code_t5/evaluation/baseline.py keeps them in a cache).
"""

import array
import collections
import json
import re
import time
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from code_t5.data import postprocessors
from code_t5.engine import arrays_file

TOKEN_RE = re.compile(r"\n|[ \t]+|\w+|[^\w\s]|\s")
ORDER = 4
TOP_CONTINUATIONS = 32  # kept per context: enough for healing a typed prefix
MAX_TOKENS = 40
MAX_CHARS = 240
# Part of a saved model: bump it whenever what fit counts, or how save lays it out, changes.
FORMAT = 1


class ModelFileError(ValueError):
  """A saved model that cannot be read (damaged, truncated, another format or order)."""


def tokenize(text: str) -> List[str]:
  return TOKEN_RE.findall(text)


class NgramModel:
  """The next tokens after each context of up to order - 1 tokens, most frequent first.

  For every context seen in training it keeps its TOP_CONTINUATIONS most frequent next tokens,
  equal counts in the order of their first occurrence in the token stream (as
  collections.Counter.most_common would). Counting is done with numpy on integer token ids, so a
  corpus of ~100M tokens fits in a few GB (docs/evaluation.md): fit streams the texts once,
  keeping only their token ids, then, per context length n, sorts the (n+1)-grams. An n-gram's id
  is its rank among the distinct n-grams, so an (n+1)-gram is exactly the int64 key
  id(first n tokens) * vocabulary size + id(last token), without collisions.
  """

  def __init__(self, order: int = ORDER):
    if order < 1:
      raise ValueError(f"order must be at least 1, got {order}")
    self.order = order
    self._vocab: Dict[str, int] = {}
    self._tokens: List[str] = []
    # _gram_keys[n - 1]: sorted keys of the distinct (n+1)-grams, n = 1 .. order - 2; the index of
    # a key is the (n+1)-gram's id.
    self._gram_keys: List[np.ndarray] = []
    # Per context length n: continuations of context id c are _next[n][_offsets[n][c]:..[c + 1]].
    self._offsets: List[np.ndarray] = []
    self._next: List[np.ndarray] = []
    self.stats: Dict[str, object] = {}

  def fit(self, texts: Iterable[str],
          progress: Optional[Callable[[int, float], None]] = None) -> "NgramModel":
    """Counts `texts`; progress(orders done, seconds counting) is called after each order's
    counting (reading the texts is the caller's to report: `texts` may be a generator)."""
    start = time.perf_counter()
    ids, lengths = self._read(texts)
    read_seconds = time.perf_counter() - start
    vocab_size = max(len(self._tokens), 1)
    total = len(ids)
    starts = np.cumsum(lengths) - lengths  # where each file's leading "\n" is
    if total >= 2**31 - 1:
      raise ValueError(f"{total} tokens: at most 2**31 - 2 are supported")
    self._gram_keys, self._offsets, self._next = [], [], []
    contexts, ngrams = [], []
    gram_ids = ids  # id of the n-gram ending at each position (n = 1: the token id)
    context_count = 1
    for n in range(self.order):
      # The (n+1)-gram ending at position i: its first n tokens are the context, i the next token;
      # fit counts position i (its index in its file's tokens) only if i >= max(n, 1).
      key = np.empty(total, dtype=np.int64)
      if n == 0:
        key[:] = ids
      elif total:
        np.multiply(gram_ids[:-1], vocab_size, out=key[1:], dtype=np.int64)
        key[1:] += ids[1:]
      invalid = _starts_of_files(starts, lengths, max(n, 1))
      key[invalid] = np.iinfo(np.int64).max  # sorts last: dropped below
      order = np.argsort(key, kind="stable")  # equal keys: by position
      key = key[order]
      valid = total - len(invalid)
      del invalid
      key, order = key[:valid], order[:valid]
      new = np.ones(valid, dtype=bool)
      np.not_equal(key[1:], key[:-1], out=new[1:])
      first = np.flatnonzero(new)  # index in the sorted keys of each distinct (n+1)-gram
      grams = key[first]
      if 1 <= n < self.order - 1:
        next_ids = np.zeros(total, dtype=np.int32)  # ids of the (n+1)-grams, the next contexts
        if valid:
          assert len(first) < 2**31
          next_ids[order] = np.cumsum(new, dtype=np.int32) - 1
      else:
        next_ids = ids
      del new, key
      counts = np.diff(first, append=valid)
      positions = order[first]
      del order, first
      self._rank(grams, counts, positions, total, vocab_size, context_count)
      del counts, positions
      if 1 <= n < self.order - 1:
        self._gram_keys.append(grams)
      contexts.append(int(np.count_nonzero(np.diff(self._offsets[n]))))
      ngrams.append(len(grams))
      context_count = len(grams) if n >= 1 else vocab_size
      del grams
      gram_ids = next_ids
      del next_ids
      if progress is not None:
        progress(n + 1, time.perf_counter() - start - read_seconds)
    self.stats = {"files": len(lengths), "tokens": int(total - len(lengths)),
                  "distinct_tokens": len(self._tokens), "contexts": contexts,
                  "ngrams": ngrams, "kept": [len(x) for x in self._next],
                  "read_seconds": read_seconds,
                  "count_seconds": time.perf_counter() - start - read_seconds}
    return self

  def _read(self, texts: Iterable[str]) -> Tuple[np.ndarray, np.ndarray]:
    """Token ids of all texts, each file starting with "\\n" (as a line), and the files' lengths.

    Only the distinct token strings are kept; ids number them in order of first occurrence.
    """
    vocab = collections.defaultdict()
    vocab.default_factory = vocab.__len__  # a new token gets the next id
    newline = vocab["\n"]
    ids = array.array("i")
    lengths = array.array("q")
    for text in texts:
      tokens = tokenize(text)
      ids.append(newline)
      ids.extend(map(vocab.__getitem__, tokens))
      lengths.append(len(tokens) + 1)
    vocab.default_factory = None
    self._vocab = vocab
    self._tokens = list(vocab)
    return (np.frombuffer(ids, dtype=np.int32) if ids else np.zeros(0, np.int32),
            np.frombuffer(lengths, dtype=np.int64) if lengths else np.zeros(0, np.int64))

  def _rank(self, grams, counts, positions, total, vocab_size, context_count) -> None:
    """Keeps the top continuations of each context (of the length being counted; appended to the
    tables in that order): count desc, first position asc."""
    contexts = grams // vocab_size
    # The distinct (n+1)-grams in order of first position (positions are distinct), then a stable
    # sort by (context, count desc).
    at = np.full(total, -1, dtype=np.int64 if len(grams) >= 2**31 else np.int32)
    at[positions] = np.arange(len(grams))
    by_position = at[at >= 0]
    del at
    most = int(counts.max()) if len(counts) else 0
    if context_count * (most + 1) >= 2**63:
      raise ValueError("too many n-grams for int64 ranking keys")
    rank_key = contexts[by_position] * (most + 1) + (most - counts[by_position])
    ranked = by_position[np.argsort(rank_key, kind="stable")]
    del rank_key, by_position
    ranked_contexts = contexts[ranked]
    del contexts
    group = np.ones(len(ranked), dtype=bool)
    np.not_equal(ranked_contexts[1:], ranked_contexts[:-1], out=group[1:])
    group_starts = np.flatnonzero(group)
    del group
    rank = np.arange(len(ranked)) - np.repeat(group_starts, np.diff(group_starts,
                                                                    append=len(ranked)))
    keep = rank < TOP_CONTINUATIONS
    del rank, group_starts
    offsets = np.zeros(context_count + 1, dtype=np.int64)
    np.cumsum(np.bincount(ranked_contexts[keep], minlength=context_count), out=offsets[1:])
    self._offsets.append(offsets)
    self._next.append((grams[ranked[keep]] % vocab_size).astype(np.int32))

  def save(self, file, key: str = "") -> None:
    """Writes the fitted model to `file` (a path or a binary file) as one uncompressed .npz:
    its arrays, its vocabulary (UTF-8 text and each token's end) and, in "meta", the format,
    order, constants, stats and `key` (what the caller keyed it by; `load` can check it)."""
    meta = {"format": FORMAT, "order": self.order, "top_continuations": TOP_CONTINUATIONS,
            "token_re": TOKEN_RE.pattern, "key": key, "stats": self.stats}
    arrays = {"meta": np.array(json.dumps(meta)),
              "vocab_utf8": np.frombuffer("".join(self._tokens).encode("utf-8", "surrogatepass"),
                                          dtype=np.uint8),
              "vocab_ends": np.cumsum([len(t) for t in self._tokens], dtype=np.int64)}
    for i, keys in enumerate(self._gram_keys):
      arrays[f"gram_keys_{i}"] = keys
    for n, (offsets, next_ids) in enumerate(zip(self._offsets, self._next)):
      arrays[f"offsets_{n}"] = offsets
      arrays[f"next_{n}"] = next_ids
    arrays_file.save(file, arrays)

  @classmethod
  def load(cls, file, key: Optional[str] = None) -> "NgramModel":
    """A model `save` wrote; ModelFileError (one line) if the file is damaged, of another
    format, order or constants, or (with `key`) saved under another key."""
    try:
      with np.load(file, allow_pickle=False) as data:
        meta = json.loads(str(data["meta"][()]))
        expected = {"format": FORMAT, "top_continuations": TOP_CONTINUATIONS,
                    "token_re": TOKEN_RE.pattern, **({"key": key} if key is not None else {})}
        for name, value in expected.items():
          if meta.get(name) != value:
            raise ModelFileError(f"its {name} is {meta.get(name)!r}, not {value!r}")
        model = cls(int(meta["order"]))
        text = data["vocab_utf8"].tobytes().decode("utf-8", "surrogatepass")
        ends = data["vocab_ends"]
        gram_keys = [data[f"gram_keys_{i}"] for i in range(max(model.order - 2, 0))]
        offsets = [data[f"offsets_{n}"] for n in range(model.order)]
        next_ids = [data[f"next_{n}"] for n in range(model.order)]
    except ModelFileError:
      raise
    except Exception as e:  # pylint: disable=broad-except
      # A damaged file fails in many ways (zip, npy header, CRC, JSON, a missing array).
      raise ModelFileError(f"{type(e).__name__}: {e}".splitlines()[0]) from None
    _check_arrays(text, ends, gram_keys, offsets, next_ids)
    starts = np.concatenate([[0], ends[:-1]]) if len(ends) else ends
    model._tokens = [text[a:b] for a, b in zip(starts.tolist(), ends.tolist())]
    model._vocab = {token: i for i, token in enumerate(model._tokens)}
    if len(model._vocab) != len(model._tokens):
      raise ModelFileError("its vocabulary repeats a token")
    model._gram_keys, model._offsets, model._next = gram_keys, offsets, next_ids
    model.stats = meta.get("stats", {})
    return model

  def _context_id(self, ids: Sequence[int]) -> Optional[int]:
    """The id of the n-gram of token ids `ids` (n >= 1), None if training never saw it."""
    gram = ids[0]
    for j in range(1, len(ids)):
      keys = self._gram_keys[j - 1]
      key = gram * len(self._tokens) + ids[j]
      gram = int(keys.searchsorted(key))
      if gram == len(keys) or keys[gram] != key:
        return None
    return gram

  def continuations(self, context: Sequence[str]) -> List[str]:
    """The kept next tokens after exactly `context` (shorter than order), most frequent first."""
    ids = [self._vocab.get(token) for token in context]
    if not self._offsets or len(ids) >= self.order or None in ids:
      return []
    gram = self._context_id(ids) if ids else 0
    if gram is None:
      return []
    offsets = self._offsets[len(ids)]
    return [self._tokens[i] for i in self._next[len(ids)][offsets[gram]:offsets[gram + 1]]]

  def next_token(self, context: Sequence[str], prefix: str = "") -> Optional[str]:
    """The most frequent token after the longest known context that starts with `prefix`."""
    for n in range(min(self.order - 1, len(context)), -1, -1):
      for token in self.continuations(context[len(context) - n:] if n else ()):
        if token.startswith(prefix):
          return token
    return None

  def complete(self, context_text: str) -> str:
    """The predicted rest of the line after `context_text`."""
    context = ["\n"] + tokenize(context_text[-4000:])  # as in fit: a file starts like a line
    prefix = ""
    if context[-1][0].isalnum() or context[-1][0] == "_":
      prefix = context.pop()  # maybe a partial word: heal it (spaces are whole tokens)
    out = []
    for _ in range(MAX_TOKENS):
      token = self.next_token(context, prefix)
      if token is None or token == "\n":
        break
      context.append(token)
      out.append(token[len(prefix):])
      prefix = ""
      if sum(map(len, out)) >= MAX_CHARS:
        break
    return postprocessors.first_line("".join(out))


def _starts_of_files(starts: np.ndarray, lengths: np.ndarray, k: int) -> np.ndarray:
  """The positions of the first k tokens of each file (files of `lengths` tokens at `starts`)."""
  return np.concatenate([starts[lengths > j] + j for j in range(k)] or [np.zeros(0, np.int64)])


def _check_arrays(text, ends, gram_keys, offsets, next_ids) -> None:
  """Raises ModelFileError unless the arrays are laid out as fit leaves them."""
  def check(ok, what):
    if not ok:
      raise ModelFileError(what)

  for name, arrays, dtype in (("vocab_ends", [ends], np.int64), ("gram_keys", gram_keys, np.int64),
                              ("offsets", offsets, np.int64), ("next", next_ids, np.int32)):
    for a in arrays:
      check(a.dtype == dtype and a.ndim == 1, f"its {name} are not 1-D {np.dtype(dtype).name}")
  check(np.all(np.diff(ends) > 0) and (ends[-1] if len(ends) else 0) == len(text)
        and (not len(ends) or ends[0] > 0), "its vocabulary is damaged")
  vocab_size = max(len(ends), 1)
  for n, (o, nxt) in enumerate(zip(offsets, next_ids)):
    contexts = 1 if n == 0 else vocab_size if n == 1 else len(gram_keys[n - 2])
    check(len(o) == contexts + 1 and o[0] == 0 and o[-1] == len(nxt) and np.all(np.diff(o) >= 0),
          f"its offsets_{n} are damaged")
    check(not len(nxt) or (0 <= nxt.min() and nxt.max() < vocab_size), f"its next_{n} are damaged")
  for i, keys in enumerate(gram_keys):
    check(np.all(np.diff(keys) > 0) and (not len(keys) or keys[0] >= 0), f"its gram_keys_{i} "
          "are damaged")
