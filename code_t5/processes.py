"""Child processes that die with their parent, one trainer per model dir, and leftovers of killed
writers (stdlib only; Linux for the parent-death signal).

- `start_child`: a child in its own process group that the kernel kills when its parent dies
  (prctl(PR_SET_PDEATHSIG)), so `kill -9` of `code-t5 train` cannot leave a trainer running;
  `forward_signals` passes SIGTERM/SIGINT on to the child's group while the parent waits.
- `exclusive_lock`: a lock file (flock) holding the owner's pid. The kernel drops the lock when
  its owner dies, however it dies, so a lock left behind by a killed process is stale by
  construction and the next caller takes it over.
- `exit_without_final_collection`: a process that built TensorFlow graphs exits without Python's
  last garbage collection walking them (~2.5 s of every training run's exit).
- `temporary_name` / `remove_stale_temporaries`: folders written under a temporary name and
  renamed when complete carry their writer's host and pid, so a later run can tell those of a dead
  writer (removed) from those of a live one (kept).
- `write_file_beside`: a file written to a unique temporary file beside it, then renamed.
"""

import atexit
import contextlib
import errno
import fcntl
import functools
import gc
import os
import pathlib
import re
import shutil
import signal
import subprocess
import threading
from typing import IO, Callable, Iterator, List, Optional, Sequence

import code_t5_compat
from code_t5 import errors

_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
FORWARDED_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class LockedError(errors.UserError):
  """Another live process holds the lock; the message names it."""


@functools.lru_cache(maxsize=None)
def _libc_function(name: str):
  """A function of the C library, or None where it has none (not Linux/glibc). Loaded once, when
  first needed: finding libc took several ms of every command's start-up, most of which need
  none."""
  import ctypes  # pylint: disable=g-import-not-at-top
  import ctypes.util  # pylint: disable=g-import-not-at-top
  try:
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    return getattr(libc, name)
  except (OSError, AttributeError):
    return None


def _prctl():
  """libc's prctl, loaded in the parent (by start_child, before it forks: a child between fork
  and exec must not load libraries); None: no parent-death signal, process group only."""
  return _libc_function("prctl")


_AT_FDCWD = -100  # <fcntl.h>
_RENAME_EXCHANGE = 2  # <linux/fs.h>


def _exchange(first: pathlib.Path, second: pathlib.Path) -> bool:
  """Swaps two existing paths in one step (Linux's renameat2 RENAME_EXCHANGE); False where the
  system or the file system cannot (nothing is changed then)."""
  renameat2 = _libc_function("renameat2")
  if renameat2 is None:
    return False
  if renameat2(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second),
               _RENAME_EXCHANGE) == 0:
    return True
  import ctypes  # pylint: disable=g-import-not-at-top
  number = ctypes.get_errno()
  if number in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
    return False
  raise OSError(number, os.strerror(number), os.fspath(second))


def _die_with(parent_pid: int, prctl):
  """preexec_fn: ask the kernel for SIGKILL when the parent dies; if it already has, die now."""
  def preexec():
    if prctl is not None:
      prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    # The parent may have died between fork() and prctl(): then the signal will never come.
    if os.getppid() != parent_pid:
      os.kill(os.getpid(), signal.SIGKILL)
  return preexec


def fork_dying_with_parent() -> int:
  """os.fork(), and in the child (0 returned) the kernel's SIGKILL when the parent dies, as for
  start_child's children: a forked worker busy with a request went on for minutes after its
  server was killed (helper-17's audit). OSError as os.fork's."""
  parent, prctl = os.getpid(), _prctl()
  pid = os.fork()
  if pid == 0:
    _die_with(parent, prctl)()
  return pid


def start_child(command: Sequence[str], **popen_kwargs) -> subprocess.Popen:
  """Popen(command) in its own process group, killed by the kernel when this process dies.

  Its own group so that signals for the child's whole tree go to one group (killpg), and a
  terminal's Ctrl-C reaches the parent first, which forwards it (forward_signals).
  """
  return subprocess.Popen(list(command), preexec_fn=dying_with_this_process(),
                          process_group=0, **popen_kwargs)


def dying_with_this_process() -> Callable[[], None]:
  """A preexec_fn for subprocess.run or Popen: the child is killed by the kernel when this
  process dies (SIGKILL included), and stays in this process's group, where a terminal's Ctrl-C
  reaches it too."""
  return _die_with(os.getpid(), _prctl())


def kill_group(process: subprocess.Popen, signum=signal.SIGKILL) -> None:
  """Sends signum to the child's process group (the child and whatever it started)."""
  try:
    os.killpg(process.pid, signum)
  except (ProcessLookupError, PermissionError):
    pass


