"""Prepared shards: made once per dataset state, equal to the reader's output, never half-written."""

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from code_t5 import test_utils
from code_t5.data import flcc
from code_t5.data import sources


def _spec(root, prepared_dir, **kwargs):
  return sources.flcc_dataset(root=root, prepared_dir=prepared_dir, **kwargs)


def _records(shards):
  return sorted((ex["repo"].numpy().decode(), ex["path"].numpy().decode(), ex["text"].numpy())
                for ex in sources._read_examples(shards))  # pylint: disable=protected-access


@pytest.fixture
def root(tmp_path):
  return test_utils.make_flcc_tree(tmp_path / "flcc", {
      f"owner{i}/repo{i}": {"pkg/mod.py": f"def f{i}():\n\treturn {i}  \n", "b.py": f"x = {i}\n"}
      for i in range(12)})


def test_prepared_shards_hold_exactly_what_the_reader_yields(root, tmp_path):
  spec = _spec(root, tmp_path / "prepared", validation_fraction=0.2, test_fraction=0.2)
  prepared = sources.prepare(spec)
  for split in sources.SPLITS:
    expected = sorted((f.repo, f.path, f.text.encode()) for f in
                      flcc.read_files(root, spec.filters, spec.splits, only_split=split))
    assert _records(prepared.shards[split]) == expected
    assert prepared.num_files[split] == len(expected)
  assert len(prepared.shards["train"]) >= 4


def test_prepare_is_reused_until_the_data_changes(root, tmp_path):
  first = sources.prepare(_spec(root, tmp_path / "prepared"))
  sources._PREPARED.clear()  # pylint: disable=protected-access  (a new process)
  assert sources.prepare(_spec(root, tmp_path / "prepared")).path == first.path
  changed = next(root.rglob("mod_*.py"))
  changed.write_text(changed.read_text() + "y = 2\n")
  sources._PREPARED.clear()  # pylint: disable=protected-access
  assert sources.prepare(_spec(root, tmp_path / "prepared")).path != first.path


def test_prepared_shards_are_as_readable_as_the_umask_makes_files(root, tmp_path):
  """mkdtemp made the folder private (0700): another user of a shared --prepared-dir (or of the
  default cache) met a PermissionError traceback on its stats.json (helper-33's audit)."""
  umask = os.umask(0o022)
  try:
    prepared = sources.prepare(_spec(root, tmp_path / "prepared"))
  finally:
    os.umask(umask)
  assert prepared.path.stat().st_mode & 0o777 == 0o755


def test_an_interrupted_prepare_leaves_nothing_behind(root, tmp_path, monkeypatch):
  real_reader = flcc.read_files

  def broken_reader(*args, **kwargs):
    yield from list(real_reader(*args, **kwargs))[:3]
    raise KeyboardInterrupt

  monkeypatch.setattr(flcc, "read_files", broken_reader)
  with pytest.raises(KeyboardInterrupt):
    sources.prepare(_spec(root, tmp_path / "prepared"))
  assert list((tmp_path / "prepared").iterdir()) == []


def test_a_missing_root_is_a_one_line_error(tmp_path):
  with pytest.raises(flcc.FlccError, match=str(tmp_path / "nowhere")):
    sources.prepare(_spec(tmp_path / "nowhere", tmp_path / "prepared"))


def test_gins_dataset_defaults_are_the_readers_so_prepare_and_train_keep_the_same_files(tmp_path):
  # flcc_dataset spells its defaults out for gin; flcc.read_files and `code-t5 baseline` default
  # to Filters() and Splits(): were they to drift, the tasks would train and evaluate on other
  # files than the baseline's points come from.
  spec = sources.flcc_dataset(prepared_dir=tmp_path)
  assert spec.filters == flcc.Filters() and spec.splits == flcc.Splits()


def test_data_source_reads_the_gin_bound_root(root, tmp_path):
  source = sources.FlccDataSource(lambda: _spec(root, tmp_path / "prepared"))
  dataset = source.get_dataset("train", shuffle=False)
  assert sum(1 for _ in dataset) == source.num_input_examples("train") > 0


