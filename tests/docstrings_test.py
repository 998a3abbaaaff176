"""Where a file's docstrings are around the cursor's line (code_t5/engine/docstrings.py)."""

from code_t5.engine import docstrings
from code_t5.engine import line_filters


def _misplaces_docstring(line: str, prefix: str, below: str) -> bool:
  above = prefix[:prefix.rfind("\n") + 1]
  return docstrings.Docstrings(above, below).misplaced(line)


def test_triple_quotes_that_open_a_docstring_over_code_are_misplaced():
  # PIL's IcnsImagePlugin.py: the line was `start, length = start_length`, the model's a lone
  # triple quote, which would make the code below a string.
  prefix = "def read_png(fobj, start_length):\n"
  below = "    fobj.seek(start)\n    return fobj.read(length)\n"
  assert _misplaces_docstring('    """', prefix, below)
  assert not _misplaces_docstring('    """Reads a PNG."""', prefix, below)
  assert not _misplaces_docstring("    start, length = start_length", prefix, below)
  # Where the lines below are the docstring's (the line opens it), the opener is right and a
  # docstring closed on the line is not.
  below = '    Reads a PNG.\n    """\n    return fobj.read()\n'
  assert not _misplaces_docstring('    """', prefix, below)
  assert _misplaces_docstring('    """Reads it."""', prefix, below)


def test_triple_quotes_must_close_the_docstring_the_lines_above_opened():
  prefix = 'def f():\n    """Reads it.\n\n'
  below = "    return 1\n"
  assert not _misplaces_docstring('    """', prefix, below)
  assert not _misplaces_docstring('    The rest."""', prefix, below)
  assert _misplaces_docstring('    """Another."""', prefix, below)  # leaves it open
  # A line of text is not judged: the user may be writing the docstring, its closer not yet
  # typed.
  assert not _misplaces_docstring("    More text.", prefix, below)
  # Quotes of the other kind inside the docstring close nothing (pyparsing's actions.py).
  prefix = "def f():\n    \"\"\"Example:\n\n       html = '''\n"
  below = "       '''\n    \"\"\"\n    return 1\n"
  assert not _misplaces_docstring("       <div>'''", prefix, below.split("\n", 1)[1])
  assert not _misplaces_docstring("       '''", prefix, below.split("\n", 1)[1])


def test_triple_quotes_inside_other_strings_and_comments_delimit_nothing():
  prefix = "def f(src):\n    quote = '\"\"\"'  # or \"\"\"\n"
  below = "    return src.startswith(quote)\n"
  assert _misplaces_docstring('    """', prefix, below)
  assert not _misplaces_docstring("    n = '\"\"\"'", prefix, below)
  # Prose read as code leaves one-line strings open: the lines below are the docstring's.
  prefix = "def f():\n"
  below = "    Returns the file's name.\n    \"\"\"\n    return name\n\n\ndef g():\n    return 2\n"
  assert not _misplaces_docstring('    """', prefix, below)
  assert _misplaces_docstring('    """Returns the name."""', prefix, below)


def test_no_target_of_dataset_dev_misplaces_a_docstring(dev_points):
  # Every completion point of dataset-dev's files whose target holds triple quotes, the target
  # as the candidate: none misplaces a docstring (nor did any of the 180 such targets among
  # 5,276 points of the site-packages corpus's validation and test splits).
  judged = 0
  for point, prefix, target, below in dev_points:
    if '"""' in target or "'''" in target:
      line = prefix[prefix.rfind("\n") + 1:] + target
      assert not _misplaces_docstring(line, prefix, below), (point.path, point.line)
      judged += 1
  assert judged > 50


def test_inside_tells_docstring_text_from_code_on_both_sides_of_the_cursors_line():
  above = 'x = 1\n"""Opened above.\n'
  below = 'Its text below.\n"""\ny = 2\n'
  strings = docstrings.Docstrings(above, below)
  text = above + below
  assert strings.below_inside
  assert strings.inside(text.index("Opened")) and strings.inside(text.index("Its text"))
  assert not strings.inside(text.index("x = 1")) and not strings.inside(text.index("y = 2"))
  # Below code alone, the cursor's line closes it; below a closed one, that text is the
  # docstring the cursor's line opens.
  assert not docstrings.Docstrings(above, "y = 2\n").below_inside
  assert docstrings.Docstrings("x = 1\n", below).below_inside


def test_at_the_files_end_an_opener_alone_starts_a_docstring():
  # Nothing below: the user is writing a new function, its docstring's closer not typed yet.
  assert not _misplaces_docstring('    """', "def main(argv):\n", "")
  assert not _misplaces_docstring('    """', "def main(argv):\n", "\n\n")
  assert _misplaces_docstring('    """', "def main(argv):\n", "    return 0\n")


def test_a_line_of_code_above_a_docstrings_text_leaves_it_unopened():
  # apache_beam's ml/rag/chunking/__init__.py: the line was the module docstring's opener, the
  # model's `from __future__ import annotations`, which leaves the text below to be read as code.
  below = 'Chunking components for RAG pipelines.\n"""\n\nfrom x import y\n'
  strings = docstrings.Docstrings("", below)
  assert strings.unopened("from __future__ import annotations")
  assert not strings.unopened('"""')  # triple quotes: `misplaced` judges those
  assert not strings.misplaced('"""')
  # Where the lines above opened the string, the cursor's line is its text.
  assert not docstrings.Docstrings('"""Chunking.\n', below).unopened("More text.")
  # Code below, or nothing: there is nothing to open.
  for below in ["import os\n", "", "\n\n"]:
    assert not docstrings.Docstrings("", below).unopened("from __future__ import annotations")


def test_no_target_of_dataset_dev_leaves_a_docstring_unopened(dev_points):
  # Every completion point of dataset-dev's files where a whole statement starts on the line and
  # its target holds no triple quotes: none leaves the lines below in a string nothing opens
  # (nor did any of the 5,276 points of the site-packages corpus's validation and test splits).
  judged = 0
  for point, prefix, target, below in dev_points:
    where = line_filters.LineContext.of(prefix, "", below)
    if not where.starts_statement() or where.code_of(target) is None or where.leaves_open(target):
      continue
    above = prefix[:prefix.rfind("\n") + 1]
    assert not docstrings.Docstrings(above, below).unopened(where.completed(target)), (
        point.path, point.line)
    judged += 1
  assert judged > 1000
