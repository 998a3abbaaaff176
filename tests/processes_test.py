"""processes: the lock, temporaries of dead writers, children that die with their parent."""

import errno
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from code_t5 import errors
from code_t5 import processes
from code_t5 import test_utils


def _dead_pid() -> int:
  child = subprocess.Popen([sys.executable, "-c", "pass"])
  child.wait()
  return child.pid


def test_a_lock_left_by_a_dead_process_is_taken_over(tmp_path):
  lock = tmp_path / "train.lock"
  lock.write_text(f"{_dead_pid()}\n")  # what a kill -9 of the holder leaves
  with processes.exclusive_lock(lock, "training"):
    assert lock.read_text() == f"{os.getpid()}\n"
    with pytest.raises(processes.LockedError, match=(
        rf"^training already \(process {os.getpid()}, lock {lock}\): stop it first, or wait "
        "for it to finish$")):
      with processes.exclusive_lock(lock, "training"):
        pass
  with processes.exclusive_lock(lock, "training"):  # released at the end of the block
    pass


def test_only_temporaries_of_dead_writers_on_this_host_are_removed(tmp_path):
  name = processes.temporary_name("checkpoint_4")
  assert name == f"checkpoint_4.tmp-{processes.host()}-{os.getpid()}"
  mine = tmp_path / name  # a live writer: this process
  dead_pid = _dead_pid()
  dead = tmp_path / name.replace(f"-{os.getpid()}", f"-{dead_pid}")
  dead_random = tmp_path / (dead.name + "-x8_a9b")  # sources.new_folder adds mkdtemp's suffix
  other_host = tmp_path / f"checkpoint_4.tmp-otherhost-{dead_pid}"
  unrelated = tmp_path / f"notes.tmp-{dead_pid}"
  finished = tmp_path / "checkpoint_4"
  for path in (mine, dead, dead_random, other_host, unrelated, finished):
    path.mkdir()
    (path / "file").write_text("x")
  removed = processes.remove_stale_temporaries(tmp_path)
  assert sorted(removed) == sorted([dead, dead_random])
  assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
      p.name for p in (mine, other_host, unrelated, finished))


def test_a_dead_writer_s_temporary_link_or_file_is_removed_never_what_a_link_points_to(
    tmp_path):
  """A killed import left its --out link's temporary (`.root.tmp-...`, a link); rmtree cannot
  remove a link, so every later run left it there."""
  name = processes.temporary_name("root").replace(f"-{os.getpid()}", f"-{_dead_pid()}")
  target = tmp_path / "elsewhere"
  target.mkdir()
  (target / "keep").write_text("x")
  (tmp_path / name).symlink_to(target)
  (tmp_path / (name + "-file")).write_text("half a report")
  removed = processes.remove_stale_temporaries(tmp_path)
  assert sorted(removed) == sorted([tmp_path / name, tmp_path / (name + "-file")])
  assert [p.name for p in tmp_path.iterdir()] == ["elsewhere"]
  assert (target / "keep").read_text() == "x"


def test_a_file_a_killed_writer_left_is_removed_by_the_next_write_into_its_folder(tmp_path):
  out = tmp_path / "report.json"
  processes.write_file_beside(out, lambda f: f.write("first"))
  # What a writer killed mid-write left: its temporary file, named by its (now dead) pid.
  left = tmp_path / (processes.temporary_name(out.name).replace(
      f"-{os.getpid()}", f"-{_dead_pid()}") + "-k2x9_q")
  left.write_text("half a rep")
  processes.write_file_beside(out, lambda f: f.write("second"))
  assert [p.name for p in tmp_path.iterdir()] == ["report.json"]
  assert out.read_text() == "second"


