"""The seqio data source over an FLCC root: filtered files, prepared once into TFRecord shards.

Reading a raw FLCC tree costs a directory walk, UTF-8 checks, filters and a global duplicate pass,
and Beam or multi-host readers need splittable files, not a Python generator. So the first use of a
root *prepares* it: `flcc.read_files` runs once and writes each split as TFRecord shards of
tf.train.Example {text, path, repo} plus `stats.json` (what was kept and dropped, and why). The
prepared folder is keyed by `flcc.fingerprint` (tree + filter + split config), written to a temporary
folder and renamed, so a change to the data or the config prepares anew and an interrupted run
leaves nothing that looks finished.

Which root is read is decided by gin at first use, not at import, so
`--gin_param="code_t5.flcc_dataset.root='/data/flcc'"` works with the tasks `import code_t5`
registered before gin was parsed.
"""

import contextlib
import dataclasses
import json
import math
import os
import pathlib
import shutil
import tempfile
import time
from typing import Dict, Iterator, List, Mapping, Optional

from absl import logging
import gin
import seqio
import tensorflow.compat.v2 as tf

from code_t5 import cache_dirs
from code_t5 import errors
from code_t5 import processes
from code_t5 import stranger_paths
from code_t5.data import flcc

SPLITS = ("train", "validation", "test")
REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
DEV_ROOT = REPO_ROOT / "dataset-dev"
DEFAULT_PREPARED_DIR = cache_dirs.root() / "prepared"
# Bumped when the prepared format changes, so old folders are not reused.
PREPARED_FORMAT = 1
# Most shards one split is written to (see _num_shards).
MAX_SHARDS = 1024

FEATURE_DESCRIPTION = {
    "text": tf.io.FixedLenFeature([], tf.string),
    "path": tf.io.FixedLenFeature([], tf.string),
    "repo": tf.io.FixedLenFeature([], tf.string),
}


@dataclasses.dataclass(frozen=True)
class FlccDatasetSpec:
  """Which FLCC root to read, how to filter and split it, and where prepared shards go."""
  root: pathlib.Path
  filters: flcc.Filters
  splits: flcc.Splits
  prepared_dir: pathlib.Path
  shard_bytes: int


@gin.configurable(module="code_t5")
def flcc_dataset(root=None,
                 validation_fraction=0.05,
                 test_fraction=0.05,
                 max_file_bytes=1_000_000,
                 max_line_chars=1000,
                 max_mean_line_chars=100.0,
                 drop_generated=True,
                 drop_duplicates=True,
                 held_out_roots=(),
                 held_out_min_share=0.5,
                 prepared_dir=None,
                 shard_bytes=64 << 20) -> FlccDatasetSpec:
  """The FLCC dataset the registered tasks read; every argument can be bound in gin.

  Args:
    root: folder holding `v3/` (or `v3/` itself); default: the repository's dataset-dev/.
    validation_fraction: share of repositories (not files) in the validation split.
    test_fraction: share of repositories in the test split.
    max_file_bytes: files larger than this are dropped (`too_large`).
    max_line_chars: files with a longer line are dropped (`long_line`).
    max_mean_line_chars: files with a longer mean line are dropped (`long_mean_line`).
    drop_generated: drop protobuf/gRPC/Thrift/SWIG-generated files.
    drop_duplicates: drop exact duplicates (the copy in train wins).
    held_out_roots: FLCC roots whose validation and test files must stay unseen: a train file
      holding `held_out_min_share` or more of one such file's long lines is dropped
      (`held_out_copy`; code_t5.data.near_copies).
    held_out_min_share: see held_out_roots.
    prepared_dir: where prepared shards are cached (default DEFAULT_PREPARED_DIR:
      ~/.cache/code_t5/prepared, code_t5.cache_dirs).
    shard_bytes: target size of one TFRecord shard of the train split.
  Returns:
    a FlccDatasetSpec.
  """
  return FlccDatasetSpec(
      root=pathlib.Path(root or DEV_ROOT).expanduser().resolve(),
      filters=flcc.Filters(max_file_bytes=max_file_bytes,
                           max_line_chars=max_line_chars,
                           max_mean_line_chars=max_mean_line_chars,
                           drop_generated=drop_generated,
                           drop_duplicates=drop_duplicates,
                           held_out_roots=(
                               held_out_roots if isinstance(held_out_roots, (str, os.PathLike))
                               else tuple(str(pathlib.Path(r).expanduser().resolve())
                                          for r in held_out_roots)),
                           held_out_min_share=held_out_min_share),
      splits=flcc.Splits(validation=validation_fraction, test=test_fraction),
      prepared_dir=pathlib.Path(prepared_dir or DEFAULT_PREPARED_DIR).expanduser(),
      shard_bytes=shard_bytes)


