"""Latency of one line completion: loaded model, cold start, and Mesh TF's own infer path.

    python benchmarks/latency_benchmark.py [--work DIR] [--sizes tiny small] [--requests 40]

For each size it trains a shared prefix-LM on dataset-dev on CPU (tiny: --tiny-steps, enough to
emit newlines so decoding stops at the end of the line; small: --small-steps, quality does not
matter for latency, an untrained model decodes the full --max-length), exports it once, then
measures, on CPU:

- loaded: p50/p95 of `Completer.complete` (the SavedModel loaded once; what `serve` pays per
  request), over --requests cursor positions drawn from dataset-dev files;
- cold start: a whole `code-t5 complete --checkpoint DIR FILE:LINE:COL` process, start to printed
  completion (export already there);
- infer path: a whole `python -m t5.models.mesh_transformer_main ... --gin_file=infer.gin` run
  (t5's decode_from_file) on a one-line input file, same checkpoint and decoding settings.

Prints figures and ratios; asserts nothing. Models are kept in --work and reused (re-runs only
measure). Run it on an idle machine: the load average is printed before and after.
"""

import argparse
import pathlib
import random
import statistics
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
  sys.path.insert(0, str(REPO))

from code_t5 import complete  # pylint: disable=g-import-not-at-top,wrong-import-position
from code_t5 import launcher  # pylint: disable=g-import-not-at-top,wrong-import-position

import bench_utils  # pylint: disable=g-import-not-at-top,wrong-import-position  (benchmarks/)

DEV_ROOT = REPO / "dataset-dev"


def _percentile(values, q):
  ordered = sorted(values)
  return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def _train(size: str, steps: int, model_dir: pathlib.Path) -> None:
  if (launcher.latest_step(model_dir) or 0) >= steps:
    return
  params = ["utils.run.save_checkpoints_steps = 100"]
  if size != "tiny":  # CPU: a small batch; sizes/small.gin keeps dataset.gin's 512 + 512 lengths
    params.append("utils.run.batch_size = ('sequences_per_batch', 2)")
  experiment = launcher.Experiment(size=size, model_dir=model_dir, gin_params=params)
  start = time.time()
  if launcher.run(experiment.train_command(steps), model_dir / "logs" / "train.log",
                  echo=lambda line: None):
    sys.exit(f"training {size} failed: see {model_dir / 'logs' / 'train.log'}")
  print(f"  trained {size} to step {steps} in {time.time() - start:.0f} s")


def _cursors(n: int, seed: int = 0):
  """(file, line, col, text) at random positions of random dev files."""
  rng = random.Random(seed)
  files = sorted(DEV_ROOT.rglob("*.py"))
  picks = []
  while len(picks) < n:
    path = rng.choice(files)
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    line = rng.randrange(len(lines))
    if not lines[line].strip():
      continue
    col = rng.randrange(len(lines[line]) + 1)
    picks.append((path, line + 1, col + 1, text))
  return picks


def _timed_run(command, **kwargs) -> float:
  start = time.perf_counter()
  result = subprocess.run(command, capture_output=True, text=True, **kwargs)
  seconds = time.perf_counter() - start
  if result.returncode:
    sys.exit(f"failed ({result.returncode}): {' '.join(command)}\n{result.stderr[-2000:]}")
  return seconds


def _infer_command(model_dir: pathlib.Path, size: str, settings, work: pathlib.Path, line: str):
  """t5's infer.gin (decode_from_file) on a one-line file, decoding as the export does."""
  info = complete.model_info(model_dir)
  vocabulary = complete.task_vocabulary(info)
  inputs = work / "infer_input.txt"
  inputs.write_text(line + "\n", encoding="utf-8")
  experiment = launcher.Experiment(size=size, model_dir=model_dir)
  bindings = [b for b in complete.decode_bindings(info, settings, vocabulary)
              if not b.startswith("utils.run.export")]
  return experiment.command(extra_gin_files=["infer.gin"], extra_gin_params=[
      f"input_filename = '{inputs}'", f"output_filename = '{work / 'infer_output.txt'}'",
      f"infer_checkpoint_step = {info.step}",
      "utils.run.batch_size = ('sequences_per_batch', 1)"] + bindings)


