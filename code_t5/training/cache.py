"""seqio's offline cache job (Apache Beam) for the FLCC tasks, with the gin config on every worker.

What it writes is exactly what `seqio_cache_tasks` writes -- per task, `<output>/<task>/`:
TFRecord shards of the examples at the task's `CacheDatasetPlaceholder` (file text -> tokens),
`info.<split>.json`, `stats.<split>.json` (examples, tokens) and `COMPLETED` -- and training reads
it with `mesh_train_dataset_fn.use_cached = True` and `--additional_task_cache_dirs=<output>`.

Why not plain `seqio_cache_tasks`: the tasks' source reads its FLCC root from gin at first use
(code_t5/data/sources.py), seqio's job has no gin flags, and Beam workers are other processes (other
machines on Dataflow/Flink/Spark) that import the tasks afresh. This job parses `--gin_file` /
`--gin_param` like mesh_transformer_main, prepares the root once (the prepared TFRecord shards
are the Beam input: one shard per work item), and ships the resolved `code_t5.flcc_dataset`
bindings to every worker through seqio's `PreprocessTask(setup_fn=...)` hook. Plain
`python -m seqio.scripts.cache_tasks_main --module_import=code_t5` still works for the default
root (dataset-dev) and prepared dir.

    python -m code_t5.training.cache --tasks=flcc_py_prefix_lm_v1 \
      --output_cache_dir=/data/flcc-cache --gin_param="code_t5.flcc_dataset.root = '/data/flcc'" \
      --pipeline_options=--runner=DirectRunner,--direct_running_mode=multi_processing,--direct_num_workers=2
    code-t5 cache --root /data/flcc --output-cache-dir /data/flcc-cache [--runner-options ...]

Distributed runners: the prepared shards and the root must be at the same path on every worker
(a shared file system): workers re-open the prepared folder through the same gin bindings.
"""

import contextlib
import dataclasses
import json
import logging
import os
import pathlib
import re
import sys
import time
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import code_t5_compat
from code_t5 import errors
from code_t5 import processes

DEFAULT_PIPELINE_OPTIONS = ("--runner=DirectRunner",)
# What `code-t5 cache` uses unless told otherwise: Beam's local runner, one process per core.
LOCAL_MULTIPROCESS_OPTIONS = ("--runner=DirectRunner", "--direct_running_mode=multi_processing",
                              f"--direct_num_workers={os.cpu_count() or 2}")
DEFAULT_TASKS = ("flcc_py_prefix_lm_v1", "flcc_py_span_corruption_v1")
SOURCE_FILE = "flcc_source.json"  # beside seqio's COMPLETED: which prepared FLCC data was cached


class CacheError(errors.UserError):
  """A one-line reason why the cache job could not run."""


@dataclasses.dataclass(frozen=True)
class ApplyGinBindings:
  """Beam worker set-up (picklable): registers the tasks and binds the driver's gin values."""
  bindings: Mapping[str, object]

  def __call__(self):
    import gin  # pylint: disable=g-import-not-at-top
    from code_t5 import registration  # pylint: disable=g-import-not-at-top
    registration.register()  # the tasks and their configurables
    quiet_seqio_logging()  # seqio's logging runs in the workers
    with gin.unlock_config():
      for name, value in self.bindings.items():
        gin.bind_parameter(name, value)


class _CountsOnly(logging.Filter):
  """Drops seqio's dump of whole examples (every power of two per shard: entire source files,
  ~520 KB of log on a 10-repository root) and cuts long lines (the list of every shard)."""

  def filter(self, record: logging.LogRecord) -> bool:
    if record.msg == "Example [%d] = %s":
      return False
    message = record.getMessage()
    if len(message) > _MAX_LOG_CHARS:
      record.msg, record.args = message[:_MAX_LOG_CHARS] + f"... ({len(message):,} chars)", None
    return True


_MAX_LOG_CHARS = 300


