"""Training and eval settings Mesh TF does not expose, chosen in gin (runs/cpu*.gin, eval.gin).

1. `train_model`: Mesh TF calls `utils.run.train_model_fn` with the estimator it built; bound to
   this function, gin sets the session and run config Mesh TF fixes -- devices, threads,
   grappler, XLA, summary frequency -- whether the graph is serialised into the model dir, and
   how the input pipeline is built (autograph, tf.data autotuning):

       utils.run.train_model_fn = @code_t5.train_model
       code_t5.train_model.write_graph_def = False   # no graph.pbtxt / graph events / .meta
       code_t5.train_model.cpu_devices = 4           # cpu:0..cpu:3 for a 4-device mesh

2. `updates_after_backward`: wraps the optimizer so the weights are updated only after the
   whole backward pass (Mesh TF's CPU/GPU lowering lets updates race with backward reads);
   `train_model` likewise makes the step counter's increment wait for the step's reads of it
   (`step_increment_after_reads`).

3. `eval_datasets_without_autotune`: Mesh TF's eval datasets, read as training's are (without
   tf.data's autotuning), bound in runs/eval.gin.

4. `init_from_variable`: `code-t5 train --init-from` refuses a checkpoint whose weights are not
   the new model's (Mesh TF reads the ones whose names match and silently leaves the rest random).

5. A stop saves: Ctrl-C or SIGTERM (`code-t5 train` forwards both) ends training after the step
   being run, with the checkpoint of that step (`_StopSavesACheckpoint`).

Training itself is Mesh TF's own `utils.train_model`; benchmarks/train_benchmark.py measures what
each option changes.
"""

import contextlib
import functools
import re
import signal
import threading
import weakref

import gin
import mesh_tensorflow as mtf
from mesh_tensorflow.transformer import dataset as transformer_dataset
from mesh_tensorflow.transformer import utils as mtf_utils
import tensorflow.compat.v1 as tf

import code_t5_compat
from code_t5 import errors
from code_t5.training import adafactor
from code_t5.training import precision


def session_config(base, intra_op_threads=None, inter_op_threads=None, meta_optimizer=True,
                   xla_jit=False, cpu_devices=None, soft_placement=None, constant_folding=True):
  """A copy of the ConfigProto `base` with the given devices, thread, optimizer and XLA settings."""
  config = tf.ConfigProto()
  if base is not None:
    config.CopyFrom(base)
  if cpu_devices is not None:
    config.device_count["CPU"] = cpu_devices
  if soft_placement is not None:
    config.allow_soft_placement = soft_placement
  if intra_op_threads is not None:
    config.intra_op_parallelism_threads = intra_op_threads
  if inter_op_threads is not None:
    config.inter_op_parallelism_threads = inter_op_threads
  if not meta_optimizer:
    config.graph_options.rewrite_options.disable_meta_optimizer = True
  if not constant_folding:
    # TF's graph optimizer level L1 (the default) forces constant folding on; L0 turns it off,
    # and with it common subexpression elimination, which is asked for again here.
    options = config.graph_options.optimizer_options
    options.opt_level = tf.OptimizerOptions.L0
    options.do_common_subexpression_elimination = True
  if xla_jit:
    config.graph_options.optimizer_options.global_jit_level = tf.OptimizerOptions.ON_1
  return config