@dataclasses.dataclass(frozen=True)
class PreparedDataset:
  path: pathlib.Path
  shards: Mapping[str, List[str]]
  num_files: Mapping[str, int]
  stats: Mapping[str, object]


def _num_shards(split: str, spec: FlccDatasetSpec, total_bytes: int) -> int:
  share = {"train": 1.0 - spec.splits.validation - spec.splits.test,
           "validation": spec.splits.validation, "test": spec.splits.test}[split]
  # Several train shards even for small data: file-level shuffling and parallel readers need them.
  minimum = 4 if split == "train" else 1
  # Every shard's writer is open at once: the cap keeps them within a process's open files.
  return min(MAX_SHARDS, max(minimum, math.ceil(total_bytes * share / spec.shard_bytes)))


def _example(source_file: flcc.SourceFile) -> bytes:
  def feature(value: str):
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value.encode("utf-8")]))
  return tf.train.Example(features=tf.train.Features(feature={
      "text": feature(source_file.text),
      "path": feature(source_file.path),
      "repo": feature(source_file.repo),
  })).SerializeToString()


def _tree_bytes(top: str, max_file_bytes: Optional[int]) -> int:
  """Bytes below `top` that the reader may keep, to size the shards: regular files within
  `max_file_bytes` (a 15 TB sparse file asked for 221,185 shards, more than the files a process
  may open), no deeper than the reader goes. Symlinks are neither followed nor counted
  (stranger_paths.walk: a chain of 1,500 folders was a RecursionError in os.walk)."""
  # <owner>/<repo>/<init-hash> (dev/null/<uuid>/<init-hash>) above the reader's MAX_DEPTH levels.
  max_depth = 5 + flcc.MAX_DEPTH  # (walk counts top's own entries as depth 1)
  total = 0
  for entry, _ in stranger_paths.walk(top, lambda entry, depth: depth < max_depth):
    try:
      if entry.is_file(follow_symlinks=False):
        size = entry.stat(follow_symlinks=False).st_size
        total += size if max_file_bytes is None or size <= max_file_bytes else 0
    except OSError:  # the reader counts it as unreadable
      continue
  return total


def _write_shards(spec: FlccDatasetSpec, out: pathlib.Path) -> Dict[str, object]:
  """Runs the reader once over the root and writes every split's shards into `out`."""
  total_bytes = _tree_bytes(str(flcc.find_python_root(spec.root)), spec.filters.max_file_bytes)
  num_shards = {s: _num_shards(s, spec, total_bytes) for s in SPLITS}
  writers = {s: [tf.io.TFRecordWriter(str(out / f"{s}.tfrecord-{i:05d}-of-{n:05d}"))
                 for i in range(n)] for s, n in num_shards.items()}
  counts = {s: 0 for s in SPLITS}
  stats = flcc.Stats()
  start = last_log = time.time()
  try:
    for source_file in flcc.read_files(spec.root, spec.filters, spec.splits, stats=stats):
      split_writers = writers[source_file.split]
      split_writers[counts[source_file.split] % len(split_writers)].write(_example(source_file))
      counts[source_file.split] += 1
      if time.time() - last_log > 10:
        last_log = time.time()
        done = sum(counts.values())
        logging.info("preparing %s: %d files kept (%.0f files/s)", spec.root, done,
                     done / (last_log - start))
  finally:
    for split_writers in writers.values():
      for writer in split_writers:
        writer.close()
  return {"format": PREPARED_FORMAT, "root": str(spec.root),
          "filters": dataclasses.asdict(spec.filters), "splits": dataclasses.asdict(spec.splits),
          "num_files": counts, "num_shards": num_shards, "reader": stats.to_dict(),
          "seconds": round(time.time() - start, 2)}


def _load(path: pathlib.Path) -> PreparedDataset:
  stats = json.loads((path / "stats.json").read_text())
  shards = {s: sorted(str(p) for p in path.glob(f"{s}.tfrecord-*")) for s in SPLITS}
  return PreparedDataset(path=path, shards=shards, num_files=stats["num_files"], stats=stats)