def quiet_seqio_logging() -> None:
  """Keeps the cache job's log to counts and rates, in this process (the driver or a worker)."""
  logger = logging.getLogger("absl")  # absl.logging, which seqio uses, logs through it
  if not any(isinstance(f, _CountsOnly) for f in logger.filters):
    logger.addFilter(_CountsOnly())


def flcc_dataset_bindings() -> Dict[str, object]:
  """The gin bindings of `code_t5.flcc_dataset` now in force, as {"code_t5.flcc_dataset.x": v}."""
  import gin  # pylint: disable=g-import-not-at-top
  from code_t5.data import sources  # pylint: disable=g-import-not-at-top
  return {f"code_t5.flcc_dataset.{k}": v for k, v in gin.get_bindings(sources.flcc_dataset).items()}


def parse_gin(gin_files: Sequence[str] = (), gin_params: Sequence[str] = (),
              gin_location_prefix: str = ""):
  """Parses gin files (found on code_t5's gin path) and bindings; unknown configurables are skipped.

  So the training command's own gin files can be passed; only `code_t5.flcc_dataset` matters here.
  """
  import gin  # pylint: disable=g-import-not-at-top
  from code_t5 import registration  # pylint: disable=g-import-not-at-top
  registration.register()  # the configurables the bindings name, and gin's search path
  files = [f if os.path.isabs(f) or not gin_location_prefix else gin_location_prefix + f
           for f in gin_files]
  try:
    gin.parse_config_files_and_bindings(files, list(gin_params), skip_unknown=True)
  except OSError as e:  # gin's "Unable to open file: X. Searched config paths: [...]"
    raise CacheError(f"--gin-file: {str(e).split('. Searched', 1)[0]}: give a gin file, or one "
                     "of gin_configs/ by its name there (models/causal_lm.gin)") from None


def build_pipeline(pipeline, task_names: Sequence[str], output_cache_dir: str, *,
                   worker_setup=lambda: None, modules_to_import: Sequence[str] = ("code_t5",),
                   min_shards: int = 64, max_shards: int = 0, overwrite: bool = False,
                   preprocessors_seed: Optional[int] = None) -> List[Tuple[str, str]]:
  """Adds seqio's cache transforms for `task_names` to `pipeline`; returns each task's (folder
  written, its cache dir).

  The same graph as seqio.scripts.cache_tasks_main.run_pipeline (PreprocessTask -> global
  reshuffle -> TFRecords + info + stats -> COMPLETED), with `worker_setup` run on each worker
  before it loads a task. A finished cache that `overwrite` redoes in a local folder is written
  beside it (processes.temporary_name), for `run` to put in its place once the job is done: it
  was removed first, and a job killed or failed so lost it (helper-54's audit).
  """
  import apache_beam as beam  # pylint: disable=g-import-not-at-top
  import seqio  # pylint: disable=g-import-not-at-top
  from seqio import beam_utils  # pylint: disable=g-import-not-at-top
  import tensorflow.compat.v2 as tf  # pylint: disable=g-import-not-at-top

  output_dirs = []
  for task_name in task_names:
    task = seqio.TaskRegistry.get(task_name)
    if not task.supports_caching:
      raise CacheError(f"task {task_name} has no CacheDatasetPlaceholder")
    output_dir = os.path.join(output_cache_dir, seqio.get_task_dir_from_name(task.name))
    written = output_dir
    if tf.io.gfile.exists(os.path.join(output_dir, "COMPLETED")):
      if not overwrite:
        print(f"{task_name}: already cached in {output_dir} (--overwrite to redo)")
        continue
      if _is_local(output_cache_dir):
        written = os.path.join(output_cache_dir, processes.temporary_name(
            seqio.get_task_dir_from_name(task.name)))
      else:  # (a bucket has no folders to rename)
        tf.io.gfile.rmtree(output_dir)
    elif tf.io.gfile.exists(output_dir):
      # A job that did not finish (killed): its shards, and Beam's temporaries, would stay
      # beside this job's (the caller holds the cache's lock: no job is writing it now).
      print(f"{task_name}: removing {output_dir}, left by a job that did not finish")
      tf.io.gfile.rmtree(output_dir)
    output_dirs.append((written, output_dir))
    completion_values = []
    for split in task.splits:
      label = f"{task.name}_{split}"
      pat = beam_utils.PreprocessTask(task, split, setup_fn=worker_setup,
                                      modules_to_import=list(modules_to_import),
                                      preprocessors_seed=preprocessors_seed)
      num_shards = max(len(pat.shards), min_shards)
      if max_shards > 0:
        num_shards = min(num_shards, max_shards)
      examples = (pipeline | f"{label}_pat" >> pat
                  | f"{label}_global_example_shuffle" >> beam.Reshuffle())
      completion_values.append(
          examples | f"{label}_write_tfrecord" >> beam_utils.WriteExampleTfRecord(
              seqio.get_cached_tfrecord_prefix(written, split), num_shards=num_shards))
      completion_values.append(
          examples | f"{label}_info" >> beam_utils.GetInfo(num_shards)
          | f"{label}_write_info" >> beam_utils.WriteJson(
              seqio.get_cached_info_path(written, split)))
      completion_values.append(
          examples | f"{label}_stats" >> beam_utils.GetStats(task.output_features)
          | f"{label}_write_stats" >> beam_utils.WriteJson(
              seqio.get_cached_stats_path(written, split)))
    _ = (completion_values
         | f"{task.name}_flatten_completion_values" >> beam.Flatten()
         | f"{task.name}_discard_completion_values" >> beam.Filter(lambda _: False)
         | f"{task.name}_write_completed_file" >> beam.io.textio.WriteToText(
             os.path.join(written, "COMPLETED"), append_trailing_newlines=False,
             num_shards=1, shard_name_template=""))
  return output_dirs


