"""What a TensorFlow checkpoint's `.index` claims, read before TensorFlow's reader, which trusts it.

The index is a LevelDB-format table (tensorflow/tsl/lib/io: blocks of prefix-compressed entries
with an array of restart points, an index block of block handles, a 48-byte footer) mapping each
variable to a BundleEntryProto: dtype, shape, shard, offset and size. TensorFlow's reader aborts
the process on entries it cannot hold (failed CHECKs, which no `except` catches: a shape with a
negative dimension or an element count past int64, an unknown dtype), raises MemoryError on a
block handle of 2^60 bytes, and `get_tensor` allocates the shape an entry claims before it reads
a byte. A model folder may be a stranger's, so `checkpoints.open_checkpoint` reads it here first.

It is read as TensorFlow reads it, and more strictly: every block must lie in the file, every
entry must decode inside its block, every restart point (where TensorFlow's lookups start
decoding) must be the start of an entry that repeats no key bytes, and the keys must increase,
so the entry TensorFlow finds for a name is the one checked here.
"""

import dataclasses
from typing import List, Optional, Tuple

from code_t5 import stranger_paths

# An index is about 100 bytes a variable: a few hundred KB for a large T5 with its slots.
MAX_BYTES = 64 << 20
# The entry TF2's object-based checkpoints hold their object graph in (a string tensor).
_OBJECT_GRAPH = "_CHECKPOINTABLE_OBJECT_GRAPH"
_FOOTER_BYTES = 48
_MAGIC = 0xdb4775248b80fb57
_TRAILER_BYTES = 5  # after each block: its compression type and CRC
_MAX_DIMS = 254  # TensorShape's
_MAX_ELEMENTS = (1 << 63) - 1  # TensorShape counts elements in an int64
# The dtypes a checkpoint's weights and step are stored in: plain arrays, read by a memcpy.
# (Strings, variants and resources have no fixed size; code_t5 stores none.)
_DTYPES = ("bfloat16", "float16", "float32", "float64", "int8", "int16", "int32", "int64",
           "uint8", "uint16", "uint32", "uint64", "bool")


class BadIndex(ValueError):
  """Why an index cannot be given to TensorFlow's reader; the message is a phrase."""


@dataclasses.dataclass(frozen=True)
class Variable:
  name: str
  dtype: str
  shape: Tuple[int, ...]
  shard: int
  bytes: int  # what TensorFlow allocates to read it


@dataclasses.dataclass(frozen=True)
class Index:
  num_shards: int
  variables: List[Variable]


def _varint(data: bytes, at: int, end: int, bits: int) -> Tuple[int, int]:
  """(value, offset after it) of the varint at data[at:end], decoded as TensorFlow's
  GetVarint32/64 do: at most ceil(bits / 7) bytes, the value cut to `bits` bits."""
  value = 0
  for shift in range(0, bits, 7):
    if at >= end:
      raise BadIndex("a number runs past its block")
    byte = data[at]
    at += 1
    value |= (byte & 0x7f) << shift
    if not byte & 0x80:
      return value & ((1 << bits) - 1), at
  raise BadIndex("a number longer than its type")


def _block(data: bytes, offset: int, size: int) -> List[Tuple[bytes, bytes]]:
  """The (key, value) entries of the block at data[offset:offset + size] (tsl's Block::Iter)."""
  if offset + size + _TRAILER_BYTES > len(data):
    raise BadIndex(f"a block of {size:,} bytes at {offset:,} runs past the end of the file")
  if data[offset + size]:
    raise BadIndex("a compressed block, which TensorFlow's checkpoint writer never makes")
  block = data[offset:offset + size]
  count = int.from_bytes(block[-4:], "little") if size >= 4 else 0
  if not 0 < count <= (size - 4) // 4:
    raise BadIndex("a block without a restart array that fits it")
  limit = size - 4 * (count + 1)
  restarts = [int.from_bytes(block[limit + 4 * i:limit + 4 * i + 4], "little")
              for i in range(count)]
  entries, fresh, key, at = [], set(), b"", 0
  while at < limit:
    start = at
    shared, at = _varint(block, at, limit, 32)
    own, at = _varint(block, at, limit, 32)
    value_bytes, at = _varint(block, at, limit, 32)
    if shared > len(key) or own + value_bytes > limit - at:
      raise BadIndex("an entry runs past its block")
    if not shared:
      fresh.add(start)
    key = key[:shared] + block[at:at + own]
    entries.append((key, block[at + own:at + own + value_bytes]))
    at += own + value_bytes
  # Iterating starts at the first restart point, a lookup at any: each must be where the entries
  # above start decoding, or TensorFlow would read other entries than these.
  if restarts[0] != 0 or any(r < limit and r not in fresh for r in restarts):
    raise BadIndex("a restart point that is not the start of an entry")
  return entries


