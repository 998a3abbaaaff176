"""What a JAX (XLA) runtime would give the completion engine: the shipped model's forward pass
with a key/value cache, compiled with jax.jit, against the NumPy runtime (code_t5/engine/runtime.py)
on the same contexts.

    python benchmarks/jax_runtime_benchmark.py [--requests 60]

T5X runs its models as jit-compiled JAX; this is the same network written for XLA with fixed
shapes (the context padded to the model's input length, the beams' cache to --max-tokens), from
the same runtime folder. Per request shape it prints, p50 over dataset-dev's validation points:
reading the context (NumPy `Network.start` against the compiled pass), one decode step for 1
and for 5 beams (`Network.step`), the compile time, and how far the logits differ (the two must
compute the same network). Then what a best line would cost: reading + the engine's mean steps
per line (9.0 on these points, code_t5/engine/decoding.py) x one 5-beam step. Also the import time
and RSS of a fresh process with jax. XLA runs on all cores unless told otherwise (NumPy's BLAS runs
on one, runtime._use_one_blas_thread); for one thread each:

    XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1" \
      python benchmarks/jax_runtime_benchmark.py

Asserts nothing; run it on an idle machine (load printed).
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import bench_utils  # pylint: disable=g-import-not-at-top  (benchmarks/; puts the repository on
# sys.path and keeps the libraries' log off the output, so it comes before code_t5)

from code_t5.engine import complete  # pylint: disable=g-import-not-at-top,wrong-import-position
from code_t5.engine import runtime  # pylint: disable=g-import-not-at-top,wrong-import-position

import latency_benchmark  # pylint: disable=g-import-not-at-top,wrong-import-position

STEPS_PER_LINE = 9.0  # the default search's mean decode steps per line on these points
_MASKED = -1e9


class JaxNetwork:
  """runtime.Network's decoder-only forward pass (the shipped causal LM), in jit-compiled JAX."""

  def __init__(self, network: runtime.Network, context_length: int, max_tokens: int):
    import jax  # pylint: disable=g-import-not-at-top
    import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
    if not network.decoder_only or network.prefix_lm or network.activations != ("relu",):
      raise SystemExit("this benchmark ports the shipped causal LM only (decoder-only, ReLU)")
    self._jnp = jnp
    self.heads, self.head_dim = network.num_heads, network.head_dim
    self.context_length, self.max_tokens = context_length, max_tokens
    self.params = {
        "embedding": jnp.asarray(network.embedding),
        "logits": jnp.asarray(network._logits_kernel),  # pylint: disable=protected-access
        "final_norm": jnp.asarray(network.final_norm),
        "bias": jnp.asarray(network.bias._by_relative),  # pylint: disable=protected-access
        "layers": [{
            "qkv": jnp.asarray(layer.self_attention.query_key_value),
            "out": jnp.asarray(layer.self_attention.out),
            "self_norm": jnp.asarray(layer.self_norm),
            "mlp_in": jnp.asarray(layer.mlp_in[0]),
            "mlp_out": jnp.asarray(layer.mlp_out),
            "mlp_norm": jnp.asarray(layer.mlp_norm),
        } for layer in network.layers],
    }
    self._offset = (network.bias._by_relative.shape[1] - 1) // 2  # pylint: disable=protected-access
    self.start = jax.jit(self._start)
    self.step = jax.jit(self._step)
    self.reorder = jax.jit(lambda cache, parents: [(k[parents], v[parents]) for k, v in cache])

  def _norm(self, x, scale):
    jnp = self._jnp
    return x * (1.0 / jnp.sqrt(jnp.mean(jnp.square(x), axis=-1, keepdims=True) + 1e-6)) * scale

  def _heads(self, y):
    """[..., n, 3 * heads * hd] -> three [..., heads, n, hd]."""
    jnp = self._jnp
    y = y.reshape(y.shape[:-1] + (3, self.heads, self.head_dim))
    return [jnp.moveaxis(y[..., i, :, :], -2, -3) for i in range(3)]

  def _merge(self, y, out):
    y = self._jnp.moveaxis(y, -3, -2)
    return y.reshape(y.shape[:-2] + (-1,)) @ out

  def _mlp(self, layer, x):
    h = self._norm(x, layer["mlp_norm"])
    return x + self._jnp.maximum(h @ layer["mlp_in"], 0.0) @ layer["mlp_out"]

  def _bias(self, params, queries, keys):
    return params["bias"][:, keys[None, :] - queries[:, None] + self._offset]

  def _start(self, params, inputs, n):
    """inputs: [L] ids (shifted right, padded); n: how many are real. -> (cache, logits[n-1])."""
    jnp = self._jnp
    positions = jnp.arange(self.context_length)
    visible = (positions[None, :] <= positions[:, None]) & (positions[None, :] < n)
    bias = self._bias(params, positions, positions) + jnp.where(visible, 0.0, _MASKED)
    x = params["embedding"][inputs]
    cache = []
    for layer in params["layers"]:
      q, k, v = self._heads(self._norm(x, layer["self_norm"]) @ layer["qkv"])
      cache.append((k, v))
      weights = jax_softmax(jnp, q @ jnp.swapaxes(k, -1, -2) + bias)
      x = self._mlp(layer, x + self._merge(weights @ v, layer["out"]))
    last = self._norm(x[n - 1], params["final_norm"])
    return cache, last @ params["logits"]

  def _step(self, params, prefix, n, beams, t, tokens):
    """One token per beam at position n + t. prefix: per layer (k, v) [heads, L, hd];
    beams: per layer (k, v) [B, heads, max_tokens, hd]. -> (beams, logits [B, vocab])."""
    jnp = self._jnp
    position = n + t
    query = position[None]
    prefix_positions = jnp.arange(self.context_length)
    own_positions = n + jnp.arange(self.max_tokens)
    prefix_bias = self._bias(params, query, prefix_positions)[:, 0] + jnp.where(
        prefix_positions < n, 0.0, _MASKED)
    own_bias = self._bias(params, query, own_positions)[:, 0] + jnp.where(
        jnp.arange(self.max_tokens) <= t, 0.0, _MASKED)
    x = params["embedding"][tokens][:, None, :]  # [B, 1, d]
    new_beams = []
    for layer, (prefix_k, prefix_v), (beam_k, beam_v) in zip(params["layers"], prefix, beams):
      q, k, v = self._heads(self._norm(x, layer["self_norm"]) @ layer["qkv"])  # [B, h, 1, hd]
      beam_k = beam_k.at[:, :, t].set(k[:, :, 0])
      beam_v = beam_v.at[:, :, t].set(v[:, :, 0])
      new_beams.append((beam_k, beam_v))
      shared = jnp.einsum("bhqd,hkd->bhqk", q, prefix_k) + prefix_bias[None, :, None, :]
      own = q @ jnp.swapaxes(beam_k, -1, -2) + own_bias[None, :, None, :]
      weights = jax_softmax(jnp, jnp.concatenate([shared, own], axis=-1))
      out = (jnp.einsum("bhqk,hkd->bhqd", weights[..., :self.context_length], prefix_v)
             + weights[..., self.context_length:] @ beam_v)
      x = self._mlp(layer, x + self._merge(out, layer["out"]))
    return new_beams, self._norm(x[:, 0], params["final_norm"]) @ params["logits"]

  def empty_beams(self, size):
    shape = (size, self.heads, self.max_tokens, self.head_dim)
    return [(self._jnp.zeros(shape), self._jnp.zeros(shape)) for _ in self.params["layers"]]


