"""Tests for code_t5.engine.namespaces: which function, class body or method holds a position."""

from code_t5.engine import docstrings
from code_t5.engine import namespaces

_FILE = '''import os

LIMIT = 3


def top(a):
    """Its docstring.

def not_a_header(): its text at column 0
"""
    return a


class Suite:
    size = 2

    def run(self, result,
            debug=False):
        return result

    @property
    def debug(self):
        return 1


if os.name == "nt":
    def windows():
        return 2
'''


def _namespaces(text):
  return namespaces.Namespaces(text, docstrings.Docstrings("", text))


def _span_of(text, word, occurrence=0, outside=None):
  position = -1
  for _ in range(occurrence + 1):
    position = text.index(word, position + 1)
  found = _namespaces(text).of(position, outside)
  return found if found == namespaces.MODULE else text[found[0]:found[1]]


def test_each_position_is_in_its_function_method_or_class_body():
  text = _FILE
  assert _span_of(text, "LIMIT") == namespaces.MODULE
  top = _span_of(text, "return a")
  assert top.startswith("def top(a):") and top.rstrip().endswith("return a")
  # A line at column 0 in a docstring ends no function.
  assert _span_of(text, "not_a_header") == top
  assert _span_of(text, "size = 2").startswith("class Suite:")
  # A method's parameters over lines, its closing bracket at its column, are its own.
  run = _span_of(text, "debug=False")
  assert run.lstrip().startswith("def run(") and run.rstrip().endswith("return result")
  # A method starts at its header, after its decorator (a line of the class body).
  assert _span_of(text, "return 1").lstrip().startswith("def debug(self):")
  # Under a top-level `if`, a def is the module's (not a namespace of its own).
  assert _span_of(text, "return 2") == namespaces.MODULE


def test_the_name_a_header_defines_is_bound_around_it():
  text = _FILE
  header = text.index("def top")
  assert _span_of(text, "top", outside=header) == namespaces.MODULE
  method = text.index("    def debug")
  assert _span_of(text, "debug(self)", outside=method).startswith("class Suite:")
  assert _span_of(text, "debug(self)").lstrip().startswith("def debug(self):")