CACHE_LOCK = "cache.lock"  # in --output-cache-dir, held while a job writes there
# The steps of build_pipeline's graph that write into --output-cache-dir, as Beam names the one a
# failed bundle ran.
_WRITE_STEP = re.compile(r"while running '[^']*_(write_tfrecord|write_info|write_stats|"
                         r"write_completed_file)/")


def _is_local(output_cache_dir: str) -> bool:
  """Whether --output-cache-dir is a folder of this machine (not a bucket: gs://...)."""
  return "://" not in output_cache_dir


def _cache_lock(output_cache_dir: str):
  """The lock of a local cache folder (processes.exclusive_lock): a second job into the same
  folder is refused at once (two wrote the same shards side by side). A remote one (gs://) is
  not locked."""
  if not _is_local(output_cache_dir):
    return contextlib.nullcontext()
  return processes.exclusive_lock(pathlib.Path(output_cache_dir) / CACHE_LOCK,
                                  f"--output-cache-dir {output_cache_dir} is being written")


def cached_stats(task_dir: str) -> Dict[str, dict]:
  """{split: seqio's stats (examples, <feature>_tokens, <feature>_max_tokens)} of a task cache."""
  import tensorflow.compat.v2 as tf  # pylint: disable=g-import-not-at-top  (gs:// too)
  out = {}
  for path in sorted(tf.io.gfile.glob(os.path.join(task_dir, "stats.*.json"))):
    with tf.io.gfile.GFile(path) as f:
      out[os.path.basename(path)[len("stats."):-len(".json")]] = json.load(f)
  return out


