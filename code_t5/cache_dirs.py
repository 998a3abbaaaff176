"""Where the project keeps what it can build again: the one folder all its caches live under.

$CODE_T5_CACHE, else $XDG_CACHE_HOME/code_t5, else ~/.cache/code_t5; each cache is a folder of
its own inside it: `ngram` (code_t5.evaluation.baseline's fitted n-grams), `prepared`
(code_t5.data.sources' prepared shards), `pieces` (code_t5.engine.saved_pieces: a repository's
files as the model's pieces). Deleting any of them costs only the time to build it again.
"""

import os
import pathlib


def root() -> pathlib.Path:
  if os.environ.get("CODE_T5_CACHE"):
    return pathlib.Path(os.environ["CODE_T5_CACHE"]).expanduser()
  cache = os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache"
  return pathlib.Path(cache).expanduser() / "code_t5"
