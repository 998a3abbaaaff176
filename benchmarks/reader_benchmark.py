"""Throughput of the FLCC reader: files/s and MB/s of flcc.read_files (best of a few runs).

    python benchmarks/reader_benchmark.py [--root dataset-dev] [--runs 5]

MB/s counts every byte the reader looked at (kept and dropped files). The first run also warms
the OS page cache, so the best run measures the reader rather than the disk. Prints figures only.
"""

import argparse
import pathlib
import time

import bench_utils  # pylint: disable=g-import-not-at-top  (benchmarks/; puts the repository on
# sys.path and keeps the libraries' log off the output, so it comes before code_t5)

from code_t5.data import flcc  # pylint: disable=g-import-not-at-top,wrong-import-position

DEV_ROOT = pathlib.Path(__file__).resolve().parent.parent / "dataset-dev"


def _timed(fn):
  """(seconds, result) of one call."""
  start = time.perf_counter()
  result = fn()
  return time.perf_counter() - start, result


def _read_all(root):
  stats = flcc.Stats()
  for _ in flcc.read_files(root, stats=stats):
    pass
  return stats


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--root", type=pathlib.Path, default=DEV_ROOT)
  parser.add_argument("--runs", type=int, default=5)
  args = parser.parse_args(argv)

  print(f"{bench_utils.cpu_kind()}; load average before: {bench_utils.load_average()}")
  seconds, stats = min((_timed(lambda: _read_all(args.root)) for _ in range(args.runs)),
                       key=lambda result: result[0])
  totals = stats.to_dict()
  outcomes = [totals["kept"], *totals["dropped"].values()]
  files = sum(o["files"] for o in outcomes)
  megabytes = sum(o["bytes"] for o in outcomes) / 1e6
  fingerprint_seconds = min(_timed(lambda: flcc.fingerprint(args.root))[0]
                            for _ in range(args.runs))

  print(f"root: {args.root}")
  print(f"read_files, best of {args.runs}: {seconds:.3f} s for {files} files, {megabytes:.2f} MB"
        f" -> {files / seconds:,.0f} files/s, {megabytes / seconds:.1f} MB/s")
  print(f"fingerprint, best of {args.runs}: {fingerprint_seconds * 1e3:.1f} ms")
  print(stats.summary())
  print(f"load average after: {bench_utils.load_average()}")


if __name__ == "__main__":
  main()
