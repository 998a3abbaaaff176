"""Writes one split of an FLCC root as the texts file scripts/train_torch.py reads.

    python scripts/export_texts.py --root /data/sitepackages --out texts.xz [--max-mb 252]

The kept files of the split (code_t5.data.flcc.read_files: the filters and splits every task
reads), each as a 4-byte little-endian length and its UTF-8 bytes, xz-compressed (about 7.6x on
Python). --max-mb keeps a random subset of the files (seeded) of at most that many megabytes of
text, for a machine that can be sent only so much (the device machine here took 33 MB of xz).
--paths also writes each file's repository and path (JSON), which train_torch.py --similar-rate
needs to find code like the cursor's in the file's repository. --held-out-root drops the train
files that copy another root's held-out files, as `code-t5 train --held-out-root` does.
"""

import argparse
import json
import lzma
import os
import pathlib
import struct
import sys

import warnings

import numpy as np

# `import code_t5` imports TensorFlow; its start-up messages say nothing about this script.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
warnings.filterwarnings("ignore", message="pkg_resources is deprecated", category=UserWarning)
from code_t5 import errors  # pylint: disable=g-import-not-at-top,wrong-import-position
from code_t5 import processes  # pylint: disable=g-import-not-at-top,wrong-import-position
from code_t5.data import flcc  # pylint: disable=g-import-not-at-top,wrong-import-position
from code_t5.training import launcher  # pylint: disable=g-import-not-at-top,wrong-import-position


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--root", type=pathlib.Path, required=True, help="an FLCC root")
  parser.add_argument("--split", default="train", choices=flcc.SPLITS)
  parser.add_argument("--max-mb", type=float, default=None)
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--out", type=pathlib.Path, required=True)
  parser.add_argument("--paths", type=pathlib.Path, help="also write the files' repositories "
                      "and paths here (JSON, in --out's order: train_torch.py --paths)")
  parser.add_argument("--force", action="store_true", help="replace --out (and --paths) if it exists")
  parser.add_argument("--held-out-root", type=pathlib.Path, action="append", default=[],
                      help="drop the files that hold near-copies of this root's validation or "
                      "test files (code_t5.data.near_copies); repeatable")
  args = parser.parse_args(argv)
  for flag, path in (("--out", args.out), ("--paths", args.paths)):
    if path is not None and path.exists() and not args.force:
      print(f"{flag} {path} exists: pass --force to replace it", file=sys.stderr)
      return 2
  try:
    launcher.check_held_out_roots(args.held_out_root)  # the one-line error `code-t5 train` gives
  except launcher.LaunchError as e:
    print(e, file=sys.stderr)
    return 2
  try:
    filters = flcc.Filters(held_out_roots=tuple(str(r) for r in args.held_out_root))
    files = list(flcc.read_files(args.root, filters, only_split=args.split))
    texts = [f.text.encode("utf-8") for f in files]
  except flcc.FlccError as e:
    print(f"--root {args.root}: {e}", file=sys.stderr)
    return 2
  if not texts:
    print(f"--root {args.root} has no {args.split} files", file=sys.stderr)
    return 2
  keep = range(len(texts))
  if args.max_mb:
    limit, total, keep = args.max_mb * 1e6, 0, []
    for i in np.random.default_rng(args.seed).permutation(len(texts)):
      if total + len(texts[i]) <= limit:
        keep.append(int(i))
        total += len(texts[i])
    keep.sort()

  def write_texts(file):
    with lzma.open(file, "wb", preset=9 | lzma.PRESET_EXTREME) as f:
      for i in keep:
        f.write(struct.pack("<I", len(texts[i])))
        f.write(texts[i])
    if args.paths is not None:  # once the texts are written, before they are renamed
      listed = [[files[i].repo, files[i].path] for i in keep]
      processes.write_file_beside(args.paths, lambda f: f.write(json.dumps(listed)))

  try:
    with errors.writing(f"the texts file {args.out}", args.out.parent, "give another --out"):
      processes.write_file_beside(args.out, write_texts, binary=True)
  except errors.UserError as e:
    print(e, file=sys.stderr)
    return 2
  print(f"{args.out}: {len(keep):,} of {len(texts):,} files, "
        f"{sum(len(texts[i]) for i in keep) / 1e6:.0f} MB of text, "
        f"{args.out.stat().st_size / 1e6:.1f} MB")
  return 0


if __name__ == "__main__":
  sys.exit(main())
