"""The fused Adafactor update (code_t5/training/adafactor.py) against Mesh TF's own, step by
step."""

import mesh_tensorflow as mtf
from mesh_tensorflow import optimize
import numpy as np
import pytest
import tensorflow.compat.v1 as tf

from code_t5.training import adafactor

SHAPES = {  # name: dimensions; what Mesh TF's Adafactor keeps for each is in the comment
    "matrix": [("rows", 128), ("columns", 160)],  # factored: vr, vc
    "three_axes": [("heads", 4), ("d_model", 136), ("d_kv", 128)],  # factored over the two largest
    "narrow": [("d_model", 128), ("heads", 4), ("d_kv", 64)],  # v (64 < min_dim_size_to_factor)
    "scale": [("d_model", 136)],  # v
}


def _train(fused, steps=4, mesh_shape="all:1", layout="", devices=("",), **options):
  """Every variable and slot after `steps` updates of a loss that gives each weight its own
  gradient, by Mesh TF's AdafactorOptimizer or the fused update."""
  rng = np.random.default_rng(0)
  with tf.Graph().as_default():
    tf.train.get_or_create_global_step()
    graph = mtf.Graph()
    mesh = mtf.Mesh(graph, "mesh")
    loss, variables = 0.0, []
    for name, dims in SHAPES.items():
      shape = mtf.Shape([mtf.Dimension(*d) for d in dims])
      start = rng.normal(size=shape.to_integer_list).astype(np.float32)
      target = rng.normal(size=shape.to_integer_list).astype(np.float32)
      var = mtf.get_variable(mesh, name, shape, initializer=tf.constant_initializer(start))
      error = var - mtf.import_tf_tensor(mesh, tf.constant(target), shape)
      loss += mtf.reduce_sum(mtf.square(error) * mtf.square(error))
      variables.append(var)
    grads = mtf.gradients([loss], [v.outputs[0] for v in graph.trainable_variables])
    optimizer = optimize.AdafactorOptimizer(**options)
    if fused:
      assert adafactor.covers(optimizer)
      optimizer.apply_grad = lambda grad, var: adafactor.fused_apply_grad(optimizer, grad, var)
    updates = optimizer.apply_grads(grads, graph.trainable_variables)
    mesh_impl = mtf.placement_mesh_impl.PlacementMeshImpl(
        mtf.convert_to_shape(mesh_shape), mtf.convert_to_layout_rules(layout), list(devices))
    lowering = mtf.Lowering(graph, {mesh: mesh_impl})
    # The step's increment after the updates, which read the step (their learning and decay
    # rates): grouped unordered, as Mesh TF's train op has them, an update read the step before
    # or after the increment by chance, and the two sides differed once in CI (90 % of "matrix").
    with tf.control_dependencies([lowering.lowered_operation(u) for u in updates]):
      step = tf.assign_add(tf.train.get_global_step(), 1)
    config = tf.ConfigProto(device_count={"CPU": len(devices)})
    with tf.Session(config=config) as session:
      session.run(tf.global_variables_initializer())
      session.run(lowering.copy_masters_to_slices())
      for _ in range(steps):
        session.run(step)
      session.run(lowering.copy_slices_to_masters())
      return {v.name: session.run(v.get_master()) for v in graph.all_variables}


@pytest.mark.parametrize("options", [
    {},
    {"multiply_by_parameter_scale": False},
    {"clipping_threshold": None, "factored": False},
    {"decay_rate": 0.9, "learning_rate": 0.05, "clipping_threshold": 2.0},
], ids=["t5-default", "no-parameter-scale", "no-clipping-unfactored", "constant-rates"])
def test_fused_updates_equal_mesh_tf_bit_for_bit_on_one_device(options):
  ours, theirs = _train(True, **options), _train(False, **options)
  assert sorted(ours) == sorted(theirs)
  factored = "factored" not in options
  assert ("matrix_slot_vr" in ours) == factored and ("narrow_slot_v" in ours)
  for name, value in theirs.items():
    np.testing.assert_array_equal(ours[name], value, err_msg=name)
  changed = [name for name in SHAPES if not np.allclose(ours[name], _train(True, steps=0)[name])]
  assert changed == list(SHAPES)


@pytest.mark.parametrize("layout", ["rows:model,d_model:model", "columns:model,d_kv:model"])
def test_fused_updates_all_reduce_the_dimensions_a_layout_splits(layout):
  """On two devices with the variables split, Mesh TF's and the fused update still agree (their
  sums are all-reduced in another order than on one device)."""
  split = _train(True, mesh_shape="model:2", layout=layout, devices=("cpu:0", "cpu:1"))
  theirs = _train(False, mesh_shape="model:2", layout=layout, devices=("cpu:0", "cpu:1"))
  one_device = _train(True)
  for name, value in theirs.items():
    np.testing.assert_allclose(split[name], value, rtol=1e-6, atol=1e-7, err_msg=name)
    np.testing.assert_allclose(split[name], one_device[name], rtol=1e-6, atol=1e-7, err_msg=name)


def test_options_it_does_not_compute_keep_mesh_tf_s_update():
  assert adafactor.covers(optimize.AdafactorOptimizer())
  assert not adafactor.covers(optimize.AdafactorOptimizer(beta1=0.9))
  assert not adafactor.covers(optimize.AdafactorOptimizer(stacked_dim_names=["heads"]))


def test_a_trained_graph_is_freed_after_its_run():
  """The traced update functions live as long as their graph's lowering: a process that trains
  several graphs (tests, eval loops) does not keep every graph it built."""
  import gc  # pylint: disable=g-import-not-at-top
  import weakref  # pylint: disable=g-import-not-at-top
  graphs = []
  real_graph = tf.Graph

  class _Recorded(real_graph):  # pylint: disable=too-few-public-methods
    def __init__(self, *args, **kwargs):
      super().__init__(*args, **kwargs)
      graphs.append(weakref.ref(self))

  tf.Graph = _Recorded
  try:
    _train(True, steps=1)
  finally:
    tf.Graph = real_graph
  gc.collect()
  assert graphs and all(ref() is None for ref in graphs)
