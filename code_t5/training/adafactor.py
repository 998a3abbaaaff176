"""Mesh TF's Adafactor update of one variable as a single Mesh TF operation (runs/cpu.gin).

`mtf.optimize.AdafactorOptimizer.apply_grad` builds each variable's update from ~30 Mesh TF
operations (squares, means, the factored second moments, the clipping, the parameter scale),
and Mesh TF lowers each of them on its own, with its name scopes, devices, layouts and
broadcasts, in Python, before every training run's first step: for the causal LM mini's 35
weights, 1,227 of the graph's 1,974 Mesh TF operations (97 of 844 with this). Where no mesh axis
splits the variable, the operation lowers to one call of a TensorFlow function traced once per
kind of variable, so the TensorFlow graph loses ~1,600 of its ~5,600 ops too. docs/speed.md,
"Launch: fewer operations to build".

`fused_apply_grad` keeps Mesh TF's slot variables (the same names, shapes and initial values, so
checkpoints are interchangeable) and its assignments, and computes the new slots and the
update in one operation whose lowering runs the same TensorFlow kernels in the same order on
each slice: the same values, bit for bit, on one device (tests/adafactor_test.py). Where the
layout splits a variable's dimension over a mesh axis, its sums are all-reduced over that axis,
as Mesh TF's reductions are. Options this does not cover (momentum: `beta1`; stacked dimensions)
keep Mesh TF's own update.
"""

import weakref

import mesh_tensorflow as mtf
from mesh_tensorflow import optimize
import tensorflow.compat.v1 as tf


def covers(optimizer) -> bool:
  """Whether `fused_apply_grad` computes what `optimizer.apply_grad` does."""
  # pylint: disable=protected-access,unidiomatic-typecheck
  return (type(optimizer) is optimize.AdafactorOptimizer and not optimizer._beta1
          and not optimizer._stacked_dim_names)


def fused_apply_grad(optimizer, grad, var):
  """`optimizer.apply_grad(grad, var)` (an AdafactorOptimizer that `covers`) with the new slots
  and the update computed by one operation; returns the same assignments, in the same order."""
  # pylint: disable=protected-access
  if grad is None:
    tf.logging.warning("Gradient is None for variable %s", var.name)
    return []
  factored_dims = optimizer._factored_dims(var.shape)
  if factored_dims:
    d0, d1 = factored_dims
    slots = [mtf.get_variable(var.mesh, var.name + "_slot_vr", var.shape - d0,
                              initializer=tf.zeros_initializer(), trainable=False),
             mtf.get_variable(var.mesh, var.name + "_slot_vc", var.shape - d1,
                              initializer=tf.zeros_initializer(), trainable=False)]
  else:
    slots = [mtf.get_variable(var.mesh, var.name + "_slot_v", var.shape,
                              initializer=tf.zeros_initializer(), trainable=False)]
  with tf.variable_scope(var.name + "/adafactor"):
    scaled = optimizer._multiply_by_parameter_scale and not any(
        s in var.name for s in optimizer._exclude_from_parameter_scale)
    update = _AdafactorUpdate(mtf.to_float(grad), mtf.to_float(var.value), slots,
                              factored_dims, optimizer, scaled)
    *new_slots, subtrahend = update.outputs
    updates = [mtf.assign(slot, new) for slot, new in zip(slots, new_slots)]
    # Mesh TF's comment: assign_sub, not assign(var - subtrahend), so that a bfloat16 slice is
    # not rounded again at every step.
    updates.append(mtf.assign_sub(var, subtrahend))
  return updates


