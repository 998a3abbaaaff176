"""Paths a stranger may have made (a model folder, a source to import): read only what is a
regular file of a bounded size, write only inside the folder given, and never into an input.

A model folder is data (the project's rule for strangers' input), but its entries can be more
than files: a FIFO named `about.json` or `model.ckpt-N.index` blocks whoever opens it for reading,
a link to /dev/zero is endless, and a link named `runtime` or `logs/export.log` would send the
engine's writes (and the removal of an older runtime) into a folder of the user's. Each reader
here refuses those with an OSError whose strerror says why, which the callers' existing one-line
errors already print; `inside` refuses a write path that leaves its folder through a link;
`same_or_inside` tells an output that would be written into (or replace) an input.
"""

import errno
import os
import pathlib
import stat
from typing import BinaryIO, Callable, Iterator, Optional, Tuple, Union

from code_t5 import errors

PathLike = Union[str, os.PathLike]


class LinkOutError(errors.UserError):
  """A path the command would write through, or copy from, a link (or a non-folder) that leaves
  its folder."""


class OutsideError(OSError):
  """A file opened that lies outside the folder it was found in: a folder on its path was
  swapped for a link after the caller checked the path."""


def open_regular(path: PathLike, max_bytes: Optional[int], *, follow_link: bool = True,
                 within: Optional[str] = None) -> BinaryIO:
  """`path` opened for reading in binary, after checking that it is (or links to) a regular file
  of at most `max_bytes` (None: of any size). Opening does not block on a FIFO (O_NONBLOCK); the
  check is on the opened file, so a link swapped after the check cannot change what is read.
  follow_link=False: a `path` that is itself a link is refused (ELOOP), for a caller that resolved
  the path and checked where it leads before opening it. `within` (a real path): the file opened
  must lie inside that folder, or OutsideError; O_NOFOLLOW guards the last name only, and a
  folder above it swapped for a link since the caller resolved it led out (helper-48's audit).
  Told by the opened file's own path (Linux's /proc/self/fd); without /proc, not checked."""
  flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
  fd = os.open(path, flags if follow_link else flags | getattr(os, "O_NOFOLLOW", 0))
  try:
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
      raise OSError(errno.EINVAL, f"not a regular file ({_kind(info.st_mode)})",
                    os.fspath(path))
    if max_bytes is not None and info.st_size > max_bytes:
      raise OSError(errno.EFBIG, f"{info.st_size:,} bytes, more than the {max_bytes:,} such a "
                    "file can hold", os.fspath(path))
    if within is not None and not _opened_within(fd, within):
      raise OutsideError(errno.EXDEV, f"it lies outside {within} (a folder on its path was "
                         "swapped for a link?)", os.fspath(path))
    os.set_blocking(fd, True)
  except BaseException:
    os.close(fd)
    raise
  # From here the file object owns the descriptor. Made inside the `try`, a Ctrl-C raised as
  # os.fdopen returned had the object close it and then os.close it again: an OSError (EBADF)
  # in place of the KeyboardInterrupt, which a reader counted as an unreadable file and went
  # on (`code-t5 prepare` dropped a file and ended with status 0), and a second close that
  # could hit another thread's file opened under the same number meanwhile.
  return open(fd, "rb")  # (the built-in, in C: no point between taking fd and returning)


def _opened_within(fd: int, folder: str) -> bool:
  try:
    real = os.readlink(f"/proc/self/fd/{fd}")
  except OSError:  # no /proc: the caller's checks before opening stand alone
    return True
  return errors.within(real, folder)


def read_regular(path: PathLike, max_bytes: int) -> bytes:
  """The bytes of `path`, a regular file of at most `max_bytes` (open_regular)."""
  with open_regular(path, max_bytes) as f:
    return f.read(max_bytes + 1)[:max_bytes]


def stored_bytes(file: BinaryIO) -> int:
  """The bytes of the open regular `file` that are stored, holes left out: a sparse file (its
  size set by truncate, or unpacked from an archive's sparse member) can claim gigabytes on a few
  KB of disk. Unlike the blocks it takes (st_blocks), this is not cut by a file system that
  compresses (zstd, as ZFS applies it to 128 KB records, packs the shipped model's weights into
  78 % of their size)."""
  fd = file.fileno()
  size, stored, at = os.fstat(fd).st_size, 0, 0
  while at < size:
    try:
      start = os.lseek(fd, at, os.SEEK_DATA)
    except OSError as e:
      if e.errno == errno.ENXIO:  # only a hole after `at`
        break
      return size  # a file system that cannot tell its holes: every byte is stored
    at = os.lseek(fd, start, os.SEEK_HOLE)
    stored += at - start
  return stored