def _elements(shape: Tuple[int, ...]) -> Optional[int]:
  """The element count TensorShape makes of `shape`; None where it aborts instead: more than
  _MAX_DIMS dimensions, a negative one, or a running product past int64 (even if a later 0 would
  make it 0)."""
  if len(shape) > _MAX_DIMS:
    return None
  elements = 1
  for dim in shape:
    elements *= dim
    if dim < 0 or elements > _MAX_ELEMENTS:
      return None
  return elements


def table_entries(data: bytes) -> List[Tuple[bytes, bytes]]:
  """Every (key, value) of the table `data`, in order: its index block's data blocks."""
  if len(data) < _FOOTER_BYTES or int.from_bytes(data[-8:], "little") != _MAGIC:
    raise BadIndex("not a TensorFlow table (no footer)")
  at = len(data) - _FOOTER_BYTES
  for _ in range(2):  # the metaindex block's handle, which checkpoints leave empty
    _, at = _varint(data, at, len(data), 64)
  index_offset, at = _varint(data, at, len(data), 64)
  index_size, _ = _varint(data, at, len(data), 64)
  entries = []
  for _, handle in _block(data, index_offset, index_size):
    offset, at = _varint(handle, 0, len(handle), 64)
    size, _ = _varint(handle, at, len(handle), 64)
    entries += _block(data, offset, size)
  for (before, _), (key, _) in zip(entries, entries[1:]):
    if key <= before:
      raise BadIndex(f"key {key!r} out of order")
  return entries


def read(path) -> Index:
  """The variables the checkpoint index `path` claims; BadIndex where TensorFlow's reader could
  not survive it, OSError where it cannot be read (stranger_paths.read_regular)."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top  (slow: only where one is read)
  from google.protobuf import message  # pylint: disable=g-import-not-at-top
  from tensorflow.core.protobuf import tensor_bundle_pb2  # pylint: disable=g-import-not-at-top
  entries = table_entries(stranger_paths.read_regular(path, MAX_BYTES))
  if not entries or entries[0][0]:
    raise BadIndex("no header entry")
  header = tensor_bundle_pb2.BundleHeaderProto()
  dtypes = {tf.as_dtype(name).as_datatype_enum: tf.as_dtype(name) for name in _DTYPES}
  try:
    header.ParseFromString(entries[0][1])
  except message.DecodeError:
    raise BadIndex("a header entry that is not a BundleHeaderProto") from None
  variables = []
  for key, value in entries[1:]:
    name = key.decode("utf-8", "replace")
    if name.encode("utf-8") != key or not name.isprintable():  # (a message naming it: one line)
      raise BadIndex(f"variable name {key!r} is not printable UTF-8")
    entry = tensor_bundle_pb2.BundleEntryProto()
    try:
      entry.ParseFromString(value)
    except message.DecodeError:
      raise BadIndex(f"the entry of variable {name} is not a BundleEntryProto") from None
    if entry.slices:
      raise BadIndex(f"variable {name} is stored in slices (partitioned), which Mesh TF never "
                     "writes")
    if name == _OBJECT_GRAPH:  # (it read "has dtype 7, not one a weight is stored in")
      raise BadIndex("an object-based checkpoint (TF2's tf.train.Checkpoint or Keras): Mesh TF "
                     "writes name-based ones (model.ckpt-<step> of a model dir)")
    if entry.dtype not in dtypes:
      raise BadIndex(f"variable {name} has dtype {entry.dtype}, not one a weight is stored in")
    shape = tuple(d.size for d in entry.shape.dim)
    elements = _elements(shape)
    if elements is None:
      raise BadIndex(f"variable {name} has shape {list(shape)}, which TensorFlow cannot hold")
    if not 0 <= entry.shard_id < header.num_shards:
      raise BadIndex(f"variable {name} is in shard {entry.shard_id} of {header.num_shards}")
    dtype = dtypes[entry.dtype]
    variables.append(Variable(name, dtype.name, shape, entry.shard_id, elements * dtype.size))
  return Index(header.num_shards, variables)
