#!/usr/bin/env python3
"""Builds dataset-dev/: a small FLCC-layout dataset of real Python code, for tests and dev runs.

    python scripts/make_dev_dataset.py --out dataset-dev [--force]

The code is the standard library of the interpreter running this script, minus test suites and
a few large or atypical packages (see EXCLUDED_PACKAGES). Each package becomes a repository
"python/<package>"; public top-level modules of at most MAX_MODULE_BYTES are taken in name order,
MODULES_PER_REPO at a time, as repositories "python/modules-<first module>", except that every
DEV_NULL_EVERY-th group (the first included) stands for a repository of unknown owner and is written
under dev/null/<uuid>. The packages in TWO_INIT_HASHES are split over two init-hash folders, as FLCC
does for repositories with branches of unrelated roots: one repository stored twice.

The tree is exactly the FLCC layout (see /work/shared/notes/FLCC.md and code_t5/data/flcc.py):

  v3/languages/Python/.py/<owner>/<repo>/<init-hash>/<name>_<unix_time_ns>.py
  v3/repositories/<owner>/<repo>/<init-hash>/{files.json, paths.json, METADATA}

with init-hash = sha1("<repo id>#<branch>"), fake but fixed timestamps, paths.json mapping each
flattened name to the file's path relative to the stdlib folder (e.g. "json/decoder.py"), and
METADATA in the format of `git log --pretty=%ct --name-status --diff-filter=ACDMR` (one commit that
adds every file). Like FLCC's "normalized" variant, comments are stripped with `tokenize` (lines
holding only a comment are dropped, docstrings and all other bytes are kept); files that do not
tokenize, or are not UTF-8, are copied unchanged, as FLCC logged such files but kept them. The
normalisation and the layout's writer are code_t5/data/corpus.py's, which `code-t5 import` uses for
your own code, so run this with the project's venv (.venv/bin/python).

The output depends only on the stdlib's files: no wall-clock time, sorted iteration, so two runs
give byte-identical trees. It is written to a temporary folder beside --out and renamed into place
at the end; an existing --out is replaced only with --force. --stdlib and --only (repository ids)
exist for tests.
"""

import argparse
import dataclasses
import hashlib
import os
import pathlib
import shutil
import sys
import sysconfig
import tempfile
import uuid
import warnings

# `import code_t5` imports TensorFlow; its start-up messages say nothing about this script.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
warnings.filterwarnings("ignore", message="pkg_resources is deprecated", category=UserWarning)
from code_t5 import processes  # pylint: disable=g-import-not-at-top,wrong-import-position
from code_t5.data import corpus  # pylint: disable=g-import-not-at-top,wrong-import-position

normalize = corpus.normalize  # the one copy of FLCC's normalisation

EXCLUDED_PACKAGES = frozenset({
    "test",  # the regression test suite
    "idlelib", "tkinter", "turtledemo",  # GUI code with its own test suites
    "lib2to3", "distutils",  # deprecated, large
    "encodings", "pydoc_data",  # generated codec tables and a 700 KB string table
    "ensurepip", "__phello__", "site-packages",  # bundled wheels, a frozen-module test, 3rd party
})
EXCLUDED_DIRS = frozenset({"test", "tests", "idle_test", "__pycache__"})
MAX_MODULE_BYTES = 30_000
MODULES_PER_REPO = 3
DEV_NULL_EVERY = 10
TWO_INIT_HASHES = frozenset({"xml"})
OWNER = "python"
COMMIT_TIME = corpus.COMMIT_TIME  # 2020-09-13: every repository's single (fake) commit


class DatasetError(Exception):
  """A problem with the command line or output folder; the message is one line."""


@dataclasses.dataclass(frozen=True)
class RepoPlan:
  repo_id: str  # "python/<name>" or "dev/null/<uuid>"
  branches: tuple  # per init-hash folder, the stdlib-relative posix paths of its files


def _python_files(folder: pathlib.Path, stdlib: pathlib.Path) -> list:
  return sorted(p.relative_to(stdlib).as_posix() for p in folder.rglob("*.py")
                if p.is_file() and not EXCLUDED_DIRS.intersection(p.relative_to(folder).parts))


