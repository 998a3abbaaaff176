"""scripts/make_dev_dataset.py: FLCC layout, comment stripping, determinism and safe output."""

import ast
import io
import json
import pathlib
import re
import subprocess
import sys
import sysconfig
import tokenize

import pytest

from code_t5 import processes
from code_t5 import test_utils
from code_t5.data import flcc

STDLIB = pathlib.Path(sysconfig.get_paths()["stdlib"])


make_dev_dataset = test_utils.load_script("make_dev_dataset")

COMMENTED = '''\
#!/usr/bin/env python3
# -*- coding: utf-8 -*-
"""Module docstring # not a comment."""

import os  # trailing comment

def f(x):
    # comment-only line, indented
    \'\'\'Docstring.\'\'\'
    s = "# in a string"
    return (x +  # inside brackets
            1)\t# tab before

# last line, no newline'''

NORMALIZED = '''\
"""Module docstring # not a comment."""

import os

def f(x):
    \'\'\'Docstring.\'\'\'
    s = "# in a string"
    return (x +
            1)

'''


def test_normalize_drops_comments_and_comment_lines_and_keeps_the_rest():
  assert make_dev_dataset.normalize(COMMENTED.encode()) == NORMALIZED.encode()


def test_normalize_keeps_crlf_line_endings():
  assert make_dev_dataset.normalize(b"x = 1  # one\r\n# two\r\ny = 2\r\n") == b"x = 1\r\ny = 2\r\n"


@pytest.mark.parametrize("source", [
    b"def f(:\n    '''never closed\n",  # does not tokenize
    b"x = '\xe9'  # latin-1\n",  # not UTF-8
])
def test_normalize_keeps_files_it_cannot_tokenize_unchanged(source):
  assert make_dev_dataset.normalize(source) == source


@pytest.mark.parametrize("module", ["json/encoder.py", "heapq.py", "asyncio/locks.py", "shlex.py"])
def test_normalize_keeps_the_syntax_tree_of_real_modules(module):
  source = (STDLIB / module).read_bytes()
  normalized = make_dev_dataset.normalize(source)
  assert ast.dump(ast.parse(normalized)) == ast.dump(ast.parse(source))
  tokens = tokenize.tokenize(io.BytesIO(normalized).readline)
  assert not any(t.type == tokenize.COMMENT for t in tokens)
  assert len(normalized) < len(source)


@pytest.fixture
def fake_stdlib(tmp_path):
  """A small stand-in for the stdlib, with the cases the plan has to handle."""
  stdlib = tmp_path / "stdlib"
  files = {
      "alpha/__init__.py": "# license\n\"\"\"Alpha.\"\"\"\n",
      "alpha/sub/mod.py": "def f():  # comment\n    return 1\n",
      "alpha/tests/test_mod.py": "assert True\n",  # a test suite: skipped
      "xml/__init__.py": "X = 0\n", "xml/a.py": "A = 1\n", "xml/b.py": "B = 2\n",
      "test/test_x.py": "T = 1\n",  # the regression suite: skipped
      "test/__init__.py": "",
      "notpkg/data.py": "D = 1\n",  # no __init__.py: not a package
      "_private.py": "P = 1\n",  # private module: skipped
      "big.py": "b = 1\n" * 6000,  # over MAX_MODULE_BYTES: skipped
      **{f"{name}.py": f"{name} = '{name}'  # module {name}\n" for name in "abcde"},
  }
  for path, text in files.items():
    (stdlib / path).parent.mkdir(parents=True, exist_ok=True)
    (stdlib / path).write_text(text)
  return stdlib


def _build(stdlib, out, *extra):
  return make_dev_dataset.main(["--stdlib", str(stdlib), "--out", str(out), *extra])


def test_the_plan_maps_packages_and_module_groups_to_repositories(fake_stdlib):
  plans = {p.repo_id: p.branches for p in make_dev_dataset.plan_repositories(fake_stdlib)}
  dev_null = next(r for r in plans if r.startswith("dev/null/"))
  assert plans == {
      "python/alpha": (("alpha/__init__.py", "alpha/sub/mod.py"),),
      "python/xml": (("xml/__init__.py", "xml/a.py"), ("xml/b.py",)),
      dev_null: (("a.py", "b.py", "c.py"),),
      "python/modules-d": (("d.py", "e.py"),),
  }


