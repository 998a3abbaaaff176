"""Tests of code_t5.engine.saved_pieces: a repository's pieces kept on disk between runs, read
back exactly, and only ever where they belong."""

import io
import os
import pathlib
import shutil
import time
import zipfile

import numpy as np
import pytest

from code_t5 import test_utils
from code_t5.data import flcc
from code_t5.data import sources
from code_t5.data import vocab
from code_t5.engine import repository
from code_t5.engine import saved_pieces
from code_t5.engine import tokenizers


class _CountingPieces(tokenizers.Pieces):
  """The dev vocabulary, counting the characters it is asked to encode. A new one per run: the
  encoding memo is the tokenizer's, so a fresh one remembers nothing (encoding_memo.shared)."""

  def __init__(self):
    super().__init__(pathlib.Path(vocab.DEV_SPM_MODEL).read_bytes(), 100)
    self.encoded_chars = 0

  def encode_many(self, texts):
    self.encoded_chars += sum(len(text) for text in texts)
    return super().encode_many(texts)


@pytest.fixture
def project(tmp_path) -> pathlib.Path:
  """Twenty of dataset-dev's files in two folders."""
  root = tmp_path / "project"
  for k, f in enumerate(list(flcc.read_files(sources.DEV_ROOT, only_split="train"))[:20]):
    path = root / ("a" if k % 2 else "b") / f"m{k}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f.text)
  return root


def _read(project, saved_dir, **kwargs):
  tokenizer = _CountingPieces()
  return repository.Repository.of_folder(project, tokenizer, seconds=None, saved_dir=saved_dir,
                                         **kwargs), tokenizer


def _pieces(repo) -> np.ndarray:
  """Every file's pieces, in path order: what the copy cache looks up."""
  return repo.pieces_for("").cache.ids


def _digests(project):
  return {repository._digest(p.read_text()) for p in project.rglob("*.py")}  # pylint: disable=protected-access


def _saved_file(saved_dir) -> pathlib.Path:
  files = list(saved_dir.iterdir())
  assert len(files) == 1, files
  return files[0]


def test_a_folder_read_again_encodes_only_the_files_changed_since(project, tmp_path):
  saved_dir = tmp_path / "pieces"
  first, tokenizer = _read(project, saved_dir)
  # (Parts the files share, a licence header say, are encoded once.)
  assert tokenizer.encoded_chars > 0.9 * sum(len(p.read_text()) for p in project.rglob("*.py"))
  again, tokenizer = _read(project, saved_dir)
  assert tokenizer.encoded_chars == 0
  assert np.array_equal(_pieces(again), _pieces(first)) and again.files == first.files == 20

  changed = project / "a" / "m1.py"
  changed.write_text(changed.read_text() + "\ndef added_later(x):\n    return x + 1\n")
  (project / "b" / "m2.py").unlink()
  (project / "b" / "new.py").write_text("import os\n\nPATH = os.getcwd()\n")
  updated, tokenizer = _read(project, saved_dir)
  assert 0 < tokenizer.encoded_chars <= len(changed.read_text()) + 40
  unsaved, _ = _read(project, None)
  assert np.array_equal(_pieces(updated), _pieces(unsaved))
  # What is saved is the files as they are now: the removed one's pieces are gone.
  saved = saved_pieces.load(_saved_file(saved_dir), tokenizer.vocab_size)
  assert set(saved) == _digests(project)


def _npz_claiming(path, arrays, name, shape):
  """An .npz of `arrays` and a member `name` whose .npy header claims int64s of `shape`, followed
  by 64 bytes."""
  header = io.BytesIO()
  np.lib.format.write_array_header_1_0(
      header, {"descr": "<i8", "fortran_order": False, "shape": shape})
  with zipfile.ZipFile(path, "w") as z:
    for key, value in arrays.items():
      member = io.BytesIO()
      np.save(member, value)
      z.writestr(f"{key}.npy", member.getvalue())
    z.writestr(f"{name}.npy", header.getvalue() + bytes(64))


