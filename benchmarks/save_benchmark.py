"""The first completion after a save, in a large repository: with the LSP server's preparation of
the repository's indexes on its model thread while the user pauses, and without it.

    python benchmarks/save_benchmark.py [--repo FOLDER] [--saves 8] [--pause 0.5]

A save changes the repository (code_t5.engine.repository): the copy cache's pieces without the
active file, the similar code's merged windows and the new lines' order are built again, by the
next completion unless the server has prepared them (`lsp.Engine.saved` -> `Repository.prepare`).
Here an `lsp.Engine` (the server's, without the protocol) indexes --repo (default: numpy in this
venv, ~470 files), opens one of its files, completes once, then --saves times saves another file,
waits --pause seconds (a user who saved and types on) and times the next completion, with and
without the preparation, alternated in one run. Prints the medians and their ratio.
"""

import argparse
import pathlib
import statistics
import time

import bench_utils  # pylint: disable=g-import-not-at-top  (benchmarks/; puts the repository on
# sys.path and keeps the libraries' log off the output, so it comes before code_t5)

from code_t5.engine import complete  # pylint: disable=g-import-not-at-top,wrong-import-position
from code_t5.engine import lsp  # pylint: disable=g-import-not-at-top,wrong-import-position
from code_t5.engine import repository  # pylint: disable=g-import-not-at-top,wrong-import-position


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  numpy_dir = pathlib.Path(__import__("numpy").__file__).parent
  parser.add_argument("--repo", type=pathlib.Path, default=numpy_dir)
  parser.add_argument("--saves", type=int, default=8)
  parser.add_argument("--pause", type=float, default=0.5)
  args = parser.parse_args(argv)
  print(f"{bench_utils.cpu_kind()}; load average before: {bench_utils.load_average()}")
  completer = complete.Completer(complete.SHIPPED_MODEL, echo=lambda line: None)
  engine = lsp.Engine(completer, log=lambda message, error=False: None)
  engine.root = args.repo.resolve()
  start = time.perf_counter()
  engine.repository = repository.Repository.of_folder(engine.root, completer.tokenizer,
                                                      seconds=None)
  files = sorted(p for p in engine.root.rglob("*.py") if "__pycache__" not in p.parts)
  print(f"indexed {engine.repository.files} files of {engine.root} in "
        f"{time.perf_counter() - start:.1f} s")
  active, saved = files[len(files) // 2], files[len(files) // 3]
  text = active.read_text(encoding="utf-8")
  cursor = text.find("\n", len(text) // 2) + 1 + 4
  uri = active.as_uri()
  engine.open(uri, text)
  engine._complete(uri, text, cursor)  # pylint: disable=protected-access  (warm-up)
  prepare = engine._prepare  # pylint: disable=protected-access
  skip = lambda *unused: None
  times = {"prepared": [], "not prepared": []}
  for k in range(2 * args.saves):
    label = "prepared" if k % 2 == 0 else "not prepared"
    engine._prepare = prepare if label == "prepared" else skip  # pylint: disable=protected-access
    engine.saved(saved.as_uri(), saved.read_text(encoding="utf-8") + f"\n# save {k}\n")
    time.sleep(args.pause)
    start = time.perf_counter()
    engine._complete(uri, text, cursor)  # pylint: disable=protected-access
    times[label].append(1000 * (time.perf_counter() - start))
  engine.close()
  ready, cold = statistics.median(times["prepared"]), statistics.median(times["not prepared"])
  print(f"the completion {args.pause} s after a save, median of {args.saves}: "
        f"{ready:.0f} ms prepared, {cold:.0f} ms not ({ready / cold:.2f}x)")
  print(f"load average after: {bench_utils.load_average()}")


if __name__ == "__main__":
  main()
