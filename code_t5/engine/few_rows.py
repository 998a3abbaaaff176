"""The product of a few rows by a weight matrix in C, reading the matrix once for all the rows.

A decode step multiplies its beams' vectors by every weight matrix of the network. OpenBLAS's
matrix product of a few rows packs the whole matrix first, and its vector-matrix product, row by
row, reads the matrix once per row; `_few_rows.c` reads it once. The shipped model's decode step,
5 beams, on the slower (AVX2) machine: 4.6-5.0 -> 3.7-4.3 ms (benchmarks/latency_benchmark.py).

The C library is built by `pip install` (setup.py's optional extension; `make` does it) and loaded
with ctypes; where it was not built (no C compiler), `available` is False and the engine multiplies
with NumPy as before. Each output is summed in the order a vector-matrix product sums it, with
fused multiply-adds where the CPU has them: the results agree with NumPy's to ~1e-6 (relative to
the largest), not bit for bit.
"""

import ctypes
import importlib.machinery
import pathlib
from typing import Optional

import numpy as np

_LIBRARY_NAME = "_few_rows"  # setup.py's extension code_t5.engine._few_rows


def _load() -> Optional[ctypes.CDLL]:
  here = pathlib.Path(__file__).resolve().parent
  for suffix in importlib.machinery.EXTENSION_SUFFIXES:
    path = here / (_LIBRARY_NAME + suffix)
    if path.is_file():
      library = ctypes.CDLL(str(path))
      for name in ("few_rows_product", "few_rows_product_baseline"):
        function = getattr(library, name)
        function.restype = None
        function.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_size_t] * 3
      library.few_rows_vectors.restype = ctypes.c_int
      library.few_rows_vectors.argtypes = []
      return library
  return None


_LIBRARY = _load()
available = _LIBRARY is not None


def describe() -> str:
  """What multiplies a decode step's rows here, for benchmarks' headers."""
  if _LIBRARY is None:
    return "NumPy, row by row (code_t5/engine/_few_rows.c was not built: no C compiler at install)"
  return "C, " + ("AVX2 + FMA" if _LIBRARY.few_rows_vectors() else "the CPU's baseline vectors")


def product(x: np.ndarray, w: np.ndarray, baseline: bool = False) -> np.ndarray:
  """x [rows, d] @ w [d, k], both float32 and C-contiguous, as a new [rows, k] array.

  baseline: the code for CPUs without AVX2 and FMA, on any CPU (for the tests). Arrays of another
  type, shape or layout are a ValueError: the C code trusts the shapes it is given."""
  if _LIBRARY is None:
    raise RuntimeError("code_t5/engine/_few_rows.c was not built; check few_rows.available first")
  if (x.ndim != 2 or w.ndim != 2 or x.shape[1] != w.shape[0] or x.dtype != np.float32 or
      w.dtype != np.float32 or not x.flags.c_contiguous or not w.flags.c_contiguous):
    raise ValueError(f"few_rows.product needs two C-contiguous float32 matrices [rows, d] and "
                     f"[d, k]; got {x.dtype}{list(x.shape)} and {w.dtype}{list(w.shape)}")
  out = np.empty((x.shape[0], w.shape[1]), np.float32)
  function = _LIBRARY.few_rows_product_baseline if baseline else _LIBRARY.few_rows_product
  function(x.ctypes.data, w.ctypes.data, out.ctypes.data, x.shape[0], x.shape[1], w.shape[1])
  return out