def test_a_saved_file_that_does_not_read_back_is_ignored_and_written_again(project, tmp_path):
  saved_dir = tmp_path / "pieces"
  wanted, tokenizer = _read(project, saved_dir)
  path = _saved_file(saved_dir)
  good = path.read_bytes()
  with np.load(path) as arrays:
    digests, starts, ids = arrays["digests"], arrays["starts"], arrays["ids"]
  bad_ids = ids.astype(np.int64)
  bad_ids[3] = tokenizer.vocab_size  # an id the model does not have
  bad_starts = starts.copy()
  bad_starts[2], bad_starts[3] = bad_starts[3], bad_starts[2]
  variants = {
      "cut": lambda: path.write_bytes(good[:len(good) // 2]),
      "not a zip": lambda: path.write_bytes(b"#!/bin/sh\nrm -rf /\n"),
      "empty": lambda: path.write_bytes(b""),
      "other arrays": lambda: np.savez(open(path, "wb"), x=np.arange(3)),
      "an id past the vocabulary": lambda: np.savez(open(path, "wb"), digests=digests,
                                                    starts=starts, ids=bad_ids),
      "starts out of order": lambda: np.savez(open(path, "wb"), digests=digests,
                                              starts=bad_starts, ids=ids),
      "a pickled object": lambda: np.savez(open(path, "wb"), digests=digests, starts=starts,
                                           ids=np.array([object()], dtype=object)),
      # helper-18's audit: a TypeError and numpy's MemoryError (8 TiB) were tracebacks.
      "one array, not a zip of them": lambda: np.save(open(path, "wb"), ids),
      "ids whose header claims 2**40 of them": lambda: _npz_claiming(path, {
          "digests": digests, "starts": starts}, "ids", (1 << 40,)),
  }
  for name, spoil in variants.items():
    spoil()
    assert saved_pieces.load(path, tokenizer.vocab_size) == {}, name
    got, _ = _read(project, saved_dir)
    assert np.array_equal(_pieces(got), _pieces(wanted)), name
    assert set(saved_pieces.load(path, tokenizer.vocab_size)) == _digests(project), name


def test_a_cache_folder_that_cannot_be_written_costs_only_time(project, tmp_path):
  blocker = tmp_path / "a-file"
  blocker.write_text("")
  got, _ = _read(project, blocker / "pieces")  # mkdir fails: not a directory
  unsaved, _ = _read(project, None)
  assert np.array_equal(_pieces(got), _pieces(unsaved))
  assert blocker.read_text() == ""
  assert sorted(tmp_path.iterdir()) == [blocker, tmp_path / "project"]


def test_only_the_newest_saved_files_are_kept_and_nothing_else_is_touched(
    project, tmp_path, monkeypatch):
  monkeypatch.setattr(saved_pieces, "MAX_SAVED", 2)
  saved_dir = tmp_path / "pieces"
  saved_dir.mkdir()
  # A user's files beside the cache's, and temporary files of a killed run and of a running one.
  others = {"notes.txt": b"mine", "other.npz": b"not ours", "0123.npz": b"not ours either"}
  for name, data in others.items():
    (saved_dir / name).write_bytes(data)
  stale = saved_dir / f".{'a' * 16}-{'b' * 16}.npz.123.tmp"
  running = saved_dir / f".{'c' * 16}-{'d' * 16}.npz.456.tmp"
  stale.write_bytes(b"")
  running.write_bytes(b"")
  old = time.time() - saved_pieces.STALE_SECONDS - 60
  os.utime(stale, (old, old))
  written = []
  for k in range(3):
    folder = tmp_path / f"copy{k}"
    shutil.copytree(project, folder)
    _read(folder, saved_dir)
    written.append(saved_pieces.path_of(saved_dir, folder, _CountingPieces()))
    os.utime(written[-1], (time.time() - 100 + k, time.time() - 100 + k))
  assert sorted(p.name for p in saved_dir.iterdir()) == sorted(
      [*others, running.name, written[1].name, written[2].name])
  for name, data in others.items():
    assert (saved_dir / name).read_bytes() == data


def test_a_folder_cut_at_its_time_limit_keeps_what_was_saved_of_the_rest(project, tmp_path):
  saved_dir = tmp_path / "pieces"
  _, tokenizer = _read(project, saved_dir)
  cut = repository.Repository.of_folder(project, _CountingPieces(), seconds=-1.0,
                                        saved_dir=saved_dir)
  assert cut.cut and cut.files == 0
  saved = saved_pieces.load(_saved_file(saved_dir), tokenizer.vocab_size)
  assert set(saved) == _digests(project)


def test_bytes_are_not_saved(project, tmp_path):
  saved_dir = tmp_path / "pieces"
  repository.Repository.of_folder(project, tokenizers.Bytes(100), seconds=None,
                                  saved_dir=saved_dir)
  assert not saved_dir.exists()


def test_a_link_where_the_temporary_file_goes_is_not_written_through(project, tmp_path):
  saved_dir = tmp_path / "pieces"
  saved_dir.mkdir()
  target = tmp_path / "elsewhere.txt"
  target.write_text("untouched")
  path = saved_pieces.path_of(saved_dir, project, _CountingPieces())
  (saved_dir / f".{path.name}.{os.getpid()}.tmp").symlink_to(target)
  got, _ = _read(project, saved_dir)
  assert target.read_text() == "untouched"
  unsaved, _ = _read(project, None)
  assert np.array_equal(_pieces(got), _pieces(unsaved))


# A Ctrl-C raised as ZipFile.__del__ begins is ignored there (Python ignores what a finalizer
# raises) and pytest warns of each.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_ctrl_c_while_saving_leaves_no_temporary(tmp_path):
  """helper-38's audit: a Ctrl-C while the pieces were written left the temporary file for an
  hour (only an OSError removed it)."""
  folder = tmp_path / "cache"
  path = folder / "key-fingerprint.npz"
  pieces = {bytes([i]) * 16: np.arange(i + 3, dtype=np.int32) for i in range(20)}
  completed = []

  def check(interrupted, result):
    del result
    left = [p.name for p in folder.iterdir()] if folder.exists() else []
    assert left in ([], [path.name]), left
    completed.append(not interrupted)

  points = test_utils.interrupt_at_each_point(
      lambda: shutil.rmtree(folder, ignore_errors=True),
      lambda: saved_pieces.save(path, pieces, 1_000), check)
  assert points > 10 and completed[-1]
  assert set(saved_pieces.load(path, 1_000)) == set(pieces)
