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

import functools
import re
from typing import FrozenSet, List, Optional, Sequence

PAD_ID, EOS_ID, UNK_ID = 0, 1, 2
NUM_SPECIAL = 3
SPACE_SYMBOL = "\u2581"  # how SentencePiece writes a space inside a piece
_BYTE_PIECE = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")


class Tokenizer:
  """Ids <-> text, and `piece_bytes[id]`: the UTF-8 bytes an id stands for (None for control
  ids and sentinels, which decode to nothing and never end a completion's text)."""

  vocab_size: int  # pieces + sentinels, as the seqio vocabulary counts them
  piece_bytes: List[Optional[bytes]]

  def encode(self, text: str) -> List[int]:
    raise NotImplementedError

  def piece_of(self, i: int) -> Optional[bytes]:
    """The bytes id `i` stands for: None for control ids, sentinels and ids past the pieces."""
    return self.piece_bytes[i] if 0 <= i < len(self.piece_bytes) else None

  def decode(self, ids: Sequence[int]) -> str:
    return b"".join(self.piece_of(i) or b"" for i in ids).decode("utf-8", errors="ignore")

  @functools.cached_property
  def piece_prefixes(self) -> FrozenSet[bytes]:
    """Every non-empty prefix of every piece: the texts token healing may take back
    (code_t5.engine.decoding.split_heal)."""
    return frozenset(piece[:n] for piece in self.piece_bytes if piece
                     for n in range(1, len(piece) + 1))


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
    """ValueError if `model_proto` is not a SentencePiece model (e.g. a cut file)."""
    import sentencepiece  # pylint: disable=g-import-not-at-top  (only this tokenizer needs it)
    try:
      self._sp = sentencepiece.SentencePieceProcessor(model_proto=model_proto)
    except RuntimeError as e:  # sentencepiece's only error for a proto it cannot parse
      raise ValueError(f"not a SentencePiece model: {str(e).strip()}") from None
    size = self._sp.get_piece_size()
    self.piece_bytes = []
    for i in range(size):
      if self._sp.is_control(i) or self._sp.is_unknown(i):
        self.piece_bytes.append(None)
        continue
      piece = self._sp.id_to_piece(i)
      m = _BYTE_PIECE.match(piece) if self._sp.is_byte(i) else None
      self.piece_bytes.append(bytes([int(m.group(1), 16)]) if m else
                              piece.replace(SPACE_SYMBOL, " ").encode("utf-8"))
    self.vocab_size = size + extra_ids
    self._space_symbol_ids = [self._sp.piece_to_id(f"<0x{b:02X}>")
                              for b in SPACE_SYMBOL.encode("utf-8")]

  def encode(self, text: str) -> List[int]:
    ids = []
    for i, part in enumerate(text.split(SPACE_SYMBOL)):
      if i:
        ids.extend(self._space_symbol_ids)
      ids.extend(self._sp.encode(part))
    return ids