def test_a_killed_prepare_is_cleaned_up_by_the_next_one(root, tmp_path):
  prepared_dir = tmp_path / "prepared"
  code = textwrap.dedent(f"""
      import os, signal
      from code_t5.data import flcc, sources
      real_reader = flcc.read_files
      def dying_reader(*args, **kwargs):
        yield from list(real_reader(*args, **kwargs))[:3]
        os.kill(os.getpid(), signal.SIGKILL)
      flcc.read_files = dying_reader
      sources.prepare(sources.flcc_dataset(root={str(root)!r}, prepared_dir={str(prepared_dir)!r}))
  """)
  killed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
  assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
  leftovers = [p.name for p in prepared_dir.iterdir()]
  assert len(leftovers) == 1 and ".tmp-" in leftovers[0]
  prepared = sources.prepare(_spec(root, prepared_dir))
  assert [p.name for p in prepared_dir.iterdir()] == [prepared.path.name]


def test_an_empty_split_asked_for_is_a_one_line_error_not_zero_examples(root, tmp_path):
  source = sources.FlccDataSource(
      lambda: _spec(root, tmp_path / "prepared", validation_fraction=0.0))
  with pytest.raises(flcc.FlccError, match="validation split .* no files; .*--validation-fraction"):
    source.list_shards("validation")
  assert source.num_input_examples("train") > 0 and source.list_shards("train")


def test_a_chain_of_folders_past_the_recursion_limit_is_prepared(root, tmp_path):
  # os.walk recursed once per level: RecursionError while sizing the shards.
  folder = next(root.rglob("b_*.py")).parent
  with test_utils.folder_chain(folder / "chain", sys.getrecursionlimit() + 500) as bottom:
    (bottom / "deep_1.py").write_text("deep = 1\n")
    prepared = sources.prepare(_spec(root, tmp_path / "prepared"))
  assert prepared.stats["reader"]["dropped"]["too_deep"]["files"] == 1


def test_a_huge_sparse_file_does_not_size_the_shards(root, tmp_path):
  # Its st_size (8 TiB, stored as a hole) asked for 118,000 shard writers at once: "Too many open
  # files". It is dropped as too_large, so it counts for nothing.
  with open(next(root.rglob("b_*.py")).parent / "big_1.py", "wb") as f:
    f.truncate(1 << 43)
  prepared = sources.prepare(_spec(root, tmp_path / "prepared"))
  assert len(prepared.shards["train"]) == 4 and prepared.num_files["train"] > 0
  assert prepared.stats["reader"]["dropped"]["too_large"]["files"] == 1


def test_the_shards_of_a_split_are_capped(tmp_path):
  # Every writer is open at once: one shard per byte of a 2 kB root would be 2,000.
  root = test_utils.make_flcc_tree(tmp_path / "flcc", {
      "owner/repo": {"mod.py": "".join(f"x{i} = {i}\n" for i in range(300))}})
  prepared = sources.prepare(_spec(root, tmp_path / "prepared", shard_bytes=1,
                                   validation_fraction=0, test_fraction=0))
  assert len(prepared.shards["train"]) == sources.MAX_SHARDS


@pytest.mark.parametrize("name, entry", [(os.fsdecode(b"bad\xffname"), "bad_name"),
                                         ("L" * 240, "L" * 64)], ids=["not utf-8", "long"])
def test_a_root_named_what_no_file_name_may_hold_is_prepared(tmp_path, name, entry):
  # The prepared folder was named after the root: TensorFlow's writers could not encode
  # "\udcff", and 240 characters plus the key were a name too long for the file system.
  root = test_utils.make_flcc_tree(tmp_path / name, {"owner/repo": {"a.py": "a = 1\n"}})
  prepared = sources.prepare(_spec(root, tmp_path / "prepared"))
  assert prepared.path.name.startswith(f"{entry}-f{sources.PREPARED_FORMAT}-")
  assert prepared.num_files["train"] == 1 and prepared.stats["root"] == str(root)