def run(task_names: Sequence[str], output_cache_dir: str, *,
        pipeline_options: Sequence[str] = DEFAULT_PIPELINE_OPTIONS, min_shards: int = 64,
        max_shards: int = 0, overwrite: bool = False, echo=print,
        quiet_workers: bool = False) -> Dict[str, dict]:
  """Prepares the gin-bound FLCC root, runs the Beam cache job, returns {task: stats per split}.
  `quiet_workers`: the local runner's workers write nothing (the job raises their errors).

  gin must be parsed already (parse_gin); the tasks are registered by `import code_t5`.
  """
  import apache_beam as beam  # pylint: disable=g-import-not-at-top
  from apache_beam.options import pipeline_options as beam_options  # pylint: disable=g-import-not-at-top
  import seqio  # pylint: disable=g-import-not-at-top
  from code_t5.data import sources  # pylint: disable=g-import-not-at-top

  unknown = [t for t in task_names if t not in seqio.TaskRegistry.names()]
  if unknown:
    raise CacheError(f"unknown task(s) {', '.join(unknown)}; registered: "
                     f"{', '.join(sorted(n for n in seqio.TaskRegistry.names() if 'flcc' in n))}")
  quiet_seqio_logging()
  spec = sources.flcc_dataset()
  start = time.time()
  prepared = sources.prepare(spec)  # once, here; the workers find it done
  echo(f"FLCC root {spec.root}: prepared {prepared.path} ({dict(prepared.num_files)} files)")
  setup = ApplyGinBindings(flcc_dataset_bindings())
  # Beam's local workers inherit the environment: with it they end when this job is gone
  # (code_t5_compat, shim 12 of docs/stack.md).
  import tensorflow.compat.v2 as tf  # pylint: disable=g-import-not-at-top  (gs:// too)
  with _cache_lock(output_cache_dir):
    if _is_local(output_cache_dir):  # what a killed --overwrite left beside the caches
      processes.remove_stale_temporaries(pathlib.Path(output_cache_dir), echo)
    task_dirs = []
    try:
      with code_t5_compat.beam_workers_end_with_this_process(quiet_workers), \
          beam.Pipeline(options=beam_options.PipelineOptions(list(pipeline_options))) as pipeline:
        task_dirs = build_pipeline(pipeline, task_names, output_cache_dir, worker_setup=setup,
                                   min_shards=min_shards, max_shards=max_shards,
                                   overwrite=overwrite)
      for written, _ in task_dirs:
        with tf.io.gfile.GFile(os.path.join(written, SOURCE_FILE), "w") as f:
          f.write(json.dumps({"root": str(spec.root), "prepared": str(prepared.path),
                              "num_files": dict(prepared.num_files)}, indent=1, sort_keys=True))
    except BaseException as e:
      # This job's unfinished folders, and Beam's temporaries in them, go (a full disk stayed
      # full with 17 of them: helper-54's audit); a finished cache it was to redo stays.
      for written, _ in task_dirs:
        if tf.io.gfile.exists(written):
          tf.io.gfile.rmtree(written)
      # Beam's runner raises a worker's failed write as RuntimeError("OSError: [Errno 28] ...
      # [while running '...']"), naming the bundle's step: one that writes (not a read that was
      # refused elsewhere: helper-57's review).
      number = (errors.write_errno_named(str(e))
                if isinstance(e, RuntimeError) and _WRITE_STEP.search(str(e)) else None)
      if number is None:
        raise
      raise errors.WriteError(f"cannot write {output_cache_dir}: {os.strerror(number)}",
                              number) from None
    for written, task_dir in task_dirs:
      if written != task_dir:
        processes.move_into_place(pathlib.Path(written), pathlib.Path(task_dir), replace=True)
  report = {}
  for _, task_dir in task_dirs:
    stats = cached_stats(task_dir)
    report[os.path.basename(task_dir)] = stats
    for split, s in stats.items():
      tokens = ", ".join(f"{k} {v:,}" for k, v in sorted(s.items()) if k != "examples")
      echo(f"{os.path.basename(task_dir)} {split}: {s.get('examples', 0):,} examples written; "
           f"{tokens}")
  seconds = time.time() - start
  totals = {key: sum(s.get(key, 0) for splits in report.values() for s in splits.values())
            for key in ("examples", "targets_tokens")}
  echo(f"cached in {seconds:.1f} s under {output_cache_dir} ({totals['examples'] / seconds:,.1f} "
       f"examples/s, {totals['targets_tokens'] / seconds:,.0f} target tokens/s); train from it "
       "with\n"
       f"  --gin_param=\"mesh_train_dataset_fn.use_cached = True\" "
       f"--additional_task_cache_dirs={output_cache_dir}")
  return report


