"""code_t5/data/corpus.py (`code-t5 import`): git checkouts, folders of repositories and
site-packages into FLCC roots that the reader reads back; bad input counted; deterministic and
atomic output."""

import hashlib
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys

import pytest

from code_t5 import cli
from code_t5 import processes
from code_t5 import test_utils
from code_t5.data import corpus
from code_t5.data import flcc

DEV_ROOT = pathlib.Path(__file__).resolve().parent.parent / "dataset-dev"
COMMENTED = 'import os  # why\n# a comment line\ndef f():\n    """Doc # kept."""\n    return 1\n'
STRIPPED = 'import os\ndef f():\n    """Doc # kept."""\n    return 1\n'
ALL = flcc.Splits(validation=0, test=0)  # every repository in train, to read all files back


def _git(cwd, *args):
  env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@e", GIT_COMMITTER_NAME="t",
             GIT_COMMITTER_EMAIL="t@e", GIT_AUTHOR_DATE="1700000000 +0000",
             GIT_COMMITTER_DATE="1700000000 +0000", GIT_CONFIG_GLOBAL=os.devnull,
             GIT_CONFIG_NOSYSTEM="1")
  return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True,
                        text=True).stdout.strip()


def _write(path: pathlib.Path, content):
  path.parent.mkdir(parents=True, exist_ok=True)
  if isinstance(content, bytes):
    path.write_bytes(content)
  else:
    path.write_text(content)


@pytest.fixture
def checkout(tmp_path):
  """A git checkout of github.com/acme/widgets with two commits and an untracked file."""
  repo = tmp_path / "src" / "local-name"
  _write(repo / "widgets" / "core.py", COMMENTED)
  _write(repo / "README.md", "not python\n")
  _git(tmp_path, "init", "-q", str(repo))
  _git(repo, "add", ".")
  _git(repo, "commit", "-q", "-m", "first")
  _write(repo / "widgets" / "util.py", "X = 1\n")
  _git(repo, "add", ".")
  _git(repo, "commit", "-q", "-m", "second")
  _write(repo / "scratch.py", "untracked = True\n")  # git does not track it: not imported
  _git(repo, "remote", "add", "origin", "git@github.com:acme/widgets.git")
  return repo


@pytest.fixture
def plain(tmp_path):
  """A folder of two repositories with every kind of bad file, and a folder that is no repo."""
  top = tmp_path / "src" / "mycode"
  _write(top / "good" / "pkg" / "__init__.py", "")
  _write(top / "good" / "pkg" / "mod.py", COMMENTED)
  _write(top / "good" / "pkg" / "__pycache__" / "mod.py", "cached = 1\n")  # skipped folder
  _write(top / "good" / ".hidden" / "h.py", "hidden = 1\n")  # skipped folder
  _write(top / "bad" / "ok.py", "ok = 1\n")
  _write(top / "bad" / "latin1.py", b"name = '\xe9'\n")
  _write(top / "bad" / "binary.py", b"x = 1\0\n")
  _write(top / "bad" / "broken.py", "def f(:\n    '''never closed\n")
  _write(tmp_path / "secret.py", "SECRET = 1\n")
  (top / "bad" / "leak.py").symlink_to(tmp_path / "secret.py")
  (top / "bad" / "inside.py").symlink_to(top / "bad" / "ok.py")  # inside: read (a duplicate)
  (top / "bad" / "leakdir").symlink_to(tmp_path, target_is_directory=True)
  _write(top / "docs" / "index.md", "no python here\n")
  _write(top / "notes.txt", "a file, not a repository\n")
  return top


@pytest.fixture
def site_packages(tmp_path):
  """A fake site-packages: two distributions, an editable install, a RECORD escaping the folder,
  a module no RECORD lists."""
  top = tmp_path / "env" / "lib" / "python3.11" / "site-packages"
  _write(top / "alpha" / "__init__.py", COMMENTED)
  _write(top / "alpha" / "data.json", "{}")
  _write(top / "alpha" / "broken.py", "x = (\n")
  _write(top / "Beta_Pkg" / "b.py", "B = 2\n")
  _write(top / "stray.py", "stray = 1\n")
  _write(top / "__editable___mine_finder.py", "finder = 1\n")
  _write(tmp_path / "env" / "bin" / "tool.py", "tool = 1\n")

  def dist(name, version, record, editable=False):
    info = top / f"{name.replace('-', '_')}-{version}.dist-info"
    _write(info / "METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    _write(info / "RECORD", "".join(f"{path},sha256=x,1\n" for path in record) +
           f"{info.name}/RECORD,,\n")
    if editable:
      _write(info / "direct_url.json", json.dumps({"url": "file:///x",
                                                   "dir_info": {"editable": True}}))

  dist("alpha", "1.0", ["alpha/__init__.py", "alpha/data.json", "alpha/broken.py",
                        "../../../bin/tool.py"])
  dist("Beta.Pkg", "2.3", ["Beta_Pkg/b.py", "Beta_Pkg/__pycache__/b.cpython-311.pyc"])
  dist("mine", "0.1", ["__editable___mine_finder.py"], editable=True)
  return top