@contextlib.contextmanager
def new_folder(path: pathlib.Path, marker: str) -> Iterator[pathlib.Path]:
  """A temporary folder beside `path` that is renamed to `path` when the block ends normally.

  `path` counts as finished once it holds `marker`: nothing half-written is ever at `path`, an
  error (or an interrupt) leaves nothing, and when a concurrent process finished `path` first,
  its folder is kept and this one is dropped. The temporary is named processes.temporary_name
  (+ a random suffix), so what a killed process left is removed by the next call here.
  """
  path.parent.mkdir(parents=True, exist_ok=True)
  # Temporaries of killed writers (of any key) would stay forever: those whose owner is gone go.
  for stale in processes.remove_stale_temporaries(path.parent):
    logging.info("removed %s, left by a killed process", stale)
  tmp = pathlib.Path(tempfile.mkdtemp(prefix=processes.temporary_name(path.name) + "-",
                                      dir=path.parent))
  try:
    # mkdtemp's 0700 -> what a plain mkdir would give: a --prepared-dir shared by a group (or
    # the default cache read by another user) was a PermissionError on stats.json for the others.
    processes.give_plain_mode(tmp, 0o777)
    yield tmp
    try:
      tmp.rename(path)
    except OSError:
      if not (path / marker).exists():  # not a concurrent writer that finished first
        raise
  finally:
    shutil.rmtree(tmp, ignore_errors=True)


_PREPARED: Dict[FlccDatasetSpec, PreparedDataset] = {}


def prepare(spec: FlccDatasetSpec) -> PreparedDataset:
  """Returns the prepared shards for `spec`, writing them first if needed (once per process)."""
  if spec in _PREPARED:
    return _PREPARED[spec]
  key = flcc.fingerprint(spec.root, spec.filters, spec.splits)
  path = spec.prepared_dir / (f"{cache_dirs.entry_name(spec.root.name)}-f{PREPARED_FORMAT}-"
                              f"{key[:16]}")
  if not (path / "stats.json").exists():
    logging.info("preparing FLCC root %s into %s", spec.root, path)
    with errors.writing(f"the prepared shards of {spec.root} in {spec.prepared_dir}",
                        spec.prepared_dir, "give another --prepared-dir (gin "
                        "code_t5.flcc_dataset.prepared_dir)"):
      with new_folder(path, "stats.json") as tmp:
        stats = _write_shards(spec, tmp)
        (tmp / "stats.json").write_text(json.dumps(stats, indent=1, sort_keys=True))
    logging.info("prepared %s: %s files in %.1f s", path, stats["num_files"], stats["seconds"])
  _PREPARED[spec] = _load(path)
  return _PREPARED[spec]


def _read_examples(filename):
  return tf.data.TFRecordDataset(filename).map(
      lambda record: tf.io.parse_single_example(record, FEATURE_DESCRIPTION),
      num_parallel_calls=tf.data.AUTOTUNE)


class FlccDataSource(seqio.FileDataSource):
  """Examples {text, path, repo}, one per kept source file, from the gin-chosen FLCC root."""

  def __init__(self, spec_fn=flcc_dataset):
    self._spec_fn = spec_fn
    super().__init__(read_file_fn=_read_examples,
                     split_to_filepattern={s: "<prepared at first use>" for s in SPLITS})

  def prepared(self) -> PreparedDataset:
    return prepare(self._spec_fn())

  def list_shards(self, split: str) -> List[str]:
    prepared = self.prepared()
    if not prepared.num_files[split]:
      # An empty split would evaluate (or train) on nothing and report 0.000 as if it were a score.
      held_out = split != "train"
      raise flcc.FlccError(
          f"the {split} split of FLCC root {prepared.stats['root']} has no files; "
          + (f"give it repositories: --{split}-fraction (gin code_t5.flcc_dataset.{split}_fraction)"
             f" > 0 on a root of 3+ repositories" if held_out else
             "add repositories to the root or lower --validation-fraction/--test-fraction"))
    return prepared.shards[split]

  def num_input_examples(self, split: str) -> Optional[int]:
    return self.prepared().num_files[split]

  def __str__(self):
    return f"FlccDataSource({self._spec_fn().root})"
