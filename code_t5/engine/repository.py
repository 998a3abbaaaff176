"""The repository around the file being completed: what the engine reads besides the file.

`Repository` keeps a repository's Python files as the model's pieces (for the copy cache,
code_t5.engine.copy_cache), as stripped lines (for whole-line candidates,
code_t5.engine.line_retrieval), as windows of lines (for the code most like the cursor's,
code_t5.engine.similar_code) and as the modules they import (code_t5.engine.imports), per path,
so that the cursor's own file is left out (its editor text is read instead) and files can be
updated as the editor saves them. `of_folder` indexes a folder on disk within a time and
size budget: a repository too large or unreadable degrades to what was read, or to the file;
its files' pieces are encoded in batches on all cores and can be kept on disk between runs
(code_t5.engine.saved_pieces), so a folder read again encodes only the files changed since.
`DiskLook` follows a folder's files on disk after an index read them, for the servers (`lsp`,
`serve`), and `read_again` puts one file's new text (or its absence) into the index.
"""

import errno
import hashlib
import os
import pathlib
import threading
import time
from typing import Callable, Dict, Iterable, List, Optional, Tuple

import numpy as np

from code_t5 import source_text
from code_t5 import stranger_paths
from code_t5.engine import copy_cache
from code_t5.engine import encoding_memo
from code_t5.engine import imports
from code_t5.engine import line_retrieval
from code_t5.engine import saved_pieces
from code_t5.engine import similar_code

# Indexing a folder stops after this many seconds (the rest of the repository is not read).
INDEX_SECONDS = 10.0
MAX_FILE_BYTES = 1 << 20
# `of_folder` encodes the files it read this many characters at a time (~0.1 s on 2 cores), and
# looks at the clock between groups.
GROUP_CHARS = 1 << 19
# A server follows its folder's *.py on disk (DiskLook.follow), for files changed, created or
# deleted there (a `git pull`, a branch switched): it looks every DISK_POLL_SECONDS, or
# DISK_POLL_SHARE times as long as the last look took if that is longer (so that looking costs
# at most 1/DISK_POLL_SHARE of a core). A look is given up past DISK_POLL_MAX_SECONDS, and
# looking altogether after DISK_POLL_SLOW_LOOKS such looks in a row (a folder too large to walk:
# said in one log line).
DISK_POLL_SECONDS = 5.0
DISK_POLL_SHARE = 50
DISK_POLL_MAX_SECONDS = 2.0
DISK_POLL_SLOW_LOOKS = 3
# What a server reads again of the files changed on disk before it answers a request (lsp: between
# two requests' model calls): files until this many seconds are spent, at least one; the rest
# before the next ones. 16 files at a time made one request wait 7.3 s where 16 files of 1 MB
# changed (helper-41's audit).
READ_AGAIN_SECONDS = 0.1
# A file that could not be read for one of these reasons is read again at the next look, changed or
# not: they pass (permissions given back, descriptors freed). Others say what the file is (gone,
# not a regular file, a link, too large).
_PASSING_ERRNOS = frozenset((errno.EACCES, errno.EPERM, errno.EMFILE, errno.ENFILE, errno.EIO,
                             errno.EAGAIN, errno.EINTR))


