"""Bytes per token on held-out repositories: byte vocabulary vs the code SentencePiece vocabularies.

    python benchmarks/vocab_benchmark.py [--root dataset-dev] [--sizes 8000,16000,32000]
                                         [--t5-vocab PATH]

Held out = the validation and test repositories of the root (dataset-dev: 7 repositories, 33
files, 0.5 MB). Measured: the committed vocabulary (code_t5/vocabs/flcc_dev_spm.model) and one
SentencePiece model per --sizes entry, trained here with `code_t5.data.vocab.train_spm` (the
settings of `code-t5 vocab`) on the root's train split. Also checks decode(encode(text)) == text for
each held-out file. T5's default vocabulary (cc_all.32000) lives on GCS and is not read offline;
give a local copy with --t5-vocab to add it (it is lossy on code: NFKC, whitespace runs collapsed).
Prints figures only.
"""

import argparse
import pathlib
import tempfile
import time

import bench_utils  # pylint: disable=unused-import  (benchmarks/; puts the repository on sys.path
# and keeps the libraries' log off the output, so it comes before seqio and code_t5)
import seqio  # pylint: disable=g-import-not-at-top,wrong-import-position

from code_t5.data import flcc
from code_t5.data import spm_vocabulary
from code_t5.data import vocab

DEV_ROOT = pathlib.Path(__file__).resolve().parent.parent / "dataset-dev"
T5_DEFAULT_VOCAB = "gs://t5-data/vocabs/cc_all.32000/sentencepiece.model"


def held_out_texts(root):
  return [f.text for split in ("validation", "test")
          for f in flcc.read_files(root, only_split=split)]


def measure(name, vocabulary, texts):
  num_bytes = sum(len(t.encode("utf-8")) for t in texts)
  start = time.perf_counter()
  encoded = [vocabulary.encode(t) for t in texts]
  seconds = time.perf_counter() - start
  tokens = sum(len(ids) for ids in encoded)
  exact = sum(vocabulary.decode(ids) == t for ids, t in zip(encoded, texts))
  pieces = getattr(vocabulary, "_base_vocab_size", vocabulary.vocab_size)
  print(f"{name:<34} {pieces:>7} {tokens:>9} {num_bytes / tokens:>8.3f} "
        f"{exact:>5}/{len(texts):<4} {num_bytes / seconds / 1e6:>6.1f}", flush=True)


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--root", type=pathlib.Path, default=DEV_ROOT)
  parser.add_argument("--sizes", default="8000,16000,32000",
                      help="SentencePiece sizes to train on the root's train split")
  parser.add_argument("--t5-vocab", help=f"a local copy of T5's default {T5_DEFAULT_VOCAB}")
  args = parser.parse_args(argv)

  texts = held_out_texts(args.root)
  print(f"held out: {len(texts)} files, {sum(len(t.encode()) for t in texts):,} bytes "
        f"(validation + test repositories of {args.root})")
  print(f"{'vocabulary':<34} {'pieces':>7} {'tokens':>9} {'B/token':>8} {'exact':>10} "
        f"{'MB/s':>6}")
  measure("bytes (seqio.ByteVocabulary)", vocab.byte_vocabulary(), texts)
  measure("committed flcc_dev_spm.model", spm_vocabulary.dev_spm_vocabulary(), texts)
  with tempfile.TemporaryDirectory() as tmp:
    for size in (int(s) for s in args.sizes.split(",") if s):
      start = time.perf_counter()
      path = vocab.train_spm(args.root, size, pathlib.Path(tmp) / f"spm{size}.model")
      name = f"spm {size} (trained, {time.perf_counter() - start:.0f} s)"
      measure(name, spm_vocabulary.CodeSentencePieceVocabulary(path), texts)
  if args.t5_vocab:
    measure("T5 default (cc_all.32000)", seqio.SentencePieceVocabulary(args.t5_vocab), texts)
  else:
    print(f"T5 default vocabulary: not measured ({T5_DEFAULT_VOCAB} is on GCS, not available "
          "offline; pass --t5-vocab)")


if __name__ == "__main__":
  main()
