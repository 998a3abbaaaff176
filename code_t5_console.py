"""The `code-t5` command's entry point (setup.py's console script): code_t5.cli.main.

It imports code_t5.cli itself, so that a Ctrl-C during that import (the command's first ~0.1 s,
before main() can catch it) ends the command as a Ctrl-C of it does, with status 130 and no
traceback (helper-38's audit). A module of its own, outside the package: the console script's
`from code_t5.cli import main` ran the package's import before any code of it could catch.
"""

import sys

# The exit status of a command stopped by Ctrl-C (SIGINT): 128 + 2, as code_t5.cli says it.
_INTERRUPTED = 130


def main():
  try:
    from code_t5 import cli  # pylint: disable=g-import-not-at-top
  except KeyboardInterrupt:
    if sys.stderr is not None and sys.stderr.isatty():
      print(file=sys.stderr)  # past the terminal's "^C"
    return _INTERRUPTED
  return cli.main()
