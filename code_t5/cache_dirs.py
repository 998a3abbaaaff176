"""Where the project keeps what it can build again: the one folder all its caches live under.

$CODE_T5_CACHE, else $XDG_CACHE_HOME/code_t5, else ~/.cache/code_t5; each cache is a folder of
its own inside it: `ngram` (code_t5.evaluation.baseline's fitted n-grams), `prepared`
(code_t5.data.sources' prepared shards), `pieces` (code_t5.engine.saved_pieces: a repository's
files as the model's pieces). Deleting any of them costs only the time to build it again.
"""

import os
import pathlib
import re


def root() -> pathlib.Path:
  if os.environ.get("CODE_T5_CACHE"):
    return pathlib.Path(os.environ["CODE_T5_CACHE"]).expanduser()
  cache = os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache"
  return pathlib.Path(cache).expanduser() / "code_t5"


def entry_name(name: str) -> str:
  """A cache entry's name from a root folder's name: only ASCII letters, digits and `._-`, at most
  64 characters (the entry's key, appended to it, tells roots apart). A root named `bad\\xffname`
  stopped TensorFlow's file writers and a 240-character name made a file name too long."""
  return re.sub(r"[^A-Za-z0-9._-]", "_", name)[:64]