class Forwarder:
  """SIGTERM/SIGINT received by this process, passed on to a child's process group."""

  def __init__(self):
    self.received: List[int] = []
    self._process: Optional[subprocess.Popen] = None

  def attach(self, process: subprocess.Popen) -> None:
    """From now on signals go to `process`; one received before it existed is sent now."""
    self._process = process
    for signum in self.received:
      kill_group(process, signum)

  def __call__(self, signum, frame):  # pylint: disable=unused-argument
    self.received.append(signum)
    if self._process is not None:
      kill_group(self._process, signum)


@contextlib.contextmanager
def forward_signals() -> Iterator[Forwarder]:
  """While the block runs, SIGTERM and SIGINT sent to this process go to the attached child's
  group instead of stopping this process (which then reports how its child ended).

  Enter it before starting the child, so no signal falls between the two. Outside the main
  thread (where Python cannot install handlers) nothing is forwarded.
  """
  forwarder = Forwarder()
  if threading.current_thread() is not threading.main_thread():
    yield forwarder
    return
  previous = {s: signal.signal(s, forwarder) for s in FORWARDED_SIGNALS}
  try:
    yield forwarder
  finally:
    for s, handler in previous.items():
      signal.signal(s, handler)


def exit_without_final_collection() -> None:
  """At exit, Python's last garbage collection skips every object alive when the exit began.

  Why: a process that imported TensorFlow, t5 and seqio holds ~490,000 Python objects before it
  builds anything (ops, tensors and registries add more, many in reference cycles), and the
  interpreter's shutdown walks them all in one last collection only to free memory the OS is
  about to take back (py-spy during a training run's exit: gc_collect_main, in the shutdown). A
  tiny training run's exit after its last log line took 2.6-3.8 s, and 0.4-0.5 s with them
  frozen. Registered in the process's atexit handlers, gc.freeze runs before the handlers
  registered earlier (logging's, TensorFlow's), which flush and close what they own as before;
  only finalizers of objects left in cycles at exit are not run, which Python never guarantees
  at exit anyway.
  """
  atexit.register(gc.freeze)


# Whether a process with a pid exists and is not a zombie; defined in code_t5_compat, whose Beam
# workers watch their job with it as they start, before this package can be imported.
pid_alive = code_t5_compat.pid_alive


@contextlib.contextmanager
def exclusive_lock(path: pathlib.Path, what: str) -> Iterator[None]:
  """Holds an exclusive lock on `path` (created if needed; it keeps the holder's pid).

  A live holder makes this raise LockedError at once, naming its pid and `what` it is doing. The
  lock is an flock, which the kernel releases when the holder dies (kill -9 included), so a file
  left by a dead holder is taken over; the file is kept (unlinking a lock file races with
  processes that have it open).
  """
  path.parent.mkdir(parents=True, exist_ok=True)
  fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
  try:
    try:
      fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
      if e.errno not in (errno.EWOULDBLOCK, errno.EACCES):
        raise
      holder = os.pread(fd, 64, 0).decode("ascii", errors="replace").strip() or "?"
      raise LockedError(f"{what} already (process {holder}, lock {path}): stop it first, or "
                        "wait for it to finish") from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
    try:
      yield
    finally:
      os.ftruncate(fd, 0)
  finally:
    os.close(fd)  # releases the flock


# <name>.tmp-<host>-<pid>[-<random>]: host() has no "-", nor has mkdtemp's random suffix.
_TEMPORARY = re.compile(r"\.tmp-(?P<host>[^-]+)-(?P<pid>\d+)(?:-[a-z0-9_]+)?$")


def host() -> str:
  # A file system may be shared between machines (Beam workers): a pid means nothing elsewhere.
  import socket  # pylint: disable=g-import-not-at-top  (only where a temporary is named)
  return re.sub(r"[^A-Za-z0-9_.]", "_", socket.gethostname()) or "localhost"


def temporary_name(name: str) -> str:
  """The name a writer of `name` gives its unfinished folder: `<name>.tmp-<host>-<pid>`."""
  return f"{name}.tmp-{host()}-{os.getpid()}"


def owner_gone(name: str) -> bool:
  """Whether `name` is a temporary_name whose writer (on this host) no longer runs."""
  m = _TEMPORARY.search(name)
  return bool(m) and m.group("host") == host() and not pid_alive(int(m.group("pid")))


def remove_stale_temporaries(parent: pathlib.Path, echo=None) -> List[pathlib.Path]:
  """Removes the temporaries in `parent` whose writer is gone (killed mid-write); returns them.

  Those of live writers, of other hosts, and anything not named by temporary_name are kept.
  """
  removed = []
  try:
    entries = list(parent.iterdir())
  except OSError:
    return removed
  for entry in entries:
    if owner_gone(entry.name):
      if entry.is_dir() and not entry.is_symlink():
        shutil.rmtree(entry, ignore_errors=True)
      else:  # a file, or a link (removed itself, never what it points to)
        try:
          entry.unlink()
        except OSError:
          pass
      if not (entry.exists() or entry.is_symlink()):
        removed.append(entry)
        if echo:
          echo(f"removed {entry}, left by a killed process")
  return removed


