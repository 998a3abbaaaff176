"""Near-copies of held-out files: which held-out files a training file holds most of.

A model trained on a file that holds most of a held-out file's lines has, in effect, read the
held-out file: vendored or backported modules do that (the site-packages corpus's `future`
distribution carries backports of dataset-dev's socketserver and urllib; docs/data.md,
"dataset-dev"). A file is judged by its distinct *long* lines (stripped, more than MIN_CHARS
characters): short lines such as `else:` or `return None` are in every project.

`HeldOutLines` indexes the long lines of the held-out files once; `shares(text)` gives, for a
training file's text, the share of each held-out file's long lines it holds. The reader's
`Filters.held_out_roots` drops the training files that hold at least `held_out_min_share` of some
held-out file's long lines (code_t5.data.flcc); scripts/held_out_copies.py reports such pairs.
"""

import collections
from typing import Dict, Iterable, List, Tuple

MIN_CHARS = 25
# A file with fewer long lines than this cannot be judged: two shared licence lines would be
# "two thirds" of a six-line module.
MIN_LONG_LINES = 10


def long_lines(text: str) -> frozenset:
  """The distinct stripped lines of `text` longer than MIN_CHARS characters."""
  return frozenset(line.strip() for line in text.splitlines() if len(line.strip()) > MIN_CHARS)


class HeldOutLines:
  """The long lines of held-out files, each file named by a key (e.g. "repo:path")."""

  def __init__(self, files: Iterable[Tuple[str, str]]):
    """`files`: (key, text) pairs; files with fewer than MIN_LONG_LINES long lines are left out."""
    self.sizes: Dict[str, int] = {}
    self._owners: Dict[str, List[str]] = collections.defaultdict(list)
    for key, text in files:
      lines = long_lines(text)
      if len(lines) < MIN_LONG_LINES:
        continue
      self.sizes[key] = len(lines)
      for line in lines:
        self._owners[line].append(key)

  def __len__(self) -> int:
    return len(self.sizes)

  def shares(self, text: str) -> Dict[str, float]:
    """For each held-out file sharing a long line with `text`, the share of its long lines that
    `text` holds."""
    counts = collections.Counter()
    for line in long_lines(text):
      counts.update(self._owners.get(line, ()))
    return {key: count / self.sizes[key] for key, count in counts.items()}

  def copied(self, text: str, min_share: float):
    """(the held-out file `text` holds the largest share of, that share) if the share is at least
    `min_share`, else None."""
    shares = self.shares(text)
    if not shares:
      return None
    key = max(shares, key=lambda k: (shares[k], k))
    return (key, shares[key]) if shares[key] >= min_share else None