def _import(capsys, *args):
  code = cli.main(["import", *map(str, args)])
  return code, capsys.readouterr().err


def _all_text(root):
  return "".join(p.read_text() for p in root.rglob("*") if p.is_file())


def _read(root):
  return {(f.repo, f.path): f for f in flcc.read_files(root, splits=ALL)}


def test_a_git_checkout_is_one_repository_named_by_origin_at_its_root_commit(checkout, tmp_path,
                                                                            capsys):
  out = tmp_path / "root"
  code, err = _import(capsys, checkout, "--out", out)
  assert code == 0 and "1 repository, 2 files" in err
  files = _read(out)
  assert set(files) == {("acme/widgets", "widgets/core.py"), ("acme/widgets", "widgets/util.py")}
  assert files["acme/widgets", "widgets/core.py"].text == STRIPPED
  (repo,) = flcc.list_repositories(out)
  assert repo.init_hash == _git(checkout, "rev-list", "--max-parents=0", "HEAD")
  names = json.loads((repo.meta_dir / "paths.json").read_text())
  assert sorted(names.values()) == ["widgets/core.py", "widgets/util.py"]
  # FLCC's flattened names: <stem>_<unix time in ns>.py, seconds after the last commit's time.
  times = [int(re.fullmatch(r"(?:core|util)_(\d{19})\.py", n).group(1)) for n in names]
  assert all(0 <= t // 10**9 - 1_700_000_000 < 20 for t in times)
  assert json.loads((repo.meta_dir / "files.json").read_text()) == {"Python/.py": 2}
  metadata = (repo.meta_dir / "METADATA").read_text()
  assert metadata == _git(checkout, "log", "--pretty=%ct", "--name-status",
                          "--diff-filter=ACDMR", "HEAD") + "\n"
  assert "A\twidgets/util.py" in metadata


def test_a_checkout_with_a_non_utf8_file_name_drops_that_file_only(checkout, tmp_path, capsys):
  with open(os.path.join(os.fsencode(checkout), b"caf\xe9.py"), "wb") as f:
    f.write(b"latin = 1\n")
  (checkout / "scratch.py").unlink()  # stays untracked
  _git(checkout, "add", ".")
  _git(checkout, "commit", "-q", "-m", "third")
  report = tmp_path / "report.json"
  assert _import(capsys, checkout, "--out", tmp_path / "root", "--report", report)[0] == 0
  counts = json.loads(report.read_text())
  assert counts["files"] == 2 and counts["dropped"] == {"not_utf8": {"files": 1, "mb": 0.0}}
  (repo,) = flcc.list_repositories(tmp_path / "root")
  assert b"A\tcaf\xe9.py\n" in (repo.meta_dir / "METADATA").read_bytes()  # git's own bytes


def test_a_checkout_without_origin_is_named_by_its_folders(checkout, tmp_path, capsys):
  _git(checkout, "remote", "remove", "origin")
  assert _import(capsys, checkout, "--out", tmp_path / "root")[0] == 0
  assert [r.repo_id for r in flcc.list_repositories(tmp_path / "root")] == ["src/local-name"]


def test_a_folder_of_repositories_keeps_good_files_and_counts_the_bad(plain, tmp_path, capsys):
  out = tmp_path / "root"
  report = tmp_path / "report.json"
  code, err = _import(capsys, plain, "--out", out, "--report", report)
  assert code == 0
  # ok.py is imported twice (itself and the symlink inside.py); the reader keeps the first by name.
  assert set(_read(out)) == {("mycode/good", "pkg/mod.py"), ("mycode/bad", "inside.py")}
  assert _read(out)["mycode/good", "pkg/mod.py"].text == STRIPPED
  counts = json.loads(report.read_text())
  assert counts["repositories"] == 2 and counts["files"] == 3  # ok.py twice: through the symlink
  assert {reason: v["files"] for reason, v in counts["dropped"].items()} == {
      "binary": 1, "empty": 1, "not_utf8": 1, "outside_source": 2, "untokenizable": 1}
  assert counts["skipped_repositories"] == {"no_python_files": 1, "not_a_repository": 1}
  assert "SECRET" not in _all_text(out)
  assert "docs (no_python_files)" in err and "notes.txt (not_a_repository" in err
  # METADATA lists the files written, not the dropped ones.
  (bad,) = [r for r in flcc.list_repositories(out) if r.name == "bad"]
  assert (bad.meta_dir / "METADATA").read_text() == "1600000000\n\nA\tinside.py\nA\tok.py\n"


def test_a_project_folder_is_one_repository_with_all_its_files(tmp_path, capsys):
  """A plain folder with code of its own (not git, not site-packages) is one project: read as a
  folder of repositories, its sub-packages became repositories in different splits and its own
  files were dropped (helper-43's audit); a folder of loose files was refused."""
  project = tmp_path / "src" / "proj"
  for path in ("main.py", "pkg/__init__.py", "pkg/mod.py", "tests/test_mod.py"):
    _write(project / path, f"value = {path!r}\n")
  code, err = _import(capsys, project, "--out", tmp_path / "root")
  assert code == 0, err
  assert f"import: {project}: read as one repository" in err and "skipping" not in err
  assert sorted(_read(tmp_path / "root")) == [
      ("src/proj", "main.py"), ("src/proj", "pkg/__init__.py"), ("src/proj", "pkg/mod.py"),
      ("src/proj", "tests/test_mod.py")]
  # A project without sub-folders of code could not have been meant otherwise: no note
  # (helper-58's audit), and no rate of a run under a second.
  flat = tmp_path / "src" / "flat"
  _write(flat / "m.py", "value = 1\n")
  code, err = _import(capsys, flat, "--out", tmp_path / "flat_root")
  assert code == 0 and "read as one repository" not in err, err
  (wrote,) = [line for line in err.splitlines() if line.startswith("wrote ")]
  assert wrote.endswith(" MB read in 0.0 s)"), wrote
  # A project file at the top makes it one even with every *.py file below (a src/ layout).
  (project / "main.py").unlink()
  _write(project / "pyproject.toml", "[project]\nname = 'proj'\n")
  assert _import(capsys, project, "--out", tmp_path / "root", "--force")[0] == 0
  assert {repo for repo, _ in _read(tmp_path / "root")} == {"src/proj"}
  # Given as "." from inside it, it is named the same (it was "src/unnamed").
  cwd = os.getcwd()
  try:
    os.chdir(project)
    assert _import(capsys, ".", "--out", tmp_path / "root", "--force")[0] == 0
  finally:
    os.chdir(cwd)
  assert {repo for repo, _ in _read(tmp_path / "root")} == {"src/proj"}


def test_a_script_beside_git_checkouts_leaves_them_a_folder_of_repositories(checkout, tmp_path,
                                                                            capsys):
  _write(checkout.parent / "scratch.py", "x = 1\n")
  code, err = _import(capsys, checkout.parent, "--out", tmp_path / "root")
  assert code == 0, err
  assert "scratch.py (not_a_repository" in err
  assert "read as one repository" not in err


def test_a_checkout_without_commits_or_an_flcc_root_given_as_src_says_what_to_do(tmp_path,
                                                                                 capsys):
  """Both were told to move their files into a folder of their own (helper-33's audit), and the
  empty checkout was skipped as git_failed with git's usage line for a reason."""
  checkout = tmp_path / "empty"
  _write(checkout / "a.py", "x = 1\n")
  subprocess.run(["git", "init", "-q", str(checkout)], check=True)
  code, err = _import(capsys, checkout, "--out", tmp_path / "root")
  assert code == 2
  assert f"import: skipping {checkout} (no_commits: commit its files first)" in err
  assert err.splitlines()[-1] == (f"code-t5 import: no repository imported from {checkout}: "
                                  "skipped no_commits 1 (the lines above say why)")
  code, err = _import(capsys, DEV_ROOT, "--out", tmp_path / "root")
  assert code == 2
  assert err.splitlines()[-1] == (f"code-t5 import: {DEV_ROOT}: an FLCC root already (it "
                                  "holds v3/): give it to `code-t5 prepare`, `train` or `eval` as "
                                  "--root")
  assert sorted(p.name for p in tmp_path.iterdir()) == ["empty"]


@pytest.mark.parametrize("layout", [[], ["repo/README"]], ids=["empty", "no *.py"])
def test_sources_without_python_files_are_a_one_line_error_and_write_nothing(layout, tmp_path,
                                                                           capsys):
  # An empty folder was told about "a folder of *.py files"; one of folders without Python
  # files wrote a root of 0 repositories.
  src = tmp_path / "src"
  src.mkdir()
  for path in layout:
    _write(src / path, "notes\n")
  code, err = _import(capsys, src, "--out", tmp_path / "root")
  assert code == 2
  assert err.splitlines()[-1] == (f"code-t5 import: SRC {src} holds no Python files (*.py): give "
                                  "a git checkout, a project folder, a folder of repositories or "
                                  "a site-packages folder of Python code")
  assert [p.name for p in tmp_path.iterdir()] == ["src"]


def test_sources_whose_every_file_is_dropped_are_a_one_line_error_and_write_nothing(tmp_path,
                                                                                  capsys):
  # Files were found, so the import wrote a root of 0 files and exited 0 (helper-48's audit).
  src = tmp_path / "src" / "proj"
  _write(src / "a.py", "x = 1\0\n")
  _write(src / "b.py", "# only a comment\n")
  code, err = _import(capsys, src, "--out", tmp_path / "root")
  assert code == 2
  assert err.splitlines()[-1] == (f"code-t5 import: no file of {src} could be imported: dropped "
                                  "binary 1, empty 1 (`code-t5 import --help` says what each "
                                  "reason means); nothing was written")
  assert [p.name for p in tmp_path.iterdir()] == ["src"]


def test_a_plain_folder_s_metadata_names_files_as_git_does(tmp_path, capsys):
  # Names were written as they are: one holding newlines added lines of a forged commit to
  # METADATA, which a git checkout's has C-quoted (helper-48's audit).
  names = ["x.py\n1700000000\n\nD\ta.py", 'q"b\\c.py', "bell\a\x01.py", "del\x7f.py",
           "é.py", "plain.py"]
  metadata = {}
  for kind in ("plain", "git"):
    src = tmp_path / kind / "proj"
    for i, name in enumerate(names):
      _write(src / name, f"x{i} = {i}\n")
    if kind == "git":
      _git(tmp_path / kind, "init", "-q", str(src))
      _git(src, "add", ".")
      _git(src, "commit", "-q", "-m", "first")
    assert _import(capsys, src, "--out", tmp_path / f"{kind}-root")[0] == 0
    (repo,) = flcc.list_repositories(tmp_path / f"{kind}-root")
    metadata[kind] = sorted(line for line in (repo.meta_dir / "METADATA").read_text().splitlines()
                            if line.startswith("A\t"))
  assert len(metadata["git"]) == len(names) and metadata["plain"] == metadata["git"]


def test_site_packages_whose_files_no_record_lists_is_a_one_line_error_that_says_so(tmp_path,
                                                                                   capsys):
  # It was told about "*.py files beside git checkouts" (helper-48's audit).
  top = tmp_path / "site-packages"
  _write(top / "stray.py", "stray = 1\n")
  _write(top / "gone-1.0.dist-info" / "RECORD", "gone/data.json,sha256=x,1\n")
  _write(top / "gone-1.0.dist-info" / "METADATA", "Metadata-Version: 2.1\nName: gone\n"
         "Version: 1.0\n")
  code, err = _import(capsys, top, "--out", tmp_path / "root")
  assert code == 2 and err.splitlines()[-1] == (
      f"code-t5 import: no repository found in {top}: its *.py files are in no distribution's "
      "*.dist-info/RECORD (not_in_a_record); give the site-packages of a venv, or the project "
      "folders themselves")
  assert not (tmp_path / "root").exists()


def test_a_dangling_git_link_is_a_plain_folder_and_a_newline_in_a_checkout_s_path_is_no_problem(
    tmp_path, capsys):
  # A .git link that leads nowhere was taken for a checkout and skipped as git_failed; a checkout
  # whose path holds a newline was skipped ("too many values to unpack"): helper-53's review.
  plain = tmp_path / "src" / "copied"
  _write(plain / "a.py", "a = 1\n")
  (plain / ".git").symlink_to(tmp_path / "nowhere")
  checkout = tmp_path / "src" / "we\nird"
  _write(checkout / "b.py", "b = 2\n")
  _git(tmp_path, "init", "-q", str(checkout))
  _git(checkout, "add", ".")
  _git(checkout, "commit", "-q", "-m", "first")
  code, err = _import(capsys, tmp_path / "src", "--out", tmp_path / "root")
  assert code == 0 and "skipping" not in err, err
  assert sorted(f.path for f in flcc.read_files(tmp_path / "root", splits=ALL)) == ["a.py", "b.py"]
  (repo,) = [r for r in flcc.list_repositories(tmp_path / "root") if r.name.endswith("ird")]
  assert repo.init_hash == _git(checkout, "rev-list", "--max-parents=0", "HEAD")


def _as_a_user(command):
  """`command` without root's right to read past permissions (as a user, whom they stop)."""
  if os.geteuid() != 0:
    return command
  if not shutil.which("setpriv"):
    pytest.skip("root reads past permissions, and setpriv (util-linux) is not here to drop that")
  return ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *command]


