"""undefined: a completed line that reads a name nothing binds where it stands (by pyflakes)."""

import pytest

from code_t5.engine import undefined
from code_t5.engine import wanted

ABOVE = ("import os\n"
         "from typing import Any\n"
         "\n"
         "def other(k):\n"
         "    return k\n"
         "\n"
         "@property\n"
         "def decorated():\n"
         "    pass\n"
         "\n"
         "class A:\n"
         "    limit = 3\n"
         "\n"
         "    def f(self, key):\n"
         "        values = [v for v in range(3)]\n")
BELOW = ("        return key\n"
         "\n"
         "def later():\n"
         "    global COUNTER\n"
         "    COUNTER = 1\n")


def _reads(line, typed=8, above=ABOVE, below=BELOW):
  return undefined.UndefinedNames(wanted.Wanted(above + line[:typed], below)).read_by(line, typed)


@pytest.mark.parametrize("line", [
    "        x = other(key)",  # a function of the module, a parameter of its own
    "        x = os.path.join(key, decorated, later, COUNTER)",  # imports, defs, a global's name
    "        x: Any = len(self.limit)",  # builtins, self, an annotation's import
    "        x = [key for key in values]",  # a comprehension's own name
    "        x = A",  # the class around it
])
def test_names_bound_where_the_line_stands_are_read_quietly(line):
  assert not _reads(line)


@pytest.mark.parametrize("line", [
    "        x = other(k)",  # another function's parameter (jsonpickle's unpickler.py)
    "        x = limit",  # the class body's name, not seen from its methods
    "        x = v",  # the comprehension's name, not the function's
    "        return response",  # nothing binds it (urllib/request.py)
])
def test_a_name_nothing_binds_where_the_line_stands_is_read(line):
  assert _reads(line)


def test_only_the_part_the_engine_wrote_is_judged():
  # `nope` typed whole by the user is theirs; completed from `no`, it is the engine's.
  assert not _reads("        x = nope(key)", typed=len("        x = nope"))
  assert _reads("        x = nope(key)", typed=len("        x = no"))
  assert _reads("        x = nope(key)", typed=len("        x = "))


def test_a_line_that_does_not_parse_where_it_stands_is_not_judged():
  # A header over the method's next statement (no deeper body), a bracket left open.
  assert not _reads("        if undefined_name:")
  assert not _reads("        x = f(undefined_name,")


def test_a_block_too_large_to_read_quickly_is_not_judged():
  methods = "".join(f"    def m{k}(self):\n        return {k}\n\n" for k in range(1500))
  above = "class Big:\n" + methods + "    def f(self):\n"
  assert len(above) > undefined.MAX_CHARS
  assert not _reads("        return response", above=above, below="")
  assert _reads("        return response", above="class Small:\n    def f(self):\n", below="")


def test_module_level_lines_and_star_imports():
  assert _reads("x = undefined_name", typed=0, above="import os\n", below="")
  assert not _reads("x = os.sep", typed=0, above="import os\n", below="")
  # A name a star import may bind is not reported as undefined.
  assert not _reads("x = sep", typed=0, above="from os import *\n", below="")


def test_no_target_of_dataset_dev_reads_a_name_nothing_binds(dev_points):
  # Every completion point of dataset-dev's files, its target the completed line: code that runs
  # reads no name that nothing binds, so the engine never hides it for that. (At 7,928 points of
  # the site-packages corpus's test split one did: apache_beam's
  # pytorch_image_classification_with_side_inputs.py annotates with `Any` and never imports it.)
  judged = 0
  for point, prefix, target, below in dev_points:
    head = prefix[prefix.rfind("\n") + 1:]
    names = undefined.UndefinedNames(wanted.Wanted(prefix, below))
    assert not names.read_by(head + target, len(head)), (point.path, point.line)
    judged += 1
  assert judged > 2000


# A class whose other methods, decorated, come above and below the cursor's: they are read as
# stubs, their names and decorators kept, their bodies (and the names they bind) gone.
_CLASS_ABOVE = ("import functools\n"
                "\n"
                "class B:\n"
                "    @functools.lru_cache(\n"
                "        maxsize=None)\n"
                "    def first(self, item):\n"
                "        found = item\n"
                "        return found\n"
                "\n"
                "    @property\n"
                "    def size(self):\n"
                "        return 1\n"
                "\n"
                "    def g(self, key):\n")
_CLASS_BELOW = ("        return key\n"
                "\n"
                "    @staticmethod\n"
                "    def last(value):\n"
                "        later = value\n"
                "        return later\n")


@pytest.mark.parametrize("line, unbound", [
    ("        return found", True),  # another method's local, above
    ("        return later", True),  # another method's local, below
    ("        return self.first(key), self.size, functools", False),
    ("        return first", True),  # a method's name is no bare name in its class's methods
])
def test_the_other_methods_of_the_cursors_class_are_read_as_their_names(line, unbound):
  names = undefined.UndefinedNames(wanted.Wanted(_CLASS_ABOVE + line[:8], _CLASS_BELOW))
  assert names.read_by(line, 8) is unbound
  # What pyflakes reads: the cursor's method whole, the others one line each, decorators kept.
  above, below = names._reduce(True)  # pylint: disable=protected-access
  assert "    def first(): pass\n" in above and "found = item" not in above
  assert "    @functools.lru_cache(\n        maxsize=None)\n" in above
  assert "    def last(): pass\n" in below and "later = value" not in below
  assert above.endswith("    def g(self, key):\n") and below.startswith("        return key\n")