@gin.configurable(module="code_t5")
def train_model(estimator, vocabulary, sequence_length, batch_size, train_dataset_fn,
                train_steps, ensemble_inputs, dataset_split="train", skip_seen_data=False,
                seen_data_init_step=0, checkpoint_input_pipeline=False, *,
                write_graph_def=True, intra_op_threads=None, inter_op_threads=None,
                meta_optimizer=True, xla_jit=False, cpu_devices=None, soft_placement=None,
                summary_steps=None, autograph=True, data_autotune=True, random_seed=None,
                profile_steps=None, shuffle_buffer=None, constant_folding=True):
  """`mesh_tensorflow.transformer.utils.train_model` under the given session options.

  Args (the Mesh TF ones are passed through; these are set in gin):
    write_graph_def: False skips serialising the graph into graph.pbtxt, the events file and
      each checkpoint's .meta (see code_t5_compat.training_without_graph_def).
    intra_op_threads: threads one op may use (None: TF's default, the number of cores).
    inter_op_threads: ops run at once (None: TF's default, the number of cores).
    meta_optimizer: False turns grappler off (faster session start, maybe slower steps).
    constant_folding: False: TF's graph optimizer does not fold constants when a session first
      runs a set of fetches (the first step's). That folding evaluates the constant parts of the
      graph and copies the tensors they make into it.
    xla_jit: True compiles clusters of ops with XLA (global_jit_level ON_1; on CPU XLA also
      needs TF_XLA_FLAGS=--tf_xla_cpu_global_jit in the environment).
    cpu_devices: split the CPU into this many TF devices cpu:0..cpu:N-1 (ConfigProto
      device_count), so a mesh over several `cpu:i` really runs on several devices. Mesh TF
      trains in a TF1 session, which ignores `tf.config.set_logical_device_configuration`.
    soft_placement: False makes an op placed on a missing device an error instead of a silent
      move to cpu:0 (the Estimator's default is True).
    summary_steps: write the loss (and Mesh TF's other summaries) to the TensorBoard events
      every this many steps (Mesh TF's RunConfig: 100).
    autograph: False builds the training input pipeline without autograph: the same examples,
      4-5 s sooner (see code_t5_compat.tf_data_without_autograph).
    data_autotune: False trains from the same input pipeline with tf.data's autotuning off (see
      `without_autotune`: no 20-70 s stall when the session closes).
    random_seed: the graph's random seed (RunConfig.tf_random_seed), so the initial weights are
      the same in every run; with `mesh_train_dataset_fn.seed` (the examples, their cursors and
      their order) and `updates_after_backward`, a run trains the same each time.
    profile_steps: every this many steps (never the first), the step's ops are traced into the
      model dir's `profile/timeline-STEP.json` (Chrome trace format; tf.train.ProfilerHook): where
      the step's time goes (benchmarks/train_benchmark.py --profile sums it up by op type).
    shuffle_buffer: the training examples are shuffled in a buffer of this many (None: the
      task's, seqio's 1,000). The first step waits until the buffer is full, each example
      tokenized (see code_t5_compat.tasks_shuffle_buffer).

  oneDNN's products are float32 or bf16 with float32 sums as `code_t5.products_precision` says
  (code_t5/training/precision.py), set before the session builds its first.
  """
  config = session_config(
      estimator.config.session_config, intra_op_threads=intra_op_threads,
      inter_op_threads=inter_op_threads, meta_optimizer=meta_optimizer, xla_jit=xla_jit,
      cpu_devices=cpu_devices, soft_placement=soft_placement, constant_folding=constant_folding)
  changes = {"session_config": config}
  if summary_steps is not None:
    changes["save_summary_steps"] = summary_steps
  if random_seed is not None:
    changes["tf_random_seed"] = random_seed
  code_t5_compat.set_run_config(estimator, **changes)
  tf.logging.info("code_t5.train_model: products in %s", precision.apply_products_precision())
  if cpu_devices is not None:
    tf.logging.info("code_t5.train_model: %d CPU devices, soft placement %s", cpu_devices,
                    config.allow_soft_placement)
  graph_files = (contextlib.nullcontext() if write_graph_def
                 else code_t5_compat.training_without_graph_def())
  input_functions = (contextlib.nullcontext() if autograph
                     else code_t5_compat.tf_data_without_autograph())
  if not data_autotune:
    train_dataset_fn = without_autotune(train_dataset_fn)
  if shuffle_buffer is not None:
    train_dataset_fn = with_shuffle_buffer(train_dataset_fn, shuffle_buffer)
  # The collector stays rare while the graph is built (code_t5_compat, 7.: the trainer's process
  # starts so), whatever started this process, until the session exists.
  code_t5_compat.collect_less_while_starting()
  stop = _StopSavesACheckpoint()
  hooks = [_StepIncrementAfterReads(), _CollectAsUsualOnceStarted(), stop]
  if profile_steps:
    hooks.append(tf.train.ProfilerHook(save_steps=profile_steps,
                                       output_dir=f"{estimator.model_dir}/profile"))
  with graph_files, input_functions, _with_hooks(estimator, *hooks):
    mtf_utils.train_model(
        estimator, vocabulary, sequence_length, batch_size, train_dataset_fn, train_steps,
        ensemble_inputs, dataset_split=dataset_split, skip_seen_data=skip_seen_data,
        seen_data_init_step=seen_data_init_step,
        checkpoint_input_pipeline=checkpoint_input_pipeline)
  if stop.stopped_by is not None:
    # Not a finished run: what comes after training (an eval, the trainer's exit status 0)
    # must not follow. The status a signal's default would give (128 + its number).
    raise SystemExit(128 + stop.stopped_by)


