"""scopes: a `def`/`class` line that its block already defines (ranked last by the engine)."""

import pathlib
import re

import pytest

from code_t5.engine import scopes

DEV_DATASET = pathlib.Path(__file__).resolve().parent.parent / "dataset-dev"

CLASS = "class Case:\n    def setUp(self):\n        self.x = 1\n\n    "


@pytest.mark.parametrize("prefix,line,below,expected", [
    (CLASS, "def setUp(self):", "", True),  # unittest/case.py: setUp again where tearDown is due
    (CLASS, "def tearDown(self):", "", False),
    (CLASS + "def ", "setUp(self):", "", True),  # typed part of the line counts
    (CLASS, "async def setUp(self):", "", True),
    ("class A:\n    ", "def run(self):", "\n    def close(self):\n        pass\n"
     "    def run(self):\n        pass\n", True),  # defined below the cursor
    # another block: another class, a nested function, an `else:` branch
    ("class A:\n    def f(self):\n        pass\nclass B:\n    ", "def f(self):", "", False),
    ("def outer():\n    def f():\n        pass\n    return f\n\n", "def f():", "", False),
    ("if WINDOWS:\n    def f():\n        pass\nelse:\n    ", "def f():", "", False),
    ("class A:\n    ", "def f(self):", "\n    x = 1\nclass B:\n    def f(self):\n        pass\n",
     False),
    # some decorators make real redefinitions: a property's setter, overloads, dispatch
    ("class A:\n    @property\n    def x(self):\n        pass\n\n    @x.setter\n    ",
     "def x(self, value):", "", False),
    ("@overload\ndef f(x: int) -> int: ...\n", "def f(x):", "", False),
    ("@typing.overload\ndef f(x: int) -> int: ...\n@typing.overload\n", "def f(x: str) -> str: ...",
     "", False),
    ("@f.register\ndef _(x: int):\n    pass\n@f.register\n", "def _(x: str):", "", False),
    # so do a registry's or a cache's decorators (tests that define `f` again and again), and
    # one whose arguments take several lines, which is not read
    ("@memory.cache\ndef f(x):\n    pass\n\n@memory.cache\n", "def f(x):", "", False),
    ("@pytest.mark.parametrize(\n    'x', [1]\n)\ndef test_f(x):\n    pass\n", "def test_f(x):", "",
     False),
    # a property, a static or class method does not: urllib/parse.py's `username` again where
    # `password` is due
    ("class A:\n    @property\n    def username(self):\n        pass\n\n    @property\n    ",
     "def username(self):", "", True),
    ("class A:\n    @staticmethod\n    def f():\n        pass\n\n    ", "def f(self):", "", True),
    # a `)` deeper than the def ends the block above, not a decorator (PIL's ImageText.py)
    ("class A:\n    def _get_bbox(self):\n        return f(\n            1,\n        )\n\n    ",
     "def _get_bbox(self):", "", True),
    ("class A:\n    ", "def f(cls):",
     "\n    @classmethod  # the factory\n    def f(cls):\n        pass\n", True),
    ("def f():\n    pass\n", "f()", "", False),  # not a definition
    ("def f():\n    pass\n", "x = 1", "", False),
])
def test_redefines(prefix, line, below, expected):
  assert scopes.Definitions(prefix, below).redefines(line) == expected


def test_one_cursor_judges_many_lines_at_several_indentations():
  definitions = scopes.Definitions(CLASS, "\n    def tearDown(self):\n        pass\n")
  assert [definitions.redefines(line) for line in (
      "def setUp(self):", "def tearDown(self):", "def run(self):", "x = 1",
      "    def setUp(self):")] == [True, True, False, False, False]


@pytest.mark.parametrize("prefix, line, expected", [
    # helper-22's audit: taken whole from another file into a plain function.
    ("def f(line):\n    reason = ", "self._judge(line)", True),
    ("x = ", "self.y", True),  # module level
    ("class A:\n    x = ", "self.y", True),  # a class body
    ("class A:\n    @classmethod\n    def f(cls):\n        y = ", "self.x", True),
    ("class A:\n    def f(self, x):\n        y = ", "self.x", False),
    ("class A:\n    def f(self, x):\n        def g():\n            return ", "self.x", False),
    ("class A:\n    def f(self):\n        y = ", "other.self_test()", False),  # not the name
    ("class A:\n    ", "def tearDown(self):", False),  # a method's header takes it
    ("class A:\n    def ", "__init__(self, name):", False),
    ("def f(x):\n    self = ", "self", False),  # typed: the user's call
    # Not read with confidence: the parameters over two lines; a string's text at the margin.
    ("class A:\n    def f(\n        self):\n        y = ", "self.x", False),
    ("class A:\n    def f(self):\n        s = '''\nfoo\n'''\n        y = ", "self.x", False),
])
def test_a_line_reading_self_where_no_function_around_takes_it(prefix, line, expected):
  assert scopes.Definitions(prefix, "").reads_absent_self(line) == expected


def test_no_definition_of_dataset_dev_redefines_one_of_its_block():
  # Every def and class header of dataset-dev's files, as the line at its own indentation: code
  # that runs, so the engine never ranks it last for this. (In 77,783 headers of 4,000 files of
  # the site-packages corpus, 68 did, all without decorators: code examples in docstrings, and
  # tests that define a local function again.)
  from code_t5.data import flcc  # pylint: disable=g-import-not-at-top
  headers = 0
  for source in flcc.read_files(DEV_DATASET):
    text = source.text
    for match in re.finditer(r"^[ \t]*((?:async[ \t]+)?(?:def|class)[ \t]+\w.*)$", text, re.M):
      below = text[match.end() + 1:]
      assert not scopes.Definitions(text[:match.start(1)], below).redefines(match.group(1)), (
          source.path, match.group(1))
      headers += 1
  assert headers > 8000