def test_a_child_dies_when_its_parent_is_killed(tmp_path):
  parent = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
      import sys, time
      from code_t5 import processes
      child = processes.start_child([sys.executable, "-c", "import time; time.sleep(3600)"])
      print(child.pid, flush=True)
      time.sleep(600)
  """)], stdout=subprocess.PIPE, text=True)
  child = int(parent.stdout.readline())
  assert processes.pid_alive(child)
  assert os.getpgid(child) == child  # its own process group
  parent.kill()
  parent.wait()
  test_utils.wait_for(lambda: not processes.pid_alive(child), "the child to die with its parent")


def test_a_process_that_imports_code_t5_exits_without_walking_what_it_built():
  """Python's shutdown ends with a garbage collection over every object left, which for a process
  that built a TensorFlow graph takes seconds; code_t5 freezes what is alive at exit out of it
  (processes.exit_without_final_collection). An atexit handler registered before the import
  runs after code_t5's, and counts what is frozen."""
  script = textwrap.dedent("""
      import atexit, gc
      atexit.register(lambda: print("frozen at exit:", gc.get_freeze_count(), flush=True))
      import code_t5
      """)
  result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"), check=True)
  frozen = int(result.stdout.split("frozen at exit:")[1])
  assert frozen > 100_000  # TensorFlow's, seqio's and t5's modules, functions and registries


def _output(folder, name: str, files: int = 5):
  """A finished output folder of `files` files and a sub-folder, each naming `name`."""
  folder.mkdir()
  (folder / "sub").mkdir()
  for i in range(files):
    (folder / ("sub" if i % 2 else "") / f"f{i}").write_text(f"{name} {i}")


@pytest.mark.parametrize("exchange", [True, False], ids=["swapped", "renamed aside"])
def test_an_output_replaced_is_never_missing_or_partial_whenever_a_ctrl_c_comes(
    tmp_path, monkeypatch, exchange):
  """helper-38's audit: `pack --force` interrupted while it removed the earlier pack left a part
  of it (a pack that `complete` could not load and `pack --force` refused to replace); `import
  --force` and `convert --force` interrupted between their two renames left no output."""
  if not exchange:  # a file system or system without renameat2's RENAME_EXCHANGE
    monkeypatch.setattr(processes, "_exchange", lambda first, second: False)
  final, new = tmp_path / "out", tmp_path / processes.temporary_name("out")

  def prepare():
    for folder in tmp_path.iterdir():
      shutil.rmtree(folder)
    _output(final, "old")
    _output(new, "new")

  old_files, new_files = _tree_of("old"), _tree_of("new")

  def check(interrupted, result):
    del result
    assert test_utils.tree_listing(final) in (old_files, new_files), interrupted
    left = [p.name for p in tmp_path.iterdir() if p != final]
    # What is left beside is a temporary the next writer removes (never a second output).
    assert all(processes.owner_gone(name) or str(os.getpid()) in name for name in left), left
    if not interrupted:
      assert test_utils.tree_listing(final) == new_files and left == []

  points = test_utils.interrupt_at_each_point(
      prepare, lambda: processes.move_into_place(new, final, replace=True), check)
  assert points > 10


def _tree_of(name: str) -> dict:
  return {("sub/" if i % 2 else "") + f"f{i}": f"{name} {i}".encode() for i in range(5)}


def test_without_replace_an_output_another_run_made_meanwhile_is_kept(tmp_path):
  """helper-39's audit: two imports, packs or vocabularies into one --out at once both wrote it,
  the second replacing the first's without --force."""
  final, new = tmp_path / "out", tmp_path / processes.temporary_name("out")
  _output(new, "new")
  processes.move_into_place(new, final, replace=False)
  assert test_utils.tree_listing(final) == _tree_of("new")
  _output(new, "second")
  with pytest.raises(processes.OutputAppeared, match=(
      rf"^{final} appeared while this run was writing it \(another run\?\): it is kept; pass "
      "--force to replace it$")):
    processes.move_into_place(new, final, replace=False)
  assert test_utils.tree_listing(final) == _tree_of("new")


def test_without_replace_a_file_another_run_wrote_meanwhile_is_kept(tmp_path):
  out = tmp_path / "v.model"
  processes.write_file_beside(out, lambda f: f.write("first"), replace=False)
  with pytest.raises(processes.OutputAppeared, match=f"^{out} appeared while this run"):
    processes.write_file_beside(out, lambda f: f.write("second"), replace=False)
  assert out.read_text() == "first" and [p.name for p in tmp_path.iterdir()] == ["v.model"]
  processes.write_file_beside(out, lambda f: f.write("third"))  # --force
  assert out.read_text() == "third" and [p.name for p in tmp_path.iterdir()] == ["v.model"]


