"""Finds the held-out files of an FLCC root that a training root holds near-copies of.

    python scripts/held_out_copies.py --train-root /work/data/sitepackages --root dataset-dev \\
        [--min-share 0.3]

A model (and the n-gram) trained on `--train-root`'s train split has read a held-out file of
`--root` (its validation and test splits) if some train file holds most of its lines: vendored
or backported modules do that (the site-packages corpus's `future` carries backports of
dataset-dev's socketserver and urllib; docs/data.md, "dataset-dev"). For every held-out file with
enough long lines to judge (code_t5.data.near_copies) it finds the train file holding the largest
share of them, and prints those at or above --min-share with their completion points
(code_t5.data.line_completion), then how many points of each split are in such files. Reads both
roots; writes nothing. `code-t5 train` and `prepare --held-out-root` drop such train files.
"""

import argparse
import collections
import os
import pathlib
import sys
import warnings

# `import code_t5` imports TensorFlow; its start-up messages say nothing about this script.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
warnings.filterwarnings("ignore", message="pkg_resources is deprecated", category=UserWarning)
from code_t5.data import flcc  # pylint: disable=g-import-not-at-top,wrong-import-position
from code_t5.data import line_completion  # pylint: disable=g-import-not-at-top,wrong-import-position
from code_t5.data import near_copies  # pylint: disable=g-import-not-at-top,wrong-import-position

def copies(train_root, root, min_share: float):
  """(split, held-out repo/path, its points, its long lines, the train file holding the most of
  them, the share it holds) for each held-out file at or above `min_share`, and the points per
  split."""
  held_out = [f for f in flcc.read_files(root) if f.split != "train"]  # one read, not two
  index = near_copies.HeldOutLines((f"{f.repo}:{f.path}", f.text) for f in held_out)
  best = {}  # held-out file -> (share, train file)
  for train_file in flcc.read_files(train_root, only_split="train"):
    for key, share in index.shares(train_file.text).items():
      if share > best.get(key, (0.0, ""))[0]:
        best[key] = (share, f"{train_file.repo}:{train_file.path}")
  points = collections.Counter()
  found = []
  for f in held_out:
    count = sum(1 for _ in line_completion.points_of_files([f]))
    points[f.split] += count
    key = f"{f.repo}:{f.path}"
    share, where = best.get(key, (0.0, ""))
    if share >= min_share:
      found.append((f.split, key, count, index.sizes[key], where, share))
  return found, points


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--train-root", type=pathlib.Path, required=True)
  parser.add_argument("--root", type=pathlib.Path, required=True)
  parser.add_argument("--min-share", type=float, default=0.3,
                      help="report held-out files with at least this share of their long lines in "
                      "one train file (default %(default)s)")
  args = parser.parse_args(argv)
  if not 0 < args.min_share <= 1:
    print(f"--min-share {args.min_share:g} must be in (0, 1]", file=sys.stderr)
    return 2
  try:
    found, points = copies(args.train_root, args.root, args.min_share)
  except flcc.FlccError as e:
    print(e, file=sys.stderr)
    return 2
  for split, held_out, count, num_lines, where, share in found:
    print(f"{split}\t{held_out}\t{count} points\t{share:.0%} of its {num_lines} long lines in "
          f"{where}")
  for split in ("validation", "test"):
    copied = sum(row[2] for row in found if row[0] == split)
    print(f"{split}: {copied} of {points[split]} points in files with a copy in the train split")
  return 0


if __name__ == "__main__":
  sys.exit(main())