def measure(size: str, steps: int, args, work: pathlib.Path) -> dict:
  model_dir = work / f"shared-prefix_lm-{size}"
  print(f"{size}: model dir {model_dir}")
  _train(size, steps, model_dir)
  settings = complete.DecodeSettings(max_length=args.max_length)
  info = complete.model_info(model_dir)
  figures = {"size": size, "step": info.step, "context": info.max_context_tokens}

  start = time.perf_counter()
  had_export = complete.find_export(info, settings) is not None
  complete.export(model_dir, settings, echo=lambda line: None)
  figures["export_s"] = None if had_export else time.perf_counter() - start

  start = time.perf_counter()
  completer = complete.Completer(model_dir, settings)
  figures["load_s"] = time.perf_counter() - start
  picks = _cursors(args.requests + 2)
  for path, line, col, text in picks[:2]:  # warm-up: the first call traces the graph
    completer.complete(text[:complete.cursor_offset(text, line, col)])
  times, lengths = [], []
  for path, line, col, text in picks[2:]:
    start = time.perf_counter()
    result = completer.complete(text[:complete.cursor_offset(text, line, col)])
    times.append((time.perf_counter() - start) * 1000)
    lengths.append(len(result.completion.encode("utf-8")))
  figures.update(p50_ms=_percentile(times, 50), p95_ms=_percentile(times, 95),
                 stopped=sum(n < args.max_length for n in lengths) / len(lengths),
                 mean_len=statistics.mean(lengths))

  path, line, col, _ = picks[0]
  cli = [sys.executable, "-m", "code_t5.cli", "complete", "--checkpoint", str(model_dir),
         "--max-length", str(args.max_length), f"{path}:{line}:{col}"]
  colds = [_timed_run(cli) for _ in range(args.cold_runs)]
  figures["cold_s"] = statistics.median(colds)

  with tempfile.TemporaryDirectory() as tmp:
    text = picks[0][3]
    one_line = text.split("\n")[line - 1][:col - 1] or "import os"
    command = _infer_command(model_dir, size, settings, pathlib.Path(tmp), one_line)
    infers = [_timed_run(command) for _ in range(args.infer_runs)]
  figures["infer_s"] = statistics.median(infers)
  return figures


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--work", type=pathlib.Path,
                      default=pathlib.Path(tempfile.gettempdir()) / "code_t5_latency")
  parser.add_argument("--sizes", nargs="+", default=["tiny", "small"])
  parser.add_argument("--tiny-steps", type=int, default=200)
  parser.add_argument("--small-steps", type=int, default=2)
  parser.add_argument("--requests", type=int, default=40)
  parser.add_argument("--cold-runs", type=int, default=3)
  parser.add_argument("--infer-runs", type=int, default=2)
  parser.add_argument("--max-length", type=int, default=complete.DEFAULT_MAX_LENGTH)
  args = parser.parse_args(argv)
  print(f"load average before: {bench_utils.load_average()}")
  rows = []
  for size in args.sizes:
    steps = args.tiny_steps if size == "tiny" else args.small_steps
    rows.append(measure(size, steps, args, args.work))
  print(f"load average after: {bench_utils.load_average()}")
  print(f"\nshared prefix-LM, CPU, batch 1, greedy, --max-length {args.max_length}; "
        f"{args.requests} requests (loaded), {args.cold_runs} cold starts and "
        f"{args.infer_runs} infer runs (medians)")
  header = ("size", "step", "ctx", "export s", "load s", "p50 ms", "p95 ms", "stop@\\n",
            "cold s", "infer s", "cold/p50", "infer/p50", "infer/cold")
  print(" | ".join(header))
  for r in rows:
    export = f"{r['export_s']:.1f}" if r["export_s"] is not None else "reused"
    print(" | ".join([
        r["size"], str(r["step"]), str(r["context"]), export, f"{r['load_s']:.1f}",
        f"{r['p50_ms']:.0f}", f"{r['p95_ms']:.0f}", f"{r['stopped']:.0%}", f"{r['cold_s']:.1f}",
        f"{r['infer_s']:.1f}", f"{r['cold_s'] * 1000 / r['p50_ms']:.0f}x",
        f"{r['infer_s'] * 1000 / r['p50_ms']:.0f}x", f"{r['infer_s'] / r['cold_s']:.1f}x"]))
  print("\nstop@\\n: share of completions that ended at a newline before --max-length "
        "(the rest decoded every step). cold: process start to first completion, export reused.")


if __name__ == "__main__":
  main()
