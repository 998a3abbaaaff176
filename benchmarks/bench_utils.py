"""Shared pieces of the benchmark scripts: machine load, matmul peak, timed Mesh TF runs.

Not a test helper: the scripts print figures, they assert nothing. Run them when the machine is
idle (`uptime` 1-minute load < ~1.5 on 2 cores); every script that times something prints the load
before and after (ab_benchmark.py through the train_benchmark.py runs it makes; vocab_benchmark.py
counts pieces and times nothing).
"""

import dataclasses
import json
import os
import pathlib
import re
import statistics
import subprocess
import sys
import time
import warnings
from typing import Dict, List, Optional, Sequence, Tuple

REPO = pathlib.Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
  sys.path.insert(0, str(REPO))

import code_t5_compat  # pylint: disable=g-import-not-at-top,wrong-import-position  (REPO's)

# The scripts print figures: TensorFlow's C++ log (the CUDA factories, TensorRT, oneDNN) and the
# libraries' warnings (tensorflow_hub's "pkg_resources is deprecated") would bury them, as
# `code-t5` keeps them off the terminal (cli.library_output). Set before a script imports
# TensorFlow; the user's TF_CPP_MIN_LOG_LEVEL and -W / PYTHONWARNINGS win.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
if not sys.warnoptions:
  warnings.simplefilter("ignore")


def load_average() -> str:
  return " ".join(open("/proc/loadavg").read().split()[:3])


# The variables that cap the vector instructions the math libraries' kernels use: TensorFlow's
# oneDNN, MKL (PyTorch's matmul) and PyTorch's own kernels. With all three at AVX2 an AVX-512
# machine runs the slower kind's kernels (docs/speed.md); NumPy's OpenBLAS already runs its Haswell
# (AVX2) kernels on both AMD kinds (on Intel, code_t5_compat chooses them, 8.).
ISA_CAPS = ("ONEDNN_MAX_CPU_ISA", "MKL_ENABLE_INSTRUCTIONS", "ATEN_CPU_CAPABILITY")


def cpu_kind() -> str:
  """The CPU as the docs name machines: model, usable cores, widest vector unit (from Linux's
  /proc/cpuinfo; "unknown CPU" elsewhere), and the kernels' cap where one is set (ISA_CAPS)."""
  cpu = code_t5_compat.this_cpu()
  if cpu is None:
    return f"unknown CPU, {os.cpu_count()} cores"
  model = cpu.get("model name", "unknown CPU")
  flags = set(cpu.get("flags", "").split())
  vector = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "no AVX2"
  try:
    cores = len(os.sched_getaffinity(0))
  except AttributeError:
    cores = os.cpu_count()
  caps = [f"{name}={os.environ[name]}" for name in ISA_CAPS if os.environ.get(name)]
  return f"{model}, {cores} cores, {vector}" + (f" (kernels capped: {' '.join(caps)})"
                                                 if caps else "")


