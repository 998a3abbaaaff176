"""code_t5.training.training's options change how fast training starts and ends, never what it
reads."""

import gc
import json
import os

from google.protobuf import text_format
import numpy as np
import pytest
import seqio
from t5.models import mesh_transformer
import tensorflow.compat.v1 as tf

from code_t5.training import launcher
from code_t5.training import training
import code_t5_compat

pytestmark = pytest.mark.usefixtures("tasks_use_prepared_dir")
LENGTHS = {"inputs": 128, "targets": 128}


def _plain(example):
  """An example as plain Python values: arrays as lists, strings as bytes."""
  return {k: np.asarray(v).tolist() for k, v in example.items()}


def _training_examples(task_name, num_examples=40,
                       dataset_fn=mesh_transformer.mesh_train_dataset_fn):
  """What Mesh TF's trainer reads (packed, shuffled with a fixed seed), as plain lists."""
  vocabulary = seqio.get_mixture_or_task(task_name).output_features["targets"].vocabulary
  dataset = dataset_fn(task_name, LENGTHS, vocabulary, seed=7)
  return [_plain(ex) for ex in dataset.take(num_examples).as_numpy_iterator()]


@pytest.mark.parametrize("task_name", ["flcc_py_prefix_lm_v1", "flcc_py_span_corruption_v1",
                                       "flcc_py_prefix_lm_span_corruption_spm_dev_v1"])
def test_input_pipeline_without_autograph_gives_the_same_examples(task_name):
  with code_t5_compat.tf_data_without_autograph():
    without = _training_examples(task_name)
  assert without == _training_examples(task_name)
  assert len(without) == 40 and any(ex["inputs"] != ex["targets"] for ex in without)


@pytest.mark.parametrize("task_name", ["flcc_py_prefix_lm_v1", "flcc_py_cursor_lm_spm_dev_v1"])
def test_input_pipeline_without_autotune_gives_the_same_examples(task_name):
  without = _training_examples(
      task_name, dataset_fn=training.without_autotune(mesh_transformer.mesh_train_dataset_fn))
  assert without == _training_examples(task_name)
  assert len(without) == 40


def _ops_run(config) -> list:
  """The op types of the graph a session with `config` runs for x + y of two constants, times a
  fed value (its first run's partition graph, after TF's graph optimizer)."""
  with tf.Graph().as_default():
    fed = tf.placeholder(tf.float32, [2])
    total = (tf.constant([1.0, 2.0]) + tf.constant([3.0, 4.0])) * fed
    metadata = tf.RunMetadata()
    with tf.Session(config=config) as session:
      session.run(total, {fed: [1.0, 1.0]}, options=tf.RunOptions(output_partition_graphs=True),
                  run_metadata=metadata)
  return sorted(node.op for graph in metadata.partition_graphs for node in graph.node)


def test_without_constant_folding_the_session_runs_the_graph_as_built():
  # runs/cpu.gin: folding the Mesh TF graph's constants took seconds of a launch's first step.
  folding = training.session_config(None, meta_optimizer=False)
  not_folding = training.session_config(None, meta_optimizer=False, constant_folding=False)
  assert "AddV2" not in _ops_run(folding)
  assert "AddV2" in _ops_run(not_folding)
  assert not_folding.graph_options.optimizer_options.do_common_subexpression_elimination


def _shuffle_buffer_sizes(dataset) -> list:
  """The buffer sizes of the dataset's shuffles, from its graph (the source's file shuffle too)."""
  serialized = dataset._as_serialized_graph()  # pylint: disable=protected-access
  graph = tf.GraphDef.FromString(serialized.numpy())
  nodes = {node.name: node for node in graph.node}
  return sorted(int(tf.make_ndarray(nodes[node.input[1].split(":")[0]].attr["value"].tensor))
                for node in graph.node if node.op.startswith("ShuffleDataset"))


def test_shuffle_buffer_is_the_runs_own_and_a_given_size_still_wins():
  # runs/cpu.gin shuffles the training examples in 256, not seqio's 1,000: the first step waits
  # until the buffer is full (code_t5_compat.tasks_shuffle_buffer).
  task_name = "flcc_py_cursor_lm_spm_dev_v1"
  vocabulary = seqio.get_mixture_or_task(task_name).output_features["targets"].vocabulary
  dataset_fn = mesh_transformer.mesh_train_dataset_fn
  default = _shuffle_buffer_sizes(dataset_fn(task_name, LENGTHS, vocabulary, seed=7))
  smaller = _shuffle_buffer_sizes(
      training.with_shuffle_buffer(dataset_fn, 256)(task_name, LENGTHS, vocabulary, seed=7))
  assert 1000 in default and 256 not in default
  assert 256 in smaller and 1000 not in smaller and len(smaller) == len(default)
  with code_t5_compat.tasks_shuffle_buffer(256):
    given = seqio.get_mixture_or_task(task_name).get_dataset(LENGTHS, shuffle_buffer_size=50)
  assert 50 in _shuffle_buffer_sizes(given) and 256 not in _shuffle_buffer_sizes(given)
  assert 1000 in _shuffle_buffer_sizes(dataset_fn(task_name, LENGTHS, vocabulary, seed=7))
  with pytest.raises(ValueError, match="shuffle_buffer: a number of examples >= 1, not 0"):
    training.with_shuffle_buffer(dataset_fn, 0)


