"""Start-up of the `code-t5` command: --help, argument errors and a cold completion against a
bare interpreter.

    python benchmarks/startup_benchmark.py [--runs 5]

Wall time of a fresh process per command line, the median of --runs runs (interleaved, after one
warm-up round so that every file is in the page cache), next to `python -c pass` measured in the
same run: the ratio is what the command costs in units of starting Python, comparable across
machines. `import code_t5` (which registers every seqio task, importing seqio, t5 and TensorFlow)
is shown for reference: it is what every `code-t5` command paid before the console script stopped
registering at import (code_t5/registration.py). The commands run as typed: the installed
`code-t5` script, with this interpreter. A command's parser holds only its own module's
subcommands (code_t5/cli.py, SUBCOMMANDS): `complete --help` against `--help` is what that saves.
Prints figures only (tests/cli_test.py checks what the
commands import, without timing them).
"""

import argparse
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import bench_utils

CONSOLE_SCRIPT = pathlib.Path(sys.executable).parent / "code-t5"


def command_lines(source: pathlib.Path):
  """(label, argv) in the order printed; `source`: a file to complete."""
  code_t5 = [sys.executable, str(CONSOLE_SCRIPT)]
  return [
      ("python -c pass", [sys.executable, "-c", "pass"]),
      ("code-t5 --help  (every command's module)", code_t5 + ["--help"]),
      ("code-t5 complete --help  (its module only)", code_t5 + ["complete", "--help"]),
      ("code-t5 complete FILE  (cold, shipped model)", code_t5 + ["complete", str(source)]),
      ("code-t5 train --steps x  (argparse error)", code_t5 + ["train", "--steps", "x"]),
      ("code-t5 prepare --test-fraction 2  (checked)",
       code_t5 + ["prepare", "--test-fraction", "2"]),
      ("python -c 'import code_t5'  (registers)", [sys.executable, "-c", "import code_t5"]),
  ]


def wall_seconds(argv, expect_codes=(0, 2)) -> float:
  start = time.perf_counter()
  result = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          check=False)
  seconds = time.perf_counter() - start
  if result.returncode not in expect_codes:
    raise SystemExit(f"{' '.join(argv)}: exit {result.returncode}\n{result.stderr[-2000:]}")
  return seconds


def main():
  parser = argparse.ArgumentParser(description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--runs", type=int, default=5)
  args = parser.parse_args()
  if not CONSOLE_SCRIPT.exists():
    raise SystemExit(f"{CONSOLE_SCRIPT} is missing: install the project (pip install -e .)")
  source = pathlib.Path(tempfile.mkdtemp()) / "cold.py"
  source.write_text("import os\nimport sys\n\n\ndef main(argv):\n    path = os.pa")
  lines = command_lines(source)
  print(f"python {sys.version.split()[0]} ({sys.executable}); {os.cpu_count()} CPUs; "
        f"load {bench_utils.load_average()}; median of {args.runs} runs")
  for _, argv in lines:  # warm-up: page cache, .pyc files
    wall_seconds(argv)
  times = {label: [] for label, _ in lines}
  for _ in range(args.runs):
    for label, argv in lines:
      times[label].append(wall_seconds(argv))
  base = statistics.median(times[lines[0][0]])
  print(f"{'command':<48}{'median s':>10}{'min s':>8}{'max s':>8}{'x python':>10}")
  for label, _ in lines:
    median = statistics.median(times[label])
    print(f"{label:<48}{median:>10.3f}{min(times[label]):>8.3f}{max(times[label]):>8.3f}"
          f"{median / base:>10.1f}")
  print(f"load after: {bench_utils.load_average()}")
  shutil.rmtree(source.parent)


if __name__ == "__main__":
  main()
