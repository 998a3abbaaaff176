"""The engine's C library: a decoder's decode step in one call, and the product of a few rows by a
weight matrix that reads the matrix once for all of them.

A decode step feeds its beams (5 by default) through the network one piece each. In NumPy that is
~60 calls per layer on arrays of 5 rows, and the products of those rows: OpenBLAS's matrix product
of a few rows packs the whole matrix first, and its vector-matrix product, row by row, reads the
matrix once per row. `_few_rows.c` reads it once; `_decode_step.c` runs the whole step (every
layer, the attention over the context and the beams, the logits) without returning to Python.
The shipped model's step, 5 beams, on the slower (AVX2) machine: 4.11-4.32 ms in NumPy, 2.46-2.52
ms in C (docs/engine.md, "The decode step in C").

The library is built by `pip install` (setup.py's optional extension `code_t5.engine._native`;
`make` does it) and loaded with ctypes. Where it was not built (no C compiler), cannot be loaded
or was built from other sources, `available` is False and the engine computes in NumPy as before
(`describe()` says why). Each sum runs in the order NumPy's vector
products sum it, with fused multiply-adds where the CPU has them, and exp/tanh are the C
library's: the logits agree with NumPy's to ~1e-5, not bit for bit.
"""

import ctypes
import importlib.machinery
import pathlib
from typing import List, Optional, Tuple

import numpy as np

_LIBRARY_NAME = "_native"  # setup.py's extension code_t5.engine._native
_INTERFACE = 1  # what _decode_step.c's native_interface() returns for the functions used below
_ACTIVATIONS = {"linear": 0, "relu": 1, "gelu": 2}  # _decode_step.c's enum

_pointer, _size = ctypes.c_void_p, ctypes.c_size_t


def load(directory: pathlib.Path) -> Tuple[Optional[ctypes.CDLL], str]:
  """The library built into `directory` and "", or None and why it cannot be used."""
  for suffix in importlib.machinery.EXTENSION_SUFFIXES:
    path = directory / (_LIBRARY_NAME + suffix)
    if path.is_file():
      rebuild = "reinstall the package (make, or pip install -e .) to rebuild it"
      try:
        library = ctypes.CDLL(str(path))
        interface = library.native_interface
      except (OSError, AttributeError) as e:  # another platform's build, or one from older sources
        return None, f"{path} cannot be used ({e}): {rebuild}"
      interface.restype, interface.argtypes = ctypes.c_int, []
      if interface() != _INTERFACE:
        return None, f"{path} was built from other sources: {rebuild}"
      for name in ("few_rows_product", "few_rows_product_baseline"):
        function = getattr(library, name)
        function.restype = None
        function.argtypes = [_pointer] * 3 + [_size] * 3
      library.few_rows_vectors.restype = ctypes.c_int
      library.few_rows_vectors.argtypes = []
      library.decode_step.restype = ctypes.c_int
      library.decode_step.argtypes = (
          [_size, _pointer, _size, _size, _size, _size, _size, ctypes.c_int, ctypes.c_int,
           _pointer, _size, _pointer, _pointer, _pointer, _size, _size, _pointer, _pointer,
           _pointer, _pointer, _pointer, _size, _pointer])
      return library, ""
  return None, f"{directory / _LIBRARY_NAME}.* was not built (no C compiler at install?)"


_LIBRARY, _WHY_NOT = load(pathlib.Path(__file__).resolve().parent)
available = _LIBRARY is not None


def describe() -> str:
  """What runs a decode step here, for benchmarks' headers and serve's /health."""
  if _LIBRARY is None:
    return f"NumPy: {_WHY_NOT}"
  return "C, " + ("AVX2 + FMA" if _LIBRARY.few_rows_vectors() else "the CPU's baseline vectors")


def _checked(array: np.ndarray, shape: Tuple[int, ...], name: str) -> np.ndarray:
  """`array` itself if it is a C-contiguous float32 of `shape`; else a ValueError: the C code
  trusts the shapes it is given."""
  if array.dtype != np.float32 or array.shape != tuple(shape) or not array.flags.c_contiguous:
    raise ValueError(f"native: {name} must be a C-contiguous float32 {list(shape)}; got "
                     f"{array.dtype}{list(array.shape)}"
                     + ("" if array.flags.c_contiguous else " (not contiguous)"))
  return array


def product(x: np.ndarray, w: np.ndarray, baseline: bool = False) -> np.ndarray:
  """x [rows, d] @ w [d, k], both float32 and C-contiguous, as a new [rows, k] array.

  baseline: the code for CPUs without AVX2 and FMA, on any CPU (for the tests). Arrays of another
  type, shape or layout are a ValueError."""
  if _LIBRARY is None:
    raise RuntimeError("code_t5/engine/_native was not built; check native.available first")
  if x.ndim != 2 or w.ndim != 2:
    raise ValueError(f"native: product needs two matrices; got {list(x.shape)} and "
                     f"{list(w.shape)}")
  _checked(x, (x.shape[0], w.shape[0]), "x")
  _checked(w, (x.shape[1], w.shape[1]), "w")
  out = np.empty((x.shape[0], w.shape[1]), np.float32)
  function = _LIBRARY.few_rows_product_baseline if baseline else _LIBRARY.few_rows_product
  function(x.ctypes.data, w.ctypes.data, out.ctypes.data, x.shape[0], x.shape[1], w.shape[1])
  return out


