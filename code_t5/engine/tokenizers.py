"""The project's vocabularies without TensorFlow or seqio: what the completion engine encodes with.

`code_t5.data.vocab` builds the seqio vocabularies training uses; importing seqio imports TensorFlow
(~0.85 GB, seconds). Serving needs only encode, decode and the bytes each id stands for, which
`sentencepiece` and plain Python give. The ids are the seqio vocabularies' own (pad 0, eos 1,
unk 2, then the model's pieces, then the sentinels); tests/tokenizers_test.py checks that both
encode dataset-dev to the same ids.

- `Bytes`: seqio.ByteVocabulary: id = byte + 3.
- `Pieces`: code_t5.data.spm_vocabulary.CodeSentencePieceVocabulary: SentencePiece, with a
  literal "▁" encoded as its three UTF-8 byte pieces (see that class for why).
"""

import bisect
import functools
import hashlib
import os
import re
from typing import List, Optional, Sequence, Tuple

PAD_ID, EOS_ID, UNK_ID = 0, 1, 2
NUM_SPECIAL = 3
SPACE_SYMBOL = "\u2581"  # how SentencePiece writes a space inside a piece
_BYTE_PIECE = re.compile(rb"^<0x[0-9A-Fa-f]{2}>$")


class Tokenizer:
  """Ids <-> text, and `piece_bytes[id]`: the UTF-8 bytes an id stands for (None for control
  ids and sentinels, which decode to nothing and never end a completion's text)."""

  vocab_size: int  # pieces + sentinels, as the seqio vocabulary counts them
  piece_bytes: List[Optional[bytes]]

  def encode(self, text: str) -> List[int]:
    raise NotImplementedError

  def encode_many(self, texts: Sequence[str]) -> List[List[int]]:
    """`encode` of each text (Pieces: several at a time, on all cores)."""
    return [self.encode(text) for text in texts]

  def piece_of(self, i: int) -> Optional[bytes]:
    """The bytes id `i` stands for: None for control ids, sentinels and ids past the pieces."""
    return self.piece_bytes[i] if 0 <= i < len(self.piece_bytes) else None

  def decode(self, ids: Sequence[int]) -> str:
    return b"".join(self.piece_of(i) or b"" for i in ids).decode("utf-8", errors="ignore")

  @functools.cached_property
  def sorted_pieces(self) -> Tuple[List[bytes], List[int]]:
    """(the pieces' bytes in byte order, their ids in that order; ids of equal bytes ascending),
    control ids and sentinels left out: the pieces that start with a text are a run of them."""
    pieces = self.piece_bytes
    ids = sorted((i for i, piece in enumerate(pieces) if piece is not None),
                 key=pieces.__getitem__)
    return [pieces[i] for i in ids], ids

  def is_piece_prefix(self, text: bytes) -> bool:
    """Whether a piece starts with `text`: what token healing may take back
    (code_t5.engine.decoding.split_heal). A look-up in the sorted pieces instead of a set of
    every prefix of every piece, which took ~10 ms to build at a cold start."""
    ordered = self.sorted_pieces[0]
    k = bisect.bisect_left(ordered, text)
    return k < len(ordered) and ordered[k].startswith(text)


class Bytes(Tokenizer):
  """UTF-8 bytes, one id each (seqio.ByteVocabulary)."""

  def __init__(self, extra_ids: int):
    self.piece_bytes = [None] * NUM_SPECIAL + [bytes([b]) for b in range(256)]
    self.vocab_size = len(self.piece_bytes) + extra_ids

  def encode(self, text: str) -> List[int]:
    return [b + NUM_SPECIAL for b in text.encode("utf-8")]


