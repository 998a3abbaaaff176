"""An output that cannot be written: one line saying what, why and what to do; nothing left.

`import`, `prepare`, `pack`, `convert` and `complete` (writing a model dir's runtime/) write into a
read-only folder or onto a full disk. How the tests get one: they run as root here, and root
ignores permissions (chmod), so each command runs in a private mount namespace (`unshare -m`)
where its output folder is a small tmpfs: full (ENOSPC) or remounted read-only (EROFS). Where
that is not allowed (no CAP_SYS_ADMIN, no unshare) those tests are skipped; a path through a file
(ENOTDIR) needs no privilege and always runs.
"""

import errno
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from code_t5 import errors
from code_t5 import test_utils

REPO = pathlib.Path(__file__).resolve().parent.parent

# mnt size ro setup list err command...: mounts a tmpfs of `size` at `mnt`, runs `setup` (shell),
# remounts it read-only if ro = "ro", runs the command with its stderr in `err`, lists the files
# left under `mnt` in `list`, and exits with the command's status. The mount dies with the
# namespace, whatever happens.
_IN_TMPFS = """
set -e
mnt=$1 size=$2 ro=$3 setup=$4 list=$5 err=$6
shift 6
mount -t tmpfs -o size="$size" tmpfs "$mnt"
eval "$setup"
[ "$ro" = ro ] && mount -o remount,ro "$mnt"
set +e
"$@" 2>"$err"
rc=$?
find "$mnt" -type f | sort >"$list"
exit $rc
"""


def _can_mount() -> bool:
  folder = pathlib.Path(os.environ.get("TMPDIR", "/tmp"))
  try:
    return subprocess.run(["unshare", "-m", "sh", "-c", 'mount -t tmpfs -o size=64k tmpfs "$1"',
                           "sh", str(folder)], capture_output=True, timeout=30).returncode == 0
  except (OSError, subprocess.TimeoutExpired):
    return False


needs_mount = pytest.mark.skipif(not _can_mount(), reason="needs `unshare -m` and mount (root "
                                 "with CAP_SYS_ADMIN) for a private full or read-only tmpfs")

CODE_T5 = [sys.executable, "-m", "code_t5.cli"]


def _source_tree(tmp_path) -> pathlib.Path:
  """A folder of one repository whose file is bigger than a 4 KiB tmpfs."""
  src = tmp_path / "src"
  (src / "mine").mkdir(parents=True)
  (src / "mine" / "big.py").write_text("".join(f"x_{i} = {i}\n" for i in range(3000)))
  return src


def _model_without_runtime(tmp_path) -> pathlib.Path:
  model = tmp_path / "model"
  shutil.copytree(test_utils.PRETRAINED, model, ignore=shutil.ignore_patterns("runtime"))
  return model


# command -> (tmpfs size that fills up, setup, arguments with MNT for the tmpfs, what is written)
def _cases(tmp_path):
  model = _model_without_runtime(tmp_path)
  return {
      "import": ("4k", "", [str(_source_tree(tmp_path)), "--out", "MNT/root"], "MNT/root"),
      "prepare": ("64k", "", ["--root", str(REPO / "dataset-dev"), "--prepared-dir", "MNT/prep"],
                  "MNT/prep"),
      "pack": ("1m", "", [str(test_utils.PRETRAINED), "--out", "MNT/pack"], "MNT/pack"),
      "convert": ("1m", "", ["--params-only", str(test_utils.PRETRAINED), "MNT/t5x"], "MNT/t5x"),
      # The runtime is written into the model dir: the model's files fill 10.5 of the 12 MB.
      "complete": ("12m", f'mkdir "$mnt/m" && cp {model}/* "$mnt/m/"',
                   ["--checkpoint", "MNT/m", str(REPO / "setup.py")], "MNT/m/runtime"),
      # The jobs that write into a folder of their own, which keeps its lock, log and command.
      "train": ("600k", "", ["--model-dir", "MNT/m", "--steps", "2", "--no-eval"], "MNT/m"),
      "cache": ("3m", "", ["--output-cache-dir", "MNT/c", "--tasks", "flcc_py_prefix_lm_v1",
                           "--min-shards", "1"], "MNT/c"),
      "export": ("16m", f'mkdir "$mnt/m" && cp {model}/* "$mnt/m/"', ["--checkpoint", "MNT/m"],
                 "MNT/m"),
  }