# --- checks: the cache holds exactly what the uncached pipeline makes ---------------------------

def _example_keys(dataset) -> List[tuple]:
  """The dataset's examples as sorted (text, tokens), read with tf.data's autotuning off: with it
  on, the iterator's end can wait out the tuning thread's sleep, up to 60 s after a long read
  (code_t5.training.training.without_autotune)."""
  from code_t5.training import training  # pylint: disable=g-import-not-at-top  (imports TensorFlow)
  return sorted((bytes(ex["targets_pretokenized"]), tuple(int(t) for t in ex["targets"]))
                for ex in training.dataset_without_autotune(dataset).as_numpy_iterator())


def uncached_examples(task_name: str, split: str) -> List[tuple]:
  """The task's examples at its cache point, computed on the fly: (text, tokens), sorted."""
  import seqio  # pylint: disable=g-import-not-at-top
  task = seqio.TaskRegistry.get(task_name)
  return _example_keys(task.preprocess_precache(task.source.get_dataset(split, shuffle=False)))


def cached_examples(task_dir: str, split: str) -> List[tuple]:
  """The examples in a task cache dir's TFRecords: (text, tokens), sorted."""
  import seqio  # pylint: disable=g-import-not-at-top
  import tensorflow.compat.v2 as tf  # pylint: disable=g-import-not-at-top
  files = tf.io.gfile.glob(seqio.get_cached_tfrecord_prefix(task_dir, split) + "*")
  features = {"targets": tf.io.VarLenFeature(tf.int64),
              "targets_pretokenized": tf.io.FixedLenFeature([], tf.string)}

  def parse(record):
    ex = tf.io.parse_single_example(record, features)
    return {"targets": tf.sparse.to_dense(ex["targets"]),
            "targets_pretokenized": ex["targets_pretokenized"]}

  return _example_keys(tf.data.TFRecordDataset(files).map(parse))


def compare(task_name: str, task_dir: str, split: str) -> Dict[str, object]:
  """Cached vs uncached examples of one split: counts, tokens, and whether they are equal."""
  uncached = uncached_examples(task_name, split)
  cached = cached_examples(task_dir, split)
  stats = cached_stats(task_dir).get(split, {})
  return {"split": split, "uncached_examples": len(uncached), "cached_examples": len(cached),
          "stats_examples": stats.get("examples"), "stats_targets_tokens": stats.get(
              "targets_tokens"),
          "uncached_targets_tokens": sum(len(tokens) for _, tokens in uncached),
          "equal": uncached == cached}


def verify(report: Dict[str, dict], output_cache_dir: str, echo=print) -> None:
  """Compares every split `run` reported with its uncached examples; CacheError on a difference."""
  for task_name, splits in report.items():
    for split in splits:
      result = compare(task_name, os.path.join(output_cache_dir, task_name), split)
      echo(f"verify {task_name} {split}: {result}")
      if not result["equal"]:
        raise CacheError(f"{task_name} {split}: cached examples differ from uncached ones")


# --- command line ------------------------------------------------------------------------------

def _cli(args) -> int:
  if args.min_shards < 1:
    raise CacheError(f"--min-shards {args.min_shards} must be 1 or more")
  gin_params = list(args.gin_param)
  if args.root is not None:
    if not args.root.exists():
      raise CacheError(f"--root {args.root} does not exist: give the folder that holds v3/")
    gin_params.insert(0, f"code_t5.flcc_dataset.root = {str(args.root.resolve())!r}")
  if not str(args.output_cache_dir).startswith("gs:"):  # a local folder: checked before the job
    with errors.writing(f"the cache in {args.output_cache_dir}", args.output_cache_dir,
                        "give another --output-cache-dir"):
      args.output_cache_dir.mkdir(parents=True, exist_ok=True)
  parse_gin(args.gin_file, gin_params)
  options = args.runner_options.split(",") if args.runner_options else LOCAL_MULTIPROCESS_OPTIONS
  # A read-only folder (its lock), a full disk (the job's writes): one line, not a traceback.
  with errors.writing(f"the cache in {args.output_cache_dir}", args.output_cache_dir,
                      "give another --output-cache-dir"):
    report = run(args.tasks.split(","), str(args.output_cache_dir), pipeline_options=options,
                 min_shards=args.min_shards, overwrite=args.overwrite,
                 quiet_workers=not args.verbose)
  if args.verify:
    verify(report, str(args.output_cache_dir))
  return 0