@contextlib.contextmanager
def _with_hooks(estimator, *added):
  """`estimator.train` runs the `added` hooks beside those it is given (Mesh TF builds its own
  list)."""
  train = estimator.train

  def train_with_hooks(*args, hooks=None, **kwargs):
    return train(*args, hooks=[*(hooks or []), *added], **kwargs)

  estimator.train = train_with_hooks
  try:
    yield
  finally:
    del estimator.train  # the class's method again


class _StepIncrementAfterReads(tf.estimator.SessionRunHook):
  def begin(self):
    reads = step_increment_after_reads(tf.get_default_graph())
    tf.logging.info("code_t5.train_model: the step's increment waits for %d reads of it", reads)


class _StopSavesACheckpoint(tf.estimator.SessionRunHook):
  """Ctrl-C or SIGTERM ends training after the step being run; the Estimator then saves that
  step's checkpoint, as at a run's end, so a rerun resumes from it. Before, the trainer died at
  once and the steps since the last periodic save were lost (up to 100 on CPU: a stop at step 17
  of 40 kept step 0, helper-43's audit). The first signal gives the handlers back, so a second
  one stops the trainer as before, without waiting for the step."""

  def __init__(self):
    self.stopped_by = None  # the signal's number
    self._replaced = {}

  def begin(self):
    if threading.current_thread() is threading.main_thread():  # (where Python takes signals)
      for number in (signal.SIGINT, signal.SIGTERM):
        self._replaced[number] = signal.signal(number, self._stop)

  def _stop(self, number, frame):
    del frame
    self.stopped_by = number
    self._give_back()

  def _give_back(self):
    for number, handler in self._replaced.items():
      signal.signal(number, handler)
    self._replaced = {}

  def after_run(self, run_context, run_values):
    del run_values
    if self.stopped_by is not None:
      run_context.request_stop()

  def end(self, session):
    del session
    self._give_back()


class _CollectAsUsualOnceStarted(tf.estimator.SessionRunHook):
  def after_create_session(self, session, coord):
    del session, coord
    code_t5_compat.collect_as_usual()


def step_increment_after_reads(graph) -> int:
  """Makes the training step's `global_step += 1` wait for the step's own reads of global_step.

  Mesh TF groups `tf.assign_add(global_step, 1)` with the weight updates without ordering it
  after anything, while the same step reads global_step for the learning rate and Adafactor's
  decay rate (1 - (step + 1)^-0.8: 0.43 at step 1, 0.58 at step 2). Where the increment ran
  first, the step's updates used the next step's rates; a 3-step run then differed from an
  identical one by 0.36 % at step 3 with steps 1 and 2 the same (seen once in CI,
  tests/meshes_test.py). (The Estimator's global_step is a resource variable, whose reads
  are copies; a ref variable's read, an Identity, hands on the buffer itself, so there the
  increment waits for the ops that use what the Identity gives.)
  Returns how many ops it now waits for.
  """
  step = tf.train.get_global_step(graph)
  if step is None:
    return 0
  variable = step.op.outputs[0]  # a resource handle (the Estimator's) or a ref
  increments = [op for op in variable.consumers()
                if op.type in ("AssignAddVariableOp", "AssignAdd")]
  after_increment = _reached(increments, lambda op: [c for t in op.outputs for c in t.consumers()]
                             + op._control_outputs)  # pylint: disable=protected-access
  # The training step: every op that the train op runs, the group (of per-device groups) that
  # ends where the increment leads.
  train_ops = [op for op in after_increment
               if not op._control_outputs and not any(t.consumers() for t in op.outputs)]  # pylint: disable=protected-access
  in_step = _reached(train_ops, lambda op: [t.op for t in op.inputs] + op.control_inputs)
  readers = []
  todo = list(variable.consumers())
  while todo:
    op = todo.pop()
    if op not in in_step or op in after_increment or op in readers:
      continue
    readers.append(op)
    if op.type == "Identity":  # a ref's read passes the variable's buffer on: its users read it
      todo.extend(c for t in op.outputs for c in t.consumers())
  for increment in increments:
    increment._add_control_inputs(readers)  # pylint: disable=protected-access
  return len(readers)


def _reached(start, neighbours) -> set:
  seen, todo = set(), list(start)
  while todo:
    op = todo.pop()
    if op not in seen:
      seen.add(op)
      todo.extend(neighbours(op))
  return seen