class Pieces(Tokenizer):
  """A code SentencePiece model (code_t5.data.spm_vocabulary.CodeSentencePieceVocabulary)."""

  def __init__(self, model_proto: bytes, extra_ids: int):
    """ValueError if `model_proto` is not a SentencePiece model (e.g. a cut file), or not one of
    code_t5's (identity normalization)."""
    charsmap = _has_charsmap(model_proto)
    if charsmap is None:
      raise ValueError("not a SentencePiece model: its protobuf does not parse")
    if charsmap:
      # sentencepiece reads a precompiled character map without checking it: a damaged one
      # crashed the process at its first encoding (SIGSEGV, helper-20's audit).
      raise ValueError("its normalization has a precompiled character map, which code_t5's "
                       "vocabularies (identity normalization) never have")
    import sentencepiece  # pylint: disable=g-import-not-at-top  (only this tokenizer needs it)
    try:
      self._sp = sentencepiece.SentencePieceProcessor(model_proto=model_proto)
    except RuntimeError as e:  # sentencepiece's only error for a proto it cannot parse
      raise ValueError(f"not a SentencePiece model: {str(e).strip()}") from None
    # What the pieces saved on disk for it are kept by (code_t5.engine.saved_pieces).
    self.fingerprint = hashlib.blake2b(model_proto + b"%d" % extra_ids, digest_size=8).hexdigest()
    size = self._sp.get_piece_size()
    listed = _model_pieces(model_proto)
    if listed is None or len(listed) != size:
      listed = self._asked_pieces(size)
    self.piece_bytes = _piece_bytes(listed)
    self.vocab_size = size + extra_ids
    self._space_symbol_ids = [self._sp.piece_to_id(f"<0x{b:02X}>")
                              for b in SPACE_SYMBOL.encode("utf-8")]

  def _asked_pieces(self, size: int) -> List[Tuple[bytes, int]]:
    """_model_pieces' (piece as UTF-8, type) as sentencepiece's API gives them, id by id (~35 ms
    for 8k pieces on the slower 2-core machine): for a model file _model_pieces cannot read."""
    sp = self._sp
    return [(sp.id_to_piece(i).encode("utf-8"),
             _CONTROL if sp.is_control(i) else _UNKNOWN if sp.is_unknown(i)
             else _BYTE if sp.is_byte(i) else _NORMAL) for i in range(size)]

  def encode(self, text: str) -> List[int]:
    return self.encode_many([text])[0]

  def encode_many(self, texts: Sequence[str]) -> List[List[int]]:
    """Each text's ids: a literal "▁" as its byte pieces, the rest cut into chunks where a word
    starts (_word_chunks), the chunks given to sentencepiece BATCH_CHARS at a time on
    ENCODE_THREADS threads: a repository's files encode in ~half the time on 2 cores (numpy's
    489 files: 1.5 instead of 3.1 s on the AMX kind), while each call holds the GIL for a few ms
    only (sentencepiece's batch call does not release it)."""
    chunks: List[str] = []
    plans: List[List[Optional[int]]] = []  # per text: a chunk's index, or None for "▁"'s ids
    for text in texts:
      plan: List[Optional[int]] = []
      for i, part in enumerate(text.split(SPACE_SYMBOL)):
        if i:
          plan.append(None)
        for chunk in _word_chunks(part):
          plan.append(len(chunks))
          chunks.append(chunk)
      plans.append(plan)
    encoded: List[List[int]] = []
    start = 0
    while start < len(chunks):
      stop, size = start, 0
      while stop < len(chunks) and (stop == start or size + len(chunks[stop]) <= BATCH_CHARS):
        size += len(chunks[stop])
        stop += 1
      encoded.extend(self._sp.encode(chunks[start:stop], num_threads=ENCODE_THREADS)
                     if stop - start > 1 else [self._sp.encode(chunks[start])])
      start = stop
    result = []
    for plan in plans:
      ids: List[int] = []
      for k in plan:
        ids.extend(self._space_symbol_ids if k is None else encoded[k])
      result.append(ids)
    return result


# Characters per sentencepiece call at most (about): a call holds the GIL throughout, and the LSP
# server encodes the workspace's files on a thread while its model thread answers the first
# completions (whole files held it for up to ~50 ms at a time on the slower 2-core machine).
CHUNK_CHARS = 2048
# Characters of chunks per batched sentencepiece call (`Pieces.encode_many`): ~3-5 ms of the GIL
# on 2 cores, and as fast as one call for a whole repository (batches of 8 chunks were 20 % slower).
BATCH_CHARS = 16_384
# Threads of a batched call: the cores this process may run on, at most 8.
ENCODE_THREADS = max(1, min(8, len(os.sched_getaffinity(0))))


def _word_chunks(text: str, size: int = CHUNK_CHARS) -> List[str]:
  """`text` cut where a word starts (a space after a non-space) every `size` characters or so:
  the project's vocabularies never join pieces across one (split_by_whitespace,
  code_t5.data.vocab.TRAINER_OPTIONS), so the chunks' pieces are the whole text's
  (tests/tokenizers_test.py)."""
  chunks, start, n = [], 0, len(text)
  while n - start > size:
    cut = text.find(" ", start + size)
    while cut > 0 and text[cut - 1] == " ":  # inside a run of spaces: its first one starts a word
      cut = text.find(" ", cut + 1)
    if cut < 0:
      break
    chunks.append(text[start:cut])
    start = cut
  chunks.append(text[start:])
  return chunks


