"""seqio's Beam cache job on the FLCC tasks: multi-process DirectRunner, gin root on the workers,
cache == uncached example for example, and training reads the cache."""

import json
import os
import re
import shutil
import subprocess
import sys
import uuid

import gin
import pytest
import seqio
import tensorflow.compat.v2 as tf

import code_t5  # pylint: disable=unused-import  (registers the tasks)
import code_t5_compat
from code_t5 import processes
from code_t5 import test_utils
from code_t5.data import flcc
from code_t5.training import cache
from code_t5.training import launcher

TASK = "flcc_py_prefix_lm_v1"
PIPELINE_OPTIONS = ("--pipeline_options=--runner=DirectRunner,"
                    "--direct_running_mode=multi_processing,--direct_num_workers=2")


def _repos():
  """Repositories in every split, with multi-line code (not dataset-dev: the workers must be told)."""
  names = ([test_utils.repo_in_split("train", skip=i) for i in range(6)] +
           [test_utils.repo_in_split("validation", skip=i) for i in range(2)] +
           [test_utils.repo_in_split("test", skip=i) for i in range(2)])
  return {name: {"pkg/mod.py": f"import os\n\n\ndef f{i}(x):\n\treturn x * {i}  # é\n" * (i + 3),
                 "setup.py": f"from setuptools import setup\nsetup(name='p{i}')\n"}
          for i, name in enumerate(names)}


@pytest.fixture(scope="module")
def root(tmp_path_factory):
  return test_utils.make_flcc_tree(tmp_path_factory.mktemp("flcc"), _repos())


@pytest.fixture(scope="module")
def bindings(root, tmp_path_factory):
  return [f"code_t5.flcc_dataset.root = '{root}'",
          f"code_t5.flcc_dataset.prepared_dir = '{tmp_path_factory.mktemp('prepared')}'"]


@pytest.fixture(scope="module")
def cached(tmp_path_factory, bindings):
  """Runs `python -m code_t5.training.cache` once; returns (output dir, stdout, default prepared
  dir, stderr)."""
  out = tmp_path_factory.mktemp("cache")
  xdg = tmp_path_factory.mktemp("xdg")  # where a worker without the gin bindings would prepare
  result = subprocess.run(
      [sys.executable, "-m", "code_t5.training.cache", f"--tasks={TASK}",
       f"--output_cache_dir={out}", *[f"--gin_param={b}" for b in bindings], PIPELINE_OPTIONS,
       "--min_shards=2"],
      capture_output=True, text=True,
      env=dict({k: v for k, v in os.environ.items() if k != "CODE_T5_CACHE"},
               XDG_CACHE_HOME=str(xdg), TF_CPP_MIN_LOG_LEVEL="3"))
  assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
  return out, result.stdout, xdg, result.stderr


@pytest.fixture
def gin_bound(bindings):
  with gin.unlock_config():
    gin.parse_config(bindings)
  yield
  gin.clear_config()


def _files(root, split):
  return list(flcc.read_files(root, only_split=split))


def test_writes_seqio_cache_layout_and_reports_examples_and_tokens(cached, root):
  out, stdout, _, _ = cached
  task_dir = out / TASK
  assert (task_dir / "COMPLETED").exists()
  for split in ("train", "validation", "test"):
    files = _files(root, split)
    stats = json.loads((task_dir / f"stats.{split}.json").read_text())
    # Byte vocabulary: one token per UTF-8 byte of every kept file.
    assert stats["examples"] == len(files) > 0
    assert stats["targets_tokens"] == sum(len(f.text.encode()) for f in files)
    assert re.search(rf"{TASK} {split}: {len(files)} examples written; .*targets_tokens "
                     rf"{stats['targets_tokens']:,}", stdout)
    assert list(task_dir.glob(f"{split}.tfrecord-*-of-*"))
  source = json.loads((task_dir / cache.SOURCE_FILE).read_text())
  assert source["root"] == str(root)


