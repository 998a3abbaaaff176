"""The one error type users see: a problem with their input, said in one line.

`code-t5` prints `code-t5 <command>: <message>` and exits with status 2 for any UserError; every
module raises a subclass naming the file, flag or variable at fault and what to do about it.

`writing` turns an output that cannot be written (a read-only folder, a full disk, a quota, a
folder without permission) into a WriteError saying what, where and why: the commands that write
do so in a temporary folder that they remove on failure, so only the line is left.
"""

import contextlib
import errno
import os
import pathlib
import sys
from typing import Iterator, Optional, Union


class UserError(Exception):
  """Bad input (a path, flag, file or checkpoint); the message is one line."""


# The top-level modules of the training stack: TensorFlow 2.15 and what is built on it, installed
# on Python 3.11 alone (setup.py, scripts/bootstrap.sh).
TRAINING_STACK_MODULES = frozenset(("tensorflow", "tensorflow_text", "tensorflow_datasets", "seqio",
                                    "t5", "mesh_tensorflow", "gin"))


class TrainingStackMissing(UserError):
  """A command, or a part of one, that needs the training stack where it is not installed."""

  def __init__(self, what: str):
    python = "{}.{}".format(*sys.version_info[:2])
    if python == "3.11":
      how = "install it with scripts/bootstrap.sh (`make train-dev` runs it)"
    else:
      how = (f"it runs on Python 3.11 only (scripts/bootstrap.sh, `make train-dev`); on Python "
             f"{python} the completion engine alone is installed")
    super().__init__(f"{what} needs the training stack (TensorFlow 2.15, seqio, Mesh TF), which "
                     f"this environment lacks: {how}")


def printable(text: str) -> str:
  """Text that came from others (a model dir's paths and bindings) as a line shows it: as it is,
  or escaped where it holds a newline or another control character that would start a line of
  their choosing."""
  return text if text.isprintable() else repr(text)


class WriteError(UserError):
  """An output that cannot be written, and the errno why; the message is one line."""

  def __init__(self, message: str, number: int):
    super().__init__(message)
    self.errno = number


# A failed write the user can do something about (and EEXIST for a file that stands where the
# output or a folder above it goes, as ENOTDIR). Others (ENOENT, EEXIST, EBADF, ...) stay
# tracebacks: where this code creates and renames its own files, they would be bugs.
_NO_SPACE = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
WRITE_ERRNOS = frozenset(_NO_SPACE + (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR))


def write_failure(error: BaseException, folder: Union[str, pathlib.Path]) -> Optional[int]:
  """The errno of `error` if it is a failed write (WRITE_ERRNOS) in or of `folder`, else None.

  An OSError carries its errno and, mostly, the path (not for a write() that finds the disk
  full): a path that is neither in `folder` nor one of the folders above it (which a mkdir may
  create) was not this output's. TensorFlow's file system (tf.io, TFRecordWriter, SaveV2) raises
  its own errors (ResourceExhaustedError for a full disk, PermissionDeniedError, ...) whose
  message names the file and ends in the C library's strerror: that text is how one is
  recognised (no TensorFlow import here).
  """
  given, folder = str(folder), os.path.abspath(folder)
  if isinstance(error, OSError):
    path = None if error.filename is None else os.path.abspath(os.fsdecode(error.filename))
    number = error.errno
    if (number == errno.EEXIST and path is not None and within(folder, path)
        and not os.path.isdir(path)):
      number = errno.ENOTDIR  # a file where a folder of the output goes: pathlib's mkdir says EEXIST
    if number not in WRITE_ERRNOS:
      return None
    if path is not None and not (within(path, folder) or within(folder, path)):
      return None
    return number
  message = str(error)
  if type(error).__module__.startswith("tensorflow") and (given in message or folder in message):
    return write_errno_named(message)
  return None


def write_errno_named(message: str) -> Optional[int]:
  """The errno of WRITE_ERRNOS whose strerror `message` holds (TensorFlow's and Beam's errors,
  and a child's log line, say one so), else None."""
  return next((n for n in sorted(WRITE_ERRNOS) if os.strerror(n) in message), None)


def within(path: str, folder: str) -> bool:
  """Whether the path string `path` is `folder` or below it (as written: resolve both first where
  links may lie between)."""
  return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


@contextlib.contextmanager
def writing(what: str, folder: Union[str, pathlib.Path], elsewhere: str) -> Iterator[None]:
  """A failed write in `folder` inside the block (write_failure) becomes one WriteError line:
  "cannot write <what>: <strerror>: <what to do>", `elsewhere` saying how to write somewhere
  else (e.g. "give another --out"). An outer block rewords an inner one's error, so the line
  names what the user asked for, not a part of it."""
  try:
    yield
  except WriteError as e:
    raise WriteError(_write_message(what, e.errno, elsewhere), e.errno) from None
  except Exception as e:  # pylint: disable=broad-except  (re-raised unless write_failure says)
    number = write_failure(e, folder)
    if number is None:
      raise
    raise WriteError(_write_message(what, number, elsewhere), number) from None


def _write_message(what: str, number: int, elsewhere: str) -> str:
  fix = f"free some space there, or {elsewhere}" if number in _NO_SPACE else elsewhere
  return f"cannot write {what}: {os.strerror(number)}: {fix}"
