"""Whole-line candidates from a `runtime.Network`: beam search to the end of the line, with token
healing at the cursor.

- A candidate ends where its text first holds a newline, whatever the piece that brought it
  ("▁1\\n" ends a line as "\\n" does), or at EOS; its text is cut there. A beam still open after
  `max_tokens` is dropped: a line that never ends is what a looping model writes.
- Each step ranks every open beam's continuations; a line that ends there is kept only if it
  ranks among the `beam_size` best of them (as Hugging Face's beam search does), the
  `beam_size` best that go on are the next beams. The search stops once `beam_size` lines have
  ended and the best of them scores above every open beam, scored as it stands. Measured with
  the shipped model at dataset-dev's 192 validation points (beam 5, healing, filters): this rule
  EM 8.3 / ES 25.9 in 12.9 decode steps per line; waiting until no open beam beats the *worst*
  ended line (Hugging Face's rule): 6.8 / 23.6 in 21.4 steps, half the searches running to
  `max_tokens` after loops whose score rises as they repeat. A beam whose pieces have ended in
  a loop (`loops`: `as numpy as numpy as numpy`) no longer holds the search open: it may still
  end and be ranked, but the search stops without waiting for it, and once every open beam has
  looped, it stops with the lines that have ended (same points: searches run to `max_tokens`
  24 -> 2 of 192, decode steps per line 12.9 -> 9.0, EM 8.3 -> 8.3, ES 25.9 -> 26.3). Stopping
  as soon as `beam_size` lines have ended is wrong for a confident model: the unlikely endings
  of the first steps (EOS, a newline after one piece) fill the count before the likely line has
  ended, and a half line wins (tests/decoding_test.py, learning_test).
- Score: the candidate's log-probability divided by sqrt(its tokens) (the ending piece counted;
  LENGTH_EXPONENT): the sum alone prefers short lines, the mean per token long ones; candidates
  come best first, one per distinct text.
- Token healing: the context is cut where its last pieces begin and the removed characters (the
  "heal" text, e.g. " os.pa" of "path = os.pa|") must start the generated text, so the model
  chooses the piece it would have used for the whole word instead of continuing a split it never
  saw. It takes back the longest run of up to HEAL_MAX_PIECES trailing pieces whose text some
  piece of the vocabulary starts with: `spm_dev` holds phrases as pieces (" os.path.join(",
  ".read"), and "f.rea|" is encoded " f" ".re" "a", so taking back "a" alone leaves the model to
  continue ".re", a split it never saw; taking back ".rea" lets it choose ".read". Measured with
  the shipped model (beam 5, filters), EM / ES: the corpus's 1,012 validation points 8.6 / 27.9
  with the last piece only -> 9.8 / 30.0; dataset-dev's 192 7.3 / 29.0 -> 7.3 / 29.8. A piece
  holding a newline is never taken back (the line would end before it began). Spaces after code
  on the line ("return |", "missing = |") are taken back with the piece before them: pieces carry
  their leading space (" self"), and the models, which train on many cursors inside indentation,
  read a context ending in spaces as more indentation to come ("return   def domain(self):");
  healing "return " lets them choose " self". With it (and the first piece of a context healed
  too: a file that begins '""|'), corpus 9.8 / 30.0 -> 10.5 / 30.9, dataset-dev 7.3 / 29.8 ->
  8.9 / 32.1. Nothing is taken back when the line before the cursor is only spaces or tabs
  (indentation: the models learn cursors right after it, and healing it makes them choose the
  indentation again; measured on dataset-dev: line-start exact match 3.1 -> 1.0 % when healed).
- Ids that never spell text (pad, unk, sentinels, the embedding's padding rows) are never chosen.
"""

import bisect
import dataclasses
import functools
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from code_t5.engine import copy_cache
from code_t5.engine import runtime
from code_t5.engine import tokenizers