class _AdafactorUpdate(mtf.Operation):
  """Outputs: the new second-moment slots (vr and vc, or v) and the subtrahend of the variable.

  Computed by `_update`, in as few passes as the sums allow.
  """

  def __init__(self, grad, value, slots, factored_dims, optimizer, scaled, name=None):
    super().__init__([grad, value] + slots, name=name or "fused_adafactor")
    self._factored_dims = factored_dims
    self._optimizer = optimizer
    self._scaled = scaled
    self._outputs = [mtf.Tensor(self, s.shape, tf.float32) for s in slots]
    self._outputs.append(mtf.Tensor(self, value.shape, tf.float32))

  @property
  def has_gradient(self):
    return False

  def lower(self, lowering):
    mesh_impl = lowering.mesh_impl(self)
    grad, value, *slots = (lowering.tensors[t] for t in self.inputs)
    opt = self._optimizer
    dims = self.inputs[1].shape.dims
    axes = [mesh_impl.tensor_dimension_to_mesh_axis(d) for d in dims]
    if any(a is not None and mesh_impl.shape[a].size > 1 for a in axes):
      # A mesh axis of more than one device splits the variable: the passes run slice by slice,
      # and the sums they read are all-reduced between them.
      def summed(total, reduced):
        split = sorted({a for a in map(mesh_impl.tensor_dimension_to_mesh_axis, reduced)
                        if a is not None})
        return mesh_impl.allreduce(total, split, "SUM") if split else total

      outputs = _update(mesh_impl.slicewise, summed, self.inputs[1].shape, self._factored_dims,
                        _options(opt), self._scaled, *_rates(opt), grad, value, *slots)
    else:
      # Each slice is the whole variable: all passes in one TensorFlow function, traced once for
      # each kind of variable (7 traces for the causal LM mini's 35 variables), so the graph
      # holds one call op per variable instead of ~50 ops. The calls are not inlined (Grappler
      # is off in runs/cpu.gin): their bodies run as ops of the step, in as much time as before.
      factored = tuple(self._factored_dims) if self._factored_dims else None
      update = _update_function(lowering, tuple(dims), factored, self._scaled, _options(opt))
      # Python floats become the same float32 constants inside as outside.
      rates = [tf.convert_to_tensor(r, tf.float32) for r in _rates(opt)]
      outputs = mesh_impl.slicewise(lambda *xs: update(*rates, *xs), grad, value, *slots)
    for output, lowered in zip(self.outputs, outputs):
      lowering.set_tensor_lowering(output, lowered)


def _rates(optimizer):
  """(decay rate, mixing rate, learning rate): floats or scalar tensors, as Mesh TF has them."""
  # pylint: disable=protected-access
  return optimizer._decay_rate, 1.0 - optimizer._decay_rate, optimizer._learning_rate


def _options(optimizer):
  """(epsilon1, epsilon2, clipping threshold): what `_update` reads of `optimizer` besides its
  rates."""
  # pylint: disable=protected-access
  return (optimizer._epsilon1, optimizer._epsilon2, optimizer._clipping_threshold)


# The traced functions of each Lowering (one TensorFlow graph). A tf.function keeps every graph it
# was called in alive, so one cache for the whole process would keep every graph it built.
_FUNCTIONS = weakref.WeakKeyDictionary()  # mtf.Lowering -> {(dims, ...): tf.function}


def _update_function(lowering, dims, factored_dims, scaled, options):
  """`_update` of one whole variable of these dimensions as a TensorFlow function."""
  functions = _FUNCTIONS.setdefault(lowering, {})
  key = dims, factored_dims, scaled, options
  if key not in functions:
    def update(decay_rate, mixing_rate, learning_rate, grad, value, *slots):
      return tuple(_update(lambda fn, *xs: fn(*xs), lambda total, reduced: total,
                           mtf.Shape(list(dims)), factored_dims, options, scaled, decay_rate,
                           mixing_rate, learning_rate, grad, value, *slots))
    functions[key] = tf.function(update, autograph=False)
  return functions[key]