class Repository:
  """A repository's files for the engine: `add`/`remove` per path, `pieces_for(path)` and
  `lines` for a completion in `path`."""

  def __init__(self, tokenizer, max_pieces: int = copy_cache.MAX_REPOSITORY_PIECES):
    self.pieces = copy_cache.RepositoryIndex(tokenizer, max_pieces)
    self.lines = line_retrieval.LineIndex()
    self.modules = imports.ModuleIndex()
    self.windows = similar_code.WindowIndex()
    self._digests = {}  # path -> _digest of the text the indexes hold
    self.files = 0
    self.cut = False  # whether `of_folder` stopped at its time limit (the rest left out)
    # path -> (modification time in ns, size) of each file `of_folder` read, as its walk saw it
    # just before the read: what a look at the disk later compares with (DiskLook).
    self.read_as: Dict[str, Tuple[int, int]] = {}

  def add(self, path: str, text: str) -> None:
    """`path` holds `text` from now on, as Python reads it (source_text.as_python_reads, as the
    model reads the code it completes: an editor's CRLF buffer, added as it was, made the copy
    cache and similar code offer lines with "\r" in the project's other files: helper-56's
    audit); nothing is done where it held that text already, so no index is built again (an
    editor opening a file as saved changes nothing)."""
    text = source_text.as_python_reads(text)
    self._add(path, text, _digest(text))

  def _add(self, path: str, text: str, digest: bytes, pieces: Optional[np.ndarray] = None
           ) -> None:
    """`add`, with the text's _digest and (where encoded already) its piece ids."""
    if self._digests.get(path) == digest:
      return
    if pieces is None:
      self.pieces.add(path, text)
    else:
      self.pieces.add_pieces(path, pieces)
    self.lines.add(path, text)
    self.modules.add(path, text)
    self.windows.add(path, text)
    self.files = len(self.lines)
    self._digests[path] = digest

  def remove(self, path: str) -> None:
    self._digests.pop(path, None)
    self.pieces.remove(path)
    self.lines.remove(path)
    self.modules.remove(path)
    self.windows.remove(path)
    self.files = len(self.lines)

  def pieces_for(self, path: str) -> copy_cache.RepositoryPieces:
    return self.pieces.pieces_for(path)

  def prepare(self, path: str) -> None:
    """Builds now what the first completion in `path` after a change of the files would build
    first: the copy cache's pieces without `path`, the similar code's merged windows, the new
    lines' order (in numpy's 472 files, 7.9 MB: ~0.35 s). The LSP server calls it after a save,
    before the user asks again."""
    self.pieces.pieces_for(path)
    self.windows.prepare()
    self.lines.prepare()

  @classmethod
  def of_folder(cls, folder: pathlib.Path, tokenizer, seconds: Optional[float] = INDEX_SECONDS,
                saved_dir: Optional[pathlib.Path] = None) -> "Repository":
    """The *.py files below `folder` (paths relative to it; hidden folders, __pycache__, links
    and files over MAX_FILE_BYTES skipped, unreadable and non-UTF-8 files skipped).
    `saved_dir`: where their pieces are kept between runs (code_t5.engine.saved_pieces; None:
    encoded here, nothing written)."""
    repository = cls(tokenizer)
    folder = pathlib.Path(folder)
    saved_path = saved_pieces.path_of(saved_dir, folder, tokenizer) if saved_dir else None
    saved = saved_pieces.load(saved_path, tokenizer.vocab_size)
    kept: Dict[bytes, np.ndarray] = {}  # what is saved afterwards: the pieces of the files read
    start = time.monotonic()
    group: List[Tuple[str, str]] = []  # (path, text) read and not yet added

    def add_group():
      digests = [_digest(text) for _, text in group]
      new = [text for (_, text), digest in zip(group, digests) if digest not in saved]
      # Encoded together: on all cores (encoding_memo.EncodingMemo.encode_many).
      encoded = iter(encoding_memo.shared(tokenizer).encode_many(new))
      for (path, text), digest in zip(group, digests):
        pieces = kept[digest] = saved[digest] if digest in saved else next(encoded)
        repository._add(path, text, digest, pieces)  # pylint: disable=protected-access
      group.clear()

    size = 0
    real_folder = os.path.realpath(folder)
    for path, status in python_files_and_status(folder, MAX_FILE_BYTES):
      if seconds is not None and time.monotonic() - start > seconds:
        repository.cut = True
        break
      try:
        text = read_file(path, real_folder)
      except (OSError, UnicodeDecodeError):
        continue
      relative = path.relative_to(folder).as_posix()
      repository.read_as[relative] = (status.st_mtime_ns, status.st_size)
      group.append((relative, text))
      size += len(text)
      if size >= GROUP_CHARS:
        add_group()
        size = 0
    if group:
      add_group()
    if repository.cut:  # the files not read this time keep what was saved of them
      kept = {**saved, **kept}
    if kept.keys() != saved.keys():
      saved_pieces.save(saved_path, kept, tokenizer.vocab_size)
    return repository


def _digest(text: str) -> bytes:
  # surrogatepass: an editor's JSON may carry lone surrogates, which the indexes take as they are.
  return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def skipped_folder(name: str) -> bool:
  """Whether a folder of this name is left out of a project's files: hidden, or __pycache__."""
  return name.startswith(".") or name == "__pycache__"


def python_files_and_status(folder: pathlib.Path, max_file_bytes: int
                            ) -> Iterable[Tuple[pathlib.Path, os.stat_result]]:
  """*.py files below `folder` in a stable order, with the status the walk read of each (not
  followed), without following links out of it, skipping hidden folders and __pycache__ and files
  over `max_file_bytes`. os.walk's order (a folder's files, then each subfolder's, by name), but
  stranger_paths.walk's stack: Python 3.11's os.walk recurses once per level, and a stranger's
  folders nested ~1,000 deep raised RecursionError."""
  def descend(entry: os.DirEntry, depth: int) -> bool:
    return not skipped_folder(entry.name)

  for entry, _ in stranger_paths.walk(folder, descend, by_name=True):
    try:
      if entry.name.endswith(".py") and entry.is_file(follow_symlinks=False):
        status = entry.stat(follow_symlinks=False)
        if status.st_size <= max_file_bytes:
          yield pathlib.Path(entry.path), status
    except OSError:
      continue