_NEG_INF = np.float32(-np.inf)
# Score = log-probability / tokens ** LENGTH_EXPONENT. Measured with the shipped model at
# dataset-dev's 192 validation points (beam 5, healing): exponent 0 (sum) EM 9.9 / ES 22.6,
# 0.3: 9.4 / 25.2, 0.5: 9.4 / 26.3, 0.7: 7.3 / 26.0, 1 (mean): 3.6 / 23.5.
LENGTH_EXPONENT = 0.5
# A beam "loops" when its pieces end in one group of up to LOOP_MAX_PERIOD pieces LOOP_REPEATS
# times in a row. Loops do not hold the search open (see LineSearch._done); they are not dropped,
# because real lines repeat too (1.2 % of the corpus's validation lines loop by this rule at some
# point, `tuple[int, int, int, int]`; 0 of dataset-dev's 10,444).
LOOP_MAX_PERIOD = 8
LOOP_REPEATS = 3
# Healing takes back at most this many trailing pieces (module docstring), spaces after code and
# the piece before them aside. Shipped model, default search, EM / ES on the corpus's 1,012
# validation points: 2: 10.1 / 30.4, 3 and 4 and 6: 10.5 / 30.9 (dataset-dev's 192: 9.4 / 32.5,
# 9.4 / 32.4, 8.9 / 32.1, 8.9 / 32.1). Byte vocabularies take back one byte (no byte starts with
# two), two for a space after code.
HEAL_MAX_PIECES = 4
# Heal masks kept (LineSearch._heal_mask): 8k booleans each.
HEAL_MASKS_KEPT = 256


def _history(context_ids: Sequence[int]) -> Tuple[int, ...]:
  """The end of the context a copy cache look-up needs (the pieces after it are appended)."""
  return tuple(int(i) for i in context_ids[-copy_cache.MAX_MATCH:])


def _next_logprobs(logits: np.ndarray, histories: Sequence[Optional[Tuple[int, ...]]],
                   cache) -> np.ndarray:
  """Each row's next-piece log-probabilities: the network's (log-softmax of `logits`), mixed
  with what `cache` says follows the row's pieces so far (its history; None: the row is not
  looked up)."""
  logprobs = logits - logits.max(axis=-1, keepdims=True)
  logprobs = logprobs - np.log(np.exp(logprobs).sum(axis=-1, keepdims=True))
  if cache is not None:
    for b, history in enumerate(histories):
      lookup = cache.lookup(history) if history is not None else None
      if lookup is not None:
        logprobs[b] = copy_cache.mix(logprobs[b], lookup)
  return logprobs