def numpy_blas() -> str:
  """The BLAS behind NumPy's products and the kernels it chose for this CPU (threadpoolctl), e.g.
  "OpenBLAS 0.3.23.dev, SkylakeX kernels": an OpenBLAS that does not know the CPU falls back to
  slow ones (code_t5_compat, 8.)."""
  import numpy  # pylint: disable=g-import-not-at-top,unused-import  (loads the BLAS)
  import threadpoolctl  # pylint: disable=g-import-not-at-top
  found = [f"{'OpenBLAS' if i['internal_api'] == 'openblas' else i['internal_api']} "
           f"{i.get('version')}, {i.get('architecture') or 'unknown'} kernels"
           for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
  return "; ".join(found) or "no BLAS found"


def matmul_peak_gflops(n: int = 1024, repeats: int = 10,
                       products: str = "fp32") -> Dict[str, float]:
  """Best GFLOP/s of an n x n float32 matmul with TensorFlow and with PyTorch (default threads),
  its operands rounded to bfloat16 inside oneDNN where `products` is "bf16"
  (code_t5/training/precision.py).

  Each framework is measured in a fresh process of its own: TensorFlow's and PyTorch's thread
  pools in one process slow each other down (PyTorch by 10x and more after TensorFlow has run).
  """
  result = {}
  for framework in ("tensorflow", "torch"):
    out = in_subprocess(f"_matmul_gflops_{framework}", n, repeats, products)
    if out is not None:
      result[framework] = out
  return result


def _matmul_gflops_tensorflow(n, repeats, products):
  if products == "bf16":  # read once, when TensorFlow builds its first oneDNN product
    os.environ["TF_SET_ONEDNN_FPMATH_MODE"] = "BF16"
  import numpy as np  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  a = tf.constant(np.random.default_rng(0).standard_normal((n, n), dtype=np.float32))
  b = tf.constant(np.random.default_rng(1).standard_normal((n, n), dtype=np.float32))
  # TensorFlow's MatMul goes to an sgemm that keeps float32 whatever the setting; its einsum,
  # what Mesh TF multiplies with, to oneDNN's matmul, which takes it.
  product = ((lambda: tf.einsum("ij,jk->ik", a, b)) if products == "bf16" else
             (lambda: tf.linalg.matmul(a, b)))
  product().numpy()
  best = min(_timed(lambda: product().numpy()) for _ in range(repeats))
  return 2 * n ** 3 / best / 1e9


def _matmul_gflops_torch(n, repeats, products):
  import torch  # pylint: disable=g-import-not-at-top
  set_torch_products(torch, products)
  x, y = torch.randn(n, n), torch.randn(n, n)
  x @ y  # pylint: disable=pointless-statement
  best = min(_timed(lambda: x @ y) for _ in range(repeats))
  return 2 * n ** 3 / best / 1e9


def set_torch_products(torch, products: str):
  """PyTorch's float32 products as `products` says: "fp32", or "bf16" (oneDNN rounds the operands
  to bfloat16 and sums in float32, as TensorFlow's TF_SET_ONEDNN_FPMATH_MODE=BF16 asks)."""
  if products == "bf16":
    torch.backends.mkldnn.matmul.fp32_precision = "bf16"


def p50_p95(values: Sequence[float]) -> Tuple[float, float]:
  """The median and the 95th percentile of `values` (the nearest rank, no interpolation)."""
  ordered = sorted(values)
  pick = lambda q: ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]
  return pick(50), pick(95)


def in_subprocess(function: str, *args, module: str = "bench_utils"):
  """Calls module.function(*args) in a fresh interpreter; returns its JSON-able result."""
  code = (f"import json, sys; sys.path.insert(0, {str(pathlib.Path(__file__).parent)!r}); "
          f"import {module}; print('RESULT=' + json.dumps({module}.{function}(*{args!r})))")
  proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
  for line in proc.stdout.splitlines():
    if line.startswith("RESULT="):
      return json.loads(line[len("RESULT="):])
  print(proc.stdout[-2000:] + proc.stderr[-3000:])
  return None


def _timed(fn) -> float:
  start = time.perf_counter()
  fn()
  return time.perf_counter() - start


# --- timed mesh_transformer_main runs --------------------------------------------------------

_LOSS = re.compile(r"tf_loss\[([^\]]+)\]\[(\d+)\]")
_SAVE_START = re.compile(r"Calling checkpoint listeners before saving checkpoint (\d+)")
_SAVE_DONE = "Done writing checkpoint."


