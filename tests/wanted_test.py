"""The imports and definitions the file's code wants (code_t5/engine/wanted.py)."""

from code_t5.engine import decoding
from code_t5.engine import wanted

PREFIX = '"""Reads files."""\nimport sys\n'
BELOW = ('\n\ndef read(path, mode="rb"):\n    with io.open(path, mode) as f:\n'
         '        return f.read()\n\n\nclass Reader:\n    def __enter__(self):\n'
         '        return self\n\n    def __exit__(self, *exc):\n        self.close()\n\n\n'
         'print(read(sys.argv[1]))\n')


def Line(text: str, score: float) -> decoding.Line:  # pylint: disable=invalid-name
  return decoding.Line(text, score, tokens=1)


def _binds(line: str, prefix: str = PREFIX, below: str = BELOW) -> bool:
  return wanted.Wanted(prefix, below).binds(line)


def test_an_import_binding_a_name_the_file_reads_and_nothing_binds_is_wanted():
  assert _binds("import io")
  assert _binds("from io import open as io_open, BytesIO as io")
  assert _binds("io", PREFIX + "import ")  # the typed part counts
  assert not _binds("import os")  # nothing reads os
  assert not _binds("import sys")  # an import binds it already
  assert not _binds("io.open(path)")  # neither an import nor a definition
  # Names the file binds itself (a parameter, a with target, a def) or mentions only in strings
  # and comments are not wanted.
  for name in ("path", "mode", "f", "read"):
    assert not _binds(f"import {name}"), name
  assert not _binds("import json", below=BELOW + 'x = "json"  # json\n')
  assert not _binds("import csv", below=BELOW + "csv = None\nprint(csv)\n")
  # An import inside brackets over several lines binds its names too.
  assert not _binds("import io", below=BELOW + "from io import (\n    BytesIO,\n    io,\n)\n")


def test_a_definition_of_a_name_the_file_reads_and_nothing_binds_is_wanted():
  assert _binds("def close(self):", "class Reader:\n    ")
  assert _binds("lose(self):", "class Reader:\n    def c")
  assert not _binds("def write(self):", "class Reader:\n    ")  # nothing reads `write`
  assert not _binds("def read(self):", "class Reader:\n    ")  # read is defined
  assert not _binds("(self):", "class Reader:\n    def close")  # typed whole: all lines say it


def test_wanted_lines_go_first_among_near_equals():
  lines = [Line("import os", -1.0), Line("import warnings", -2.0), Line("import io", -4.5),
           Line("import json", -4.6)]
  assert [l.text for l in wanted.first(lines, PREFIX, BELOW)] == [
      "import os", "import io", "import warnings", "import json"]  # -4.5 + 3 beats -2.0, not -1.0
  # Without a wanted line, the order stands (even where the scores are not sorted).
  unsorted = [Line("import os", -2.0), Line("import json", -1.0)]
  assert wanted.first(unsorted, PREFIX, "") == unsorted


def test_a_target_the_file_reads_and_nothing_binds_is_wanted():
  # Where code below reads what the cursor's line is to bind: a middle line filled in.
  below = "    return header + body\n"
  prefix = "def page(body):\n    "
  assert _binds('header = "<h1>"', prefix, below)
  assert _binds('header, footer = "<h1>", ""', prefix, below)
  assert not _binds('body = "<p>"', prefix, below)  # a parameter binds it
  assert not _binds("print(header)", prefix, below)  # reads it, binds nothing
  assert _binds("for header in heads: pass", prefix, below)
  assert _binds("with open(path) as header: pass", prefix, below)
  # An attribute of self that the file reads and never assigns; not another object's attribute.
  prefix = "class Page:\n    def __init__(self):\n        "
  below = "\n    def render(self):\n        return self.title.upper()\n"
  assert _binds('self.title = "x"', prefix, below)
  assert not _binds('page.title = "x"', prefix, below)
  assert not _binds("self.other = 1", prefix, below)


def test_a_parameter_on_a_line_of_its_own_is_bound():
  # A def's parameters over several lines (PIL's ImageDraw2.py): `brush` is bound below.
  prefix = "def arc(\n    self,\n    "
  below = "    end: float,\n    brush: Brush | None = None,\n) -> None:\n    return brush\n"
  assert not _binds("brush: Brush | None = None,", prefix, below)


def test_words_of_docstrings_and_comments_are_not_read():
  below = ('\n\ndef load(path):\n    """Loads the json text at path.\n\n    Uses json.\n    """\n'
           '    return parse(path)  # like json.load\n')
  assert not _binds("import json", PREFIX, below)
  assert _binds("import json", PREFIX, below + "\n\nprint(json.dumps({}))\n")


def test_the_cursors_line_may_open_a_docstring():
  # PIL's GdImageFile.py:26, where the line is a class's docstring opener: the lines below
  # start inside it, and `format = "GD"` after it binds `format`.
  prefix = "from . import ImageFile\n\n\nclass GdImageFile(ImageFile.ImageFile):\n    "
  below = ('    Image plugin for the GD uncompressed format.\n    """\n\n    format = "GD"\n\n'
           '    def _open(self):\n        """Reads the header."""\n        return self.format\n')
  assert not _binds('format = "GBR"', prefix, below)
