"""np.savez's file (uncompressed .npy members, zip64), left alone when a write fails.

np.savez leaves its ZipFile open when a write fails (a full disk): its finalizer then tries to
finish the file after it was closed, and prints a 7-line "Exception ignored" traceback beside the
one-line error or note (helper-54's audit: `baseline`'s n-gram cache, `complete --repo`'s saved
pieces). Closing the archive instead raises while a member is open, which hid a Ctrl-C behind a
ValueError. The runtime's params.npz, the saved pieces and the n-gram cache are written here;
np.load reads them.
"""

import contextlib
import os
import zipfile
from typing import BinaryIO, Dict, Union

import numpy as np


def save(file: Union[str, os.PathLike, BinaryIO], arrays: Dict[str, np.ndarray]) -> None:
  """Writes `arrays` to `file` (a path, or a binary file open for writing) as np.savez would. If
  a write fails or is interrupted, the file is unfinished (its writer removes it)."""
  with contextlib.ExitStack() as stack:
    if isinstance(file, (str, os.PathLike)):
      file = stack.enter_context(open(file, "wb"))  # pylint: disable=consider-using-with
    archive = zipfile.ZipFile(file, "w", zipfile.ZIP_STORED, allowZip64=True)
    try:
      for key, value in arrays.items():
        with archive.open(f"{key}.npy", "w", force_zip64=True) as member:
          np.lib.format.write_array(member, np.asanyarray(value), allow_pickle=False)
    except BaseException:
      archive.fp = None  # unfinished: its close() and finalizer do nothing (the file is ours)
      raise
    archive.close()
