"""The training step's matrix products, one at a time, in TensorFlow: GFLOP/s per product with
oneDNN's kernels and with Eigen's (TensorFlow's own, what TF 2.15 uses on CPUs without AVX-512
VNNI unless TF_ENABLE_ONEDNN_OPTS=1; code_t5_compat sets it), and with oneDNN on, as one
SparseMatMul (Eigen's product, which oneDNN does not rewrite) lowered the way
code_t5/training/products.py lowers it, marked where that module's rule takes it.

    python benchmarks/products_benchmark.py [--threads 2]

The shapes are the causal LM mini's at the CPU batch (8 x 512 positions, d_model 256, d_ff 1,024,
8,192 pieces, 4 heads of 64): each product forward, and its two gradients (the input's and the
weight's, which sums over all 4,096 positions). Each figure is the best of 5 runs, in a fresh
process per kernel library (the choice is read once, when TensorFlow starts). Prints figures;
asserts nothing.
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import bench_utils  # pylint: disable=g-import-not-at-top,wrong-import-position

# name: (einsum equation, operand shapes, multiply-adds)
TOKENS, D_MODEL, D_FF, VOCAB, HEADS, D_KV, LENGTH = 4096, 256, 1024, 8192, 4, 64, 512
PRODUCTS = {
    "logits": ("bld,vd->blv", [(8, LENGTH, D_MODEL), (VOCAB, D_MODEL)], TOKENS * D_MODEL * VOCAB),
    "logits, input gradient": ("blv,vd->bld", [(8, LENGTH, VOCAB), (VOCAB, D_MODEL)],
                               TOKENS * D_MODEL * VOCAB),
    "logits, weight gradient": ("blv,bld->vd", [(8, LENGTH, VOCAB), (8, LENGTH, D_MODEL)],
                                TOKENS * D_MODEL * VOCAB),
    "MLP in": ("bld,df->blf", [(8, LENGTH, D_MODEL), (D_MODEL, D_FF)], TOKENS * D_MODEL * D_FF),
    "MLP in, input gradient": ("blf,df->bld", [(8, LENGTH, D_FF), (D_MODEL, D_FF)],
                               TOKENS * D_MODEL * D_FF),
    "MLP in, weight gradient": ("blf,bld->df", [(8, LENGTH, D_FF), (8, LENGTH, D_MODEL)],
                                TOKENS * D_MODEL * D_FF),
    "MLP out": ("blf,fd->bld", [(8, LENGTH, D_FF), (D_FF, D_MODEL)], TOKENS * D_MODEL * D_FF),
    "MLP out, weight gradient": ("blf,bld->fd", [(8, LENGTH, D_FF), (8, LENGTH, D_MODEL)],
                                 TOKENS * D_MODEL * D_FF),
    "attention projection": ("bld,dk->blk", [(8, LENGTH, D_MODEL), (D_MODEL, HEADS * D_KV)],
                             TOKENS * D_MODEL * HEADS * D_KV),
    "attention scores": ("bhld,bhmd->bhlm", [(8, HEADS, LENGTH, D_KV), (8, HEADS, LENGTH, D_KV)],
                         8 * HEADS * LENGTH * LENGTH * D_KV),
}


def measure(threads: int) -> dict:
  """GFLOP/s per product in this process (TensorFlow imported here): {"einsum": {name: rate}},
  and, where the product is one matrix product, "SparseMatMul" (Eigen's, as
  code_t5.training.products lowers it) and "rule" (whether products.eigen_is_faster takes it)."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  import tensorflow.compat.v1 as tf  # pylint: disable=g-import-not-at-top
  from code_t5.training import products  # pylint: disable=g-import-not-at-top
  tf.disable_eager_execution()
  config = tf.ConfigProto(intra_op_parallelism_threads=threads, inter_op_parallelism_threads=1)
  rng = np.random.default_rng(0)
  rates = {"einsum": {}, "SparseMatMul": {}, "rule": {}}
  with tf.Graph().as_default(), tf.Session(config=config) as session:
    for name, (equation, shapes, macs) in PRODUCTS.items():
      operands = [tf.Variable(rng.random(shape, np.float32)) for shape in shapes]
      session.run([v.initializer for v in operands])
      lowerings = {"einsum": tf.einsum(equation, *operands).op}
      form = products.matrix_form(equation)
      # Only oneDNN's process prints it: with oneDNN off every product is Eigen's already.
      if form is not None and os.environ.get("TF_ENABLE_ONEDNN_OPTS") == "1":
        lowerings["SparseMatMul"] = products.sparse_matmul(form, *operands).op
        rates["rule"][name] = products.eigen_is_faster(form, *shapes)
      for lowering, product in lowerings.items():
        session.run(product)
        best = float("inf")
        for _ in range(5):
          start = time.perf_counter()
          session.run(product)
          best = min(best, time.perf_counter() - start)
        rates[lowering][name] = 2 * macs / best / 1e9
  return rates


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--threads", type=int, default=os.cpu_count())
  # The child's mode: its environment says which library (read once, when TensorFlow starts).
  parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
  args = parser.parse_args(argv)
  if args.measure:
    print(json.dumps(measure(args.threads)))
    return
  print(f"{bench_utils.cpu_kind()}; {args.threads} threads; load average before: "
        f"{bench_utils.load_average()}")
  rates = {}
  for onednn in ("0", "1"):
    env = {**os.environ, "TF_ENABLE_ONEDNN_OPTS": onednn, "TF_CPP_MIN_LOG_LEVEL": "3"}
    output = subprocess.run([sys.executable, __file__, "--measure",
                             "--threads", str(args.threads)], env=env, check=True,
                            capture_output=True, text=True).stdout
    rates[onednn] = json.loads(output.strip().splitlines()[-1])
  eigen, onednn = rates["0"]["einsum"], rates["1"]["einsum"]
  sparse, rule = rates["1"]["SparseMatMul"], rates["1"]["rule"]
  print(f"{'product (causal LM mini, 8 x 512 positions)':45s} {'Eigen':>8s} {'oneDNN':>8s} "
        f"{'SparseMatMul':>13s}  GFLOP/s; * the one code_t5.eigen_products takes with oneDNN on")
  for name in PRODUCTS:
    mark_onednn, mark_sparse = ("", "*") if rule.get(name) else ("*", "")
    sparse_rate = f"{sparse[name]:.0f}{mark_sparse}" if name in sparse else "-"
    print(f"{name:45s} {eigen[name]:8.0f} {onednn[name]:7.0f}{mark_onednn or ' '} "
          f"{sparse_rate:>13s}")
  print(f"load average after: {bench_utils.load_average()}")


if __name__ == "__main__":
  main()
