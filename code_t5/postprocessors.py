"""Postprocessors: how decodes and targets are written to Mesh TF's eval files.

Mesh TF writes one decode per line and replaces "\n" by " " (utils.write_lines_to_file), which
would lose exactly what code completion is about. Tasks therefore postprocess both targets and
predictions into JSON string literals: one line each, reversible, and readable. Metrics decode them.
"""

import json


def to_json_line(text, example=None, is_target=False):
  """Turns decoded text (str or bytes) into a one-line JSON string literal."""
  del example, is_target
  if isinstance(text, bytes):
    text = text.decode("utf-8", errors="replace")
  return json.dumps(text, ensure_ascii=False)


def from_json_line(line: str) -> str:
  """Inverse of to_json_line, for lines read back from eval files."""
  return json.loads(line)