def iter_python_files(folder: pathlib.Path, max_file_bytes: int) -> Iterable[pathlib.Path]:
  """The paths of python_files_and_status."""
  for path, _ in python_files_and_status(folder, max_file_bytes):
    yield path


class DiskLook:
  """The *.py files of an index's folder changed, created or deleted on disk since the index read
  them (Repository.read_as), then since the last look: by modification time and size, as
  python_files_and_status lists them (no links, no hidden folders, none over MAX_FILE_BYTES).
  Where the index stopped at its time limit, only the files it holds are looked after (a branch
  switch in a folder of 2,001 files read all of them: helper-40's audit)."""

  def __init__(self, root: pathlib.Path, index: Repository):
    self.root = pathlib.Path(root)
    self._state = dict(index.read_as)
    self._known = set(index.read_as) if index.cut else None
    self._again = set()  # paths to give as changed at the next look (retry)
    self._again_lock = threading.Lock()

  def retry(self, path: str) -> None:
    """`path` could not be read for a reason that may pass (read_again said so): the next look
    gives it as changed again (a file unreadable for a moment stayed out of the index until it
    changed: helper-41's audit)."""
    with self._again_lock:
      self._again.add(path)

  def look(self) -> Optional[List[str]]:
    """The paths (relative to the root) changed since the last look, sorted; None where looking
    took over DISK_POLL_MAX_SECONDS (nothing is learnt)."""
    start, state = time.monotonic(), {}
    for path, status in python_files_and_status(self.root, MAX_FILE_BYTES):
      if time.monotonic() - start > DISK_POLL_MAX_SECONDS:
        return None
      relative = path.relative_to(self.root).as_posix()
      if self._known is None or relative in self._known:
        state[relative] = (status.st_mtime_ns, status.st_size)
    with self._again_lock:
      again, self._again = self._again, set()
    changed = sorted(path for path in self._state.keys() | state.keys()
                     if self._state.get(path) != state.get(path) or path in again)
    self._state = state
    return changed

  def follow(self, closed: threading.Event, changed: Callable[[List[str]], None],
             log: Callable[[str], None]) -> None:
    """Looks at intervals (DISK_POLL_*) until `closed` is set, handing `changed` the paths each
    look finds changed."""
    took, slow = 0.0, 0
    while not closed.wait(max(DISK_POLL_SECONDS, DISK_POLL_SHARE * took)):
      start = time.monotonic()
      paths = self.look()
      took = time.monotonic() - start
      if paths is None:
        slow += 1
        if slow == DISK_POLL_SLOW_LOOKS:
          log(f"looking over {self.root} for files changed on disk took over "
              f"{DISK_POLL_MAX_SECONDS:g} s {slow} times in a row: it is not looked over again "
              "(restart the server after a branch switch)")
          return
        continue
      slow = 0
      if paths:
        changed(paths)


def read_file(path: pathlib.Path, within: str) -> str:
  """A project's file as the index reads it: a regular UTF-8 file inside the real folder
  `within`, not a link, of at most MAX_FILE_BYTES, checked on the file opened (the listing's
  checks alone let a file or folder swapped for a link or a FIFO since be followed or waited on:
  helper-48's audit), as Python reads it (source_text.as_python_reads, as `add` keeps it)."""
  with stranger_paths.open_regular(path, MAX_FILE_BYTES, follow_link=False,
                                   within=within) as file:
    return source_text.as_python_reads(file.read().decode("utf-8"))


def read_again(index: Repository, root: pathlib.Path, path: str) -> bool:
  """`index`'s copy of `path` (relative to `root`) becomes the file on disk as the index reads
  files (a regular UTF-8 file, not a link, of at most MAX_FILE_BYTES), or none; False where it
  could not be read for a reason that may pass (_PASSING_ERRNOS: worth reading again later)."""
  try:
    text = read_file(pathlib.Path(root) / path, os.path.realpath(root))
  except (OSError, UnicodeDecodeError) as e:
    index.remove(path)
    return getattr(e, "errno", None) not in _PASSING_ERRNOS
  index.add(path, text)
  return True


def read_again_for_a_while(index: Repository, root: pathlib.Path, paths: List[str],
                           look: Optional[DiskLook] = None) -> int:
  """read_again of the first `paths` until READ_AGAIN_SECONDS are spent (at least one); how many
  were read. A path that may be read later is given back to `look`."""
  start, done = time.monotonic(), 0
  for path in paths:
    if done and time.monotonic() - start > READ_AGAIN_SECONDS:
      break
    if not read_again(index, root, path) and look is not None:
      look.retry(path)
    done += 1
  return done