# SentencePiece's piece types (sentencepiece_model.proto, ModelProto.SentencePiece.Type).
_NORMAL, _UNKNOWN, _CONTROL, _BYTE = 1, 2, 3, 6
_SPACE_BYTES = SPACE_SYMBOL.encode("utf-8")


def _varint(data: bytes, at: int) -> Tuple[int, int]:
  """(the protobuf varint at `at`, the offset after it); IndexError past the end."""
  value = shift = 0
  while True:
    byte = data[at]
    at += 1
    value |= (byte & 0x7F) << shift
    if byte < 0x80:
      return value, at
    shift += 7


def _skip(data: bytes, at: int, wire_type: int) -> int:
  """The offset after a field's value of `wire_type` at `at`."""
  if wire_type == 0:
    return _varint(data, at)[1]
  if wire_type == 1:
    return at + 8
  if wire_type == 2:
    length, at = _varint(data, at)
    return at + length
  if wire_type == 5:
    return at + 4
  raise ValueError(f"protobuf wire type {wire_type}")


def _has_charsmap(model_proto: bytes) -> Optional[bool]:
  """Whether a serialized SentencePiece ModelProto's normalizer_spec (field 3) or
  denormalizer_spec (field 5) holds a precompiled_charsmap (field 2 of each); None where its wire
  format does not parse."""
  data, at, end = model_proto, 0, len(model_proto)
  try:
    while at < end:
      key, at = _varint(data, at)
      if key not in (0x1A, 0x2A):  # not one of the two specs, with wire type 2
        at = _skip(data, at, key & 7)
        continue
      length, at = _varint(data, at)
      stop = at + length
      while at < stop:
        field, at = _varint(data, at)
        if field == 0x12:  # the charsmap, length-delimited
          size, at = _varint(data, at)
          if size:
            return True
        else:
          at = _skip(data, at, field & 7)
      if at != stop:
        return None
  except (IndexError, ValueError):
    return None
  return False if at == end else None


def _model_pieces(model_proto: bytes) -> Optional[List[Tuple[bytes, int]]]:
  """(piece as UTF-8, type) of each piece of a serialized SentencePiece ModelProto, in id order,
  read from protobuf's wire format (ModelProto field 1, repeated SentencePiece: field 1 the
  piece, 2 its score, 3 its type, NORMAL if absent); None where it does not parse. Asking
  sentencepiece's Python API for 8k pieces one call at a time took ~35 ms of a cold `code-t5
  complete` on the slower 2-core machine. Used only after sentencepiece has loaded the same
  bytes, and only if it counts as many pieces (tests/tokenizers_test.py compares both)."""
  data, pieces = model_proto, []
  at, end = 0, len(model_proto)
  try:
    while at < end:
      key, at = _varint(data, at)
      if key != 0x0A:  # not field 1 (pieces) with wire type 2
        at = _skip(data, at, key & 7)
        continue
      length, at = _varint(data, at)
      stop = at + length
      piece, kind = None, _NORMAL
      while at < stop:
        field = data[at]
        # A piece's fields, each with a one-byte tag and (for these) a one-byte length or value,
        # read inline: the varint calls cost more than the rest.
        if field == 0x0A and data[at + 1] < 0x80:  # the piece
          size = data[at + 1]
          piece, at = data[at + 2:at + 2 + size], at + 2 + size
        elif field == 0x15:  # the score, a float
          at += 5
        elif field == 0x18 and data[at + 1] < 0x80:  # the type
          kind, at = data[at + 1], at + 2
        else:
          field, at = _varint(data, at)
          if field == 0x0A:
            size, at = _varint(data, at)
            piece, at = data[at:at + size], at + size
          elif field == 0x18:
            kind, at = _varint(data, at)
          else:
            at = _skip(data, at, field & 7)
      if at != stop or piece is None:
        return None
      pieces.append((piece, kind))
  except (IndexError, ValueError):
    return None
  return pieces if at == end else None


def _piece_bytes(pieces: Sequence[Tuple[bytes, int]]) -> List[Optional[bytes]]:
  """Tokenizer.piece_bytes of _model_pieces' pieces: None for control and unknown pieces, a byte
  piece's byte (`<0x0A>`), else the piece's UTF-8 with SentencePiece's "▁" as a space."""
  out = []
  for piece, kind in pieces:
    if kind in (_CONTROL, _UNKNOWN):
      out.append(None)
    elif kind == _BYTE and _BYTE_PIECE.match(piece):
      out.append(bytes([int(piece[3:5], 16)]))
    else:
      out.append(piece.replace(_SPACE_BYTES, b" "))
  return out