def register_cli(subparsers):
  """`code-t5 cache`: see the module docstring."""
  parser = subparsers.add_parser(
      "cache", help="run seqio's Beam cache job for the FLCC tasks (tokenized examples on disk); "
      "train from it with mesh_train_dataset_fn.use_cached = True")
  parser.add_argument("--output-cache-dir", type=pathlib.Path, required=True,
                      help="where each task's cache goes (<dir>/<task>/); train with "
                      "--additional_task_cache_dirs=<dir>")
  parser.add_argument("--root", type=pathlib.Path, help="FLCC root (holds v3/); default dataset-dev")
  parser.add_argument("--tasks", default=",".join(DEFAULT_TASKS), help="comma-separated")
  parser.add_argument("--runner-options", default="",
                      help="comma-separated Beam pipeline options; default: "
                      + ",".join(LOCAL_MULTIPROCESS_OPTIONS))
  parser.add_argument("--gin-file", action="append", default=[],
                      help="gin file parsed first, e.g. the training command's (repeatable)")
  parser.add_argument("--gin-param", action="append", default=[],
                      help="extra gin binding, e.g. \"code_t5.flcc_dataset.validation_fraction "
                      "= 0.1\" (repeatable)")
  parser.add_argument("--min-shards", type=int, default=64,
                      help="TFRecord shards per split, at least (default %(default)s; more if "
                      "the prepared input has more)")
  parser.add_argument("--overwrite", action="store_true",
                      help="cache again a task already cached (COMPLETED) in --output-cache-dir")
  parser.add_argument("--verify", action="store_true",
                      help="then compare every cached split with the uncached examples")
  parser.set_defaults(func=_cli)


def main(argv=None):
  """`python -m code_t5.training.cache`: seqio's cache_tasks_main flags plus --gin_file and
  --gin_param."""
  from absl import app  # pylint: disable=g-import-not-at-top
  from absl import flags  # pylint: disable=g-import-not-at-top
  from seqio.scripts import cache_tasks_main  # pylint: disable=g-import-not-at-top,unused-import  (its flags)

  flags.DEFINE_multi_string("gin_file", [], "gin files (e.g. the training command's)")
  flags.DEFINE_multi_string("gin_param", [], "gin bindings, e.g. code_t5.flcc_dataset.root = '...'")
  flags.DEFINE_string("gin_location_prefix", "", "prefix for relative --gin_file paths")
  flags.DEFINE_boolean("verify", False, "compare every cached split with the uncached examples")
  flags_ = flags.FLAGS

  def _main(_):
    for module in flags_.module_import:
      __import__(module)
    parse_gin(flags_.gin_file, flags_.gin_param, flags_.gin_location_prefix)
    tasks = flags_.tasks or list(DEFAULT_TASKS)
    report = run(tasks, flags_.output_cache_dir, pipeline_options=flags_.pipeline_options,
                 min_shards=flags_.min_shards, max_shards=flags_.max_shards,
                 overwrite=flags_.overwrite)
    if flags_.verify:
      try:
        verify(report, flags_.output_cache_dir)
      except CacheError as e:
        sys.exit(str(e))

  flags.mark_flags_as_required(["output_cache_dir"])
  app.run(_main, argv=argv)


if __name__ == "__main__":
  main()
