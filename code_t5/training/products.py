"""Mesh TF's weight gradients as Eigen's matrix product where oneDNN's is the slower.

A weight's gradient sums over every position of the batch: for a [batch, length, d_model] input
x and its product's [batch, length, d_ff] gradient dy it is the [d_model, d_ff] einsum of the
two, the contracted dims leading in both. With oneDNN on (`code_t5_compat` turns it on;
docs/speed.md), TensorFlow rewrites every Einsum and MatMul into oneDNN's kernels, which on the
AVX2-only machine ran these products at about half the peak, however they were written (as
Einsum, as MatMul with a transposed operand, after an explicit transpose: 64-72 GFLOP/s for the
causal LM mini's MLP and logits), while Eigen's contraction ran them at 77-125 GFLOP/s.
TensorFlow keeps oneDNN on or off for the whole process, but its `SparseMatMul` op, which oneDNN
does not rewrite, multiplies two dense float matrices with Eigen's contraction.

`einsum` below is Mesh TF's per-slice einsum (`MeshImpl.einsum`, which Mesh TF documents as the
place to override) with such products -- two float32 operands whose contracted dims lead both,
in the same order, and no batch dims -- reshaped to one [K, M]^T x [K, N] `SparseMatMul`; every
other einsum is `tf.einsum` as before. The same sums in another order: the gradients agree to
float rounding (`tests/products_test.py`). `code_t5.weight_gradients.eigen` (gin) chooses:
True, False, or "auto" (the default): where oneDNN is on and the CPU has no AVX-512, the kind
measured (on the AVX-512 kind oneDNN's own kernels use AVX-512, and the step reached 70-78 % of
the peak):

    import code_t5.training.products
    code_t5.weight_gradients.eigen = "auto"
"""

import functools
import os
from typing import Optional, Tuple

import gin
import mesh_tensorflow as mtf
import tensorflow.compat.v1 as tf

import code_t5_compat

_mesh_tf_einsum = mtf.placement_mesh_impl.PlacementMeshImpl.einsum
# A weight's smaller side below which oneDNN's einsum stays (see `einsum`).
_MIN_COLUMNS = 64


@functools.lru_cache(maxsize=None)
def _cpu_has_avx512() -> bool:
  cpu = code_t5_compat.this_cpu()
  if cpu is None:  # not Linux: assume the faster kind, keep TensorFlow's own products
    return True
  return "avx512f" in cpu.get("flags", "").split()


def _onednn_on() -> bool:
  # TensorFlow reads the variable once at start-up; code_t5_compat sets it before that.
  return os.environ.get("TF_ENABLE_ONEDNN_OPTS", "0").lower() in ("1", "true")


def weight_gradient_form(equation: str) -> Optional[Tuple[Tuple[int, int], int]]:
  """For a two-operand einsum `equation` whose k contracted dims lead both operands in the same
  order and whose output is one operand's other dims, then the other's: ((first, second), k),
  the operand order that makes it first^T x second once each is reshaped to [K, -1]. None for
  any other equation."""
  inputs, output = equation.split("->")
  operands = inputs.split(",")
  if len(operands) != 2:
    return None
  a, b = operands
  shared = [c for c in a if c in b]
  if not shared or any(c in output for c in shared):
    return None  # no contraction, or batch dims (in both operands and the output)
  k = len(shared)
  if a[:k] != b[:k] or "".join(shared) != a[:k]:
    return None
  if output == a[k:] + b[k:]:
    return (0, 1), k
  if output == b[k:] + a[k:]:
    return (1, 0), k
  return None


@gin.configurable(module="code_t5", allowlist=["eigen"])
def weight_gradients(eigen="auto") -> bool:
  """Whether weight gradients go through Eigen (`SparseMatMul`): True, False or "auto"."""
  if eigen == "auto":
    return _onednn_on() and not _cpu_has_avx512()
  if not isinstance(eigen, bool):
    raise ValueError(f'code_t5.weight_gradients.eigen: True, False or "auto", not {eigen!r}')
  return eigen


def _on_cpus(mesh_impl) -> bool:
  # SparseMatMul has no GPU kernel; a mesh of GPUs (runs/gpu.gin) keeps tf.einsum.
  return bool(mesh_impl.devices) and all("cpu" in d.lower() for d in mesh_impl.devices)


def einsum(mesh_impl, equation: str, *slices):
  """`MeshImpl.einsum` with weight gradients through `SparseMatMul` where `weight_gradients`."""
  form = weight_gradient_form(equation) if len(slices) == 2 else None
  if form is None or any(s.dtype != tf.float32 or None in s.shape.as_list() for s in slices):
    return _mesh_tf_einsum(mesh_impl, equation, *slices)
  (i, j), k = form
  first, second = slices[i], slices[j]
  rows = functools.reduce(lambda x, y: x * y, first.shape.as_list()[:k], 1)
  columns = (first.shape.num_elements() // rows, second.shape.num_elements() // rows)
  # Small weights keep oneDNN: the relative-position bias's [4, 32] (summed over 512^2 positions)
  # ran at 19 GFLOP/s in SparseMatMul against 24 in oneDNN's einsum.
  if min(columns) < _MIN_COLUMNS or not _on_cpus(mesh_impl) or not weight_gradients():
    return _mesh_tf_einsum(mesh_impl, equation, *slices)
  product = tf.raw_ops.SparseMatMul(
      a=tf.reshape(first, [rows, -1]), b=tf.reshape(second, [rows, -1]), transpose_a=True,
      transpose_b=False, a_is_sparse=False, b_is_sparse=False)
  return tf.reshape(product, first.shape.as_list()[k:] + second.shape.as_list()[k:])


mtf.placement_mesh_impl.PlacementMeshImpl.einsum = einsum
