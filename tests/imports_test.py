"""imports: which modules a project knows, and the engine ranking guessed imports last (issue 31's
`from huggingface_hub.utils import namedtuple` in socketserver.py)."""

import pathlib

from code_t5.data import flcc
from code_t5.engine import complete
from code_t5.engine import imports

DEV_DATASET = pathlib.Path(__file__).resolve().parent.parent / "dataset-dev"


def test_the_modules_an_import_statement_names():
  code = ("import os, sys as system\nfrom a.b import c\n    import x.y as z, w  # why\n"
          "from . import q\nfrom .r import s\nimport numpy as np\n")
  assert imports.imported_modules(code) == {"os", "sys", "a", "x", "w", "numpy"}
  assert imports.line_module("from huggingface_hub.utils import x") == ("huggingface_hub", 20)
  assert imports.line_module("    import os.path") == ("os", 13)
  assert imports.line_module("from .x import y") is None
  assert imports.line_module("important = 1") is None


def test_a_repository_knows_its_imports_and_its_paths_but_not_the_cursors_file():
  modules = imports.ModuleIndex()
  modules.add("src/pkg/io_utils.py", "import numpy as np\n")
  modules.add("src/pkg/main.py", "import requests\n")
  assert modules.knows("numpy", "src/pkg/main.py")
  assert not modules.knows("requests", "src/pkg/main.py")  # only the cursor's own file has it
  assert modules.knows("pkg") and modules.knows("io_utils") and modules.knows("src")
  modules.add("src/pkg/io_utils.py", "import pandas\n")  # saved again: numpy is gone
  assert not modules.knows("numpy") and modules.knows("pandas", "src/pkg/main.py")
  modules.remove("src/pkg/io_utils.py")
  assert not modules.knows("pandas") and not modules.knows("io_utils")


def test_a_guessed_import_is_one_nothing_knows_and_the_user_did_not_type():
  modules = imports.ModuleIndex()
  modules.add("app/db.py", "import sqlalchemy\n")

  def unknown(line, head=""):
    return imports.ImportCheck("import yaml\n" + head, "", modules, "app/x.py").unknown(line)

  assert unknown("from huggingface_hub.utils import namedtuple")
  assert unknown("termio import *", "from ")
  assert not unknown("import os.path")  # the standard library
  assert not unknown("from sqlalchemy import Column")  # another file imports it
  assert not unknown("from app.db import Session")  # the repository's own package
  assert not unknown("import yaml")  # the file imports it already
  assert not unknown(" import thing", "from huggingface_hub")  # typed by the user
  assert not unknown("x = 1") and not unknown("from . import db")


def test_the_corpus_package_the_model_guesses_in_unittest_main_is_ranked_last(
    shipped_best_line, monkeypatch):
  """dataset-dev's unittest/__main__.py:4, the line after `import sys` (the file goes on with
  `if sys.argv[0].endswith("__main__.py"):`): the shipped model's own best line is `import numpy
  as np`, a package of its training corpus that neither the standard library's unittest nor the
  file imports (the model trained for 4,500 steps wrote `from huggingface_hub.utils import
  namedtuple` in socketserver.py)."""
  best_line = shipped_best_line("unittest/__main__.py", "\nimport sys\n", "",
                                repo="python/unittest")
  modules = imports.ModuleIndex()
  for f in flcc.read_files(DEV_DATASET):
    if f.repo == "python/unittest":
      modules.add(f.path, f.text)
  check = imports.ImportCheck('"""Main entry point"""\n\nimport sys\n', "", modules,
                              "unittest/__main__.py")
  assert not check.unknown(best_line())
  # Without the ranking, the model's own best line is the guessed import.
  monkeypatch.setattr(complete, "last_if_unlikely", lambda lines, *_: lines)
  assert best_line() == "import numpy as np"


def test_an_import_the_file_has_at_module_level_or_a_name_imported_twice_is_a_repeat():
  def repeats(line, above="import sys\nif sys.argv:\n    ", below="\nimport os\n"):
    return imports.ImportCheck(above, below, None, "pkg/x.py").repeats(line)

  assert repeats("import sys")  # above, at module level: visible in the block too
  assert repeats("import os")  # below
  assert repeats("Image, Image", above="from . import ")
  assert repeats("age", above="from . import Image, Im")  # typed towards ImageFile
  assert repeats("from m import (x, y as x)") and repeats("import a as b, c as b")
  assert not repeats("import os.path") and not repeats("import a, b")
  assert not repeats("ageFile", above="from . import Image, Im")
  assert not repeats("x = 1") and not repeats("important = sys")
  # Another function's own import is no repeat: it is not visible here.
  assert not repeats("import warnings", above="def f():\n    import warnings\n\ndef g():\n    ")


def test_an_import_of_one_name_thrice_is_not_the_best_line_in_unittest_init(
    shipped_best_line, monkeypatch):
  """dataset-dev's unittest/__init__.py:62, `from .su|` (the target: `from .suite import
  BaseTestSuite, TestSuite`): the shipped model's own best line imports `SkipTestCase` three
  times."""
  best_line = shipped_best_line("unittest/__init__.py", "from .su",
                                "ite import BaseTestSuite, TestSuite", repo="python/unittest")
  assert best_line() == "ite import SkipTestCase"
  monkeypatch.setattr(imports.ImportCheck, "repeats", lambda self, line: False)
  assert best_line() == "ite import SkipTestCase, SkipTestCase, SkipTestCase"