def test_folders_that_cannot_be_read_are_counted_or_a_one_line_error(tmp_path):
  # A folder of repositories with one that cannot be searched, a project with such a sub-folder,
  # and such a SRC: each was a PermissionError traceback (helper-48's audit).
  repos, project, locked = tmp_path / "repos", tmp_path / "project", tmp_path / "locked"
  _write(repos / "r1" / "a.py", "a = 1\n")
  _write(project / "a.py", "a = 1\n")
  for folder in (repos / "r2", project / "sub", locked):
    folder.mkdir(parents=True)
    folder.chmod(0)
  try:
    def run(src, out):
      return subprocess.run(_as_a_user([sys.executable, "-m", "code_t5.cli", "import", str(src),
                                        "--out", str(tmp_path / out)]),
                            capture_output=True, text=True, check=False)
    for src, out in ((repos, "root1"), (project, "root2")):
      result = run(src, out)
      assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
      assert "dropped files: unreadable 1" in result.stderr, result.stderr
      assert [(f.repo, f.path) for f in flcc.read_files(tmp_path / out, splits=ALL)] == [
          (f"{src.name}/r1" if src == repos else f"{tmp_path.name}/project", "a.py")]
    result = run(locked, "root3")
    assert result.returncode == 2 and result.stderr == (
        f"code-t5 import: SRC {locked} cannot be read (Permission denied); give a folder you can "
        "read\n")
    assert not (tmp_path / "root3").exists()
  finally:
    for folder in (repos / "r2", project / "sub", locked):
      folder.chmod(0o755)


