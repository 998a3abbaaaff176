"""np.savez's file (uncompressed .npy members, zip64), closed even when a write fails.

np.savez leaves its ZipFile open when a write fails (a full disk): its finalizer then tries to
finish the file after it was closed, and prints a 7-line "Exception ignored" traceback beside the
one-line error or note (helper-54's audit: `baseline`'s n-gram cache, `complete --repo`'s saved
pieces). The runtime's params.npz, the saved pieces and the n-gram cache are written here; np.load
reads them.
"""

import pathlib
import zipfile
from typing import BinaryIO, Dict, Union

import numpy as np


def save(file: Union[pathlib.Path, BinaryIO], arrays: Dict[str, np.ndarray]) -> None:
  """Writes `arrays` to `file` (a path, or a binary file open for writing) as np.savez would."""
  with zipfile.ZipFile(file, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
    for key, value in arrays.items():
      with archive.open(f"{key}.npy", "w", force_zip64=True) as member:
        np.lib.format.write_array(member, np.asanyarray(value), allow_pickle=False)
