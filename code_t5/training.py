"""Training-side settings Mesh TF does not expose, chosen in gin (runs/cpu*.gin).

1. `train_model`: Mesh TF calls `utils.run.train_model_fn` with the estimator it built; bound to
   this function, gin sets the session and run config Mesh TF fixes -- devices, threads,
   grappler, XLA, summary frequency -- and whether the graph is serialised into the model dir:

       utils.run.train_model_fn = @code_t5.train_model
       code_t5.train_model.write_graph_def = False   # no graph.pbtxt / graph events / .meta
       code_t5.train_model.cpu_devices = 4           # cpu:0..cpu:3 for a 4-device mesh

2. `updates_after_backward`: wraps the optimizer so the weights are updated only after the
   whole backward pass (Mesh TF's CPU/GPU lowering lets updates race with backward reads).

Training itself is Mesh TF's own `utils.train_model`; benchmarks/train_benchmark.py measures what
each option changes.
"""

import contextlib

import gin
import mesh_tensorflow as mtf
from mesh_tensorflow.transformer import utils as mtf_utils
import tensorflow.compat.v1 as tf

import code_t5_compat


def session_config(base, intra_op_threads=None, inter_op_threads=None, meta_optimizer=True,
                   xla_jit=False, cpu_devices=None, soft_placement=None):
  """A copy of the ConfigProto `base` with the given devices, thread, grappler and XLA settings."""
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
  if xla_jit:
    config.graph_options.optimizer_options.global_jit_level = tf.OptimizerOptions.ON_1
  return config


@gin.configurable(module="code_t5")
def train_model(estimator, vocabulary, sequence_length, batch_size, train_dataset_fn,
                train_steps, ensemble_inputs, dataset_split="train", skip_seen_data=False,
                seen_data_init_step=0, checkpoint_input_pipeline=False, *,
                write_graph_def=True, intra_op_threads=None, inter_op_threads=None,
                meta_optimizer=True, xla_jit=False, cpu_devices=None, soft_placement=None,
                summary_steps=None, autograph=True):
  """`mesh_tensorflow.transformer.utils.train_model` under the given session options.

  Args (the Mesh TF ones are passed through; these are set in gin):
    write_graph_def: False skips serialising the graph into graph.pbtxt, the events file and
      each checkpoint's .meta (see code_t5_compat.training_without_graph_def).
    intra_op_threads: threads one op may use (None: TF's default, the number of cores).
    inter_op_threads: ops run at once (None: TF's default, the number of cores).
    meta_optimizer: False turns grappler off (faster session start, maybe slower steps).
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
  """
  config = session_config(
      estimator.config.session_config, intra_op_threads=intra_op_threads,
      inter_op_threads=inter_op_threads, meta_optimizer=meta_optimizer, xla_jit=xla_jit,
      cpu_devices=cpu_devices, soft_placement=soft_placement)
  changes = {"session_config": config}
  if summary_steps is not None:
    changes["save_summary_steps"] = summary_steps
  code_t5_compat.set_run_config(estimator, **changes)
  if cpu_devices is not None:
    tf.logging.info("code_t5.train_model: %d CPU devices, soft placement %s", cpu_devices,
                    config.allow_soft_placement)
  graph_files = (contextlib.nullcontext() if write_graph_def
                 else code_t5_compat.training_without_graph_def())
  input_functions = (contextlib.nullcontext() if autograph
                     else code_t5_compat.tf_data_without_autograph())
  with graph_files, input_functions:
    mtf_utils.train_model(
        estimator, vocabulary, sequence_length, batch_size, train_dataset_fn, train_steps,
        ensemble_inputs, dataset_split=dataset_split, skip_seen_data=skip_seen_data,
        seen_data_init_step=seen_data_init_step,
        checkpoint_input_pipeline=checkpoint_input_pipeline)


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
def updates_after_backward(learning_rate, optimizer=gin.REQUIRED):
  """`optimizer(learning_rate)` whose variable updates wait for every gradient of the step.

  Mesh TF on CPU/GPU keeps the weights in TF1 (ref) variables and orders a weight's update only
  after that weight's own gradient, not after the backward ops that still read the weight to
  compute earlier layers' gradients: those reads race with the update, and the step's gradients
  come out differently from run to run (measured: the loss after one SGD step with lr 1 varied
  by 6 % between identical runs). Making each update wait for all gradients of the step (every
  backward read is upstream of some gradient) removes the race. Use as
  `utils.run.optimizer = @code_t5.updates_after_backward` with
  `code_t5.updates_after_backward.optimizer = @optimize.AdafactorOptimizer`.
  """
  opt = optimizer(learning_rate=learning_rate)
  apply_grads = opt.apply_grads

  def apply_grads_after_backward(grads, variables):
    barrier = _Barrier([g for g in grads if g is not None])
    grads = [None if g is None else _AfterAll(g, barrier).outputs[0] for g in grads]
    return apply_grads(grads, variables)

  opt.apply_grads = apply_grads_after_backward
  return opt