def test_site_packages_gives_one_repository_per_distribution(site_packages, tmp_path, capsys):
  out = tmp_path / "root"
  report = tmp_path / "report.json"
  code, err = _import(capsys, site_packages, "--out", out, "--report", report)
  assert code == 0 and "editable_install" in err
  assert set(_read(out)) == {("pypi/alpha", "alpha/__init__.py"),
                             ("pypi/beta-pkg", "Beta_Pkg/b.py")}
  repos = {r.repo_id: r for r in flcc.list_repositories(out)}
  beta = repos["pypi/beta-pkg"]
  assert beta.init_hash == hashlib.sha1(b"Beta.Pkg==2.3").hexdigest()  # name==version
  counts = json.loads(report.read_text())
  assert {reason: v["files"] for reason, v in counts["dropped"].items()} == {
      "not_in_a_record": 1, "outside_source": 1, "untokenizable": 1}
  assert counts["skipped_repositories"] == {"editable_install": 1}
  assert "tool = 1" not in _all_text(out)


def test_two_imports_are_byte_identical(checkout, plain, site_packages, tmp_path, capsys):
  sources = [checkout, plain, site_packages]
  assert _import(capsys, *sources, "--out", tmp_path / "one")[0] == 0
  assert _import(capsys, *reversed(sources), "--out", tmp_path / "two")[0] == 0
  one = test_utils.tree_listing(tmp_path / "one")
  assert len(one) == 5 * 3 + 7 and one == test_utils.tree_listing(tmp_path / "two")


