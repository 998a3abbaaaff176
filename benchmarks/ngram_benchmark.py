"""Fit time, peak memory and completion speed of the n-gram baseline (code_t5/evaluation/ngram.py).

    nice -n 19 python benchmarks/ngram_benchmark.py [--root dataset-dev] [--train-root ROOT]

Fits ngram.NgramModel on the train split of --train-root (default: --root), streaming the
files from flcc.read_files as `code-t5 baseline` does, then completes every line-completion point
of --root's validation split. Prints the corpus (files, tokens, distinct tokens), the distinct
contexts per context length, fit seconds (wall and CPU; reading and tokenizing, then counting), the process's
peak RSS (resource.getrusage, which includes the imports) and completions/s. Prints figures only.
"""

import argparse
import pathlib
import resource
import time

import bench_utils  # noqa: F401 (puts the repository on sys.path)

from code_t5.data import flcc
from code_t5.data import line_completion
from code_t5.evaluation import ngram

DEV_ROOT = bench_utils.REPO / "dataset-dev"


def _cpu_seconds() -> float:
  usage = resource.getrusage(resource.RUSAGE_SELF)
  return usage.ru_utime + usage.ru_stime


def _peak_rss_mb() -> float:
  return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--root", type=pathlib.Path, default=DEV_ROOT)
  parser.add_argument("--train-root", type=pathlib.Path, default=None)
  args = parser.parse_args(argv)
  train_root = args.train_root or args.root

  print(f"train root: {train_root}; points: validation split of {args.root}")
  print(f"load average before: {bench_utils.load_average()}")
  rss_before = _peak_rss_mb()
  train_bytes = 0

  def texts():
    nonlocal train_bytes
    for source_file in flcc.read_files(train_root, only_split="train"):
      train_bytes += len(source_file.text.encode("utf-8", "surrogatepass"))
      yield source_file.text

  start, cpu = time.perf_counter(), _cpu_seconds()
  model = ngram.NgramModel().fit(texts())
  fit_seconds, fit_cpu = time.perf_counter() - start, _cpu_seconds() - cpu
  stats = model.stats
  print(f"train files: {stats['files']:,}, {train_bytes / 1e6:,.1f} MB, tokens: "
        f"{stats['tokens']:,}, distinct tokens: {stats['distinct_tokens']:,}")
  for n in range(model.order):
    print(f"  context length {n}: {stats['contexts'][n]:,} contexts, "
          f"{stats['ngrams'][n]:,} distinct {n + 1}-grams, {stats['kept'][n]:,} continuations kept")
  print(f"fit: {fit_seconds:.1f} s wall, {fit_cpu:.1f} s CPU (wall: reading and tokenizing {stats['read_seconds']:.1f} s, "
        f"counting {stats['count_seconds']:.1f} s)")
  print(f"peak RSS: {_peak_rss_mb():,.0f} MB (before fit: {rss_before:,.0f} MB)")

  files = list(flcc.read_files(args.root, only_split="validation"))
  contexts = [point.context(f.text) for f, point in line_completion.points_of_files(files)]
  start, cpu = time.perf_counter(), _cpu_seconds()
  completions = [model.complete(context) for context in contexts]
  seconds, cpu = time.perf_counter() - start, _cpu_seconds() - cpu
  print(f"completions: {len(contexts):,} validation points of {len(files)} files in "
        f"{seconds:.2f} s wall, {cpu:.2f} s CPU -> {len(contexts) / seconds:,.0f} completions/s "
        f"({len(contexts) / cpu:,.0f} per CPU second) "
        f"({sum(map(bool, completions)):,} non-empty)")
  print(f"peak RSS at the end: {_peak_rss_mb():,.0f} MB")
  print(f"load average after: {bench_utils.load_average()}")


if __name__ == "__main__":
  main()