@dataclasses.dataclass
class Timeline:
  """What a timed training run did when (seconds since launch)."""
  lines: List[Tuple[float, str]]
  wall_s: float
  returncode: int

  def first(self, text: str) -> Optional[float]:
    return next((t for t, line in self.lines if text in line), None)

  def losses(self) -> List[Tuple[int, float, float]]:
    """(step, loss, seconds since launch) of every printed step loss."""
    out = []
    for t, line in self.lines:
      if m := _LOSS.search(line):
        out.append((int(m.group(2)), float(m.group(1)), t))
    return out

  def saves(self) -> List[Tuple[int, float, float]]:
    """(step, start, end) of every checkpoint save (listeners + Saver.save)."""
    out, pending = [], None
    for t, line in self.lines:
      if m := _SAVE_START.search(line):
        pending = (int(m.group(1)), t)
      elif _SAVE_DONE in line and pending:
        out.append((pending[0], pending[1], t))
        pending = None
    return out

  def einsum_macs_per_step(self) -> Optional[float]:
    """Mesh TF's own count of the multiply-adds of every einsum in one lowered training step
    (forward and backward, attention and logits included): its "Counters: einsum: N" line."""
    counters = False
    for _, line in self.lines:
      counters = counters or "Counters:" in line
      if counters and (m := re.match(r"^einsum: ([0-9.e+]+)$", line.strip())):
        return float(m.group(1))
    return None

  def summary(self, tokens_per_step: int) -> Dict[str, float]:
    """The figures the benchmarks report (seconds, steps/s, tokens/s, shares)."""
    losses = self.losses()
    saves = self.saves()
    session_ready = self.first("Done with copy master to slices.")
    figures = {
        "wall_s": self.wall_s,
        "launch_to_model_fn_s": self.first("Calling model_fn.") or float("nan"),
        "launch_to_graph_finalized_s": self.first("Graph was finalized.") or float("nan"),
        "launch_to_session_ready_s": session_ready or float("nan"),
        "launch_to_first_step_s": losses[0][2] if losses else float("nan"),
        "steps": len(losses),
    }
    if saves:
      step0 = [s for s in saves if s[0] == saves[0][0]][0]
      figures["first_save_s"] = step0[2] - step0[1]
      # Everything between a ready session and the end of the step-0 save: graph.pbtxt, the
      # graph in the events file, the meta graph, the checkpoint.
      if session_ready:
        figures["session_ready_to_first_save_done_s"] = step0[2] - session_ready
      figures["last_save_s"] = saves[-1][2] - saves[-1][1]
    # Mesh TF's hooks are done; what follows is TF closing the session (tf.data's iterators).
    hooks_done, closed = self.first("Done with the session"), self.first("Loss for final step")
    if hooks_done is not None and closed is not None:
      figures["session_close_s"] = closed - hooks_done
    if self.lines:  # the interpreter's shutdown: atexit handlers, module teardown, collection
      figures["exit_s"] = self.wall_s - self.lines[-1][0]
    if len(losses) > 3:
      save_windows = [(s, e) for _, s, e in saves]
      intervals = [b[2] - a[2] for a, b in zip(losses[1:], losses[2:])
                   if not any(a[2] <= e and b[2] >= s for s, e in save_windows)]
      if intervals:
        step_s = statistics.median(intervals)
        figures["step_s_median"] = step_s
        figures["steps_per_s"] = 1 / step_s
        figures["token_slots_per_s"] = tokens_per_step / step_s
        figures["compute_s"] = step_s * len(losses)
        figures["compute_share_of_wall"] = step_s * len(losses) / self.wall_s
    return figures


def run_timed(command: Sequence[str], log_path: pathlib.Path,
              env: Optional[Dict[str, str]] = None, timeout_s: float = 3600) -> Timeline:
  """Runs `command`, timestamping every output line on arrival; the full log goes to log_path."""
  env = dict(os.environ, **(env or {}))
  env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
  env["PYTHONUNBUFFERED"] = "1"
  lines = []
  log_path.parent.mkdir(parents=True, exist_ok=True)
  start = time.monotonic()
  with open(log_path, "w", encoding="utf-8") as log, subprocess.Popen(
      command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True,
      errors="replace") as process:
    for line in process.stdout:
      t = time.monotonic() - start
      lines.append((t, line.rstrip("\n")))
      log.write(f"{t:9.3f} {line}")
      if t > timeout_s:
        process.kill()
  return Timeline(lines=lines, wall_s=time.monotonic() - start, returncode=process.returncode)