def test_an_existing_root_is_replaced_only_with_force(plain, tmp_path, capsys):
  out = tmp_path / "root"
  assert _import(capsys, plain, "--out", out)[0] == 0
  before = test_utils.tree_listing(out)
  (plain / "good" / "pkg" / "new.py").write_text("new = 1\n")
  code, err = _import(capsys, plain, "--out", out)
  assert code == 2 and err.count("\n") == 1 and "--force" in err and str(out) in err
  assert test_utils.tree_listing(out) == before
  assert _import(capsys, plain, "--out", out, "--force")[0] == 0
  assert ("mycode/good", "pkg/new.py") in _read(out)
  assert sorted(p.name for p in tmp_path.iterdir()) == ["root", "secret.py", "src"]  # no temp


def test_force_never_replaces_a_folder_that_is_not_a_root(plain, tmp_path, capsys):
  out = tmp_path / "mine"
  _write(out / "thesis.tex", "precious")
  for force in ([], ["--force"]):  # neither error suggests a --force that would not help
    code, err = _import(capsys, plain, "--out", out, *force)
    assert code == 2 and err.count("\n") == 1 and "not an FLCC root" in err
    assert "--force" not in err
  assert (out / "thesis.tex").read_text() == "precious"


def test_a_failed_import_leaves_no_output(plain, tmp_path, monkeypatch, capsys):
  out = tmp_path / "root"
  assert _import(capsys, plain, "--out", out)[0] == 0
  before = test_utils.tree_listing(out)

  def fail(*args, **kwargs):
    raise KeyboardInterrupt

  monkeypatch.setattr(corpus, "write_init_hash", fail)
  # Ctrl-C: the shell's status for it, no traceback, and the earlier root as it was.
  assert cli.main(["import", str(plain), "--out", str(out), "--force"]) == 130
  assert "Traceback" not in capsys.readouterr().err
  assert test_utils.tree_listing(out) == before
  assert sorted(p.name for p in tmp_path.iterdir()) == ["root", "secret.py", "src"]


