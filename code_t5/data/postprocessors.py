"""Postprocessors: how decodes and targets are written to Mesh TF's eval files.

Mesh TF writes one decode per line and replaces "\n" by " " (utils.write_lines_to_file), which
would lose exactly what code completion is about. Tasks therefore postprocess both targets and
predictions into JSON string literals: one line each, reversible, and readable. Metrics decode them.
"""

import json

# A decode file holds a JSON string a line, about 50 bytes a point: 16 MB is some 300,000 points.
# Read line by line, such a file is at most about 270 MB of Python strings (17 bytes of memory a
# byte of file, for lines of one character past Latin-1), and `code-t5 baseline` reads two:
# targets and predictions, no more of these than of those.
MAX_DECODES_BYTES = 16 << 20


def to_json_line(text, example=None, is_target=False):
  """Turns decoded text (str or bytes) into a one-line JSON string literal."""
  del example, is_target
  if isinstance(text, bytes):
    text = text.decode("utf-8", errors="replace")
  return json.dumps(text, ensure_ascii=False)


def from_json_line(line: str) -> str:
  """Inverse of to_json_line, for lines read back from eval files."""
  return json.loads(line)


def first_line(text: str) -> str:
  """A decode up to its first "\\n": a line completion ends where its line ends.

  Mesh TF decodes until EOS or the maximum decode length, so a model trained on whole files
  (prefix LM) goes on past the line; what it wrote after the first newline is not its answer.
  """
  return text.split("\n", 1)[0]


def line_to_json_line(text, example=None, is_target=False):
  """to_json_line of the first line of a decode (targets, the rest of one line, pass unchanged)."""
  del example
  if isinstance(text, bytes):
    text = text.decode("utf-8", errors="replace")
  return to_json_line(text if is_target else first_line(text))