def test_the_log_keeps_to_counts_and_rates(cached):
  _, stdout, _, stderr = cached
  # seqio logged whole examples (entire source files): ~520 KB for these 10 repositories.
  assert "def f1(x)" not in stderr and "Example [" not in stderr
  assert len(stderr) < 60_000, stderr[-3000:]
  assert re.search(r"cached in [\d.]+ s under .* \([\d,.]+ examples/s, [\d,]+ target tokens/s\)",
                   stdout), stdout


def test_beam_workers_read_the_gin_bound_root(cached):
  _, _, xdg, _ = cached
  # A worker that had not received the bindings would have prepared dataset-dev in the default
  # prepared dir ($XDG_CACHE_HOME/code_t5/prepared).
  assert not (xdg / "code_t5").exists()


def test_cached_examples_equal_the_uncached_ones(cached, gin_bound):
  out, _, _, _ = cached
  for split in ("train", "validation", "test"):
    result = cache.compare(TASK, str(out / TASK), split)
    assert result["equal"], result
    assert result["cached_examples"] == result["uncached_examples"] == result["stats_examples"]


def test_training_examples_from_the_cache_equal_the_uncached_ones(cached, gin_bound):
  """Same examples in the same order -> the random objective makes identical training examples."""
  out, _, _, _ = cached
  task = seqio.get_mixture_or_task(TASK)
  lengths = {"inputs": 64, "targets": 64}

  def objective(examples):
    dataset = tf.data.Dataset.from_generator(
        lambda: ({"targets_pretokenized": text, "targets": list(tokens)}
                 for text, tokens in examples),
        output_signature={"targets_pretokenized": tf.TensorSpec([], tf.string),
                          "targets": tf.TensorSpec([None], tf.int32)})
    dataset = task.preprocess_postcache(dataset, sequence_length=lengths, seed=3)
    return [{k: v.tolist() if hasattr(v, "tolist") else v for k, v in ex.items()}
            for ex in dataset.as_numpy_iterator()]

  uncached = objective(cache.uncached_examples(TASK, "train"))
  from_cache = objective(cache.cached_examples(str(out / TASK), "train"))
  assert len(uncached) > 10
  assert from_cache == uncached


