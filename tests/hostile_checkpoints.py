"""A checkpoint index as a stranger's model folder can hold it: TensorFlow's table format written
by hand, so that a test can claim what the .data files do not hold (tests/stranger_paths_test.py)."""

import pathlib
from typing import Any, Callable

from code_t5.training import checkpoint_index


def change_checkpoint_index(prefix, change: Callable[[str, Any], None]) -> None:
  """Rewrites the index of the checkpoint `prefix`, change(name, entry) applied to each variable's
  BundleEntryProto (dtype, shape, shard, offset, size, crc32c) in place: an index that claims what
  its .data files do not hold, as a stranger's model folder can. Written as TensorFlow's table
  (tsl/lib/io/table_builder.cc, uncompressed): one data block with a restart point at every
  entry, the index block and the footer."""
  from tensorflow.core.protobuf import tensor_bundle_pb2  # pylint: disable=g-import-not-at-top
  path = pathlib.Path(f"{prefix}.index")
  entries = []
  for key, value in checkpoint_index.table_entries(path.read_bytes()):
    if key:  # (the header's is b"")
      entry = tensor_bundle_pb2.BundleEntryProto.FromString(value)
      change(key.decode(), entry)
      value = entry.SerializeToString()
    entries.append((key, value))
  table = bytearray()

  def block(items) -> bytes:
    """Appends a block of (key, value) items; its handle."""
    body, restarts = bytearray(), []
    for key, value in items:
      restarts.append(len(body))
      body += _varint(0) + _varint(len(key)) + _varint(len(value)) + key + value
    for offset in restarts or [0]:
      body += offset.to_bytes(4, "little")
    body += len(restarts or [0]).to_bytes(4, "little")
    handle = _varint(len(table)) + _varint(len(body))
    table.extend(body + b"\0" + _masked_crc32c(bytes(body) + b"\0").to_bytes(4, "little"))
    return handle

  data = block(entries)
  handles = block([]) + block([(entries[-1][0], data)])  # the (empty) metaindex, the index
  table.extend(handles + bytes(40 - len(handles)) + 0xdb4775248b80fb57.to_bytes(8, "little"))
  path.write_bytes(bytes(table))


def _varint(n: int) -> bytes:
  out = bytearray()
  while n >= 0x80:
    out.append(n & 0x7f | 0x80)
    n >>= 7
  return bytes(out + bytes([n]))


def _masked_crc32c(data: bytes) -> int:
  """CRC-32C, masked as LevelDB's tables store it."""
  crc = 0xffffffff
  for byte in data:
    crc ^= byte
    for _ in range(8):
      crc = crc >> 1 ^ (0x82f63b78 if crc & 1 else 0)
  crc ^= 0xffffffff
  return ((crc >> 15 | crc << 17) + 0xa282ead8) & 0xffffffff
