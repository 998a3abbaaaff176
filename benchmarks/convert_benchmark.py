"""Mesh TF -> T5X conversion (code_t5/convert/t5x.py): time, MB/s and peak memory, tiny and small
models.

    python benchmarks/convert_benchmark.py [--workdir DIR] [--models span_corruption,...]
                                           [--sizes tiny,small]

Checkpoints: each model x size is trained for 1 step through mesh_transformer_main (batch 2 x 64
tokens: only the variables matter) into --workdir, reused when already there. Each conversion
runs in a fresh interpreter that reads /proc/self/status: VmHWM after importing TensorFlow and
code_t5.convert.t5x ("import"), then after converting ("peak"); peak - import is what converting
itself cost, to compare with the largest single tensor (streaming keeps it near that, not the
model).
"convert s" and MB/s (Mesh TF bytes read per second) cover the conversion after the imports;
"process s" is the whole interpreter, start-up and TensorFlow import included.
Modes: float32 params + Adafactor state (the default), and bfloat16 --params-only.
Prints figures only.
"""

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

import bench_utils

from code_t5.training import launcher

_SMALL_BATCH = ["utils.run.batch_size = ('sequences_per_batch', 2)",
                "utils.run.sequence_length = {'inputs': 64, 'targets': 64}"]
MODES = (("float32", False), ("bfloat16", True))


def _vm_kb(field):
  for line in open("/proc/self/status"):
    if line.startswith(field + ":"):
      return int(line.split()[1])
  raise KeyError(field)


def measure(source, out, dtype, params_only):
  """In a fresh interpreter (bench_utils.in_subprocess): one conversion's figures."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from code_t5.convert import t5x  # pylint: disable=g-import-not-at-top
  import_hwm = _vm_kb("VmHWM")
  report = t5x.convert(pathlib.Path(source), pathlib.Path(out), dtype=dtype,
                       params_only=params_only)
  peak_hwm = _vm_kb("VmHWM")
  reader = tf.train.load_checkpoint(report.prefix)
  dtypes = reader.get_variable_to_dtype_map()
  largest = max(int(tf.TensorShape(shape).num_elements()) * dtypes[name].size
                for name, shape in reader.get_variable_to_shape_map().items())
  return {"convert_s": report.seconds, "tensors": report.tensors_read,
          "read_mb": report.bytes_read / 1e6, "written_mb": report.bytes_written / 1e6,
          "import_hwm_mb": import_hwm / 1e3, "peak_hwm_mb": peak_hwm / 1e3,
          "largest_tensor_mb": largest / 1e6}


def checkpoint(workdir: pathlib.Path, model: str, size: str) -> pathlib.Path:
  """A 1-step checkpoint of model x size in workdir (trained once)."""
  model_dir = workdir / f"{model}-{size}"
  if launcher.latest_step(model_dir) is None:
    experiment = launcher.Experiment(
        model=model, size=size, run="cpu", model_dir=model_dir,
        gin_params=_SMALL_BATCH + [f"code_t5.flcc_dataset.prepared_dir = '{workdir / 'prepared'}'"])
    model_dir.mkdir(parents=True, exist_ok=True)
    print(f"training {model} {size} for 1 step -> {model_dir}", flush=True)
    with open(model_dir / "train.log", "w") as log:
      subprocess.run(experiment.train_command(1), stdout=log, stderr=subprocess.STDOUT,
                     check=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
  return model_dir


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--workdir", type=pathlib.Path,
                      help="where checkpoints are trained and kept (default: a temporary dir)")
  parser.add_argument("--models", default="span_corruption,shared-prefix_lm")
  parser.add_argument("--sizes", default="tiny,small")
  args = parser.parse_args(argv)
  workdir = args.workdir or pathlib.Path(tempfile.mkdtemp(prefix="convert_benchmark_"))
  print(f"load before: {bench_utils.load_average()}  workdir: {workdir}")
  header = (f"{'checkpoint':<26} {'mode':<19} {'tensors':>7} {'read MB':>8} {'written MB':>10} "
            f"{'convert s':>9} {'MB/s':>6} {'process s':>9} {'RSS import MB':>13} "
            f"{'RSS peak MB':>11} {'peak-import':>11} {'largest tensor MB':>17}")
  rows = []
  for size in args.sizes.split(","):
    for model in args.models.split(","):
      source = checkpoint(workdir, model, size)
      for dtype, params_only in MODES:
        out = workdir / f"t5x-{model}-{size}-{dtype}-{int(time.time() * 1e3)}"
        start = time.perf_counter()
        r = bench_utils.in_subprocess("measure", str(source), str(out), dtype, params_only,
                                      module="convert_benchmark")
        process_s = time.perf_counter() - start
        shutil.rmtree(out, ignore_errors=True)
        if r is None:
          return 1
        mode = f"{dtype}{' params-only' if params_only else ' + state'}"
        rows.append(
            f"{model + '-' + size:<26} {mode:<19} {r['tensors']:>7} {r['read_mb']:>8.1f} "
            f"{r['written_mb']:>10.1f} {r['convert_s']:>9.2f} "
            f"{r['read_mb'] / r['convert_s']:>6.1f} {process_s:>9.1f} "
            f"{r['import_hwm_mb']:>13.0f} {r['peak_hwm_mb']:>11.0f} "
            f"{r['peak_hwm_mb'] - r['import_hwm_mb']:>11.0f} {r['largest_tensor_mb']:>17.1f}")
        print(rows[-1], flush=True)
  print("\n" + header + "\n" + "\n".join(rows))
  print(f"load after: {bench_utils.load_average()}")
  return 0


if __name__ == "__main__":
  sys.exit(main())
