"""The repository and the code below the cursor as the engine's context, proved with the shipped
model: completions only knowable from there (code_t5/engine/repository.py, copy_cache.py,
line_retrieval.py, similar_code.py)."""

import dataclasses
import json
import os
import pathlib
import subprocess
import sys

import pytest

from code_t5.engine import complete
from code_t5.engine import repository
from code_t5.engine import serve
from code_t5 import test_utils

UTILS = '''"""Helpers."""


def frobnicate_widget_registry(config, strict=False):
    """Builds the registry."""
    return {"config": config, "strict": strict}
'''
OTHER = '''from pkg import utils


def setup(config):
    registry = utils.frobnicate_widget_registry(config, strict=True)
    return registry
'''
MAIN = "from pkg import utils\n\n\ndef main(config):\n    table = utils.frob"
# The name, the call and its arguments are nowhere in MAIN: only pkg/other.py holds them.
WANTED = "nicate_widget_registry(config, strict=True)"
# What the engine ranks first, not whether the shipped model's gate would show it.
EVERY_LINE_3 = complete.EngineOptions(top=3, min_score=complete.DEFAULT_MIN_SCORE)


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> pathlib.Path:
  root = tmp_path_factory.mktemp("project")
  (root / "pkg").mkdir()
  (root / "pkg" / "utils.py").write_text(UTILS)
  (root / "pkg" / "other.py").write_text(OTHER)
  (root / "pkg" / "main.py").write_text(MAIN + "\n")
  return root


@pytest.fixture(scope="module")
def completer():
  return complete.Completer(test_utils.PRETRAINED, EVERY_LINE_3)


def test_a_name_defined_in_another_file_is_completed_only_with_the_repository(project):
  with_repo = complete.Completer(test_utils.PRETRAINED, EVERY_LINE_3,
                                 repo=project)
  assert with_repo.repository.files == 3
  path = with_repo.path_in_repo(project / "pkg" / "main.py")
  assert path == "pkg/main.py"
  assert with_repo.complete_at(MAIN, len(MAIN), path=path).completion == WANTED
  without = complete.Completer(test_utils.PRETRAINED, EVERY_LINE_3)
  assert WANTED not in [c.text for c in without.complete_at(MAIN, len(MAIN)).candidates]


def test_the_cursor_s_own_saved_file_is_not_read_as_another_file(project, tmp_path):
  # main.py on disk holds the answer; the editor's text of main.py is the request. Read as its
  # own path, the saved copy is left out, and only the editor's text counts.
  (tmp_path / "main.py").write_text("x = 1\nvalue = compute_the_answer_from(x, 42)\n")
  prefix = "x = 1\nvalue = compute_"
  engine = complete.Completer(
      test_utils.PRETRAINED, complete.EngineOptions(top=5, min_score=complete.DEFAULT_MIN_SCORE),
      repo=tmp_path)
  assert "the_answer_from(x, 42)" == engine.complete_at(prefix, len(prefix)).completion
  own = [c.text for c in engine.complete_at(prefix, len(prefix), path="main.py").candidates]
  assert "the_answer_from(x, 42)" not in own


def test_a_call_only_the_code_below_names_is_completed_from_below(completer):
  text = ("import os\n\n\ndef load(path):\n    data = rea\n    return data\n\n\n"
          "def save(path, data):\n    written = read_stored_payload(path, mode=\"rb\")\n")
  cursor = text.index("    data = rea") + len("    data = rea")
  assert completer.complete_at(text, cursor).completion == "d_stored_payload(path, mode=\"rb\")"
  above_only = text[:cursor]
  assert completer.complete_at(above_only, cursor).completion != (
      "d_stored_payload(path, mode=\"rb\")")