# A process killed with SIGKILL while writing its first repository: nothing of Python runs after.
_KILLED_IMPORT = """
import os, signal, sys
from code_t5 import cli
from code_t5 import processes
from code_t5.data import corpus
corpus.write_init_hash = lambda *args, **kwargs: os.kill(os.getpid(), signal.SIGKILL)
cli.main(["import", sys.argv[1], "--out", sys.argv[2]])
"""


# The same import sent SIGTERM (as `timeout`, a cancelled CI job or systemd ends it) there.
_TERMINATED_IMPORT = _KILLED_IMPORT.replace("signal.SIGKILL", "signal.SIGTERM").replace(
    "cli.main([", "sys.exit(cli.main([").replace("sys.argv[2]])", "sys.argv[2]]))")


def test_a_terminated_import_removes_its_temporary_itself(plain, tmp_path):
  """A SIGTERM left the temporary root (17 MB of one import in helper-33's audit) until a later
  import wrote into the same folder."""
  out = tmp_path / "root"
  terminated = subprocess.run([sys.executable, "-c", _TERMINATED_IMPORT, str(plain), str(out)],
                              capture_output=True, text=True, check=False)
  assert terminated.returncode == 143, terminated.stderr[-3000:]
  assert "Traceback" not in terminated.stderr
  assert sorted(p.name for p in tmp_path.iterdir()) == ["secret.py", "src"]


# The same, and sent SIGTERM again as it removes its temporary.
_TERMINATED_TWICE_IMPORT = _TERMINATED_IMPORT.replace("from code_t5 import cli", """\
import shutil
from code_t5 import cli
remove = shutil.rmtree
def terminated_again_while_removing(*args, **kwargs):
  os.kill(os.getpid(), signal.SIGTERM)
  return remove(*args, **kwargs)
shutil.rmtree = terminated_again_while_removing""")


def test_a_second_sigterm_does_not_stop_the_clean_up_of_the_first(plain, tmp_path):
  out = tmp_path / "root"
  terminated = subprocess.run(
      [sys.executable, "-c", _TERMINATED_TWICE_IMPORT, str(plain), str(out)],
      capture_output=True, text=True, check=False)
  assert terminated.returncode == 143, terminated.stderr[-3000:]
  assert "Traceback" not in terminated.stderr
  assert sorted(p.name for p in tmp_path.iterdir()) == ["secret.py", "src"]


def test_git_dies_with_a_killed_import(checkout, tmp_path):
  """A git stalled on a read went on for the hour of the history's time-out after its import was
  killed (helper-54's audit); the kernel ends it now. The stand-in git says its pid and
  sleeps."""
  stand_in = tmp_path / "bin" / "git"
  _write(stand_in, f"#!/bin/sh\necho $$ >> {tmp_path / 'pids'}\nexec sleep 60\n")
  stand_in.chmod(0o755)
  env = dict(os.environ, PATH=f"{stand_in.parent}{os.pathsep}{os.environ['PATH']}")
  job = subprocess.Popen([sys.executable, "-m", "code_t5.cli", "import", str(checkout), "--out",
                          str(tmp_path / "root")], env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
  try:
    test_utils.wait_for(lambda: (tmp_path / "pids").exists(), "git", 60)
  finally:
    job.kill()
    job.wait()
  (pid,) = (tmp_path / "pids").read_text().split()
  test_utils.wait_for(lambda: not processes.pid_alive(int(pid)), "git to end", 10)


def test_the_temporary_of_a_killed_import_is_removed_by_the_next(plain, tmp_path, capsys):
  out = tmp_path / "root"
  killed = subprocess.run([sys.executable, "-c", _KILLED_IMPORT, str(plain), str(out)],
                          capture_output=True, text=True, check=False)
  assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
  (left,) = tmp_path.glob(".root.tmp-*")  # what the kill left
  # A live import's temporary (this process's pid), which must be kept.
  live = tmp_path / (processes.temporary_name(".root") + "-live_1")
  live.mkdir()
  code, err = _import(capsys, plain, "--out", out)
  assert code == 0
  assert not left.exists() and f"removed {left}, left by a killed process" in err
  assert live.is_dir()
  assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
      [live.name, "root", "secret.py", "src"])