def _pointers(arrays) -> ctypes.Array:
  return (_pointer * len(arrays))(*[None if a is None else a.ctypes.data for a in arrays])


class DecodeStep:
  """runtime.Network.step for one decoder-only network, in C. `of(network)` is None where the
  library was not built (or `available` was set False: NumPy then, as benchmarks compare) or the
  network is one it does not run (cross-attention, no layers, an activation other than
  relu/gelu/linear, more than a gated pair, weights it cannot read in place)."""

  def __init__(self, network):
    self.d, self.heads, self.head_dim = network.d_model, network.num_heads, network.head_dim
    width = self.heads * self.head_dim
    first = network.layers[0]
    self.d_ff = first.mlp_in[0].shape[1]
    self.activation = _ACTIVATIONS[network.activations[0]]
    self.gated_activation = _ACTIVATIONS[network.activations[-1]]
    logits_kernel = network._logits_kernel  # pylint: disable=protected-access
    self.vocab = logits_kernel.shape[1]
    weights = []
    for i, layer in enumerate(network.layers):
      att = layer.self_attention
      weights += [
          _checked(layer.self_norm, (self.d,), f"layer {i} norm"),
          _checked(att.query_key_value, (self.d, 3 * width), f"layer {i} query/key/value"),
          _checked(att.out, (width, self.d), f"layer {i} attention out"),
          _checked(layer.mlp_norm, (self.d,), f"layer {i} MLP norm"),
          _checked(layer.mlp_in[0], (self.d, self.d_ff), f"layer {i} MLP in"),
          (_checked(layer.mlp_in[1], (self.d, self.d_ff), f"layer {i} gated MLP in")
           if len(layer.mlp_in) == 2 else None),
          _checked(layer.mlp_out, (self.d_ff, self.d), f"layer {i} MLP out")]
    self.layers = len(network.layers)
    self._final_norm = _checked(network.final_norm, (self.d,), "final norm")
    self._logits_kernel = _checked(logits_kernel, (self.d, self.vocab), "logits kernel")
    self._weights_kept = weights  # the arrays the pointers below point into
    self._weights = _pointers(weights)

  @classmethod
  def of(cls, network) -> Optional["DecodeStep"]:
    if (not available or not network.decoder_only or not network.layers or
        len(network.activations) > 2 or
        any(a not in _ACTIVATIONS for a in network.activations)):
      return None
    try:
      return cls(network)
    except ValueError:  # a weight NumPy can multiply but the C code cannot read as it is
      return None

  def __call__(self, x: np.ndarray, keys_t: List[np.ndarray], values: List[np.ndarray],
               context_bias: np.ndarray, own_keys: List[np.ndarray],
               own_values: List[np.ndarray], t: int, own_bias: np.ndarray) -> np.ndarray:
    """Logits [B, vocab] for the embeddings x [B, d] fed at beam position t: per layer the
    context's keys_t [heads, hd, n] and values [heads, n, hd], the beams' own_keys/own_values
    [B, heads, capacity, hd] (position t is written here), the biases [heads, n] and
    [heads, t + 1]."""
    batch, n = x.shape[0], values[0].shape[1]
    capacity = own_keys[0].shape[2]
    _checked(x, (batch, self.d), "x")
    _checked(context_bias, (self.heads, n), "context bias")
    _checked(own_bias, (self.heads, t + 1), "own bias")
    if not t < capacity:
      raise ValueError(f"native: beam position {t} is past the beams' capacity {capacity}")
    for name, arrays, shape in (
        ("context keys", keys_t, (self.heads, self.head_dim, n)),
        ("context values", values, (self.heads, n, self.head_dim)),
        ("own keys", own_keys, (batch, self.heads, capacity, self.head_dim)),
        ("own values", own_values, (batch, self.heads, capacity, self.head_dim))):
      for array in arrays:
        _checked(array, shape, name)
      if len(arrays) != self.layers:
        raise ValueError(f"native: {len(arrays)} layers of {name}, the network has "
                         f"{self.layers}")
    logits = np.empty((batch, self.vocab), np.float32)
    failed = _LIBRARY.decode_step(
        batch, x.ctypes.data, self.layers, self.d, self.heads, self.head_dim, self.d_ff,
        self.activation, self.gated_activation, self._weights, n, _pointers(keys_t),
        _pointers(values), context_bias.ctypes.data, capacity, t, _pointers(own_keys),
        _pointers(own_values), own_bias.ctypes.data, self._final_norm.ctypes.data,
        self._logits_kernel.ctypes.data, self.vocab, logits.ctypes.data)
    if failed:
      raise MemoryError("native: the decode step's scratch memory could not be allocated")
    return logits