def test_complete_and_serve_take_the_repository(project, tmp_path):
  target = f"{project / 'pkg' / 'main.py'}:5:23"
  env = dict(os.environ, CODE_T5_CACHE=str(tmp_path / "cache"))
  for _ in range(2):  # the second time from the pieces the first saved
    done = subprocess.run([sys.executable, "-m", "code_t5.cli", "complete", target,
                           "--checkpoint", str(test_utils.PRETRAINED), "--repo", str(project),
                           "--min-score=-inf"],
                          capture_output=True, text=True, timeout=120, check=False, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [WANTED]
    assert len(list((tmp_path / "cache" / "pieces").iterdir())) == 1
  request = json.dumps({"id": 1, "prefix": MAIN, "path": "pkg/main.py"})
  served = subprocess.run([sys.executable, "-m", "code_t5.cli", "serve", "--checkpoint",
                           str(test_utils.PRETRAINED), "--repo", str(project),
                         "--min-score=-inf"], input=request + "\n",
                          capture_output=True, text=True, timeout=120, check=False)
  assert served.returncode == 0, served.stderr
  assert json.loads(served.stdout)["completion"] == WANTED


def test_a_served_path_is_the_file_the_repository_names(project):
  """A request's "path" leaves that file's saved copy out: spelt another way, it was taken for
  another file, and the copy was offered (helper-17's audit)."""
  completer = complete.Completer(test_utils.PRETRAINED, repo=project)
  for given in ["pkg/main.py", "./pkg/main.py", "pkg//main.py", "pkg/../pkg/main.py",
                str(project / "pkg" / "main.py")]:
    assert serve._path(completer, {"path": given}) == "pkg/main.py", given
  for outside in ["../main.py", "/elsewhere/pkg/main.py"]:
    assert serve._path(completer, {"path": outside}) == "", outside


def test_a_missing_repository_is_a_one_line_error(tmp_path):
  done = subprocess.run([sys.executable, "-m", "code_t5.cli", "complete", "-", "--checkpoint",
                         str(test_utils.PRETRAINED), "--repo", str(tmp_path / "nowhere")],
                        input="x = 1\n", capture_output=True, text=True, timeout=120, check=False)
  assert done.returncode != 0
  assert done.stderr.strip().splitlines() == [
      f"code-t5 complete: --repo {tmp_path / 'nowhere'} is not a directory: give the project's "
      "folder"]


def test_a_folder_too_large_to_index_in_time_is_cut_and_the_user_told(project, monkeypatch):
  lines = []
  whole = complete.Completer(test_utils.PRETRAINED, repo=project, echo=lines.append)
  assert whole.repository.files == 3 and not whole.repository.cut and lines == []
  monkeypatch.setattr(repository.__name__ + ".INDEX_SECONDS", -1.0)  # out of time at once
  cut = complete.Completer(test_utils.PRETRAINED, repo=project, echo=lines.append)
  assert cut.repository.files == 0 and cut.repository.cut
  assert lines == [f"--repo {project}: indexed 0 Python files in -1 s, its limit; the rest of "
                   "the folder is left out (give the project's own folder)"]


SIMILAR_OTHER = '''import logging

from pkg import registry


def setup(config):
    logging.basicConfig(level=logging.INFO)
    handlers = registry.load_handlers(config)
    table = registry.collect_widget_handlers(config, strict=True)
    return table
'''
SIMILAR_MAIN = '''import logging

from pkg import registry


def setup_again(config):
    logging.basicConfig(level=logging.INFO)
    handlers = registry.load_handlers(config)
    table = registry.collect_w'''


def test_the_model_reads_the_most_similar_code_of_the_repository():
  # Cache and whole-line retrieval off: only the window of pkg/other.py that similar_code puts
  # before the context can tell the model how `collect_w` goes on.
  options = complete.EngineOptions(top=3, min_score=complete.DEFAULT_MIN_SCORE, cache=False,
                                   retrieval=False)
  engine = complete.Completer(test_utils.PRETRAINED, options)
  project = repository.Repository(engine.tokenizer)
  project.add("pkg/other.py", SIMILAR_OTHER)
  lines = engine.complete(SIMILAR_MAIN, repository=project, path="pkg/main.py").candidates
  # Among its top lines (the first is the commoner `idgets(config)`); never without the window.
  assert any(line.text.startswith("idget_handlers") for line in lines)
  engine.options = dataclasses.replace(options, similar=False)
  lines = engine.complete(SIMILAR_MAIN, repository=project, path="pkg/main.py").candidates
  assert not any(line.text.startswith("idget_h") for line in lines)


def test_folders_nested_past_python_s_recursion_limit_are_read(tmp_path):
  """Python 3.11's os.walk recursed once per level: a stranger's 1,100 nested folders raised
  RecursionError in `complete --repo` and `serve --repo`."""
  deep = tmp_path
  for _ in range(1100):  # (pathlib's mkdir(parents=True) recurses too)
    deep = deep / "d"
    deep.mkdir()
  bottom = deep / "bottom.py"
  bottom.write_text("BOTTOM = 1\n")
  (tmp_path / "top.py").write_text("TOP = 1\n")
  try:
    found = list(repository.iter_python_files(tmp_path, max_file_bytes=1 << 20))
    assert found == [tmp_path / "top.py", bottom]
  finally:
    bottom.unlink()  # bottom up: shutil.rmtree (pytest's clean-up) recurses too
    while deep != tmp_path:
      deep.rmdir()
      deep = deep.parent


def test_python_files_come_in_a_stable_order_without_links_hidden_folders_or_large_files(
    tmp_path):
  # A folder's own files by name, then each subfolder's, by name (os.walk's order, sorted): the
  # groups a repository is encoded in, and so what is saved of it, do not depend on the disk.
  for name in ("b.py", "a.py", "pkg/z.py", "pkg/sub/m.py", "pkg/a.py", "pkg2/c.py",
               ".hidden/h.py", "__pycache__/c.py", "notes.txt"):
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_text("x = 1\n")
  (tmp_path / "large.py").write_text("#" * 200)
  outside = tmp_path.parent / f"{tmp_path.name}-outside"
  outside.mkdir()
  (outside / "o.py").write_text("o = 1\n")
  (tmp_path / "linked").symlink_to(outside)
  (tmp_path / "linked.py").symlink_to(outside / "o.py")
  os.mkfifo(tmp_path / "fifo.py")
  found = repository.iter_python_files(tmp_path, max_file_bytes=100)
  assert [p.relative_to(tmp_path).as_posix() for p in found] == [
      "a.py", "b.py", "pkg/a.py", "pkg/z.py", "pkg/sub/m.py", "pkg2/c.py"]


def test_a_file_swapped_after_the_listing_is_not_followed_or_waited_on(completer, tmp_path,
                                                                       monkeypatch):
  # The listing skips links, FIFOs and large files; the read that followed it took the path as
  # it then was (helper-48's audit): the listing is made to give what a swap since would leave.
  outside = tmp_path.parent / f"{tmp_path.name}-outside.py"
  outside.write_text("secret = 1\n")
  (tmp_path / "a.py").write_text("a = 1\r\nb = 2\n")
  (tmp_path / "linked.py").symlink_to(outside)
  os.mkfifo(tmp_path / "fifo.py")
  (tmp_path / "large.py").write_text("#" * (repository.MAX_FILE_BYTES + 1))
  elsewhere = tmp_path.parent / f"{tmp_path.name}-elsewhere"  # a folder swapped in for pkg/
  elsewhere.mkdir()
  (elsewhere / "b.py").write_text("secret = 2\n")
  (tmp_path / "pkg").symlink_to(elsewhere)
  status = os.stat(tmp_path / "a.py")
  monkeypatch.setattr(repository, "python_files_and_status", lambda folder, max_bytes: [
      (tmp_path / name, status) for name in ("a.py", "fifo.py", "large.py", "linked.py",
                                             "pkg/b.py")])
  index = repository.Repository.of_folder(tmp_path, completer.tokenizer)
  assert sorted(index._digests) == ["a.py"]  # pylint: disable=protected-access
  # Line ends as Python reads text, the same when the file is read again.
  assert index._digests["a.py"] == repository._digest("a = 1\nb = 2\n")  # pylint: disable=protected-access
  assert repository.read_again(index, tmp_path, "a.py")
  assert index._digests["a.py"] == repository._digest("a = 1\nb = 2\n")  # pylint: disable=protected-access
  repository.read_again(index, tmp_path, "pkg/b.py")
  assert sorted(index._digests) == ["a.py"]  # pylint: disable=protected-access


def test_a_look_gives_what_changed_on_disk_since_the_index_read_it(completer, tmp_path):
  (tmp_path / "a.py").write_text("a = 1\n")
  (tmp_path / "b.py").write_text("b = 1\n")
  index = repository.Repository.of_folder(tmp_path, completer.tokenizer)
  look = repository.DiskLook(tmp_path, index)
  (tmp_path / "a.py").write_text("a = 'two'\n")  # (another size: seen whatever the clock)
  (tmp_path / "c.py").write_text("c = 1\n")
  (tmp_path / "b.py").unlink()
  assert look.look() == ["a.py", "b.py", "c.py"]
  assert look.look() == []
  for path in ("a.py", "b.py", "c.py"):
    assert repository.read_again(index, tmp_path, path)
  assert sorted(index._digests) == ["a.py", "c.py"]  # pylint: disable=protected-access


def test_a_file_unreadable_for_a_while_is_read_at_the_next_look(completer, tmp_path, monkeypatch):
  """A read that failed for a reason that passes (permissions, descriptors) dropped the file until
  it changed again (helper-41's audit: chmod 000, then 644: never read)."""
  (tmp_path / "a.py").write_text("a = 1\n")
  index = repository.Repository.of_folder(tmp_path, completer.tokenizer)
  look = repository.DiskLook(tmp_path, index)
  (tmp_path / "a.py").write_text("a = 'changed'\n")
  assert look.look() == ["a.py"]
  real_open = repository.stranger_paths.open_regular

  def refused(path, *args, **kwargs):
    raise PermissionError(13, "Permission denied", str(path))

  monkeypatch.setattr(repository.stranger_paths, "open_regular", refused)
  assert repository.read_again_for_a_while(index, tmp_path, ["a.py"], look) == 1
  assert "a.py" not in index._digests  # pylint: disable=protected-access
  monkeypatch.setattr(repository.stranger_paths, "open_regular", real_open)
  assert look.look() == ["a.py"]  # unchanged on disk, given again
  assert repository.read_again_for_a_while(index, tmp_path, ["a.py"], look) == 1
  assert index._digests["a.py"] == repository._digest("a = 'changed'\n")  # pylint: disable=protected-access
  assert look.look() == []
  (tmp_path / "b.py").write_bytes(b"\xff = 1\n")  # not UTF-8: what the file is, not tried again
  assert look.look() == ["b.py"]
  assert repository.read_again_for_a_while(index, tmp_path, ["b.py"], look) == 1
  assert look.look() == []


def test_files_are_read_again_for_a_while_at_a_time(completer, tmp_path, monkeypatch):
  """A request waited for every changed file before it (16 files of 1 MB: 7.3 s; helper-41's
  audit): files are read until READ_AGAIN_SECONDS are spent, at least one."""
  index = repository.Repository(completer.tokenizer)
  for name in ("a.py", "b.py", "c.py"):
    (tmp_path / name).write_text(f"{name[0]} = 1\n")
  monkeypatch.setattr(repository, "READ_AGAIN_SECONDS", 0.0)
  assert repository.read_again_for_a_while(index, tmp_path, ["a.py", "b.py", "c.py"]) == 1
  monkeypatch.setattr(repository, "READ_AGAIN_SECONDS", 60.0)
  assert repository.read_again_for_a_while(index, tmp_path, ["b.py", "c.py"]) == 2
  assert sorted(index._digests) == ["a.py", "b.py", "c.py"]  # pylint: disable=protected-access