def _run_in_tmpfs(tmp_path, command, full):
  size, setup, args, written = _cases(tmp_path)[command]
  mnt = tmp_path / "mnt"
  mnt.mkdir()
  listing, err = tmp_path / "left.txt", tmp_path / "stderr.txt"
  argv = [a.replace("MNT", str(mnt)) for a in args]
  if not full and command in ("train", "cache"):  # a folder of the job's there already
    setup = f'mkdir "$mnt/{written[4:]}"'
  if command in ("complete", "export"):
    setup_files = sorted(f"{mnt}/m/{p.name}" for p in (tmp_path / "model").iterdir())
  else:
    setup_files = []
  result = subprocess.run(
      ["unshare", "-m", "sh", "-c", _IN_TMPFS, "sh", str(mnt), size if full else "30m",
       "" if full else "ro", setup, str(listing), str(err), *CODE_T5, command, *argv],
      capture_output=True, text=True, timeout=300, cwd=REPO,
      env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
  assert listing.exists(), result.stderr  # else the mount or the setup failed
  left = listing.read_text().split()
  return result.returncode, err.read_text(), left, setup_files, written.replace("MNT", str(mnt))


@needs_mount
@pytest.mark.parametrize("full", [True, False], ids=["full disk", "read-only"])
@pytest.mark.parametrize("command", ["import", "prepare", "pack", "convert", "complete"])
def test_an_output_that_cannot_be_written_is_one_line_and_leaves_nothing(tmp_path, command,
                                                                         full):
  code, stderr, left, setup_files, written = _run_in_tmpfs(tmp_path, command, full)
  why = os.strerror(errno.ENOSPC if full else errno.EROFS)
  lines = stderr.splitlines()
  if command == "complete":  # its progress line comes first
    assert lines[:1] == [f"writing the runtime of {pathlib.Path(written).parent} step "
                         f"{test_utils.PRETRAINED_STEP} (once)"], stderr[-3000:]
    lines = lines[1:]
  assert code == 2 and len(lines) == 1, stderr[-3000:]
  assert lines[0].startswith(f"code-t5 {command}: cannot write "), lines[0]
  assert written in lines[0] and f": {why}: " in lines[0], lines[0]
  assert ("free some space there" in lines[0]) == full
  assert left == setup_files  # nothing partial


# What each job's own folder keeps: its lock (a file kept, as processes.exclusive_lock says), the
# command's log and the command it ran.
_KEPT = {"train": ("m/train.lock", "m/logs/train.log", "m/logs/train_loss.tsv",
                   "m/commands/command"),
         "cache": ("c/cache.lock",),
         "export": ("m/logs/export.log", "m/commands/command")}


@needs_mount
@pytest.mark.parametrize("full", [True, False], ids=["full disk", "read-only"])
@pytest.mark.parametrize("command", ["train", "cache", "export"])
def test_a_job_that_cannot_write_is_one_line_and_leaves_nothing_half_written(tmp_path, command,
                                                                             full):
  """A read-only folder's lock, or a full disk under the trainer, the Beam job or the export,
  was a traceback (the trainer's read as out of memory); the full disk kept the trainer's
  unfinished save, the export's 8 MB and the cache job's Beam temporaries (helper-54's audit)."""
  code, stderr, left, setup_files, written = _run_in_tmpfs(tmp_path, command, full)
  why = os.strerror(errno.ENOSPC if full else errno.EROFS)
  last = stderr.splitlines()[-1]
  assert code == 2 and "Traceback" not in stderr, stderr[-3000:]
  assert last.startswith(f"code-t5 {command}: cannot write "), last
  assert written in last and f": {why}: " in last, last
  mnt = str(tmp_path / "mnt") + "/"
  assert set(left) - set(setup_files) <= {mnt + kept for kept in _KEPT[command]}, left


# Right below the file, pathlib's mkdir raised FileExistsError (EEXIST), a traceback (helper-18's
# audit); further below, the system says ENOTDIR.
@pytest.mark.parametrize("below", ["sub/out", "out"])
@pytest.mark.parametrize("command, what, flag", [("import", "the FLCC root", "--out"),
                                                 ("pack", "the pack", "--out"),
                                                 ("train", "the model dir", "--model-dir"),
                                                 ("baseline", "the results", "--out")])
def test_an_output_below_a_file_is_one_line(tmp_path, command, what, flag, below):
  (tmp_path / "file").write_text("not a folder")
  out = tmp_path / "file" / below
  args = {"import": [str(_source_tree(tmp_path)), "--out", str(out)],
          "pack": [str(test_utils.PRETRAINED), "--out", str(out)],
          "train": ["--model-dir", str(out), "--steps", "1"],
          "baseline": ["--root", str(REPO / "dataset-dev"), "--out", str(out)]}[command]
  result = subprocess.run([*CODE_T5, command, *args], capture_output=True, text=True,
                          timeout=120, cwd=REPO, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
  assert result.returncode == 2, result.stderr[-3000:]
  assert result.stderr.splitlines() == [
      f"code-t5 {command}: cannot write {what} {out}: {os.strerror(errno.ENOTDIR)}: give "
      f"another {flag}"]
  assert (tmp_path / "file").read_text() == "not a folder"


def test_only_failed_writes_of_the_output_become_write_errors(tmp_path):
  out = tmp_path / "out"
  with pytest.raises(errors.WriteError, match=r"^cannot write X: No space left on device: free"):
    with errors.writing("X", out, "give another --out"):
      raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # a write() has no file name
  for error in (OSError(errno.EACCES, "Permission denied", "/elsewhere/input.txt"),  # not ours
                FileNotFoundError(errno.ENOENT, "No such file or directory", str(out)),  # a bug
                ValueError("Permission denied")):  # not an OSError
    with pytest.raises(type(error)):
      with errors.writing("X", out, "give another --out"):
        raise error


@needs_mount
def test_a_full_cache_is_a_note_and_nothing_else(tmp_path):
  # np.savez left its archive open when a write failed: its finalizer printed a 7-line
  # "Exception ignored" traceback beside the note (helper-54's audit).
  mnt, listing, err = tmp_path / "mnt", tmp_path / "left.txt", tmp_path / "stderr.txt"
  mnt.mkdir()
  out = tmp_path / "results.json"
  result = subprocess.run(
      ["unshare", "-m", "sh", "-c", _IN_TMPFS, "sh", str(mnt), "1m", "", "", str(listing),
       str(err), *CODE_T5, "baseline", "--root", str(REPO / "dataset-dev"), "--max-files", "3",
       "--ngram-cache", f"{mnt}/ngram", "--out", str(out)],
      capture_output=True, text=True, timeout=600, cwd=REPO,
      env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
  stderr = err.read_text()
  assert result.returncode == 0 and out.exists(), stderr[-3000:]
  assert "not cached: cannot write" in result.stdout, result.stdout
  assert "Exception ignored" not in stderr, stderr
  assert listing.read_text() == ""  # nothing half-written in the cache