def without_autotune(dataset_fn):
  """`dataset_fn` whose datasets have tf.data's autotuning off: the same examples, no model thread.

  Why: with autotuning on, each iterator runs a model thread that re-tunes the pipeline in a
  loop, sleeping between passes for a period that doubles up to 60 s. When the session closes,
  the iterator's destructor cancels that thread and waits for it; but TF 2.15's cancellation
  wakes the thread *before* it marks itself cancelled (CancellationManager::StartCancel runs the
  callbacks, then sets is_cancelled_), so a thread that wakes at once finds itself not cancelled
  and sleeps out its period. Training then ended 20-70 s after its final checkpoint in about one
  run in three on a 2-core machine (a gdb backtrace: the main thread in TF_CloseSession ->
  ~RootDataset::Iterator -> ~LogicalThreadWrapper, the model thread in Model::OptimizeLoop's
  timed wait). Without autotuning, `num_parallel_calls=AUTOTUNE` stages run at TF's default
  parallelism (min(16, cores)) and `prefetch(AUTOTUNE)` buffers keep TF's own buffer-size
  autotuner, which needs no thread; on a CPU the trainer uses every core anyway.
  """

  @functools.wraps(dataset_fn)
  def dataset_fn_without_autotune(*args, **kwargs):
    return dataset_without_autotune(dataset_fn(*args, **kwargs))

  return dataset_fn_without_autotune


def with_shuffle_buffer(dataset_fn, size: int):
  """`dataset_fn` whose tasks shuffle their examples in a buffer of `size` (`train_model`'s
  `shuffle_buffer`); a `shuffle_buffer_size` the function itself gives still wins."""
  if isinstance(size, bool) or not isinstance(size, int) or size < 1:
    raise ValueError(f"code_t5.train_model.shuffle_buffer: a number of examples >= 1, not {size!r}")

  @functools.wraps(dataset_fn)
  def dataset_fn_with_shuffle_buffer(*args, **kwargs):
    with code_t5_compat.tasks_shuffle_buffer(size):
      return dataset_fn(*args, **kwargs)

  return dataset_fn_with_shuffle_buffer


def dataset_without_autotune(dataset):
  """`dataset` with tf.data's autotuning off (see without_autotune for why)."""
  options = tf.data.Options()
  options.autotune.enabled = False
  return dataset.with_options(options)


@gin.configurable(module="code_t5")
def eval_datasets_without_autotune(eval_dataset_fn=gin.REQUIRED, **kwargs):
  """Mesh TF's `utils.run.eval_dataset_fn`, whose datasets are read with tf.data's autotuning off.

  Eval reads each dataset twice, the references eagerly and the decode's inputs in an Estimator
  session, and both iterators end as training's did (`without_autotune`): a decode of a large
  root's points reads long enough for the model thread's period to reach 60 s. runs/eval.gin binds
  it around t5's `mesh_eval_dataset_fn`, whose own bindings still apply.
  """
  code_t5_compat.collect_as_usual()  # an eval's start is over (code_t5_compat, 7.)
  # EvalDataset(*...): Mesh TF accepts plain tuples from an eval_dataset_fn too.
  datasets = [transformer_dataset.EvalDataset(*dataset) for dataset in eval_dataset_fn(**kwargs)]
  return [dataset._replace(dataset_fn=without_autotune(dataset.dataset_fn)) for dataset in datasets]


class _AfterAll(mtf.Operation):
  """Identity of `x` that runs after every tensor in `barrier.tensors` is computed.

  Like mtf.depend, which fails on gradients that are pending all-reduces (LazyAllreduceSum) in
  multi-device meshes; the TF-level barrier (one tf.group) is built once per lowering and shared.
  """

  def __init__(self, x, barrier):
    super().__init__([x], x.mesh, name="after_backward")
    self._barrier = barrier
    self._outputs = [mtf.Tensor(self, x.shape, x.dtype)]

  def lower(self, lowering):
    mesh_impl = lowering.mesh_impl(self)
    group = self._barrier.group(lowering)
    with tf.control_dependencies([group]):
      lowering.set_tensor_lowering(
          self.outputs[0], mesh_impl.slicewise(tf.identity, lowering.tensors[self.inputs[0]]))

  def gradient(self, grad_ys):
    return grad_ys


