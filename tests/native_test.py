"""code_t5.engine.native: the C decode step and product of a few rows compute what NumPy computes,
and refuse what their C code could not read safely. (runtime_test checks the decode step against
Mesh TF's own logits for the decoder-only prefix LM; this file against NumPy for the shipped
model and a gated-GELU variant of it, through growing and reordered beams.)"""

import copy
import importlib.machinery
import shutil
import subprocess

import numpy as np
import pytest

from code_t5 import test_utils
from code_t5.engine import native
from code_t5.engine import runtime

RUNTIME = runtime.runtime_dir(test_utils.PRETRAINED, test_utils.PRETRAINED_STEP)


def test_the_c_library_is_built_by_the_install():
  # `make` builds it (setup.py's extension); without it the engine's decode step is ~1.5x slower,
  # silently, so a checkout that lost it should fail here.
  assert native.available, native.describe()
  assert native.describe().startswith("C, ")


def _library_in(directory, c_source=None, data=None):
  """`directory` (made) holding a file where native.load looks for the library: `data`, or a
  shared library compiled from `c_source` (each case its own path: dlopen keeps what it loaded)."""
  directory.mkdir()
  path = directory / ("_native" + importlib.machinery.EXTENSION_SUFFIXES[0])
  if data is not None:
    path.write_bytes(data)
  else:
    (directory / "other.c").write_text(c_source)
    subprocess.run([shutil.which("cc") or "gcc", "-shared", "-fPIC", "-o", str(path),
                    str(directory / "other.c")], check=True)
  return directory


def test_a_library_that_cannot_be_used_leaves_the_engine_in_numpy(tmp_path):
  # Nothing built; a file that is no library; a library of other code (no native_interface);
  # one built from other sources (another interface version): each is None with the reason.
  assert native.load(tmp_path) == (None, f"{tmp_path}/_native.* was not built (no C compiler at "
                                         "install?)")
  library, why = native.load(_library_in(tmp_path / "junk", data=b"not a shared library"))
  assert library is None and "cannot be used" in why and "reinstall the package" in why
  library, why = native.load(_library_in(tmp_path / "other", "int other(void) { return 0; }\n"))
  assert library is None and "native_interface" in why and "cannot be used" in why
  library, why = native.load(_library_in(tmp_path / "older",
                                         "int native_interface(void) { return 999; }\n"))
  assert library is None and why.endswith("was built from other sources: reinstall the package "
                                          "(make, or pip install -e .) to rebuild it")


@pytest.mark.parametrize("baseline", [False, True], ids=["this_cpu", "baseline_vectors"])
@pytest.mark.parametrize("d,k", [(256, 768), (1024, 256), (256, 8192), (7, 9), (4, 8), (3, 17),
                                 (1, 1), (5, 0)])
def test_product_equals_numpy_for_every_row_count_and_ragged_sizes(baseline, d, k):
  # Rows in passes of up to 6; d in fours (a remainder of 1-3); k in eights (a remainder of 1-7).
  rng = np.random.default_rng(d * 1000 + k)
  w = rng.standard_normal((d, k), dtype=np.float32)
  for rows in range(1, 14):
    x = rng.standard_normal((rows, d), dtype=np.float32)
    expected = x.astype(np.float64) @ w.astype(np.float64)
    got = native.product(x, w, baseline=baseline)
    assert got.shape == (rows, k) and got.dtype == np.float32
    scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
    np.testing.assert_allclose(got, expected, rtol=0, atol=2e-6 * scale * max(1, d) ** 0.5)


