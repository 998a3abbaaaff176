"""Mesh TF's matrix products through Eigen where oneDNN's are the slower.

With oneDNN on (`code_t5_compat` turns it on; docs/speed.md), TensorFlow rewrites every Einsum and
MatMul into oneDNN's kernels, but not its `SparseMatMul` op, which multiplies two dense float
matrices with Eigen's contraction. On the AVX2-only machines Eigen's is the faster for two kinds
of the training step's products (`benchmarks/products_benchmark.py` measures each one both ways):

- **weight gradients**, which sum over every position of the batch: for a [batch, length, d_model]
  input x and its product's [batch, length, d_ff] gradient dy, the [d_model, d_ff] einsum of the
  two, the contracted dims leading in both. Where the output's rows are the narrower side (the
  MLP's input projection: [256, 1,024]), Eigen's product transposes the narrower operand itself,
  [4,096, 256]^T x [4,096, 1,024], the fast way on both AVX2 kinds (99-119 GFLOP/s on Zen 3).
  Where they are the wider, the narrower operand still goes first and the result is transposed
  (the MLP's output projection: [4,096, 256]^T x [4,096, 1,024], then [256, 1,024]^T; 97-110
  GFLOP/s on Zen 3, 69-88 on Zen 2), unless the wider side is also longer than the contraction
  (the logits: [8,192, 256] summed over 4,096 positions). That one is transposed first, as its
  own op, and multiplied as it is: on the Zen 3 machine the logits' weight gradient ran at 80-89
  GFLOP/s that way, at 71-82 with Eigen transposing the [4,096, 8,192] operand itself, and at
  55-65 with the narrower first; on the Zen 2 machine at 20 GFLOP/s with Eigen transposing the
  wide operand, and at about 50 either of the other two ways.
- **products whose output is no wider than their contraction** (the MLP's output projection, the
  attention projections, the input gradients of the logits and of the MLP's input projection:
  4,096 x 1,024 by 1,024 x 256 and the like). oneDNN ran them at 66-70 GFLOP/s there, Eigen at
  73-97; the other way round (the logits: 4,096 x 256 by 256 x 8,192) oneDNN's is twice Eigen's.

And where two products read the same large operand, the later waits for the earlier: run at
once, they stream it from memory side by side and each runs at about half its speed. The logits'
input and weight gradients both read the [4,096, 8,192] gradient of the logits (134 MB); in a
traced step on the Zen 3 machine the input gradient took 304 ms beside the weight gradient and
166 ms before it, and the rest of the backward pass, which waits for it, started that much
sooner. Attention's probabilities (8.4M floats per layer at the CPU batch) are read by two
products each way too.

`einsum` below is Mesh TF's per-slice einsum (`MeshImpl.einsum`, which Mesh TF documents as the
place to override) with such products -- two float32 operands, no batch dims, each operand's
contracted dims together at its start or its end, in the same order in both, the output one
operand's other dims and then the other's -- reshaped to matrices and multiplied by one
`SparseMatMul`; every other einsum (the attention's batch matmuls among them) is `tf.einsum` as
before. The same sums in another order: the products agree to float rounding
(`tests/products_test.py`). `code_t5.eigen_products.enabled` (gin) chooses: True, False, or
"auto" (the default): where oneDNN is on and the CPU has no AVX-512, the kinds measured (on the
AVX-512 kinds oneDNN's own kernels use AVX-512, and the step reached 70-78 % of the peak):

    import code_t5.training.products
    code_t5.eigen_products.enabled = "auto"
"""

import functools
import os
import weakref
from typing import NamedTuple, Optional

import gin
import mesh_tensorflow as mtf
import tensorflow.compat.v1 as tf

import code_t5_compat

_mesh_tf_einsum = mtf.placement_mesh_impl.PlacementMeshImpl.einsum
# An operand of at least this many elements (32 MB of float32, the Zen 3 machine's L3 cache): an
# einsum that reads it waits for the last one built before it that read it.
_SHARED_OPERAND_ELEMENTS = 8_000_000
# A weight's smaller side below which oneDNN's einsum stays: the relative-position bias's
# [4, 32] weight gradient (summed over 512^2 positions) ran at 19 GFLOP/s in SparseMatMul against
# 24 in oneDNN's einsum.
_MIN_COLUMNS = 64


