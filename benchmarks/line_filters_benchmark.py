"""Speed of code_t5/engine/line_filters.py: `LineContext.of` per request, `reject_reason` per
candidate.

    nice -n 19 python benchmarks/line_filters_benchmark.py [--root dataset-dev] [--lines 5000]

The file: the first --lines lines of the --root's Python files (sorted by path) joined. `of` is
timed at the line starts (after the indentation) of the file's last 200 lines, with how much of
the prefix it read (about WINDOW_CHARS, more in a long top-level block); `reject_reason` on each of
those lines' real text (a candidate that passes every rule, so the longest path) and on a fixed
80-character line. Baseline: `str.split("\\n")` of the same file in the same process, for a ratio
that does not depend on the machine. Also: `of` on a 500-line file (read whole, being shorter than
WINDOW_CHARS), and the module's import time (loaded from its path, not through the code_t5
package, whose __init__ imports TensorFlow). Prints figures only.
"""

import argparse
import importlib.util
import os
import pathlib
import statistics
import time

import bench_utils

DEV_ROOT = bench_utils.REPO / "dataset-dev"
LINE_80 = "    result = self._compute(values[index], {'key': 1}, name=\"x\") + offset  # note"


def _load_line_filters():
  """(module, seconds to import it), loaded from its file so that TensorFlow is not imported."""
  path = bench_utils.REPO / "code_t5" / "engine" / "line_filters.py"
  start = time.perf_counter()
  spec = importlib.util.spec_from_file_location("line_filters_benchmarked", path)
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module, time.perf_counter() - start


def _python_text(root: pathlib.Path, lines: int) -> str:
  paths = sorted(os.path.join(folder, name) for folder, _, names in os.walk(root)
                 for name in names if name.endswith(".py"))
  kept = []
  for path in paths:
    kept.extend(pathlib.Path(path).read_text(encoding="utf-8", errors="replace").split("\n"))
    if len(kept) >= lines:
      break
  return "\n".join(kept[:lines]) + "\n"


def _best_us(fn, repeats: int = 5, number: int = 20) -> float:
  """Best of `repeats` of the mean of `number` calls, in microseconds."""
  best = float("inf")
  for _ in range(repeats):
    start = time.perf_counter()
    for _ in range(number):
      fn()
    best = min(best, (time.perf_counter() - start) / number)
  return best * 1e6


def _chars_read(line_filters, text: str, cursor: int) -> int:
  """How much of text[:cursor] LineContext.of reads (see line_filters._read_start)."""
  line_start = text.rfind("\n", 0, cursor) + 1
  if line_start <= line_filters.WINDOW_CHARS:
    return line_start
  starts = line_filters._last_top_level_lines(text, line_start)  # pylint: disable=protected-access
  if len(starts) < 2:
    return line_start
  top_level = line_filters._TOP_LEVEL_START  # pylint: disable=protected-access
  first = top_level.search(text, line_start - line_filters.WINDOW_CHARS - 1, starts[0])
  return line_start - (first.start() + 1 if first else starts[0])


def _line_starts(text: str, last: int):
  """(cursor after the indentation, rest of the line) for the text's last `last` lines."""
  points, pos = [], 0
  for line in text.split("\n"):
    code = line.lstrip(" \t")
    points.append((pos + len(line) - len(code), code))
    pos += len(line) + 1
  return points[-last - 1:-1]


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--root", type=pathlib.Path, default=DEV_ROOT)
  parser.add_argument("--lines", type=int, default=5000)
  args = parser.parse_args(argv)
  print(f"load average before: {bench_utils.load_average()}")
  line_filters, import_seconds = _load_line_filters()
  print(f"import code_t5/engine/line_filters.py (from its path): {import_seconds * 1e3:.1f} ms")

  text = _python_text(args.root, args.lines)
  points = _line_starts(text, 200)
  split_us = _best_us(lambda: text.split("\n"))
  of_us = [_best_us(lambda c=cursor: line_filters.LineContext.of(text[:c]), repeats=3, number=5)
           for cursor, _ in points]
  read = [_chars_read(line_filters, text, cursor) for cursor, _ in points]
  median = statistics.median(of_us)
  print(f"file: {args.lines:,} lines, {len(text):,} chars of {args.root}; WINDOW_CHARS "
        f"{line_filters.WINDOW_CHARS:,}, WHOLE_CHARS {line_filters.WHOLE_CHARS:,}")
  print(f"str.split('\\n') of the file: {split_us:.0f} us")
  print(f"LineContext.of at the {len(points)} line starts of its last 200 lines: median "
        f"{median:.0f} us ({median / split_us:.2f}x str.split), 90th percentile "
        f"{sorted(of_us)[len(of_us) * 9 // 10]:.0f} us, max {max(of_us):.0f} us; chars read: "
        f"median {statistics.median(read):,.0f}, max {max(read):,}")
  small = _python_text(args.root, 500)
  small_points = _line_starts(small, 50)
  small_us = statistics.median(_best_us(lambda c=cursor: line_filters.LineContext.of(small[:c]),
                                        repeats=3, number=5) for cursor, _ in small_points)
  print(f"LineContext.of on a 500-line file ({len(small):,} chars, read whole): median "
        f"{small_us:.0f} us")

  contexts = [(line_filters.LineContext.of(text[:cursor]), rest) for cursor, rest in points]
  start = time.perf_counter()
  for _ in range(5):
    for context, rest in contexts:
      context.reject_reason(rest)
  real_us = (time.perf_counter() - start) / (5 * len(contexts)) * 1e6
  mean_chars = statistics.mean(len(rest) for _, rest in contexts)
  print(f"reject_reason on the real rest of those lines (mean {mean_chars:.0f} chars): "
        f"{real_us:.1f} us per candidate")
  context = line_filters.LineContext.of("def f(self, values, index, offset):\n    ")
  assert context.reject_reason(LINE_80.lstrip()) is None
  print(f"reject_reason on an {len(LINE_80)}-char line that passes every rule: "
        f"{_best_us(lambda: context.reject_reason(LINE_80.lstrip()), number=200):.1f} us")
  print(f"load average after: {bench_utils.load_average()}")


if __name__ == "__main__":
  main()
