"""What reading a project costs before its first completion: `code-t5 complete --repo DIR` pays
it at every call, `serve --repo DIR` and the LSP server's workspace once at start.

    python benchmarks/read_project_benchmark.py [--repo DIR] [--rounds 3] [--commands 2]

Reads DIR's Python files as the engine does (code_t5.engine.repository.Repository.of_folder,
every index built; default this project's own checkout) three ways, alternated, --rounds times,
each with a fresh tokenizer (nothing remembered from the last round):
- one by one: each file's pieces encoded on its own, as before 2026-12-06;
- together: the files' pieces encoded in batches on all cores (tokenizers.Pieces.encode_many);
- saved: the pieces read back from the file the first run saved (code_t5.engine.saved_pieces);
and prints the median seconds of each, the ratios against "one by one", and then --commands
whole `code-t5 complete FILE --repo DIR` commands without and with the saved pieces (a fresh
cache folder, then the one the first command wrote), alternated.

Prints figures and ratios; asserts nothing. Run it on an idle machine (load printed).
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import bench_utils  # pylint: disable=g-import-not-at-top  (benchmarks/; puts the repository on
# sys.path and keeps the libraries' log off the output, so it comes before code_t5)

from code_t5 import test_utils  # pylint: disable=g-import-not-at-top,wrong-import-position
from code_t5.data import sources  # pylint: disable=g-import-not-at-top,wrong-import-position
from code_t5.engine import repository  # pylint: disable=g-import-not-at-top,wrong-import-position
from code_t5.engine import runtime  # pylint: disable=g-import-not-at-top,wrong-import-position
from code_t5.engine import tokenizers  # pylint: disable=g-import-not-at-top,wrong-import-position


class _OneByOne(tokenizers.Pieces):
  """The shipped vocabulary, each text encoded on its own (the engine before batches)."""

  def encode_many(self, texts):
    return [self.encode(text) for text in texts]


def _tokenizer(kind):
  """A new tokenizer of the shipped model's vocabulary (so a new encoding memo), as `kind`."""
  folder = runtime.runtime_dir(test_utils.PRETRAINED, test_utils.PRETRAINED_STEP)
  spec = json.loads((folder / runtime.MODEL_FILE).read_text())["vocabulary"]
  return kind((folder / spec["file"]).read_bytes(), spec["extra_ids"])


def _read(folder, kind, saved_dir):
  start = time.perf_counter()
  repo = repository.Repository.of_folder(folder, _tokenizer(kind), seconds=None,
                                         saved_dir=saved_dir)
  repo.prepare("")  # the first completion's indexes: every file's pieces, windows, lines
  return time.perf_counter() - start, repo


def _command(folder, target, cache):
  start = time.perf_counter()
  subprocess.run([sys.executable, "-m", "code_t5.cli", "complete", str(target), "--repo",
                  str(folder), "--min-confidence", "0"], check=True, capture_output=True,
                 env=dict(os.environ, CODE_T5_CACHE=str(cache)))
  return time.perf_counter() - start


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--repo", type=pathlib.Path, default=sources.REPO_ROOT,
                      help="the project folder (default: this project's checkout)")
  parser.add_argument("--rounds", type=int, default=3)
  parser.add_argument("--commands", type=int, default=2,
                      help="whole `code-t5 complete --repo` commands each way (0: none)")
  args = parser.parse_args(argv)
  if not args.repo.is_dir():
    parser.error(f"--repo {args.repo} is not a directory")
  print(f"{bench_utils.cpu_kind()}; load average before: {bench_utils.load_average()}")
  with tempfile.TemporaryDirectory() as work:
    saved_dir = pathlib.Path(work) / "pieces"
    _, repo = _read(args.repo, tokenizers.Pieces, saved_dir)  # writes the saved pieces
    print(f"{args.repo}: {repo.files:,} Python files, {repo.pieces.total_pieces:,} pieces; "
          f"{tokenizers.ENCODE_THREADS} encoding threads")
    ways = {"one by one": (_OneByOne, None), "together": (tokenizers.Pieces, None),
            "saved": (tokenizers.Pieces, saved_dir)}
    times = {name: [] for name in ways}
    for _ in range(args.rounds):
      for name, (kind, directory) in ways.items():
        times[name].append(_read(args.repo, kind, directory)[0])
    base = statistics.median(times["one by one"])
    print("\nreading the project (every index built), s, median of "
          f"{args.rounds}:")
    for name, values in times.items():
      median = statistics.median(values)
      print(f"{name:>12}: {median:6.2f}  ({base / median:.2f}x)   "
            f"[{', '.join(f'{v:.2f}' for v in values)}]")
    if args.commands:
      target = max(repository.iter_python_files(args.repo, repository.MAX_FILE_BYTES),
                   key=lambda p: p.stat().st_size)
      warm = pathlib.Path(work) / "warm"
      _command(args.repo, target, warm)  # writes warm/pieces
      fresh, saved = [], []
      for k in range(args.commands):
        fresh.append(_command(args.repo, target, pathlib.Path(work) / f"fresh{k}"))
        saved.append(_command(args.repo, target, warm))
      print(f"\n`code-t5 complete {target.name} --repo`, s (whole command), median of "
            f"{args.commands}:")
      print(f"  nothing saved: {statistics.median(fresh):.2f}   saved pieces: "
            f"{statistics.median(saved):.2f}  ({statistics.median(fresh) / statistics.median(saved):.2f}x)")
  print(f"load average after: {bench_utils.load_average()}")


if __name__ == "__main__":
  main()