class MatrixForm(NamedTuple):
  """How a two-operand einsum is one matrix product: the operand whose free dims lead the output
  (`rows`, 0 or 1; the other gives the columns), the number of contracted dims `k`, and whether
  each operand's contracted dims lead it (rows: then it is [K, M] and transposed) or trail it
  (columns: then it is [N, K] and transposed)."""
  rows: int
  k: int
  rows_transposed: bool
  columns_transposed: bool

  @property
  def weight_gradient(self) -> bool:
    """The contracted dims lead both operands: a sum over positions, [K, M]^T x [K, N]."""
    return self.rows_transposed and not self.columns_transposed


def matrix_form(equation: str) -> Optional[MatrixForm]:
  """The MatrixForm of a two-operand einsum `equation`, or None where it is not one matrix
  product of its operands reshaped (batch dims, three operands, dims summed in one operand only,
  contracted dims apart or in different orders, or an output that interleaves the operands)."""
  inputs, output = equation.split("->")
  operands = inputs.split(",")
  if len(operands) != 2:
    return None
  a, b = operands
  shared = "".join(c for c in a if c in b)
  if not shared or any(c in output for c in shared):
    return None  # no contraction, or batch dims (in both operands and the output)
  k = len(shared)
  for rows, (first, second) in enumerate(((a, b), (b, a))):
    free_first = "".join(c for c in first if c not in shared)
    free_second = "".join(c for c in second if c not in shared)
    if output != free_first + free_second:
      continue
    rows_transposed = first.startswith(shared)
    columns_transposed = second.endswith(shared)
    if not (rows_transposed or first.endswith(shared)):
      return None
    if not (columns_transposed or second.startswith(shared)):
      return None
    return MatrixForm(rows, k, rows_transposed, columns_transposed)
  return None


def _size(dims) -> int:
  return functools.reduce(lambda x, y: x * y, dims, 1)


def _ordered(form: MatrixForm, a, b):
  """(the operand that gives the rows, the other) of `a` and `b` (tensors or their dims)."""
  return (a, b) if form.rows == 0 else (b, a)


def _sides(form: MatrixForm, first_dims, second_dims):
  """The dims of the rows, of the contraction and of the columns, for the operands in
  `_ordered`'s order."""
  k = form.k
  rows = first_dims[k:] if form.rows_transposed else first_dims[:-k]
  contracted = first_dims[:k] if form.rows_transposed else first_dims[-k:]
  columns = second_dims[:-k] if form.columns_transposed else second_dims[k:]
  return list(rows), list(contracted), list(columns)


def sparse_matmul(form: MatrixForm, a: tf.Tensor, b: tf.Tensor) -> tf.Tensor:
  """The einsum of `a` and `b` (static shapes) in `form`, as one `SparseMatMul` (Eigen's product)
  of the two reshaped to matrices; a weight gradient whose rows are the wider side with the
  narrower operand first and the result transposed, or, where the rows are longer than the
  contraction too, with the wider operand transposed first (the module's docstring)."""
  first, second = _ordered(form, a, b)
  rows, contracted, columns = _sides(form, first.shape.as_list(), second.shape.as_list())
  k = _size(contracted)
  matrix_first = tf.reshape(first, [k, -1] if form.rows_transposed else [-1, k])
  matrix_second = tf.reshape(second, [-1, k] if form.columns_transposed else [k, -1])
  if form.weight_gradient and _size(rows) > _size(columns):
    if _size(rows) > k:
      product = tf.raw_ops.SparseMatMul(
          a=tf.transpose(matrix_first), b=matrix_second, transpose_a=False, transpose_b=False,
          a_is_sparse=False, b_is_sparse=False)
    else:
      product = tf.transpose(tf.raw_ops.SparseMatMul(
          a=matrix_second, b=matrix_first, transpose_a=True, transpose_b=False,
          a_is_sparse=False, b_is_sparse=False))
  else:
    product = tf.raw_ops.SparseMatMul(
        a=matrix_first, b=matrix_second, transpose_a=form.rows_transposed,
        transpose_b=form.columns_transposed, a_is_sparse=False, b_is_sparse=False)
  return tf.reshape(product, rows + columns)