def check_replaceable(out: pathlib.Path, earlier: Callable[[pathlib.Path], bool], what: str,
                      force: bool, error: Callable[[str], Exception]) -> None:
  """Refuses (error, one line) an existing --out unless it is a folder of an earlier run of the
  same command (`earlier(out)`, described as `what`) and `force` is given: replacing it would
  lose anything else. A link is refused too: replacing it would replace the link, not the folder
  it points to. --force replaces an earlier output only, never an unrelated folder given by
  mistake, so only that error suggests it."""
  if not (out.exists() or out.is_symlink()):
    return
  if out.is_symlink():
    raise error(f"--out {out} is a symbolic link: give the folder it points to")
  if not (out.is_dir() and earlier(out)):
    raise error(f"--out {out} exists and is not {what}; choose another --out")
  if not force:
    raise error(f"--out {out} exists: pass --force to replace it")


class OutputAppeared(errors.UserError):
  """An output that was not there when the command checked it, and is now: another run wrote it
  meanwhile, and it is kept."""

  def __init__(self, path: pathlib.Path):
    super().__init__(f"{path} appeared while this run was writing it (another run?): it is "
                     "kept; pass --force to replace it")


def move_into_place(new: pathlib.Path, final: pathlib.Path, replace: bool) -> None:
  """Renames the finished folder `new` to `final`.

  replace (the caller checked that `final` may be replaced: --force): an existing `final` and
  `new` swap places in one step, and the old output, now at `new` (a temporary the next writer
  removes if this process is killed), is removed last, so an interrupted removal leaves a
  temporary, not a half-removed output (helper-38's audit: `pack --force` interrupted so left a
  pack that a second `pack --force` refused and `complete` could not load). Where the file
  system cannot swap, the old one is renamed aside first and back if the second rename fails or
  is interrupted. Without `replace`, a `final` another run made since the caller checked is kept:
  OutputAppeared (it was replaced: helper-39's audit)."""
  if not replace:
    try:
      new.rename(final)  # (fails on a folder that holds anything, as an output does)
    except OSError as e:
      if e.errno not in (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR, errno.EISDIR):
        raise
      raise OutputAppeared(final) from None
    return
  if not (final.exists() or final.is_symlink()):
    new.rename(final)
    return
  if _exchange(new, final):
    _remove_replaced(new)
    return
  old = final.with_name(temporary_name(f".{final.name}-old"))
  try:
    final.rename(old)
    new.rename(final)
  except BaseException:
    if (old.exists() or old.is_symlink()) and not (final.exists() or final.is_symlink()):
      old.rename(final)
    raise
  _remove_replaced(old)


def _remove_replaced(old: pathlib.Path) -> None:
  """Removes a replaced output (a temporary_name: what is left of it, the next writer removes).
  A Ctrl-C inside shutil.rmtree can end as OSError EBADF (its `finally` closes a descriptor the
  interrupted code had closed): the output is in place by now, so that is no failure of it."""
  with contextlib.suppress(OSError):
    shutil.rmtree(old, ignore_errors=True)


@contextlib.contextmanager
def folder_written_beside(final: pathlib.Path, what: str, elsewhere: str,
                          echo=None, replace: bool = True) -> Iterator[pathlib.Path]:
  """Yields an empty folder beside `final` (temporary_name) to write `final`'s content in; if the
  block ends without an exception, that folder replaces `final` by a rename. A killed writer leaves
  only its temporary, which the next writer into the same parent removes (echo says so); a failed
  write is errors.writing's one line (`what`, `elsewhere`) and leaves nothing. `replace`:
  move_into_place's."""
  with errors.writing(what, final.parent, elsewhere):
    final.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(final.parent, echo)
    tmp = final.parent / temporary_name(final.name)
    shutil.rmtree(tmp, ignore_errors=True)
    try:
      try:
        tmp.mkdir()
      except FileNotFoundError:
        # The parent exists (made above) but takes no new entries: /proc, /sys.
        raise errors.WriteError(os.strerror(errno.ENOENT), errno.ENOENT) from None
      yield tmp
      move_into_place(tmp, final, replace)
    finally:
      shutil.rmtree(tmp, ignore_errors=True)


