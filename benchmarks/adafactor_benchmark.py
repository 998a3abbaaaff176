"""How long Mesh TF takes to build and lower the Adafactor updates of the causal LM mini's weights,
with its own `apply_grad` and with the fused one (code_t5/training/adafactor.py).

    python benchmarks/adafactor_benchmark.py [--repeats 6]

The work this times runs in Python before every training run's first step: the optimizer's Mesh
TF operations, then `mtf.Lowering` of the graph (the 35 variables of the shipped architecture,
5,245,312 weights, bfloat16 masters and float32 slices as `runs/cpu.gin` keeps them, their
gradients imported as constants, and the updates). The two are alternated in one process;
prints each one's operation counts, the times of every repeat, their medians and the ratio.
"""

import argparse
import functools
import statistics
import time

import bench_utils  # pylint: disable=g-import-not-at-top  (benchmarks/; puts the repository on
# sys.path and keeps the libraries' log off the output, so it comes before code_t5)

import mesh_tensorflow as mtf  # pylint: disable=g-import-not-at-top,wrong-import-position
from mesh_tensorflow import optimize  # pylint: disable=g-import-not-at-top,wrong-import-position
import tensorflow.compat.v1 as tf  # pylint: disable=g-import-not-at-top,wrong-import-position

from code_t5.training import adafactor  # pylint: disable=g-import-not-at-top,wrong-import-position


def mini_weights():
  """The causal LM mini's variables (gin_configs/sizes/mini.gin with spm_dev): name -> dims."""
  dim = mtf.Dimension
  d_model = dim("d_model", 256)
  weights = {"shared/embedding": [dim("vocab", 8192), d_model],
             "decoder/final_layer_norm/scale": [d_model],
             "decoder/relative_attention_bias": [dim("heads", 4), dim("buckets", 32)]}
  for layer in range(4):
    prefix = f"decoder/block_{layer:03d}"
    for name in "qkvo":
      weights[f"{prefix}/attention/{name}"] = [d_model, dim("heads", 4), dim("d_kv", 64)]
    weights[f"{prefix}/dense_relu_dense/wi"] = [d_model, dim("d_ff", 1024)]
    weights[f"{prefix}/dense_relu_dense/wo"] = [dim("d_ff", 1024), d_model]
    weights[f"{prefix}/layer_norm_0/scale"] = [d_model]
    weights[f"{prefix}/layer_norm_1/scale"] = [d_model]
  return weights


def build_and_lower(fused: bool):
  """(seconds for the updates' Mesh TF operations, seconds to lower the graph, Mesh TF
  operations of the updates, TensorFlow ops of the lowered graph)."""
  with tf.Graph().as_default() as tf_graph:
    tf.train.get_or_create_global_step()
    graph = mtf.Graph()
    mesh = mtf.Mesh(graph, "mesh")
    grads = []
    for name, dims in mini_weights().items():
      shape = mtf.Shape(dims)
      mtf.get_variable(mesh, name, shape, initializer=tf.zeros_initializer(),
                       master_dtype=tf.bfloat16, slice_dtype=tf.float32,
                       activation_dtype=tf.float32)
      grads.append(mtf.import_tf_tensor(mesh, tf.zeros(shape.to_integer_list), shape))
    before = len(graph.operations)
    start = time.perf_counter()
    optimizer = optimize.AdafactorOptimizer()
    if fused:
      optimizer.apply_grad = functools.partial(adafactor.fused_apply_grad, optimizer)
    updates = optimizer.apply_grads(grads, graph.trainable_variables)
    built = time.perf_counter()
    mesh_impl = mtf.placement_mesh_impl.PlacementMeshImpl(
        mtf.convert_to_shape("all:1"), mtf.convert_to_layout_rules(""), ["/device:CPU:0"])
    lowering = mtf.Lowering(graph, {mesh: mesh_impl})
    tf.group([lowering.lowered_operation(u) for u in updates])
    lowered = time.perf_counter()
    return (built - start, lowered - built, len(graph.operations) - before,
            len(tf_graph.get_operations()))


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--repeats", type=int, default=6)
  args = parser.parse_args(argv)
  print(f"{bench_utils.cpu_kind()}; load average before: {bench_utils.load_average()}")
  weights = sum(mtf.Shape(dims).size for dims in mini_weights().values())
  print(f"the causal LM mini's {len(mini_weights())} variables, {weights:,} weights")
  build_and_lower(True), build_and_lower(False)  # warm: the first graph imports and traces more
  runs = {True: [], False: []}
  for _ in range(args.repeats):
    for fused in (True, False):
      runs[fused].append(build_and_lower(fused))
  medians = {}
  for fused, label in ((False, "Mesh TF's apply_grad"), (True, "fused (code_t5)")):
    totals = [build + lower for build, lower, _, _ in runs[fused]]
    medians[fused] = statistics.median(totals)
    _, _, mtf_ops, tf_ops = runs[fused][0]
    print(f"{label:22s} {mtf_ops:5,} Mesh TF ops for the updates, {tf_ops:,} TensorFlow ops; "
          f"build + lower (s): {' '.join(f'{t:.2f}' for t in totals)}; "
          f"median {medians[fused]:.2f}")
  print(f"fused / Mesh TF's: {medians[True] / medians[False]:.2f}x the time, "
        f"{medians[False] - medians[True]:.2f} s less at the median")
  print(f"load average after: {bench_utils.load_average()}")


if __name__ == "__main__":
  main()
