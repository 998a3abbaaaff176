"""Registers the project with seqio and gin: `register()`, idempotent.

What it does: imports code_t5.data.tasks and code_t5.data.mixtures (which add every task and mixture
to seqio's registries and define the `code_t5.*` gin configurables) and puts the project's
gin_configs/ on gin's search path, so `--gin_file=models/shared-prefix_lm.gin` works from any
directory; has gin import moved modules at their new paths (MOVED_MODULES); and, as the process
will build TensorFlow graphs, lets it exit without Python's last garbage collection walking them
(processes.exit_without_final_collection).

Who calls it:
- `import code_t5` (and so `--module_import=code_t5` of mesh_transformer_main and seqio's cache
  job, and Beam workers), in every process except the `code-t5` console script;
- the `code-t5` commands that need the registry or gin, just before they do: the console script
  imports no TensorFlow (~5 s) until a command needs it, so `--help` and argument errors answer
  at once.

This module itself imports nothing heavy: importing it is free, calling `register()` is not.
"""

import importlib.util
import pathlib
import threading

from code_t5 import processes


def tensorflow_installed() -> bool:
  """Whether TensorFlow can be imported here. Where it cannot (a Python newer than 3.11, whose
  install holds the completion engine alone; a GPU machine with PyTorch only), `import code_t5`
  registers nothing, so what needs no TensorFlow still runs there: the completion engine, `code-t5
  import`, the FLCC reader, scripts/export_texts.py."""
  try:
    return importlib.util.find_spec("tensorflow") is not None
  except ValueError:  # sys.modules["tensorflow"] is None: its import is blocked
    return False


def _gin_configs_folder() -> str:
  """The gin_configs/ folder: in a checkout, the one beside the package (what setup.py installs
  as code_t5.gin_configs; an editable install's finder named the installed checkout's even for
  another checkout on PYTHONPATH: helper-19's audit); in a wheel's install, the package
  code_t5.gin_configs. (Found by its spec, not importlib.resources: that import costs ~16 ms of
  every cold start.)"""
  beside = pathlib.Path(__file__).resolve().parent.parent / "gin_configs"
  if (beside / "dataset.gin").is_file():
    return str(beside)
  try:
    spec = importlib.util.find_spec("code_t5.gin_configs")
  except ModuleNotFoundError:
    spec = None
  if spec is not None and spec.submodule_search_locations:
    return str(list(spec.submodule_search_locations)[0])
  return str(beside)


# The gin_configs/ folder, as gin's search path gets it.
GIN_CONFIGS = _gin_configs_folder()

# The modules that define gin configurables, by the paths they had before the package was split
# into sub-packages by stage -> their paths now. A model dir trained before then has an
# operative_config.gin that imports them by the old paths (Mesh TF writes the imports of the gin
# files it parsed: `import code_t5.attention as code_t52`), and gin imports each module a file
# names when it parses it (`code-t5 export` of such a model dir, `--gin_file` of one): register()
# has gin import these at their new paths instead (code_t5_compat.patch_gin_for_moved_modules).
MOVED_MODULES = {
    "code_t5.line_completion_data": "code_t5.data.line_completion_data",
    "code_t5.preprocessors": "code_t5.data.preprocessors",
    "code_t5.sources": "code_t5.data.sources",
    "code_t5.tasks": "code_t5.data.tasks",
    "code_t5.attention": "code_t5.training.attention",
    "code_t5.embeddings": "code_t5.training.embeddings",
    "code_t5.losses": "code_t5.training.losses",
    "code_t5.training": "code_t5.training.training",
}

_lock = threading.RLock()  # re-entrant: a task module that called register() would not hang
_registered = False


def register() -> None:
  """Registers every seqio task and mixture and adds GIN_CONFIGS to gin's search path (once)."""
  global _registered
  if _registered:
    return
  with _lock:
    if _registered:
      return
    import gin  # pylint: disable=g-import-not-at-top
    import code_t5_compat  # pylint: disable=g-import-not-at-top
    # Registers the mixtures, and before them the tasks (imports seqio, t5 and TensorFlow).
    from code_t5.data import mixtures  # pylint: disable=g-import-not-at-top,unused-import
    from code_t5.data import tasks  # pylint: disable=g-import-not-at-top,unused-import

    gin.add_config_file_search_path(GIN_CONFIGS)
    code_t5_compat.patch_gin_for_namespace_packages()
    code_t5_compat.patch_gin_for_moved_modules(MOVED_MODULES)
    # A process that registers builds TensorFlow graphs: let it exit without walking them.
    processes.exit_without_final_collection()
    _registered = True
