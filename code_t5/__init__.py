"""code_t5: T5 models for full-line code completion on FLCC Python repositories.

`import code_t5` (or `--module_import=code_t5`) registers the seqio tasks and mixtures and puts
the project's gin_configs/ on gin's search path, so `--gin_file=models/shared-prefix_lm.gin` works
from any directory (code_t5/registration.py).

Except in the `code-t5` console script (and `python -m code_t5.cli`): there, importing the
package (and code_t5.cli) imports nothing heavy, so `--help` and argument errors answer at once,
and each command calls `registration.register()` itself when it needs the registry or gin
(importing seqio and TensorFlow, ~5 s). Its subprocesses (mesh_transformer_main, Beam workers)
are other programs and register.
"""

import code_t5_compat
from code_t5 import registration

GIN_CONFIGS = registration.GIN_CONFIGS


def _in_console_script() -> bool:
  """Whether this process is the `code-t5` command: setup.py's console script, or
  `python -m code_t5.cli` (runpy imports this package while sys.argv[0] is still "-m"; the
  interpreter's own command line, sys.orig_argv, names the module)."""
  return code_t5_compat.started_as(code_t5_compat.CONSOLE_SCRIPT, code_t5_compat.CONSOLE_MODULE)


if not _in_console_script() and registration.tensorflow_installed():
  registration.register()