def write_file_beside(out: pathlib.Path, write: Callable[[IO], None], binary: bool = False,
                      replace: bool = True, make_parents: bool = False) -> None:
  """write(file) into a temporary file beside `out` (unique: concurrent writers do not clobber
  each other's), renamed to `out` when `write` returns; removed if it raises, and by the next
  writer into the folder if this one is killed. The file gets the permissions a plain open()
  would give it. With `make_parents` (an --out that may be new), `out`'s missing folders
  are made, and removed again if `write` raises (a failed `vocab` left the folders of its --out);
  without, its folder must exist (a mistyped model dir must not become a new one). Without
  `replace` (no --force), an `out` another run wrote since the caller checked is kept:
  OutputAppeared (two `vocab` into one --out both wrote it: helper-39's audit)."""
  made = make_folders(out.parent) if make_parents else []
  # Named as temporary_name (and mkstemp's suffix): what a killed writer left, the next writer
  # into the folder removes.
  remove_stale_temporaries(out.parent)
  try:
    _write_beside(out, write, binary, replace)
  except BaseException:
    remove_folders(made)
    raise


def _write_beside(out: pathlib.Path, write: Callable[[IO], None], binary: bool,
                  replace: bool) -> None:
  """write_file_beside, in a folder that exists."""
  import tempfile  # pylint: disable=g-import-not-at-top  (only where a file is written)
  fd, tmp = tempfile.mkstemp(prefix=temporary_name(out.name) + "-", dir=out.parent,
                             text=not binary)
  try:
    with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) as f:
      write(f)
    give_plain_mode(tmp, 0o666)  # mkstemp's 0600 -> what a plain open() would give
    if replace:
      os.replace(tmp, out)
    else:
      try:
        os.link(tmp, out)  # (a new name only: fails where `out` is)
      except FileExistsError:
        raise OutputAppeared(out) from None
      except OSError as e:  # a file system without hard links: checked, then renamed
        if e.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
          raise
        if os.path.lexists(out):
          raise OutputAppeared(out) from None
        os.replace(tmp, out)
  finally:
    if os.path.exists(tmp):
      os.unlink(tmp)


def give_plain_mode(path, mode: int) -> None:
  """chmod `path` to `mode` less the umask: what a plain open() (0o666) or mkdir() (0o777) would
  have made of what mkstemp or mkdtemp made private (0600, 0700)."""
  umask = os.umask(0)  # (read by setting it: there is no other way)
  os.umask(umask)
  os.chmod(path, mode & ~umask)


def check_output_file(out: pathlib.Path, force: bool, what: str, error: Callable[[str], Exception],
                      elsewhere: str = "give another --out") -> None:
  """Before the work: refuses (error, one line) an --out that is a folder, or a file or link that
  exists without `force`; makes its folder and writes a file there and removes it, so that a
  folder that takes no file (read-only, a file in the way, full) is errors.writing's one line
  (`what`, `elsewhere`) now, not after minutes of work. The folders it made are removed again
  (write_file_beside makes them when it writes): a run that fails later leaves none."""
  import tempfile  # pylint: disable=g-import-not-at-top  (only where a file is written)
  if out.is_dir():
    raise error(f"--out {out} is a folder: give the path of a file")
  if (out.exists() or out.is_symlink()) and not force:
    raise error(f"--out {out} exists: pass --force to replace it")
  with errors.writing(what, out.parent, elsewhere):
    made = make_folders(out.parent)
    try:
      fd, probe = tempfile.mkstemp(prefix=temporary_name(out.name) + "-", dir=out.parent)
      os.close(fd)
      os.unlink(probe)
    finally:
      remove_folders(made)


def make_folders(folder: pathlib.Path) -> List[pathlib.Path]:
  """Makes `folder` and its missing parents (mkdir -p); returns those this call made, outermost
  first, for remove_folders. One mkdir each: a folder that was there (another writer's, or one
  reached through "..": `new/../kept`) is not counted as made, and those made before a mkdir
  that fails are removed again (helper-45's review)."""
  missing = []
  for path in [folder, *folder.parents]:
    if path.exists() or path.is_symlink():
      break
    missing.append(path)
  made = []
  try:
    for path in reversed(missing):
      try:
        os.mkdir(path)
      except FileExistsError:
        continue
      made.append(path)
  except BaseException:
    remove_folders(made)
    raise
  return made


def remove_folders(made: Sequence[pathlib.Path]) -> None:
  """Removes the folders make_folders made, innermost first, as long as they are empty (another
  writer's file in one keeps it and those above it)."""
  for path in reversed(made):
    try:
      path.rmdir()
    except OSError:
      return


def child_peak_rss_bytes() -> Optional[int]:
  """Peak resident memory of the largest child this process has waited for (Linux: KiB units)."""
  try:
    import resource  # pylint: disable=g-import-not-at-top  (POSIX only)
  except ImportError:
    return None
  return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