def test_the_output_is_an_flcc_tree_the_reader_reads_back(fake_stdlib, tmp_path, capsys):
  out = tmp_path / "dataset"
  assert _build(fake_stdlib, out) == 0
  assert "wrote" in capsys.readouterr().err
  files = list(flcc.read_files(out, splits=flcc.Splits(validation=0, test=0)))
  by_path = {f.path: f for f in files}
  assert set(by_path) == {"alpha/__init__.py", "alpha/sub/mod.py", "xml/__init__.py", "xml/a.py",
                          "xml/b.py", "a.py", "b.py", "c.py", "d.py", "e.py"}
  for path, f in by_path.items():
    assert f.text.encode() == make_dev_dataset.normalize((fake_stdlib / path).read_bytes())
    assert re.fullmatch(r"[\w.]+_\d{19}\.py", pathlib.PurePath(f.dataset_path).name)
  assert by_path["alpha/sub/mod.py"].text == "def f():\n    return 1\n"
  xml = [r for r in flcc.list_repositories(out) if r.repo_id == "python/xml"]
  assert len(xml) == 2 and all(re.fullmatch("[0-9a-f]{40}", r.init_hash) for r in xml)
  meta = xml[1].meta_dir
  assert json.loads((meta / "files.json").read_text()) == {"Python/.py": 1}
  assert (meta / "METADATA").read_text() == "1600000000\n\nA\txml/b.py\n"


def test_two_builds_are_byte_identical(fake_stdlib, tmp_path):
  assert _build(fake_stdlib, tmp_path / "one") == 0
  assert _build(fake_stdlib, tmp_path / "two") == 0
  assert test_utils.tree_listing(tmp_path / "one") == test_utils.tree_listing(tmp_path / "two")


def test_two_builds_from_the_real_stdlib_are_byte_identical(tmp_path):
  only = ["--only", "python/json", "python/tomllib"]
  assert _build(STDLIB, tmp_path / "one", *only) == 0
  assert _build(STDLIB, tmp_path / "two", *only) == 0
  one = test_utils.tree_listing(tmp_path / "one")
  assert len(one) == 9 + 2 * 3 and one == test_utils.tree_listing(tmp_path / "two")


def test_an_earlier_dataset_is_replaced_only_with_force(fake_stdlib, tmp_path, capsys):
  out = tmp_path / "dataset"
  assert _build(fake_stdlib, out) == 0
  capsys.readouterr()  # (its progress)
  (out / "v3" / "stale.txt").write_text("from before")
  assert _build(fake_stdlib, out) == 2
  error = capsys.readouterr().err
  assert error.count("\n") == 1 and str(out) in error and "--force" in error
  assert _build(fake_stdlib, out, "--force") == 0
  assert not (out / "v3" / "stale.txt").exists()
  assert sorted(p.name for p in tmp_path.iterdir()) == ["dataset", "stdlib"]  # no temp folders


def test_a_folder_that_is_no_dataset_is_never_replaced(fake_stdlib, tmp_path, capsys):
  # --force emptied a folder of the user's given by mistake (helper-54's audit).
  out = tmp_path / "mywork"
  out.mkdir()
  (out / "notes.txt").write_text("mine")
  for flags in ((), ("--force",)):
    assert _build(fake_stdlib, out, *flags) == 2
    error = capsys.readouterr().err
    assert error == (f"make_dev_dataset: --out {out} exists and is not an FLCC dataset; "
                     "choose another --out\n")
    assert (out / "notes.txt").read_text() == "mine"


def test_what_a_killed_run_left_is_removed_by_the_next(fake_stdlib, tmp_path):
  # A mkdtemp name stayed for good (helper-54's audit).
  child = subprocess.Popen([sys.executable, "-c", "pass"])
  child.wait()  # its pid is nobody's now
  left = tmp_path / f"dataset.tmp-{processes.host()}-{child.pid}-x1y2"
  (left / "v3").mkdir(parents=True)
  assert _build(fake_stdlib, tmp_path / "dataset") == 0
  assert sorted(p.name for p in tmp_path.iterdir()) == ["dataset", "stdlib"]


def test_an_unknown_repository_in_only_is_a_one_line_error(fake_stdlib, tmp_path, capsys):
  assert _build(fake_stdlib, tmp_path / "dataset", "--only", "python/nope") == 2
  assert capsys.readouterr().err.count("\n") == 1
  assert not (tmp_path / "dataset").exists()