@pytest.mark.parametrize("refusal", ["EPERM", "EOPNOTSUPP", "EXDEV", "EMLINK"])
def test_without_replace_a_file_system_without_hard_links_still_gets_the_file(tmp_path,
                                                                              monkeypatch, refusal):
  """A new name is made with a hard link (it fails where `out` is); a file system that makes
  none (FAT, some network and FUSE mounts) answers one of these errors, and the file is checked
  for, then renamed into place. The link's refusal is played here: this machine's file systems
  all make links."""
  def no_links(source, target):
    raise OSError(getattr(errno, refusal), os.strerror(getattr(errno, refusal)))

  monkeypatch.setattr(os, "link", no_links)
  out = tmp_path / "v.model"
  processes.write_file_beside(out, lambda f: f.write("first"), replace=False)
  assert out.read_text() == "first" and [p.name for p in tmp_path.iterdir()] == ["v.model"]
  with pytest.raises(processes.OutputAppeared, match=f"^{out} appeared while this run"):
    processes.write_file_beside(out, lambda f: f.write("second"), replace=False)
  assert out.read_text() == "first" and [p.name for p in tmp_path.iterdir()] == ["v.model"]


def test_without_replace_another_failure_to_link_is_raised_and_leaves_nothing(tmp_path,
                                                                              monkeypatch):
  def full(source, target):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # not a file system without links

  monkeypatch.setattr(os, "link", full)
  with pytest.raises(OSError, match="No space left"):
    processes.write_file_beside(tmp_path / "v.model", lambda f: f.write("x"), replace=False)
  assert list(tmp_path.iterdir()) == []


def test_a_write_that_fails_removes_the_folders_it_made_and_no_other(tmp_path):
  """A run whose --out was in folders it made (vocab, baseline) and that failed left them."""
  (tmp_path / "kept").mkdir()

  def fails(f):
    f.write("half")
    raise RuntimeError("the work failed")

  with pytest.raises(RuntimeError, match="the work failed"):
    processes.write_file_beside(tmp_path / "kept" / "made" / "deeper" / "v.model", fails,
                                make_parents=True)
  assert [p.name for p in tmp_path.iterdir()] == ["kept"]
  assert list((tmp_path / "kept").iterdir()) == []
  processes.write_file_beside(tmp_path / "kept" / "made" / "v.model", lambda f: f.write("x"),
                              make_parents=True)
  assert (tmp_path / "kept" / "made" / "v.model").read_text() == "x"


def test_checking_an_out_leaves_no_folder_for_a_run_that_fails_later(tmp_path):
  out = tmp_path / "made" / "deeper" / "results.json"
  processes.check_output_file(out, False, f"the results {out}", ValueError)
  assert list(tmp_path.iterdir()) == []
  (tmp_path / "in-the-way").write_text("a file")
  with pytest.raises(errors.WriteError, match="^cannot write the results: Not a directory: "
                     "give another --out$"):
    processes.check_output_file(tmp_path / "in-the-way" / "r.json", False, "the results",
                                ValueError)
  assert sorted(p.name for p in tmp_path.iterdir()) == ["in-the-way"]


def test_made_folders_are_only_those_this_call_made(tmp_path):
  """`new/../kept` counted `kept` as made (it was not there by that spelling) and a failed run
  removed the user's empty folder; a mkdir failing part way left those made before it
  (helper-45's review)."""
  (tmp_path / "kept").mkdir()
  made = processes.make_folders(tmp_path / "new" / ".." / "kept")
  assert made == [tmp_path / "new"]
  processes.remove_folders(made)
  assert [p.name for p in tmp_path.iterdir()] == ["kept"]
  with pytest.raises(OSError):  # a name too long for the file system, below two new folders
    processes.make_folders(tmp_path / "made" / "deeper" / ("x" * 300))
  assert [p.name for p in tmp_path.iterdir()] == ["kept"]


def test_a_write_into_a_missing_folder_makes_it_only_when_asked(tmp_path):
  """fit_confidence.py's --about in a mistyped model dir made that dir (helper-45's review)."""
  with pytest.raises(FileNotFoundError):
    processes.write_file_beside(tmp_path / "my-modle" / "about.json", lambda f: f.write("{}"))
  assert list(tmp_path.iterdir()) == []