def test_product_reads_views_of_a_larger_block_in_place():
  # The network's kernels are views into one huge-page block (runtime.Network._in_one_block).
  rng = np.random.default_rng(0)
  block = rng.standard_normal(10 + 64 * 40, dtype=np.float32)
  w = block[10:].reshape(64, 40)
  x = rng.standard_normal((5, 64), dtype=np.float32)
  np.testing.assert_allclose(native.product(x, w), x @ w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("x,w", [
    (np.zeros((2, 4), np.float64), np.zeros((4, 3), np.float32)),  # another type
    (np.zeros((2, 4), np.float32), np.zeros((5, 3), np.float32)),  # d differs
    (np.zeros((2, 4), np.float32), np.zeros((8, 3), np.float32)[::2]),  # not contiguous
    (np.zeros((4, 2), np.float32).T, np.zeros((4, 3), np.float32)),  # Fortran order
    (np.zeros((1, 2, 4), np.float32), np.zeros((4, 3), np.float32)),  # a stack
])
def test_product_refuses_arrays_it_cannot_read_as_given(x, w):
  with pytest.raises(ValueError, match="native: "):
    native.product(x, w)


def _gated_gelu_variant() -> runtime.Network:
  """The shipped network with a T5.1.1 MLP: gelu(h @ wi_0) * (h @ wi_1), wi_1 random."""
  meta = copy.deepcopy(runtime._read_meta(RUNTIME))  # pylint: disable=protected-access
  params = dict(runtime._read_params(RUNTIME, meta))  # pylint: disable=protected-access
  meta["architecture"]["activations"] = ["gelu", "linear"]
  rng = np.random.default_rng(3)
  for name in [n for n in params if n.endswith("/mlp/wi/kernel")]:
    params[name.replace("/wi/", "/wi_0/")] = params.pop(name)
    params[name.replace("/wi/", "/wi_1/")] = rng.standard_normal(
        params[name.replace("/wi/", "/wi_0/")].shape, dtype=np.float32) * 0.1
  return runtime.Network(meta, params, runtime.load_tokenizer(meta["vocabulary"], RUNTIME))


def _steps(net: runtime.Network, context, beam_steps: int, with_native: bool):
  """Logits of `beam_steps` steps of 7 beams (one to start, reordered after each step), past
  the beams' first capacity (runtime.Beams.CAPACITY)."""
  kept = net.native_step
  if not with_native:
    net.native_step = None
  try:
    prefix = net.start(context)
    rng = np.random.default_rng(4)
    beams = runtime.Beams(net, prefix, 1)
    logits = [net.step(beams, np.array([17]))]
    for _ in range(beam_steps):
      beams.reorder(rng.integers(0, beams.size, 7))
      logits.append(net.step(beams, rng.integers(3, net.vocab_rows, 7)))
    return logits
  finally:
    net.native_step = kept


@pytest.mark.parametrize("variant", ["shipped", "gated_gelu"])
def test_decode_step_equals_numpy_through_growing_reordered_beams(variant):
  net = runtime.Network.load(RUNTIME) if variant == "shipped" else _gated_gelu_variant()
  assert net.native_step is not None
  context = list(np.random.default_rng(5).integers(3, 8000, 300))
  steps = runtime.Beams.CAPACITY + 4
  got, expected = _steps(net, context, steps, True), _steps(net, context, steps, False)
  assert len(got) == steps + 1
  for g, e in zip(got, expected):
    assert g.shape == e.shape
    assert np.abs(g - e).max() < 1e-4 * max(1.0, float(np.abs(e).max()))


def test_decode_step_is_numpy_where_it_cannot_run():
  # An encoder-decoder (cross-attention) or an activation the C code does not know: NumPy.
  net = runtime.Network.load(RUNTIME)
  net.decoder_only = False
  assert native.DecodeStep.of(net) is None
  net.decoder_only, net.activations = True, ("swish",)
  assert native.DecodeStep.of(net) is None
  net.activations, layers = ("relu",), net.layers
  net.layers = []
  assert native.DecodeStep.of(net) is None
  net.layers = layers
  assert native.DecodeStep.of(net) is not None


def test_decode_step_refuses_arrays_it_cannot_read_as_given():
  net = runtime.Network.load(RUNTIME)
  prefix = net.start([5, 6, 7])
  beams = runtime.Beams(net, prefix, 2)
  x = net.embedding[[5, 6]]
  bias = lambda n: np.zeros((net.num_heads, n), np.float32)
  good = dict(x=x, keys_t=prefix.keys_t, values=prefix.values, context_bias=bias(prefix.length),
              own_keys=beams.keys, own_values=beams.values, t=0, own_bias=bias(1))
  assert net.native_step(**good).shape == (2, net.native_step.vocab)
  for change, message in [
      (dict(t=runtime.Beams.CAPACITY, own_bias=bias(runtime.Beams.CAPACITY + 1)),
       "past the beams' capacity"),
      (dict(x=np.zeros((2, 3), np.float32)), "x must be"),
      (dict(x=x.astype(np.float64)), "x must be"),
      (dict(context_bias=bias(prefix.length + 1)), "context bias must be"),
      (dict(own_keys=beams.keys[:-1]), "layers of own keys"),
      (dict(own_values=[v[:1] for v in beams.values]), "own values must be"),
      (dict(keys_t=[np.asfortranarray(k) for k in prefix.keys_t]), "context keys must be"),
  ]:
    with pytest.raises(ValueError, match=message):
      net.native_step(**{**good, **change})
