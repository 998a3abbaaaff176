"""An index of a repository's files kept per path, its merged tables rebuilt when needed.

The engine's repository indexes (line_retrieval.LineIndex, similar_code.WindowIndex) keep what
they read of each file by path, so that a file can be left out (the cursor's own, whose editor
text is read instead) and updated as the editor saves it (`add`, `remove`); what a look-up reads
is merged from all files on the first look-up (similar_code.WindowIndex then merges the files
changed since on their own, FRESH_SHARE; LineIndex keeps its merged counts up to date on each
change). Thread-safe.
"""

import threading
from typing import Any, Dict

# Files changed after a repository's whole index was built (an editor's saves) are indexed on
# their own, beside it, the whole index's entries of them left out, until they hold more than
# this share of it: a save in numpy's 489 files then costs its file, not the 0.27 s of the copy
# cache's pieces and 0.14 s of the similar code's windows again (copy_cache.RepositoryIndex,
# similar_code.WindowIndex).
FRESH_SHARE = 1 / 8


class PathIndex:
  """`add`/`remove` per path; a subclass says what it keeps of a file (`_entry`) and rebuilds
  `_merged` (under `_lock`) when it is None, or says what a change leaves out of date
  (`_note_change`)."""

  def __init__(self):
    self._files: Dict[str, Any] = {}
    self._lock = threading.Lock()
    self._merged = None

  def _entry(self, text: str):
    raise NotImplementedError

  def add(self, path: str, text: str) -> None:
    with self._lock:
      self._files[path] = self._entry(text)
      self._note_change(path)

  def remove(self, path: str) -> None:
    with self._lock:
      if self._files.pop(path, None) is not None:
        self._note_change(path)

  def _note_change(self, path: str) -> None:  # pylint: disable=unused-argument
    """Under the lock, after `path` was added, changed or removed: what was merged is stale."""
    self._merged = None

  def __len__(self) -> int:
    return len(self._files)