@pytest.mark.parametrize("args, message", [
    (["missing", "--out", "root"], "SRC"),
    (["src", "--out", "src/mycode/root"], "inside the source"),
])
def test_bad_arguments_are_one_line_errors(plain, tmp_path, monkeypatch, capsys, args, message):
  monkeypatch.chdir(tmp_path)
  code, err = _import(capsys, *args)
  assert code == 2 and err.count("\n") == 1 and message in err


def test_the_imported_root_splits_and_prepares_like_any_root(plain, tmp_path, capsys):
  out = tmp_path / "root"
  assert _import(capsys, plain, "--out", out)[0] == 0
  assert flcc.fingerprint(out)  # the reader accepts the layout
  stats = flcc.Stats()
  assert len(list(flcc.read_files(out, splits=ALL, stats=stats))) == 2
  assert stats.count("duplicate") == 1  # ok.py read through the symlink


def test_folders_nested_deeper_than_python_s_recursion_limit_are_imported(tmp_path, capsys):
  top = tmp_path / "src" / "deep"
  _write(top / "top.py", "x = 1\n")
  depth = sys.getrecursionlimit() + 100
  folders = [top]
  for _ in range(depth):
    folders.append(folders[-1] / "d")
    folders[-1].mkdir()
  _write(folders[-1] / "deep.py", "y = 2\n")
  try:
    code, err = _import(capsys, tmp_path / "src", "--out", tmp_path / "root")
    assert code == 0, err[-3000:]
    assert set(_read(tmp_path / "root")) == {("src/deep", "top.py"),
                                             ("src/deep", "d/" * depth + "deep.py")}
  finally:  # bottom up: shutil.rmtree (and so pytest's clean-up) recurses once per level too
    (folders[-1] / "deep.py").unlink()
    for folder in reversed(folders[1:]):
      folder.rmdir()


def test_a_file_in_every_folder_of_a_deep_chain_is_resolved_in_lookups_linear_in_depth(
    tmp_path, capsys, monkeypatch):
  """os.path.realpath looks up each part of a path: a file at depth N cost ~N lookups, a chain
  with a file in each of its N folders ~N^2/2, and 2,000 such folders took 117 s to import
  (helper-27). Resolved folder by folder (corpus.RealPaths), the import's lstat calls grow with
  the folders (300 here), not with their square (~45,000 before)."""
  depth = 300
  folder = tmp_path / "src" / "chain"
  for level in range(depth):
    folder = folder / "d"
    _write(folder / f"f{level}.py", f"x{level} = {level}\n")
  calls = []
  lstat = os.lstat
  monkeypatch.setattr(os, "lstat", lambda *a, **k: calls.append(a) or lstat(*a, **k))
  code, err = _import(capsys, tmp_path / "src", "--out", tmp_path / "root")
  monkeypatch.undo()
  assert code == 0, err[-3000:]
  assert len(_read(tmp_path / "root")) == depth
  assert len(calls) < 20 * depth


def test_real_paths_resolve_as_realpath_does(tmp_path):
  top = tmp_path / "top"
  _write(top / "a" / "b" / "x.py", "x = 1\n")
  (top / "link_in").symlink_to(top / "a")  # a folder link inside
  (top / "a" / "up").symlink_to("../a/b")  # relative, through ".."
  (top / "a" / "b" / "y.py").symlink_to("x.py")  # a file link
  (top / "out").symlink_to(tmp_path)  # a link out
  real_top = os.path.realpath(top)
  real_paths = corpus.RealPaths(real_top)
  for rel in ["a/b/x.py", "link_in/b/x.py", "a/up/x.py", "link_in/up/y.py", "a/b/y.py",
              "out/top/a/b/x.py", "missing/z.py", "a/b/x.py"]:
    assert real_paths.of(rel) == os.path.realpath(os.path.join(real_top, rel)), rel


def test_force_never_removes_a_source_or_anything_beside_an_earlier_root(plain, tmp_path, capsys):
  out = tmp_path / "root"
  (out / "v3").mkdir(parents=True)
  mine = out / "myrepos"
  _write(mine / "proj" / "a.py", "x = 1\n")
  _write(out / "notes.txt", "mine\n")
  before = test_utils.tree_listing(out)
  code, err = _import(capsys, mine, "--out", out, "--force")
  assert code == 2 and err.count("\n") == 1 and f"SRC {mine} is inside --out {out}" in err
  assert test_utils.tree_listing(out) == before
  # Another source: what lies beside v3/ is the user's, so this is no earlier root to replace.
  code, err = _import(capsys, plain, "--out", out, "--force")
  assert code == 2 and err.count("\n") == 1 and "not an FLCC root" in err
  assert "--force" not in err
  assert test_utils.tree_listing(out) == before