def jax_softmax(jnp, logits):
  logits = logits - logits.max(axis=-1, keepdims=True)
  weights = jnp.exp(logits)
  return weights / weights.sum(axis=-1, keepdims=True)


def _fresh_jax() -> str:
  """Import time and peak RSS of a fresh process that imports jax and runs one op."""
  code = ("import resource, time; t = time.perf_counter(); import jax.numpy as jnp; "
          "jnp.zeros(1).block_until_ready(); print(time.perf_counter() - t, "
          "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)")
  seconds, rss = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                check=True).stdout.split()
  return f"a fresh process imports it in {float(seconds):.2f} s, peak RSS {float(rss):.0f} MB"


def _median_ms(fn, repeats=1):
  times = []
  for _ in range(repeats):
    t = time.perf_counter()
    fn()
    times.append((time.perf_counter() - t) * 1000)
  return statistics.median(times)


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--requests", type=int, default=60)
  parser.add_argument("--steps", type=int, default=12, help="decode steps timed per request")
  args = parser.parse_args(argv)
  print(f"load average before: {bench_utils.load_average()}")
  completer = complete.Completer(complete.SHIPPED_MODEL, latency_benchmark.DEFAULT,
                                 echo=lambda line: None)
  network = completer.network
  contexts = [completer.tokenizer.encode(completer.context(text[:cursor]))
              for text, cursor, *_ in latency_benchmark._points(args.requests)]  # pylint: disable=protected-access
  length = max(len(ids) for ids in contexts) + 2  # the shifted-in 0 and EOS
  import jax  # pylint: disable=g-import-not-at-top
  fast = JaxNetwork(network, length, completer.max_tokens)
  print(f"jax {jax.__version__} on {jax.devices()[0].platform} (XLA_FLAGS="
        f"{os.environ.get('XLA_FLAGS', '')!r}); {_fresh_jax()}; context padded to {length} "
        f"tokens, beams' cache {completer.max_tokens}")

  def jax_start(ids):
    inputs = np.zeros(length, np.int32)
    inputs[1:len(ids) + 2] = list(ids) + [1]
    return fast.start(fast.params, inputs, len(ids) + 2)

  t = time.perf_counter()
  cache, logits = jax_start(contexts[0])
  jax.block_until_ready(logits)
  compile_s = time.perf_counter() - t
  rows = {"read": ([], []), "step 1 beam": ([], []), "step 5 beams": ([], [])}
  diffs = []
  for ids in contexts:
    prefix = network.start(ids)
    rows["read"][0].append(_median_ms(lambda: network.start(ids)))  # pylint: disable=cell-var-from-loop
    rows["read"][1].append(_median_ms(
        lambda: jax.block_until_ready(jax_start(ids))))  # pylint: disable=cell-var-from-loop
    cache, logits = jax_start(ids)
    diffs.append(float(np.abs(np.asarray(logits) - prefix.logits).max()))
    n = len(ids) + 2
    for size in (1, 5):
      beams, own = runtime.Beams(network, prefix, size), fast.empty_beams(size)
      tokens = np.full(size, int(np.argmax(prefix.logits)), np.int32)
      numpy_ms, jax_ms = [], []
      for t_step in range(args.steps):
        start = time.perf_counter()
        numpy_logits = network.step(beams, tokens)
        numpy_ms.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        own, jax_logits = fast.step(fast.params, cache, n, own, t_step, tokens)
        jax.block_until_ready(jax_logits)
        jax_ms.append((time.perf_counter() - start) * 1000)
        diffs.append(float(np.abs(np.asarray(jax_logits) - numpy_logits).max()))
        tokens = np.argmax(numpy_logits, axis=-1).astype(np.int32)
      name = f"step {size} beam" + ("s" if size > 1 else "")
      rows[name][0].append(statistics.median(numpy_ms[1:]))
      rows[name][1].append(statistics.median(jax_ms[1:]))
  print(f"load average after: {bench_utils.load_average()}")
  print(f"{len(contexts)} contexts (dataset-dev validation points); first call (compile) "
        f"{compile_s:.1f} s; largest logit difference JAX vs NumPy {max(diffs):.1e}")
  print(f"{'p50 per request':<16}{'NumPy ms':>10}{'JAX ms':>10}{'JAX/NumPy':>11}")
  medians = {}
  for name, (numpy_ms, jax_ms) in rows.items():
    medians[name] = statistics.median(numpy_ms), statistics.median(jax_ms)
    print(f"{name:<16}{medians[name][0]:>10.2f}{medians[name][1]:>10.2f}"
          f"{medians[name][1] / medians[name][0]:>10.2f}x")
  line = [medians["read"][i] + STEPS_PER_LINE * medians["step 5 beams"][i] for i in (0, 1)]
  print(f"{'best line*':<16}{line[0]:>10.1f}{line[1]:>10.1f}{line[1] / line[0]:>10.2f}x"
        f"   (*read + {STEPS_PER_LINE} steps of 5 beams; search bookkeeping not included)")


if __name__ == "__main__":
  main()
