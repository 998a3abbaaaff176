"""Vocabularies that keep code exactly: every space, tab and newline survives encode/decode."""

import seqio

# Sentinels for span corruption (t5's default count); prefix-LM tasks share the vocabulary so the
# two objectives can be mixed in one model.
NUM_EXTRA_IDS = 100


def byte_vocabulary() -> seqio.ByteVocabulary:
  """UTF-8 bytes + pad/eos/unk + sentinels: lossless for any text, 1 byte per token."""
  return seqio.ByteVocabulary(extra_ids=NUM_EXTRA_IDS)