def test_a_symlinked_out_is_refused_and_leaves_nothing_beside_it(plain, tmp_path, capsys):
  real = tmp_path / "real"
  assert _import(capsys, plain, "--out", real)[0] == 0
  before = test_utils.tree_listing(real)
  link = tmp_path / "link"
  link.symlink_to(real, target_is_directory=True)
  for force in ([], ["--force"]):
    code, err = _import(capsys, plain, "--out", link, *force)
    assert code == 2 and err.count("\n") == 1 and f"--out {link} is a symbolic link" in err
  assert test_utils.tree_listing(real) == before and link.resolve() == real
  assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "real", "secret.py", "src"]


def test_an_existing_report_is_replaced_only_with_force(plain, tmp_path, capsys):
  report = tmp_path / "results.json"
  report.write_text("my own results\n")
  code, err = _import(capsys, plain, "--out", tmp_path / "root", "--report", report)
  assert code == 2 and err.count("\n") == 1 and f"--report {report} exists" in err
  assert "--force" in err
  assert report.read_text() == "my own results\n"
  assert not (tmp_path / "root").exists()  # refused before the import, not after it
  assert _import(capsys, plain, "--out", tmp_path / "root", "--report", report, "--force")[0] == 0
  assert json.loads(report.read_text())["repositories"] == 2


def _report_folder(tmp_path):
  (tmp_path / "reports").mkdir()
  return tmp_path / "reports"


def _report_under_a_file(tmp_path):
  (tmp_path / "results").write_text("a file\n")
  return tmp_path / "results" / "report.json"


def _report_fifo(tmp_path):
  os.mkfifo(tmp_path / "report.json")
  return tmp_path / "report.json"


def _report_in_out(tmp_path):
  return tmp_path / "root" / "report.json"


def _report_over_a_source_file(tmp_path):
  # The `plain` fixture's: with --force the report replaced it (helper-18's audit).
  return tmp_path / "src" / "mycode" / "bad" / "ok.py"


def _report_in_a_source_folder(tmp_path):
  return tmp_path / "src" / "mycode" / "good" / "report.json"


def _report_in_a_read_only_folder(tmp_path):
  if os.geteuid() == 0:
    pytest.skip("root writes in a read-only folder")
  (tmp_path / "ro").mkdir(mode=0o555)
  return tmp_path / "ro" / "report.json"


@pytest.mark.parametrize("report, message", [
    (_report_folder, "is a folder"),
    (_report_under_a_file, "results is not a folder"),
    (_report_fifo, "exists and is not a plain file"),
    (_report_in_out, "is inside --out"),
    (_report_over_a_source_file, "is inside the source"),
    (_report_in_a_source_folder, "is inside the source"),
    (_report_in_a_read_only_folder, "ro cannot be written in"),
])
def test_a_report_that_cannot_be_written_is_refused_before_the_import(report, message, plain,
                                                                      tmp_path, capsys):
  path = report(tmp_path)
  before = sorted(tmp_path.rglob("*"))
  for force in ([], ["--force"]):
    code, err = _import(capsys, plain, "--out", tmp_path / "root", "--report", path, *force)
    assert code == 2 and err.count("\n") == 1 and "--report" in err and message in err, err
  assert sorted(tmp_path.rglob("*")) == before  # no root written, nothing replaced
  assert (plain / "bad" / "ok.py").read_text() == "ok = 1\n"


def test_odd_dist_info_contents_never_stop_an_import(site_packages, tmp_path, capsys):
  gamma = site_packages / "gamma-1.0.dist-info"
  _write(site_packages / "gamma" / "g.py", "G = 3\n")
  _write(gamma / "METADATA", "Name: Gämma-Überpaket\nVersion: 1.0\n".encode("utf-8"))
  _write(gamma / "RECORD", "gamma/g.py,,\n")
  _write(gamma / "direct_url.json", '{"dir_info": 1}')  # no object: not an editable install
  code, err = _import(capsys, site_packages, "--out", tmp_path / "root")
  assert code == 0, err
  assert "gamma/g.py" in {path for _, path in _read(tmp_path / "root")}


def test_the_summary_counts_as_read_only_what_was_read():
  """A 20 MB file dropped as too_large was counted as 20 MB read (helper-43's audit)."""
  report = corpus.Report()
  report.add("kept", 1_000_000)
  report.add("binary", 500_000)  # read, then dropped
  report.add("too_large", 20_000_000)  # its size, never read
  line = corpus.summary(report, pathlib.Path("root"), 1.0).splitlines()[0]
  assert "(1.5 MB read in 1.0 s, 1.5 MB/s)" in line, line
