"""What moving between the files of a large project costs a completion: the engine's default best
line at points in many files of one repository, each request in another file than the last.

    python benchmarks/repository_benchmark.py [--repo DIR] [--folder SUB] [--requests 60] [--seed 0]

Indexes DIR's Python files as `code-t5 complete --repo DIR` and `serve --repo DIR` do
(code_t5.engine.repository.Repository.of_folder; default: every file of dataset-dev, the standard
library's, as one project), then completes with the shipped model at --requests points drawn from
its files (half at a line's indentation, half inside a line; the cursor's file is left out of the
repository, its own text read instead; --folder: only files directly in that folder of the
project, as when one edits one package's modules), in turn:
- as it runs: each request pays for whatever the repository's indexes need for its file, as an
  editor's first request in a file does (`serve`, or `lsp` before it prepared that file);
- prepared: the same requests, each after Repository.prepare(its path), untimed, as `lsp` builds
  the indexes when a file is opened or saved;
and prints p50 / p95 of both and their ratio (what a move to another file costs; 1.0x: nothing),
the repository's size, and how long one prepare after a change of one file (a save) takes.

Prints figures and ratios; asserts nothing. Run it on an idle machine (load printed).
"""

import argparse
import pathlib
import random
import statistics
import time
from typing import Dict, Optional

import bench_utils  # pylint: disable=g-import-not-at-top  (benchmarks/; puts the repository on
# sys.path and keeps the libraries' log off the output, so it comes before code_t5)

from code_t5 import test_utils  # pylint: disable=g-import-not-at-top,wrong-import-position
from code_t5.data import flcc  # pylint: disable=g-import-not-at-top,wrong-import-position
from code_t5.data import sources  # pylint: disable=g-import-not-at-top,wrong-import-position
from code_t5.engine import complete  # pylint: disable=g-import-not-at-top,wrong-import-position
from code_t5.engine import repository  # pylint: disable=g-import-not-at-top,wrong-import-position


def project(folder: Optional[pathlib.Path], tokenizer):
  """(the engine's Repository, its texts by path): `folder`'s Python files, or without one every
  file of dataset-dev."""
  if folder is not None:
    repo = repository.Repository.of_folder(folder, tokenizer, seconds=None)
    return repo, {path: (folder / path).read_text(encoding="utf-8")
                  for path in repo.pieces.paths}
  repo = repository.Repository(tokenizer)
  texts = {f.path: f.text for f in flcc.read_files(sources.DEV_ROOT)}
  for path, text in texts.items():
    repo.add(path, text)
  return repo, texts


def points_in(texts: Dict[str, str], count: int, seed: int, folder: Optional[str] = None):
  """(text, cursor, path) at `count` cursors in the files (those directly in `folder`, if given),
  no two in a row in the same file: even ones at a code line's indentation, odd ones inside it."""
  rng = random.Random(seed)
  paths = sorted(path for path in texts
                 if folder is None or path.rpartition("/")[0] == folder.strip("/"))
  points, last = [], None
  for _ in range(1000 * count):  # files without a code line of 8 characters give no point
    if len(points) == count:
      break
    path = rng.choice(paths)
    if path == last:
      continue
    text = texts[path]
    lines = text.split("\n")
    k = rng.randrange(len(lines))
    line = lines[k]
    if len(line.strip()) < 8 or line.lstrip().startswith("#"):
      continue
    indent = len(line) - len(line.lstrip())
    column = indent if len(points) % 2 == 0 else rng.randrange(indent + 1, len(line))
    points.append((text, sum(len(l) + 1 for l in lines[:k]) + column, path))
    last = path
  if len(points) < count:
    raise SystemExit(f"only {len(points)} points found in {len(paths)} files: give another "
                     "--folder or fewer --requests")
  return points


def run(completer, repo, points, prepared: bool):
  """ms per request, in the points' order."""
  times = []
  for text, cursor, path in points:
    if prepared:
      repo.prepare(path)
    times.append(completer.complete_at(text, cursor, repository=repo, path=path).ms)
  return times


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--repo", type=pathlib.Path,
                      help="the project folder (default: every file of dataset-dev, ~330 of the "
                      "standard library's, as one project)")
  parser.add_argument("--folder", help="only files directly in this folder of the project "
                      "(its path inside it, e.g. core)")
  parser.add_argument("--requests", type=int, default=60)
  parser.add_argument("--seed", type=int, default=0)
  args = parser.parse_args(argv)
  if args.repo is not None and not args.repo.is_dir():
    parser.error(f"--repo {args.repo} is not a directory")
  print(f"{bench_utils.cpu_kind()}; load average before: {bench_utils.load_average()}")
  completer = complete.Completer(test_utils.PRETRAINED, complete.EngineOptions(top=1),
                                 echo=lambda line: None)
  start = time.perf_counter()
  repo, texts = project(args.repo, completer.tokenizer)
  read_s = time.perf_counter() - start
  if repo.files < 2:
    parser.error(f"--repo {args.repo} holds {repo.files} Python file(s): give a project of "
                 "several files")
  if args.folder is not None:
    inside = [p for p in texts if p.rpartition("/")[0] == args.folder.strip("/")]
    if len(inside) < 2:
      parser.error(f"--folder {args.folder} holds {len(inside)} Python file(s) of the project: "
                   "give a folder of several")
  points = points_in(texts, args.requests, args.seed, args.folder)
  pieces = repo.pieces.total_pieces
  print(f"{args.repo or 'dataset-dev'}: {repo.files:,} Python files, {pieces:,} pieces, read and "
        f"encoded in {read_s:.1f} s; {len(points)} requests, each in another file than the last")
  for text, cursor, path in points[:2]:  # warm-up (BLAS threads, first allocations)
    completer.complete_at(text, cursor, repository=repo, path=path)
  # A change of one file (as a save is), then one prepare: what `lsp` does after a save; then
  # the file as it was, prepared untimed, for the requests.
  _, _, changed = points[0]
  repo.add(changed, texts[changed] + "\n# saved\n")
  start = time.perf_counter()
  repo.prepare(changed)
  prepare_ms = (time.perf_counter() - start) * 1000
  repo.add(changed, texts[changed])
  repo.prepare(changed)
  as_it_runs = run(completer, repo, points, prepared=False)
  prepared = run(completer, repo, points, prepared=True)
  print(f"load average after: {bench_utils.load_average()}")
  a, b = bench_utils.p50_p95(as_it_runs), bench_utils.p50_p95(prepared)
  print("\nthe default best line, ms (p50 / p95):")
  print(f"{'as it runs':>14}{'prepared':>14}{'ratio p50':>11}{'ratio p95':>11}"
        f"{'mean ratio':>12}")
  print(f"{a[0]:>7.0f} / {a[1]:<4.0f}{b[0]:>7.0f} / {b[1]:<4.0f}{a[0] / b[0]:>10.2f}x"
        f"{a[1] / b[1]:>10.2f}x"
        f"{statistics.mean(as_it_runs) / statistics.mean(prepared):>11.2f}x")
  print(f"one prepare after a change of one file (untimed above): {prepare_ms:.1f} ms")


if __name__ == "__main__":
  main()