def _top_per_row(values: np.ndarray, width: int) -> np.ndarray:
  """Indices [B, width] of each row's `width` largest values, in no order: what
  np.argpartition(-values, width - 1)[:, :width] gives, ties aside, at a tenth of its cost for
  a vocabulary's row (8k: 0.5 ms a step on the AVX2 machine). The row is cut into chunks of about
  its square root; the `width` largest values lie in the `width` chunks with the largest maxima,
  so only those chunks are partitioned."""
  count, size = values.shape
  chunk = _chunk_size(size)
  if chunk is None or width * chunk >= size:
    return np.argpartition(-values, width - 1, axis=1)[:, :width]
  chunks = values.reshape(count, size // chunk, chunk)
  top_chunks = np.argpartition(-chunks.max(axis=2), width - 1, axis=1)[:, :width]  # [B, width]
  rows = np.arange(count)[:, None]
  candidates = chunks[rows, top_chunks].reshape(count, width * chunk)
  picked = np.argpartition(-candidates, width - 1, axis=1)[:, :width]
  return top_chunks[rows, picked // chunk] * chunk + picked % chunk


@functools.lru_cache(maxsize=None)
def _chunk_size(size: int) -> Optional[int]:
  """The divisor of `size` nearest its square root that cuts it into chunks of 16 or more, and 16
  or more of them (None if there is none: no gain)."""
  divisors = [d for d in range(16, size // 16 + 1) if size % d == 0]
  return min(divisors, key=lambda d: abs(d - size ** 0.5)) if divisors else None


def _score(logprob: float, tokens: int) -> float:
  """How lines are ranked, and open beams against them when the search decides to stop."""
  return logprob / tokens ** LENGTH_EXPONENT


@dataclasses.dataclass(frozen=True)
class Line:
  text: str  # the rest of the line after the cursor, no newline
  score: float  # log-probability / tokens ** LENGTH_EXPONENT
  tokens: int
  # Ranked after the others by the engine's own checks (code_t5.engine.complete: a guessed or
  # repeated import, a line that does not fit where it stands, a loop): never shown by the gate.
  unlikely: bool = False
  # The characters after the cursor that `text` takes the place of: the closing brackets and
  # quotes an editor put there, where the line closes them itself and goes on (line_filters.Fit).
  replaces: int = 0


@dataclasses.dataclass
class _Hypothesis:
  data: bytes  # generated so far (heal text included)
  logprob: float
  tokens: int
  ids: Tuple[int, ...] = ()  # the pieces generated so far
  looped: bool = False  # its pieces have ended in a loop at some step (`loops`)


def loops(ids: Sequence[int], max_period: int = LOOP_MAX_PERIOD,
          repeats: int = LOOP_REPEATS) -> bool:
  """Whether `ids` ends with one group of 2..max_period pieces `repeats` times in a row, or one
  piece `repeats` + 1 times (`as numpy as numpy as numpy`, `.backend.backend.backend`)."""
  for period in range(1, max_period + 1):
    count = repeats + 1 if period == 1 else repeats
    if len(ids) < period * count:
      break
    tail = list(ids[-period:])
    if all(list(ids[len(ids) - period * (j + 1):len(ids) - period * j]) == tail
           for j in range(1, count)):
      return True
  return False


def split_heal(ids: Sequence[int], tokenizer: tokenizers.Tokenizer) -> Tuple[List[int], bytes]:
  """(context ids without the healed pieces, their bytes) or (ids, b"") if the last piece cannot
  be healed."""
  last = tokenizer.piece_of(ids[-1]) if ids else None
  if not last or b"\n" in last or (not last.strip() and _after_indentation(ids, tokenizer)):
    return list(ids), b""
  taken, text, heal = 0, b"", b""
  for k in range(1, min(HEAL_MAX_PIECES, len(ids)) + 1):
    piece = tokenizer.piece_of(ids[-k])
    if not piece or b"\n" in piece:
      break
    text = piece + text
    if tokenizer.is_piece_prefix(text):  # always for k = 1: the last piece is a piece
      taken, heal = k, text
  before = tokenizer.piece_of(ids[-taken - 1]) if taken < len(ids) else None
  if not heal.strip() and before and b"\n" not in before:  # spaces after code: with its word
    taken, heal = taken + 1, before + heal
  return list(ids[:-taken]), heal


def _after_indentation(ids: Sequence[int], tokenizer: tokenizers.Tokenizer) -> bool:
  """Whether the context's last line holds only spaces and tabs: the cursor after indentation.
  A control id or sentinel (the separator after the code below, complete.Completer.context_ids)
  starts the context's text."""
  for i in reversed(ids):
    piece = tokenizer.piece_of(i)
    if piece is None:
      return True
    if piece.rsplit(b"\n", 1)[-1].strip():
      return False
    if b"\n" in piece:
      return True
  return True


class LineSearch:
  """Beam search over one network's pieces; build once per network, `search` per request."""

  def __init__(self, network: runtime.Network):
    self.network = network
    pieces = network.tokenizer.piece_bytes
    rows = network.vocab_rows
    self._pieces: List[Optional[bytes]] = list(pieces) + [None] * max(0, rows - len(pieces))
    self._pieces = self._pieces[:rows]
    allowed = np.array([p is not None for p in self._pieces])
    allowed[tokenizers.EOS_ID] = True
    self._blocked = ~allowed
    self._ends = np.array([p is not None and b"\n" in p for p in self._pieces])
    # For _heal_mask: the pieces by their bytes (the tokenizer's order, those the network has
    # rows for), and the ids of each piece's bytes.
    ordered = [(p, i) for p, i in zip(*network.tokenizer.sorted_pieces) if i < rows]
    self._sorted_pieces = [p for p, _ in ordered]
    self._sorted_ids = np.array([i for _, i in ordered], np.int64)
    self._ids_of_piece: Dict[bytes, List[int]] = {}
    for p, i in ordered:
      self._ids_of_piece.setdefault(p, []).append(i)
    self._heal_masks: Dict[bytes, np.ndarray] = {}

  def _heal_mask(self, remaining: bytes) -> np.ndarray:
    """Ids whose bytes agree with the heal text still to produce (a prefix of it, or past it).

    The pieces that start with it are a run of the pieces sorted by their bytes, those it starts
    with are among its own prefixes: no pass over the vocabulary (8k bytes.startswith calls were
    ~3 ms of a request). Up to HEAL_MASKS_KEPT masks are kept.
    """
    mask = self._heal_masks.get(remaining)
    if mask is None:
      mask = np.zeros(len(self._pieces), bool)
      start = bisect.bisect_left(self._sorted_pieces, remaining)
      end = start
      while end < len(self._sorted_pieces) and self._sorted_pieces[end].startswith(remaining):
        end += 1
      mask[self._sorted_ids[start:end]] = True
      for k in range(len(remaining)):
        mask[self._ids_of_piece.get(remaining[:k], [])] = True
      if len(self._heal_masks) >= HEAL_MASKS_KEPT:
        self._heal_masks = {}  # a new dict, not cleared: a search on another thread may read it
      self._heal_masks[remaining] = mask
    return mask

  def search(self, context_ids: Sequence[int], heal: bytes = b"", beam_size: int = 5,
             top: int = 5, max_tokens: int = 64, cache=None, prefix=None) -> List[Line]:
    """Up to `top` distinct lines, best first, continuing `context_ids` (+ `heal`).

    `cache` (a code_t5.engine.copy_cache.FileCache, or None): each step's next-piece
    probabilities are the model's mixed with what the cache says follows the pieces so far.
    `prefix`: the network's state after `context_ids` (runtime.Network.start), if the caller has
    it.
    """
    network = self.network
    prefix = prefix or network.start(context_ids)
    beams = runtime.Beams(network, prefix, 1)
    hypotheses = [_Hypothesis(b"", 0.0, 0)]
    logits = prefix.logits[None]
    finished = {}  # text -> Line
    history = _history(context_ids)
    for _ in range(max_tokens):
      logprobs = _next_logprobs(logits, [history + h.ids for h in hypotheses], cache)
      logprobs[:, self._blocked] = _NEG_INF
      for b, hypothesis in enumerate(hypotheses):
        if len(hypothesis.data) < len(heal):
          remaining = heal[len(hypothesis.data):]
          logprobs[b, ~self._heal_mask(remaining)] = _NEG_INF
          logprobs[b, tokenizers.EOS_ID] = _NEG_INF
      totals = logprobs + np.array([h.logprob for h in hypotheses], np.float32)[:, None]
      width = min(beam_size, totals.shape[1])
      best = _top_per_row(totals, width)
      choices = sorted(((float(totals[b, i]), b, int(i)) for b in range(len(hypotheses))
                        for i in best[b] if np.isfinite(totals[b, i])), reverse=True)
      parents, next_ids, next_hypotheses = [], [], []
      for rank, (total, b, i) in enumerate(choices):
        hypothesis = hypotheses[b]
        tokens = hypothesis.tokens + 1
        if i == tokenizers.EOS_ID or self._ends[i]:
          if rank < beam_size:
            data = hypothesis.data + (self._pieces[i] or b"")
            # (A "\r" before the "\n" is the line's end too: a line is its text alone.)
            self._finish(finished, data.split(b"\n")[0].removesuffix(b"\r"), heal, total,
                         tokens)
        elif len(next_hypotheses) < beam_size:
          parents.append(b)
          next_ids.append(i)
          ids = hypothesis.ids + (i,)
          next_hypotheses.append(_Hypothesis(hypothesis.data + self._pieces[i], total, tokens,
                                             ids, hypothesis.looped or loops(ids)))
      if not next_hypotheses or self._done(finished, next_hypotheses, beam_size):
        break
      beams.reorder(np.asarray(parents))
      hypotheses = next_hypotheses
      logits = network.step(beams, np.asarray(next_ids))
    return sorted(finished.values(), key=lambda line: -line.score)[:top]

  def score(self, context_ids: Sequence[int], texts: Sequence[str], heal: bytes = b"",
            max_tokens: int = 64, cache=None, prefix=None) -> List[Line]:
    """`texts` (rests of the line, no newline) scored as the search scores the lines it finds:
    each is encoded on its own with the heal text before it and a newline after it (as a
    completion is trained: each side of the cursor tokenized alone), and its pieces' log-
    probabilities (mixed with `cache` the same way) summed up to the piece that ends the line.
    A text longer than `max_tokens` pieces, or holding a piece the search never chooses, is
    left out. `prefix`: the network's state after `context_ids`, if the caller has it."""
    try:
      head = heal.decode("utf-8")
    except UnicodeDecodeError:
      return []
    tokenizer = self.network.tokenizer
    sequences, kept = [], []
    for text in texts:
      ids = tokenizer.encode(head + text + "\n")
      end = next((k for k, i in enumerate(ids) if self._ends[i]), None)
      if end is None or end + 1 > max_tokens or end + 1 < len(ids) or any(
          self._blocked[i] for i in ids):
        continue
      sequences.append(ids)
      kept.append(text)
    if not sequences:
      return []
    network = self.network
    prefix = prefix or network.start(context_ids)
    longest = max(len(ids) for ids in sequences)
    # Every piece but the last is read at once (runtime.Network.read_after); shorter lines are
    # padded at their end, which a causal reading never looks back on.
    logits = np.repeat(prefix.logits[None, None], len(sequences), axis=0)
    if longest > 1:
      fed = np.array([ids[:-1] + [tokenizers.EOS_ID] * (longest - len(ids))
                      for ids in sequences])
      logits = np.concatenate([logits, network.read_after(prefix, fed)], axis=1)
    history = _history(context_ids)
    totals = np.zeros(len(sequences))
    for t in range(longest):
      logprobs = _next_logprobs(
          logits[:, t], [history + tuple(ids[:t]) if t < len(ids) else None
                         for ids in sequences], cache)
      for b, ids in enumerate(sequences):
        if t < len(ids):
          totals[b] += logprobs[b, ids[t]]
    return [Line(text, _score(float(total), len(ids)), len(ids))
            for text, total, ids in zip(kept, totals, sequences) if np.isfinite(total)]

  @staticmethod
  def _done(finished, open_hypotheses, beam_size: int) -> bool:
    """A line has ended and every open beam has looped, or `beam_size` lines have ended and the
    best of them beats every open beam that has not looped, as it stands."""
    going = [h for h in open_hypotheses if not h.looped]
    if not finished or (going and len(finished) < beam_size):
      return False
    best = max(line.score for line in finished.values())
    return all(_score(h.logprob, h.tokens) < best for h in going)

  @staticmethod
  def _finish(finished, data: bytes, heal: bytes, logprob: float, tokens: int):
    if not data.startswith(heal):
      return  # ended before the healed characters were all produced
    text = data[len(heal):].decode("utf-8", errors="ignore")
    line = Line(text, _score(logprob, tokens), tokens)
    if text not in finished or finished[text].score < line.score:
      finished[text] = line
