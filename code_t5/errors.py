"""The one error type users see: a problem with their input, said in one line.

`code-t5` prints `code-t5 <command>: <message>` and exits with status 2 for any UserError; every
module raises a subclass naming the file, flag or variable at fault and what to do about it.
"""


class UserError(Exception):
  """Bad input (a path, flag, file or checkpoint); the message is one line."""