def test_eval_datasets_without_autotune_give_the_same_examples():
  """What Mesh TF's eval reads (references and decode inputs) through runs/eval.gin's wrapper."""
  vocabulary = seqio.get_mixture_or_task(
      "flcc_py_line_completion_v1").output_features["targets"].vocabulary
  kwargs = dict(mixture_or_task_name="flcc_py_line_completion_v1", sequence_length=LENGTHS,
                vocabulary=vocabulary, dataset_split="validation", num_eval_examples=20)
  wrapped = training.eval_datasets_without_autotune(mesh_transformer.mesh_eval_dataset_fn,
                                                    **kwargs)
  plain = mesh_transformer.mesh_eval_dataset_fn(**kwargs)
  assert [d.name for d in wrapped] == [d.name for d in plain]
  for with_wrapper, without in zip(wrapped, plain):
    assert with_wrapper.metric_fns == without.metric_fns
    examples = [[_plain(ex) for ex in dataset.dataset_fn().as_numpy_iterator()]
                for dataset in (with_wrapper, without)]
    assert len(examples[0]) == 20
    assert examples[0] == examples[1]


def _threads_started_by_reading(dataset_fn):
  """OS threads that appear while a TF1 session (as Mesh TF trains in) reads three elements."""
  with tf.Graph().as_default():
    iterator = tf.data.make_initializable_iterator(dataset_fn())
    next_element = iterator.get_next()
    with tf.Session() as session:
      session.run(iterator.initializer)
      before = len(os.listdir("/proc/self/task"))
      for _ in range(3):
        session.run(next_element)
      return len(os.listdir("/proc/self/task")) - before


def test_input_pipeline_without_autotune_starts_no_autotuning_thread():
  """tf.data's autotuning starts a model thread with the first element; its late wake-up held the
  session's close 20-70 s (code_t5.training.training.without_autotune). Without autotuning it
  never runs."""
  def dataset_fn():
    return tf.data.Dataset.range(100).map(lambda x: 2 * x, num_parallel_calls=tf.data.AUTOTUNE)

  with_autotune = _threads_started_by_reading(dataset_fn)
  without = _threads_started_by_reading(training.without_autotune(dataset_fn))
  assert without < with_autotune, (without, with_autotune)


@pytest.fixture(scope="module")
def two_step_run(tmp_path_factory, prepared_dir):
  """The model dir of a real two-step training run that wrote its graph and traced its second
  step (ProfilerHook never traces the first)."""
  model_dir = tmp_path_factory.mktemp("two_steps")
  experiment = launcher.Experiment(run="cpu", model_dir=model_dir, gin_params=[
      f"code_t5.flcc_dataset.prepared_dir = '{prepared_dir}'",
      "code_t5.train_model.write_graph_def = True", "code_t5.train_model.profile_steps = 1"])
  log = model_dir / "train.log"
  assert launcher.run(experiment.train_command(2), log, echo=lambda *_: None) == 0, \
      log.read_text()[-4000:]
  return model_dir


def test_step_increment_waits_for_the_steps_reads_of_global_step(two_step_run):
  """Mesh TF's `global_step += 1` is unordered against the same step's reads of global_step (the
  learning rate, Adafactor's decay rate); where it ran first the step used the next step's rates
  and an identical run trained differently. In the graph a real run trains (written with
  write_graph_def), the increment waits for every op of the step that reads the step."""
  graph = text_format.Parse((two_step_run / "graph.pbtxt").read_text(), tf.GraphDef())
  inputs = {n.name: [i.lstrip("^").split(":")[0] for i in n.input] for n in graph.node}
  users = {name: [] for name in inputs}
  for name, names in inputs.items():
    for used in names:
      users[used].append(name)
  increment, = [n for n in graph.node if n.op == "AssignAddVariableOp"
                and n.input[0] == "global_step"]
  after_increment = _reached([increment.name], users)
  train_op, = [name for name in after_increment if name.startswith("group_deps")
               and not users[name]]
  in_step = _reached([train_op], inputs)
  readers = {name for name in in_step - after_increment if "global_step" in inputs[name]}
  assert len(readers) >= 2  # at least the learning rate's and the decay rate's
  waits_for = {i[1:] for i in increment.input if i.startswith("^")}
  assert readers <= waits_for, sorted(readers - waits_for)


def _reached(names, neighbours):
  seen, todo = set(), list(names)
  while todo:
    name = todo.pop()
    if name not in seen:
      seen.add(name)
      todo.extend(neighbours[name])
  return seen


def test_profile_steps_trace_where_the_step_s_time_goes(two_step_run):
  # code_t5.train_model.profile_steps: the traced step's ops, with their durations, in Chrome's
  # trace format (what benchmarks/train_benchmark.py --profile sums up).
  trace, = two_step_run.glob("profile/timeline-*.json")
  events = [e for e in json.loads(trace.read_text())["traceEvents"] if e.get("ph") == "X"]
  products = [e for e in events if "Einsum" in e["args"].get("op", "")]
  assert any("DenseReluDense" in e["args"]["name"] for e in products)
  assert all(e["dur"] >= 0 for e in events) and sum(e["dur"] for e in products) > 0


def test_the_collector_is_as_usual_again_once_the_session_exists():
  # The trainer's process starts with the collector rarer (code_t5_compat, 7.); train_model's
  # hook puts it back when the session exists, so training itself collects as usual.
  usual = gc.get_threshold()
  code_t5_compat.collect_less_while_starting()
  try:
    assert gc.get_threshold() == code_t5_compat.START_UP_GC_THRESHOLDS != usual
    hook = training._CollectAsUsualOnceStarted()  # pylint: disable=protected-access
    hook.after_create_session(None, None)
    assert gc.get_threshold() == usual
  finally:
    gc.set_threshold(*usual)