def test_mesh_transformer_main_trains_from_the_cache(cached, bindings, tmp_path):
  out, _, _, _ = cached
  experiment = launcher.Experiment(model_dir=tmp_path / "model", gin_params=[
      *bindings, "mesh_train_dataset_fn.use_cached = True"])
  command = experiment.train_command(2) + [f"--additional_task_cache_dirs={out}"]
  result = subprocess.run(command, capture_output=True, text=True,
                          env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
  log = result.stdout + result.stderr
  assert result.returncode == 0, log[-4000:]
  assert f"'{TASK}' is cached at {out / TASK}" in log
  assert launcher.latest_step(tmp_path / "model") == 2


def _workers_marked(mark: str) -> list:
  """The pids of Beam's worker processes whose environment holds CODE_T5_TEST_MARK=mark."""
  pids = []
  for entry in os.listdir("/proc"):
    if not entry.isdigit():
      continue
    try:
      with open(f"/proc/{entry}/cmdline", "rb") as f:
        command = f.read()
      with open(f"/proc/{entry}/environ", "rb") as f:
        environment = f.read().split(b"\0")
    except OSError:  # gone meanwhile, or another user's
      continue
    if b"sdk_worker_main" in command and f"CODE_T5_TEST_MARK={mark}".encode() in environment:
      pids.append(int(entry))
  return pids


def test_a_killed_job_s_workers_end_and_the_next_job_redoes_its_task(cached, bindings, root,
                                                                     tmp_path):
  """helper-39's audit: `kill -9` of the job left Beam's workers running (~20 s at 40 % of a core
  each), its unfinished task folder stayed (Beam's temporaries in it) under the next job's
  COMPLETED, and a second job into the same folder wrote beside the first (now refused while
  the folder's lock is held)."""
  out = tmp_path / "cache"
  command = [sys.executable, "-m", "code_t5.cli", "cache", "--output-cache-dir", str(out),
             "--root", str(root), "--tasks", TASK, "--min-shards", "2",
             "--gin-param", bindings[1], "--runner-options=" + PIPELINE_OPTIONS.split("=", 1)[1]]
  mark = str(uuid.uuid4())
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CODE_T5_TEST_MARK=mark)
  log = tmp_path / "killed_job.log"
  with open(log, "wb") as output:
    job = subprocess.Popen(command, env=env, stdout=output, stderr=output)
  try:
    test_utils.wait_for(lambda: _workers_marked(mark) or job.poll() is not None, "a worker",
                        120)
    assert job.poll() is None, log.read_text()[-3000:]
  finally:
    job.kill()
    job.wait()
  test_utils.wait_for(lambda: not _workers_marked(mark), "the end of the workers",
                      code_t5_compat.DRIVER_POLL_SECONDS + 10)
  with processes.exclusive_lock(out / cache.CACHE_LOCK, "held by the test"):  # a job running
    second = subprocess.run(command, capture_output=True, text=True, env=env, timeout=240)
  assert second.returncode == 2, second.stdout[-2000:] + second.stderr[-3000:]
  assert (f"code-t5 cache: --output-cache-dir {out} is being written already (process "
          f"{os.getpid()},") in second.stderr.splitlines()[-1]
  # What a job killed later leaves: Beam's temporaries and a shard of another count.
  (out / TASK / "beam-temp-validation.tfrecord-1f2e").mkdir(parents=True, exist_ok=True)
  (out / TASK / "train.tfrecord-00000-of-00005").write_bytes(b"half")
  again = subprocess.run(command, capture_output=True, text=True, env=env, timeout=240)
  assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-3000:]
  assert f"removing {out / TASK}, left by a job that did not finish" in again.stdout
  assert again.stderr == ""  # (Beam's workers logged ~70 lines of INFO and WARNING)
  earlier, _, _, _ = cached
  assert sorted(p.name for p in (out / TASK).iterdir()) == sorted(
      p.name for p in (earlier / TASK).iterdir())
  assert cache.cached_stats(str(out / TASK)) == cache.cached_stats(str(earlier / TASK))


def test_overwrite_keeps_the_finished_cache_until_the_new_one_is_done(cached, bindings, root,
                                                                     tmp_path):
  """--overwrite removed the finished cache before its job ran: a job killed (or failed) then left
  none (helper-54's audit). The new one is written beside it and put in its place when done."""
  earlier, _, _, _ = cached
  out = tmp_path / "cache"
  shutil.copytree(earlier, out)
  before = test_utils.tree_listing(out / TASK)
  command = [sys.executable, "-m", "code_t5.cli", "cache", "--output-cache-dir", str(out),
             "--root", str(root), "--tasks", TASK, "--min-shards", "2", "--overwrite",
             "--gin-param", bindings[1], "--runner-options=" + PIPELINE_OPTIONS.split("=", 1)[1]]
  mark = str(uuid.uuid4())
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CODE_T5_TEST_MARK=mark)
  job = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
  try:
    test_utils.wait_for(lambda: _workers_marked(mark) or job.poll() is not None, "a worker",
                        120)
    assert job.poll() is None
  finally:
    job.kill()
    job.wait()
  assert test_utils.tree_listing(out / TASK) == before  # untouched
  again = subprocess.run(command, capture_output=True, text=True, env=env, timeout=240)
  assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-3000:]
  assert sorted(p.name for p in out.iterdir()) == sorted([TASK, cache.CACHE_LOCK])  # no others
  assert (out / TASK / "COMPLETED").exists()
  assert cache.cached_stats(str(out / TASK)) == cache.cached_stats(str(earlier / TASK))
