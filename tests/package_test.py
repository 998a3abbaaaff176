"""code_t5's modules import one another one way: no import circle, and sub-packages by stage.

Every `import code_t5...` and `from code_t5... import ...` of every module under code_t5/ counts,
at module level and inside functions (those run later, but a circle through them is a circle all
the same), and so do the subcommand modules code_t5/cli.py imports by name (SUBCOMMANDS).

The floors, bottom first; a module imports its own sub-package and the floors below it:

    errors, cache_dirs, source_text < processes, stranger_paths < data/ < registration,
    test_utils (they import data/: register() its tasks, make_flcc_tree its layout) < training/
    < engine/ < evaluation/ and convert/ (side by side: neither imports the other) < cli
"""

import ast
import graphlib
import pathlib
import subprocess
import sys
from typing import Dict, Optional, Set

REPO = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = REPO / "code_t5"
FLOORS = {
    "code_t5.errors": 0,
    "code_t5.cache_dirs": 0,
    "code_t5.source_text": 0,
    "code_t5.processes": 1,
    "code_t5.stranger_paths": 1,
    "code_t5.data": 2,
    "code_t5.registration": 3,
    "code_t5.test_utils": 3,
    "code_t5": 4,  # the package's own __init__.py: `import code_t5` registers
    "code_t5.training": 5,
    "code_t5.engine": 6,
    "code_t5.evaluation": 7,
    "code_t5.convert": 7,
    "code_t5.cli": 8,
}


def _module_names() -> Dict[str, pathlib.Path]:
  """"code_t5.data.flcc" -> code_t5/data/flcc.py, "code_t5.data" -> code_t5/data/__init__.py."""
  names = {}
  for path in PACKAGE.rglob("*.py"):
    parts = path.relative_to(REPO).with_suffix("").parts
    names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
  return names


MODULES = _module_names()


def _resolve(name: str) -> str:
  """The module an import of `name` runs: the longest prefix of it that is a module of code_t5."""
  parts = name.split(".")
  return next(".".join(parts[:n]) for n in range(len(parts), 0, -1)
              if ".".join(parts[:n]) in MODULES)


def _imported(module: str, node: ast.AST) -> Set[str]:
  """The code_t5 modules one import statement of `module` imports."""
  if isinstance(node, ast.Import):
    names = [alias.name for alias in node.names]
  elif isinstance(node, ast.ImportFrom):
    base = node.module or ""
    if node.level:  # relative: from the package of `module` (or above)
      package = module.split(".")
      if MODULES[module].name != "__init__.py":
        package = package[:-1]
      base = ".".join(package[:len(package) - node.level + 1] + ([base] if base else []))
    names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base
             for alias in node.names]
  else:
    return set()
  return {_resolve(name) for name in names if name == "code_t5" or name.startswith("code_t5.")}


def _subcommand_modules(tree: ast.Module) -> Set[str]:
  for node in tree.body:
    if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict) and
        [getattr(t, "id", None) for t in node.targets] == ["SUBCOMMANDS"]):
      return {element.value for element in node.value.values}
  raise AssertionError("code_t5/cli.py has no SUBCOMMANDS dict")


def _imports() -> Dict[str, Set[str]]:
  """module -> the other code_t5 modules it imports, anywhere in it."""
  graph = {}
  for module, path in MODULES.items():
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    graph[module] = set().union(*(_imported(module, node) for node in ast.walk(tree))) - {module}
    if module == "code_t5.cli":
      names = _subcommand_modules(tree)
      assert names <= MODULES.keys(), names - MODULES.keys()
      graph[module] |= names
  return graph


IMPORTS = _imports()


def _floor(module: str) -> Optional[str]:
  """The floor a module stands on: itself, or the sub-package that holds it (None: not placed)."""
  parts = module.split(".")
  return next((".".join(parts[:n]) for n in range(len(parts), 0, -1)
               if ".".join(parts[:n]) in FLOORS), None)


def test_every_module_and_sub_package_is_found():
  assert {"code_t5.cli", "code_t5.data.flcc", "code_t5.engine.complete",
          "code_t5.evaluation.baseline", "code_t5.training.launcher",
          "code_t5.convert.t5x"} <= MODULES.keys()
  assert IMPORTS["code_t5.engine.complete"] >= {"code_t5.engine.line_filters",  # in a function
                                                "code_t5.training.launcher"}
  assert "code_t5.convert.pack" in IMPORTS["code_t5.cli"]  # by name


def test_no_import_circle():
  try:
    order = list(graphlib.TopologicalSorter(IMPORTS).static_order())
  except graphlib.CycleError as error:
    raise AssertionError(f"import circle: {' -> '.join(error.args[1])}") from None
  assert set(order) == MODULES.keys()


def test_each_module_imports_its_own_sub_package_and_the_floors_below_only():
  unplaced = sorted(m for m in MODULES if _floor(m) is None)
  assert not unplaced, f"give these a floor in FLOORS: {unplaced}"
  upward = sorted(f"{module} -> {target}" for module, targets in IMPORTS.items()
                  for target in targets
                  if _floor(target) != _floor(module)
                  and FLOORS[_floor(target)] >= FLOORS[_floor(module)])
  assert not upward


def test_the_data_tools_run_where_tensorflow_is_not_installed(tmp_path):
  """A GPU machine with PyTorch and no TensorFlow (the device machine lent to some sessions):
  there `import code_t5` registers nothing, and scripts/export_texts.py writes the texts
  scripts/train_torch.py reads, held-out roots applied. Here TensorFlow is blocked in a child
  interpreter (sys.modules["tensorflow"] = None makes its import fail, as where it is absent)."""
  out = tmp_path / "texts.xz"
  dev = REPO / "dataset-dev"
  child = (
      "import runpy, sys\n"
      "sys.modules['tensorflow'] = None\n"
      f"sys.argv = ['export_texts.py', '--root', {str(dev)!r}, '--split', 'validation',\n"
      f"            '--out', {str(out)!r}, '--held-out-root', {str(dev)!r}]\n"
      "try:\n"
      f"  runpy.run_path({str(REPO / 'scripts' / 'export_texts.py')!r}, run_name='__main__')\n"
      "except SystemExit as e:\n"
      "  code = e.code\n"
      "heavy = sorted(m for m in ('seqio', 't5', 'mesh_tensorflow', 'gin') if m in sys.modules)\n"
      "print(code, heavy)\n")
  result = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                          cwd=tmp_path, timeout=300, check=False)
  assert result.stdout.strip().splitlines()[-1] == "0 []", result.stderr[-2000:]
  assert out.stat().st_size > 0 and "24 of 24 files" in result.stdout


def test_gin_configs_is_the_folder_beside_the_package_in_a_checkout(monkeypatch, tmp_path):
  """Installed or not, and even where the import system names another checkout's (an editable
  install's finder did, for a second checkout run on PYTHONPATH with the same venv)."""
  import importlib.machinery  # pylint: disable=g-import-not-at-top
  import importlib.util  # pylint: disable=g-import-not-at-top
  from code_t5 import registration  # pylint: disable=g-import-not-at-top
  assert pathlib.Path(registration.GIN_CONFIGS).samefile(REPO / "gin_configs")

  def another_checkouts(name, package=None):
    del package
    spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
    spec.submodule_search_locations = [str(tmp_path / "other" / "gin_configs")]
    return spec

  monkeypatch.setattr(importlib.util, "find_spec", another_checkouts)
  assert pathlib.Path(registration._gin_configs_folder()) == REPO / "gin_configs"  # pylint: disable=protected-access
