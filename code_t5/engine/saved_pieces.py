"""A repository's files as the model's pieces, kept on disk between runs of the engine.

`code-t5 complete --repo DIR` reads the project at each call, and encoding its files with
SentencePiece was the largest part of that: ~2 of 4.6 s in numpy's 489 files, ~0.3 of 1.05 s in
this project's (AMX kind). `Repository.of_folder` keeps the pieces of the files it read in one
file per folder and tokenizer under `default_dir()`, keyed by each file's content digest, and
encodes only the files changed since; `serve --repo` and the LSP server's workspace start
sooner the same way.

The file holds three arrays (numpy's .npz, read without pickle): the files' digests, where each
one's pieces start, and the pieces. A file that does not read back as that (cut, from another
version, or not ours) is ignored and written again. It is written to a temporary file and
renamed; a folder that cannot be written costs the time saved, nothing else. Only the
MAX_SAVED most recently written are kept.
"""

import hashlib
import os
import pathlib
import re
import time
import zipfile
import zlib
from typing import Dict, Optional

import numpy as np

from code_t5 import cache_dirs
from code_t5.engine import arrays_file

MAX_SAVED = 32
# A temporary file older than this was left by a run that was killed while writing.
STALE_SECONDS = 3600
# The names this module writes (folder key - tokenizer fingerprint), and its temporary files':
# nothing else in the folder is ever removed.
_SAVED_NAME = re.compile(r"[0-9a-f]{16}-[0-9a-f]{16}\.npz")
_TEMPORARY_NAME = re.compile(r"\.[0-9a-f]{16}-[0-9a-f]{16}\.npz\.[0-9]+\.tmp")


def default_dir() -> pathlib.Path:
  """$CODE_T5_CACHE/pieces, else ~/.cache/code_t5/pieces (code_t5.cache_dirs)."""
  return cache_dirs.root() / "pieces"


def path_of(directory: pathlib.Path, folder: pathlib.Path, tokenizer) -> Optional[pathlib.Path]:
  """The file of `folder`'s pieces by `tokenizer`; None for a tokenizer whose encoding costs
  nothing to redo (bytes: no `fingerprint`)."""
  fingerprint = getattr(tokenizer, "fingerprint", None)
  if fingerprint is None:
    return None
  key = hashlib.blake2b(os.fsencode(pathlib.Path(folder).resolve()), digest_size=8).hexdigest()
  return pathlib.Path(directory) / f"{key}-{fingerprint}.npz"


def load(path: Optional[pathlib.Path], vocab_size: int) -> Dict[bytes, np.ndarray]:
  """digest -> piece ids (int64) of what `path` holds; empty where it is missing or does not
  read back as a file of this module with ids below `vocab_size`."""
  if path is None or not path.is_file():
    return {}
  try:
    arrays = np.load(path, allow_pickle=False)
    if not isinstance(arrays, np.lib.npyio.NpzFile):  # one array (.npy) under this name
      return {}
    with arrays:
      digests, starts, ids = arrays["digests"], arrays["starts"], arrays["ids"]
    if not (digests.dtype == np.uint8 and digests.ndim == 2 and digests.shape[1] == 16
            and starts.dtype == np.int64 and starts.shape == (len(digests) + 1,)
            and ids.ndim == 1 and np.issubdtype(ids.dtype, np.integer)):
      return {}
    if starts[0] != 0 or starts[-1] != len(ids) or np.any(np.diff(starts) < 0):
      return {}
    if len(ids) and (ids.min() < 0 or ids.max() >= vocab_size):
      return {}
  # Not ours: MemoryError where an array's header claims more than can be held (its bytes are
  # read only as far as the file has them).
  except (OSError, ValueError, KeyError, EOFError, MemoryError, zipfile.BadZipFile, zlib.error):
    return {}
  ids = ids.astype(np.int64)
  return {digest.tobytes(): ids[start:stop]
          for digest, start, stop in zip(digests, starts[:-1], starts[1:])}


def save(path: Optional[pathlib.Path], pieces: Dict[bytes, np.ndarray], vocab_size: int) -> None:
  """Writes `pieces` (digest -> ids) to `path` through a temporary file; then keeps only the
  MAX_SAVED newest files of its folder. Nothing happens where the folder cannot be written."""
  if path is None:
    return
  digests = np.frombuffer(b"".join(pieces), dtype=np.uint8).reshape(-1, 16)
  lengths = np.array([len(ids) for ids in pieces.values()], dtype=np.int64)
  starts = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
  dtype = np.uint16 if vocab_size <= 1 << 16 else np.int32
  ids = (np.concatenate(list(pieces.values())).astype(dtype) if pieces
         else np.zeros(0, dtype))
  temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
  try:
    path.parent.mkdir(parents=True, exist_ok=True)
    # A new file, never one that is there already or a link's target.
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as f:
      arrays_file.save(f, {"digests": digests, "starts": starts, "ids": ids})
    os.replace(temporary, path)
    _prune(path.parent)
  except BaseException as e:  # a read-only or full cache (the next run encodes again), a Ctrl-C
    try:
      temporary.unlink()
    except OSError:
      pass
    if not isinstance(e, OSError):
      raise


def _prune(directory: pathlib.Path) -> None:
  """Only the MAX_SAVED newest saved files are kept, and no temporary file older than
  STALE_SECONDS; nothing else in `directory` is touched."""
  saved, now = [], time.time()
  for entry in os.scandir(directory):
    try:
      if not entry.is_file(follow_symlinks=False):
        continue
      if _TEMPORARY_NAME.fullmatch(entry.name):
        if now - entry.stat().st_mtime > STALE_SECONDS:
          os.unlink(entry.path)
      elif _SAVED_NAME.fullmatch(entry.name):
        saved.append((entry.stat().st_mtime, entry.path))
    except OSError:
      continue
  for _, old in sorted(saved, reverse=True)[MAX_SAVED:]:
    try:
      os.unlink(old)
    except OSError:
      pass