def plan_repositories(stdlib: pathlib.Path) -> list:
  """The repositories to write, from the stdlib's packages and top-level modules."""
  plans = []
  for package in sorted(p for p in stdlib.iterdir()
                        if (p / "__init__.py").is_file() and p.name not in EXCLUDED_PACKAGES):
    files = _python_files(package, stdlib)
    half = (len(files) + 1) // 2
    branches = ((files[:half], files[half:]) if package.name in TWO_INIT_HASHES and len(files) > 1
                else (files,))
    plans.append(RepoPlan(f"{OWNER}/{package.name}", tuple(tuple(b) for b in branches)))
  modules = sorted(p.name for p in stdlib.glob("*.py")
                   if not p.name.startswith("_") and p.stat().st_size <= MAX_MODULE_BYTES)
  for group, start in enumerate(range(0, len(modules), MODULES_PER_REPO)):
    chunk = tuple(modules[start:start + MODULES_PER_REPO])
    first = chunk[0].removesuffix(".py")
    if group % DEV_NULL_EVERY == 0:
      repo_id = f"dev/null/{uuid.uuid5(uuid.NAMESPACE_URL, f'stdlib-modules:{first}')}"
    else:
      repo_id = f"{OWNER}/modules-{first}"
    plans.append(RepoPlan(repo_id, (chunk,)))
  return plans


def _init_hash(repo_id: str, branch: int) -> str:
  return hashlib.sha1(f"{repo_id}#{branch}".encode()).hexdigest()


def write_repository(v3: pathlib.Path, stdlib: pathlib.Path, plan: RepoPlan) -> tuple:
  """Writes one repository's init-hash folders; returns (files, bytes written)."""
  num_files = num_bytes = 0
  for branch, paths in enumerate(plan.branches):
    files = [(path, normalize((stdlib / path).read_bytes())) for path in paths]
    num_bytes += corpus.write_init_hash(v3, plan.repo_id, _init_hash(plan.repo_id, branch), files,
                                        corpus.added_metadata(paths, COMMIT_TIME), COMMIT_TIME)
    num_files += len(files)
  return num_files, num_bytes


def build(stdlib: pathlib.Path, out: pathlib.Path, force: bool = False, only=None) -> None:
  """Writes the dataset to `out` (atomically: a temporary folder beside it, then a rename)."""
  if not stdlib.is_dir():
    raise DatasetError(f"--stdlib {stdlib} is not a folder; pass the stdlib's folder of .py files")
  # --force replaces a dataset only, never a folder of the user's given by mistake (it emptied
  # one: helper-54's audit).
  processes.check_replaceable(out, lambda folder: (folder / "v3").is_dir(), "an FLCC dataset",
                              force, DatasetError)
  plans = plan_repositories(stdlib)
  if only:
    unknown = set(only) - {p.repo_id for p in plans}
    if unknown:
      raise DatasetError(f"--only {' '.join(sorted(unknown))}: no such repository in the plan")
    plans = [p for p in plans if p.repo_id in only]
  out.parent.mkdir(parents=True, exist_ok=True)
  # Named as processes.temporary_name, so that what a killed run left is removed by the next
  # (a mkdtemp name stayed for good: helper-54's audit).
  processes.remove_stale_temporaries(out.parent)
  tmp = pathlib.Path(tempfile.mkdtemp(prefix=processes.temporary_name(out.name) + "-",
                                      dir=out.parent))
  try:
    total_files = total_bytes = 0
    for index, plan in enumerate(plans, 1):
      num_files, num_bytes = write_repository(tmp / "v3", stdlib, plan)
      total_files += num_files
      total_bytes += num_bytes
      print(f"[{index}/{len(plans)}] {plan.repo_id}: {num_files} files, {num_bytes / 1e3:.0f} KB",
            file=sys.stderr)
    os.chmod(tmp, 0o755)  # mkdtemp makes it private
    processes.move_into_place(tmp, out, replace=force)
  finally:
    shutil.rmtree(tmp, ignore_errors=True)
  print(f"wrote {out}: {len(plans)} repositories, {total_files} files, {total_bytes / 1e6:.2f} MB",
        file=sys.stderr)


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--out", type=pathlib.Path, required=True, help="e.g. dataset-dev")
  parser.add_argument("--force", action="store_true", help="replace an existing --out")
  parser.add_argument("--stdlib", type=pathlib.Path,
                      default=pathlib.Path(sysconfig.get_paths()["stdlib"]),
                      help="source of the code (default: this interpreter's standard library)")
  parser.add_argument("--only", nargs="+", metavar="REPO_ID",
                      help="write only these repositories of the plan (for tests)")
  args = parser.parse_args(argv)
  try:
    build(args.stdlib, args.out, force=args.force, only=args.only)
  except (DatasetError, OSError) as e:
    print(f"make_dev_dataset: {e}", file=sys.stderr)
    return 2
  return 0


if __name__ == "__main__":
  sys.exit(main())