def eigen_is_faster(form: MatrixForm, a_shape, b_shape) -> bool:
  """Whether Eigen's product beat oneDNN's for this form and these operand shapes on the AVX2
  machines (the module's docstring): weight gradients, and products no wider than their
  contraction; neither where the weight (the weight gradient's output, or the product's
  contracted dims and columns) has a side under _MIN_COLUMNS."""
  sides = _sides(form, *_ordered(form, list(a_shape), list(b_shape)))
  rows, contracted, columns = (_size(dims) for dims in sides)
  if form.weight_gradient:
    return min(rows, columns) >= _MIN_COLUMNS
  return min(contracted, columns) >= _MIN_COLUMNS and columns <= contracted


@functools.lru_cache(maxsize=None)
def _cpu_has_avx512() -> bool:
  flags = code_t5_compat.this_cpu_flags()
  if flags is None:  # not Linux: assume the faster kind, keep TensorFlow's own products
    return True
  return "avx512f" in flags


def _onednn_on() -> bool:
  # TensorFlow reads the variable once at start-up; code_t5_compat sets it before that.
  return os.environ.get("TF_ENABLE_ONEDNN_OPTS", "0").lower() in ("1", "true")


@gin.configurable(module="code_t5", allowlist=["enabled"])
def eigen_products(enabled="auto") -> bool:
  """Whether the products `eigen_is_faster` names go through Eigen (`SparseMatMul`): True, False
  or "auto"."""
  if enabled == "auto":
    return _onednn_on() and not _cpu_has_avx512()
  if not isinstance(enabled, bool):
    raise ValueError(f'code_t5.eigen_products.enabled: True, False or "auto", not {enabled!r}')
  return enabled


def _on_cpus(mesh_impl) -> bool:
  # SparseMatMul has no GPU kernel; a mesh of GPUs (runs/gpu.gin) keeps tf.einsum.
  return bool(mesh_impl.devices) and all("cpu" in d.lower() for d in mesh_impl.devices)


# graph -> {an operand's ref: the last product built that reads it}
_last_readers = weakref.WeakKeyDictionary()


def _large(tensor) -> bool:
  shape = tensor.shape.as_list()
  return None not in shape and _size(shape) >= _SHARED_OPERAND_ELEMENTS


def _one_reader_at_a_time(product_fn, slices):
  """`product_fn()`, built to run after the einsums that read its large operands before it."""
  readers = _last_readers.setdefault(tf.get_default_graph(), {})
  shared = [s.ref() for s in slices if _large(s)]
  with tf.control_dependencies([readers[s] for s in shared if s in readers]):
    product = product_fn()
  readers.update((s, product) for s in shared)
  return product


def _product(mesh_impl, equation: str, slices):
  form = matrix_form(equation) if len(slices) == 2 else None
  if (form is None or any(s.dtype != tf.float32 or None in s.shape.as_list() for s in slices)
      or not eigen_is_faster(form, *(s.shape.as_list() for s in slices))):
    return _mesh_tf_einsum(mesh_impl, equation, *slices)
  return sparse_matmul(form, *slices)


def einsum(mesh_impl, equation: str, *slices):
  """`MeshImpl.einsum` where `eigen_products`: the products `eigen_is_faster` names through
  `SparseMatMul`, and an einsum that reads a large operand after the ones that read it before."""
  if not eigen_products() or not _on_cpus(mesh_impl):
    return _mesh_tf_einsum(mesh_impl, equation, *slices)
  return _one_reader_at_a_time(lambda: _product(mesh_impl, equation, slices), slices)


mtf.placement_mesh_impl.PlacementMeshImpl.einsum = einsum