def _update(slicewise, summed, shape, factored_dims, options, scaled, decay_rate, mixing_rate,
            learning_rate, grad, value, *slots):
  """[new slots..., subtrahend] of a variable of `shape` from its gradient, value and slots.

  Each step is the TensorFlow op that Mesh TF's operation for it lowers to: a mean is a sum times
  the float (output size / input size), a division a product with the reciprocal. The passes
  run through `slicewise(fn, *tensors)`, and each sum over dimensions that another pass reads
  goes through `summed(total, dimensions)` (an all-reduce where the layout splits them).
  """
  epsilon1, epsilon2, clipping_threshold = options
  dims = shape.dims

  def expanded(t, kept, at):
    """`t`, whose axes are the dimensions `kept` of `at`, with size-1 axes for the others."""
    for i, d in enumerate(at):
      if d not in kept:
        t = tf.expand_dims(t, i)
    return t

  def clipped_subtrahend(x, x_squares, value_squares):
    """The last pass: Mesh TF's clipping of `x` by its RMS and its product with the scale."""
    if clipping_threshold is not None:
      rms = tf.sqrt(x_squares * (1 / shape.size))
      x = x * tf.math.reciprocal(
          tf.maximum(tf.constant(1.0), rms * (1.0 / clipping_threshold)))
    if not scaled:
      return x * learning_rate
    scale = tf.maximum(tf.sqrt(value_squares * (1 / shape.size)), epsilon2)
    return x * (scale * learning_rate)

  # Pass 1: the squared gradient and the sums of squares it and the weights give.
  all_axes = list(range(len(dims)))
  if factored_dims:
    d0, d1 = factored_dims
    i0, i1 = dims.index(d0), dims.index(d1)
    vr_shape, vc_shape = shape - d0, shape - d1
    vr_dims = vr_shape.dims

    def first_pass(g, v):
      g2 = tf.square(g) + epsilon1
      return tf.reduce_sum(g2, [i0]), tf.reduce_sum(g2, [i1]), tf.reduce_sum(tf.square(v),
                                                                              all_axes)

    rows, columns, value_squares = slicewise(first_pass, grad, value)
    rows, columns = summed(rows, [d0]), summed(columns, [d1])

    def moments(vr, vc, row_sums, column_sums):
      new_vr = vr * decay_rate + row_sums * (vr_shape.size / shape.size) * mixing_rate
      new_vc = vc * decay_rate + column_sums * (vc_shape.size / shape.size) * mixing_rate
      return new_vr, new_vc, tf.reduce_sum(new_vr, [vr_dims.index(d1)])

    new_vr, new_vc, long_term = slicewise(moments, *slots, rows, columns)
    long_term = summed(long_term, [d1])
    new_slots = [new_vr, new_vc]

    def direction(g, vr, vc, long_term_sums):
      long_term_mean = long_term_sums * ((vr_shape - d1).size / vr_shape.size)
      r_factor = tf.math.rsqrt(vr * tf.math.reciprocal(
          expanded(long_term_mean, [d for d in vr_dims if d != d1], vr_dims)))
      c_factor = tf.math.rsqrt(vc)
      x = (g * expanded(r_factor, vr_dims, dims)
           * expanded(c_factor, [d for d in dims if d != d1], dims))
      return x, tf.reduce_sum(tf.square(x), all_axes)

    x, x_squares = slicewise(direction, grad, new_vr, new_vc, long_term)
  else:
    def first_pass(g, v, slot):
      new_v = slot * decay_rate + (tf.square(g) + epsilon1) * mixing_rate
      x = g * tf.math.rsqrt(new_v)
      return new_v, x, tf.reduce_sum(tf.square(x), all_axes), tf.reduce_sum(tf.square(v),
                                                                            all_axes)

    new_v, x, x_squares, value_squares = slicewise(first_pass, grad, value, *slots)
    new_slots = [new_v]
  subtrahend = slicewise(clipped_subtrahend, x, summed(x_squares, dims),
                         summed(value_squares, dims))
  return new_slots + [subtrahend]
