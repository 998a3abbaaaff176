"""Input pipeline: FLCC files -> packed, tokenized training batches, as Mesh TF's trainer reads them.

    python benchmarks/input_pipeline_benchmark.py [--task flcc_py_prefix_lm_v1] [--batches 300]
        [--length 256] [--batch 8] [--use-cached CACHE_DIR] [--trainer-json results.jsonl]

Builds exactly what `mesh_transformer_main` builds for training -- t5's `mesh_train_dataset_fn`
(the task's get_dataset, shuffled, repeated, then Mesh TF's pack_or_pad with pack=True) followed by
`.batch(batch, drop_remainder=True)` as Mesh TF's train_model does -- and reads it as fast as it
goes on this machine. Prints: time to the first batch (reading, filling the shuffle buffer), then
examples/s (packed examples, counted by segment ids), non-padding tokens/s, token slots/s, and
the packing efficiency (share of non-padding tokens in the batches). With --trainer-json (what
benchmarks/train_benchmark.py --json writes) it also prints the ratio of the pipeline's rate to
the trainer's consumption rate: the pipeline must not be the bottleneck, and at ratio r it needs
about 1/r of the machine while training runs. Prints figures only.
"""

import argparse
import json
import pathlib
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import bench_utils  # pylint: disable=g-import-not-at-top,wrong-import-position


def build(task: str, length: int, batch: int, seed, use_cached: bool, pack: bool = True):
  from t5.models import mesh_transformer  # pylint: disable=g-import-not-at-top
  dataset = mesh_transformer.mesh_train_dataset_fn(
      task, sequence_length={"inputs": length, "targets": length}, dataset_split="train",
      shuffle=True, seed=seed, use_cached=use_cached, pack=pack)
  return dataset.repeat().batch(batch, drop_remainder=True)


def measure(dataset, batches: int):
  """(seconds to the first batch, seconds for `batches` more, counts) reading `dataset`."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  counts = {"examples": 0, "tokens": 0, "slots": 0, "batches": 0}
  iterator = iter(dataset)
  start = time.perf_counter()
  next(iterator)
  first = time.perf_counter() - start
  start = time.perf_counter()
  for _ in range(batches):
    ex = next(iterator)
    for key in ("inputs", "targets"):
      if key in ex:
        values = ex[key].numpy()
        counts["tokens"] += int(np.count_nonzero(values))
        counts["slots"] += values.size
    if "targets_segmentation" in ex:
      segments = ex["targets_segmentation"].numpy()
      counts["examples"] += int(sum(len(np.unique(row[row > 0])) for row in segments))
    else:  # padded, not packed: one example per row
      counts["examples"] += len(ex["targets"])
    counts["batches"] += 1
  return first, time.perf_counter() - start, counts


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--task", default="flcc_py_prefix_lm_v1")
  parser.add_argument("--length", type=int, default=256, help="inputs and targets length")
  parser.add_argument("--batch", type=int, default=8)
  parser.add_argument("--batches", type=int, default=300)
  parser.add_argument("--seed", type=int, default=None)
  parser.add_argument("--no-pack", dest="pack", action="store_false",
                      help="pad each example to its row (mesh_train_dataset_fn.pack = False)")
  parser.add_argument("--use-cached", type=pathlib.Path,
                      help="read the seqio cache in this dir (code-t5 cache --output_cache_dir)")
  parser.add_argument("--trainer-json", type=pathlib.Path,
                      help="train_benchmark.py --json output; its last record with the same "
                      "batch and length gives the trainer's consumption rate")
  parser.add_argument("--prepared-dir", type=pathlib.Path,
                      default=pathlib.Path(tempfile.gettempdir()) / "code_t5_bench" / "prepared")
  args = parser.parse_args(argv)

  import gin  # pylint: disable=g-import-not-at-top
  import seqio  # pylint: disable=g-import-not-at-top
  import code_t5  # pylint: disable=g-import-not-at-top,unused-import  (registers the tasks)
  gin.bind_parameter("code_t5.flcc_dataset.prepared_dir", str(args.prepared_dir))
  if args.use_cached:
    seqio.add_global_cache_dirs([str(args.use_cached)])

  print(f"== input pipeline: {args.task}, batch {args.batch} x {args.length}+{args.length}, "
        f"{'packed' if args.pack else 'padded'}, {'cached' if args.use_cached else 'uncached'}; "
        f"load before: "
        f"{bench_utils.load_average()}")
  start = time.perf_counter()
  dataset = build(args.task, args.length, args.batch, args.seed, bool(args.use_cached), args.pack)
  built = time.perf_counter() - start
  first, seconds, counts = measure(dataset, args.batches)
  rows = counts["batches"] * args.batch
  figures = {
      "build_s": built, "first_batch_s": first,
      "examples_per_s": counts["examples"] / seconds,
      "tokens_per_s": counts["tokens"] / seconds,
      "token_slots_per_s": counts["slots"] / seconds,
      "rows_per_s": rows / seconds,
      "packing_efficiency": counts["tokens"] / counts["slots"],
      "examples_per_row": counts["examples"] / rows,
  }
  print(f"build {built:.2f} s; first batch after {first:.2f} s; then {counts['batches']} batches "
        f"in {seconds:.2f} s")
  print(f"{figures['examples_per_s']:,.0f} examples/s, {figures['tokens_per_s']:,.0f} tokens/s "
        f"(non-padding), {figures['token_slots_per_s']:,.0f} token slots/s, "
        f"{figures['rows_per_s']:,.1f} packed rows/s")
  print(f"packing efficiency (non-padding share of inputs+targets slots): "
        f"{figures['packing_efficiency']:.1%}; {figures['examples_per_row']:.2f} examples per row")
  if args.trainer_json and args.trainer_json.exists():
    records = [json.loads(line) for line in args.trainer_json.read_text().splitlines()]
    records = [r for r in records if "token_slots_per_s" in r]
    if records:
      trainer = records[-1]
      ratio = figures["token_slots_per_s"] / trainer["token_slots_per_s"]
      print(f"trainer ({trainer['label']}, {trainer['size']}): "
            f"{trainer['token_slots_per_s']:,.0f} token slots/s -> pipeline / trainer = "
            f"{ratio:.1f}x (the pipeline needs ~{1 / ratio:.0%} of the machine at that rate)")
  print(f"load after: {bench_utils.load_average()}")
  return figures


if __name__ == "__main__":
  main()