def walk(top: PathLike, descend: Callable[[os.DirEntry, int], bool] = lambda entry, depth: True,
         *, by_name: bool = False, on_error: Optional[Callable[[str, OSError], None]] = None
         ) -> Iterator[Tuple[os.DirEntry, int]]:
  """Every entry below `top`, with its depth (1 for `top`'s own), links neither followed nor
  entered; a folder is entered where descend(entry, depth) says so, after all of its parent's
  entries, and before the next of its parent's folders. by_name: each folder's entries in name
  order, for a caller that keeps what it finds in a stable order (os.walk's, with folders sorted).
  A stack of folders, not os.walk: Python 3.11's recurses once per level, so a stranger's chain of
  ~1,000 folders was a RecursionError. Folders that cannot be listed are passed over, each told
  to on_error(folder, error) when given."""
  pending = [(os.fspath(top), 1)]
  while pending:
    folder, depth = pending.pop()
    try:
      with os.scandir(folder) as listing:
        entries = sorted(listing, key=lambda entry: entry.name) if by_name else list(listing)
    except OSError as e:
      if on_error is not None:
        on_error(folder, e)
      continue
    entered = []
    for entry in entries:
      yield entry, depth
      try:
        if entry.is_dir(follow_symlinks=False) and descend(entry, depth):
          entered.append((entry.path, depth + 1))
      except OSError:
        continue
    pending.extend(reversed(entered))  # (the stack pops the first of them first)


def not_a_link(path: PathLike) -> None:
  """LinkOutError where `path` is a link: for a file a command copies out of a folder that may be
  a stranger's into its output (`pack`, `convert`), where a link to a file of the user's (their
  own checkpoint, a file of secrets) would put that file into what the user hands on."""
  if os.path.islink(path):
    raise LinkOutError(f"{path} is a link (to {os.readlink(path)}): code-t5 copies only the "
                       "model dir's own files; put the file itself in place of the link")


def _kind(mode: int) -> str:
  for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                     (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
                     (stat.S_ISDIR, "a folder")):
    if test(mode):
      return name
  return "not a plain file"


def inside(root: PathLike, *parts: str) -> pathlib.Path:
  """root / parts, for writing: LinkOutError where a part that exists is a link (which could lead
  out of `root`, e.g. a model folder's `runtime` linked to a folder of the user's) or where a
  part that should be a folder is not one. `root` itself is the user's choice and may be a link."""
  path = pathlib.Path(root)
  for i, part in enumerate(parts):
    path = path / part
    try:
      mode = os.lstat(path).st_mode
    except FileNotFoundError:
      break  # created by the writer, as a plain folder or file
    except OSError:
      continue  # the write itself says why
    if stat.S_ISLNK(mode):
      raise LinkOutError(f"{path} is a link (to {os.readlink(path)}): code-t5 writes only inside "
                         f"{root}; remove the link")
    if i < len(parts) - 1 and not stat.S_ISDIR(mode):
      raise LinkOutError(f"{path} is not a folder: code-t5 writes {'/'.join(parts)} inside "
                         f"{root}; remove or rename it")
  return pathlib.Path(root).joinpath(*parts)


def same_or_inside(path: PathLike, folder: PathLike) -> bool:
  """Whether `path` is `folder` or inside it, links resolved: an output that would be written
  into, or replace, an input. Folders are compared as files (device and inode), so that another
  spelling of one (a bind mount, a case-insensitive name) is no way around it."""
  try:
    target = os.stat(folder)
  except OSError:
    return False
  real = pathlib.Path(os.path.realpath(path))  # (unlike Path.resolve, never raises on a loop)
  for ancestor in (real, *real.parents):
    try:
      found = ancestor.stat()
    except OSError:  # not there (yet)
      continue
    if (found.st_dev, found.st_ino) == (target.st_dev, target.st_ino):
      return True
  return False