class _Barrier:
  def __init__(self, tensors):
    self.tensors = tensors
    self._groups = {}

  def group(self, lowering):
    if id(lowering) not in self._groups:
      slices = []
      for t in self.tensors:
        laid_out = lowering.tensors[t]
        if hasattr(laid_out, "to_laid_out_tensor"):  # a pending all-reduce
          laid_out = laid_out.to_laid_out_tensor()
        slices.extend(laid_out.tensor_list)
      self._groups[id(lowering)] = tf.group(slices)
    return self._groups[id(lowering)]


@gin.configurable(module="code_t5")
def updates_after_backward(learning_rate, optimizer=gin.REQUIRED, fused_adafactor=False):
  """`optimizer(learning_rate)` whose variable updates wait for every gradient of the step.

  Mesh TF on CPU/GPU keeps the weights in TF1 (ref) variables and orders a weight's update only
  after that weight's own gradient, not after the backward ops that still read the weight to
  compute earlier layers' gradients: those reads race with the update, and the step's gradients
  come out differently from run to run (measured: the loss after one SGD step with lr 1 varied
  by 6 % between identical runs). Making each update wait for all gradients of the step (every
  backward read is upstream of some gradient) removes the race. Use as
  `utils.run.optimizer = @code_t5.updates_after_backward` with
  `code_t5.updates_after_backward.optimizer = @optimize.AdafactorOptimizer`.

  With `fused_adafactor`, an AdafactorOptimizer that `adafactor.covers` updates each variable
  through one Mesh TF operation (code_t5/training/adafactor.py): the same slots and values,
  1,130 fewer Mesh TF operations to lower and 1,640 fewer TensorFlow ops for the causal LM mini.
  """
  opt = optimizer(learning_rate=learning_rate)
  if fused_adafactor and adafactor.covers(opt):
    opt.apply_grad = functools.partial(adafactor.fused_apply_grad, opt)
  apply_grads = opt.apply_grads

  def apply_grads_after_backward(grads, variables):
    barrier = _Barrier([g for g in grads if g is not None])
    grads = [None if g is None else _AfterAll(g, barrier).outputs[0] for g in grads]
    return apply_grads(grads, variables)

  opt.apply_grads = apply_grads_after_backward
  return opt


class InitFromError(errors.UserError):
  """`--init-from`'s checkpoint does not hold the weights of the model being trained."""


_checked_graphs = weakref.WeakSet()  # Mesh TF calls the mapping once per variable


@gin.configurable(module="code_t5", denylist=["name"])
def init_from_variable(name):
  """Mesh TF's `init_checkpoint_variable_mapping.mapping_fn` for `code-t5 train --init-from`.

  Maps each variable of the graph to the same name in the run's `utils.run.init_checkpoint`,
  after checking (once per graph) that the checkpoint's weights -- the variables that
  `tpu_estimator_model_fn.init_variable_filter` lets Mesh TF read -- are exactly the graph's, in
  the graph's shapes. Mesh TF itself initialises from a checkpoint only the variables both have
  and leaves the rest random without a word, so a checkpoint of another model or size would give
  a run that looks started from it but is not.
  """
  graph = tf.get_default_graph()
  if graph not in _checked_graphs:
    _check_weights(gin.query_parameter("utils.run.init_checkpoint"),
                   re.compile(gin.query_parameter("tpu_estimator_model_fn.init_variable_filter")))
    _checked_graphs.add(graph)
  return name


def _check_weights(checkpoint, weights):
  saved = {n: list(shape) for n, shape in tf.train.list_variables(checkpoint)
           if weights.search(n)}
  graph = {v.op.name: v.shape.as_list() for v in tf.global_variables()
           if weights.search(v.op.name)}
  missing = sorted(set(graph) - set(saved))
  extra = sorted(set(saved) - set(graph))
  reshaped = sorted(n for n in set(graph) & set(saved) if graph[n] != saved[n])
  problems = []
  if missing:
    problems.append(f"{len(missing)} of the model's {len(graph)} weights are not in it (e.g. "
                    f"{missing[0]})")
  if extra:
    problems.append(f"{len(extra)} of its weights are not in the model (e.g. {extra[0]})")
  if reshaped:
    name = reshaped[0]
    problems.append(f"{len(reshaped)} of its weights have another shape (e.g. {name}: "
                    f"{saved[name]} there, {graph[name]} here)")
  if problems:
    raise InitFromError(
        f"--init-from: {checkpoint} is a checkpoint of another model: " + "; ".join(problems) +
        ". Give one trained with the same --model, --size, --vocab and size --gin-params.")
