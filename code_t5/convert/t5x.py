"""Mesh TF checkpoints -> T5X's native checkpoint format, exactly, without t5x installed.

    code-t5 convert runs/shared-prefix_lm-tiny-cpu /data/t5x/shared [--step N] \
        [--dtype float32|bfloat16] [--params-only] [--force]
    python scripts/convert_checkpoint_to_t5x.py MESH_TF_DIR_OR_PREFIX OUT [same flags]

writes OUT/checkpoint_<step>/: the msgpack `checkpoint` (version 3: {"version", "optimizer":
{"target", "state": {"step", "param_states"}}}), one zarr v2 directory per TensorStore leaf
(gzip level 1, as t5x), and `model.gin`, the T5X model to load it with. Names are those of t5x's
checkpoint_importer (t5_importer); values are copied as they are (T5X's kernels keep Mesh TF's
2-D layout), params cast to --dtype, Adafactor slots kept float32: `_slot_v` -> `v`
(TensorStore), `_slot_vr`/`_slot_vc` -> `v_row`/`v_col` (inline), and the (1,) zero dummies
T5X's Adafactor state holds for the unused ones and for `m` (T5 trains without momentum).

The architectures it converts (encoder-decoder, decoder-only LM or prefix LM, shared
encoder-decoder) and where each variable goes in T5X's tree: code_t5/training/checkpoints.py
(`plan`). A prefix LM's relative-position buckets were bidirectional in Mesh TF; model.gin says
what that means in T5X. A shared encoder-decoder's tensors are copied into both of T5X's towers.

Tensors stream one at a time (read, written, dropped): peak memory is about the largest tensor on
top of TensorFlow itself. Everything goes to a hidden temporary directory beside the output and is
renamed into place at the end, so an interrupted or failed run leaves nothing that looks like a
checkpoint. Activations and "prefix LM or not" are not in the checkpoint: they come from the
operative_config.gin Mesh TF writes beside it (T5 defaults, flagged as assumed, without one).
"""

import argparse
import collections
import concurrent.futures
import dataclasses
import gzip
import json
import os
import pathlib
import shutil
import sys
import time
from typing import Optional, Tuple

import msgpack
import numpy as np

from code_t5 import errors
from code_t5 import processes
from code_t5.training import checkpoints
from code_t5.training import operative_config

T5X_VERSION = 3
ZARR_CHUNK_BYTES = 64 << 20  # t5x's chunk size limit
PARALLEL_MIN_BYTES = 1 << 20  # smaller tensors are one chunk: not worth a thread hand-off
DTYPES = ("float32", "bfloat16")
BYTE_EXTRA_IDS = 100  # code_t5.data.vocab.NUM_EXTRA_IDS (not imported: it would import TensorFlow)

# ---------------------------------------------------------------- writing T5X's format

def _ext(array: np.ndarray) -> msgpack.ExtType:
  """flax.serialization's ndarray extension type (code 1)."""
  payload = msgpack.packb((list(array.shape), array.dtype.name, array.tobytes()),
                          use_bin_type=True)
  return msgpack.ExtType(1, payload)


def _zarr_dtype(dtype_name):
  return "bfloat16" if dtype_name == "bfloat16" else np.dtype(dtype_name).str


def _chunk_rows(array: np.ndarray, workers: int) -> int:
  """Rows per zarr chunk: chunks <= 64 MiB (t5x's limit), and a tensor of 1 MiB or more cut in
  at least `workers` chunks, so that its chunks compress in parallel."""
  rows = array.shape[0]
  pieces = -(-array.nbytes // ZARR_CHUNK_BYTES)
  if array.nbytes >= PARALLEL_MIN_BYTES:
    pieces = max(pieces, workers)
  return max(1, -(-rows // pieces))


def _gzip_chunk(array, start, rows) -> bytes:
  chunk = array[start:start + rows]
  if chunk.shape[0] < rows:  # zarr stores edge chunks full size
    chunk = np.concatenate([chunk, np.zeros((rows - chunk.shape[0],) + chunk.shape[1:],
                                            chunk.dtype)])
  return gzip.compress(np.ascontiguousarray(chunk).tobytes(), compresslevel=1, mtime=0)


def write_zarr(directory: pathlib.Path, leaf: str, array: np.ndarray,
               pool: Optional[concurrent.futures.Executor] = None,
               workers: int = 1) -> Tuple[dict, int]:
  """Writes `array` as zarr v2 under directory/leaf (gzip 1, chunks along dim 0).

  Chunks compress on `pool` (of `workers` threads) when given: zlib releases the GIL, and
  compression is most of a conversion's time. Returns the TensorStore spec T5X stores for the
  leaf and the bytes written.
  """
  shape = list(array.shape)
  rows = _chunk_rows(array, workers)
  chunks = [rows] + shape[1:]
  path = directory / leaf
  path.mkdir()
  zarray = {"chunks": chunks, "compressor": {"id": "gzip", "level": 1},
            "dimension_separator": ".", "dtype": _zarr_dtype(array.dtype.name),
            "fill_value": None, "filters": None, "order": "C", "shape": shape, "zarr_format": 2}
  (path / ".zarray").write_text(json.dumps(zarray))
  starts = range(0, shape[0], rows)
  compress = lambda start: _gzip_chunk(array, start, rows)
  written, tail = 0, ".0" * (len(shape) - 1)
  for i, data in enumerate(pool.map(compress, starts) if pool else map(compress, starts)):
    (path / f"{i}{tail}").write_bytes(data)
    written += len(data)
  spec = {"driver": "zarr", "dtype": array.dtype.name,
          "kvstore": {"driver": "file", "path": f"{leaf}/"},
          "metadata": {"chunks": chunks, "compressor": {"id": "gzip", "level": 1},
                       "shape": shape}}
  return spec, written


def _set(tree, path: checkpoints.Path, value):
  for key in path[:-1]:
    tree = tree.setdefault(key, {})
  tree[path[-1]] = value


_DUMMY = np.zeros((1,), np.float32)


@dataclasses.dataclass
class Report:
  """What a conversion read and wrote."""
  prefix: str
  output: pathlib.Path
  step: int
  model: checkpoints.Model
  params_only: bool
  dtype: str
  tensors_read: int = 0
  bytes_read: int = 0
  leaves: collections.Counter = dataclasses.field(default_factory=collections.Counter)
  bytes_written: int = 0
  seconds: float = 0.0


def _read(reader, name, prefix, report):
  """One tensor from the checkpoint; a read error (e.g. a truncated .data shard) names it."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  try:
    value = reader.get_tensor(name)
  # pybind turns the reader's statuses into these: OUT_OF_RANGE (a short .data shard) is an
  # IndexError, INVALID_ARGUMENT a ValueError, the rest RuntimeError or an OpError.
  except (tf.errors.OpError, IndexError, ValueError, RuntimeError) as e:
    reason = (str(e).strip().splitlines() or [type(e).__name__])[0]
    raise checkpoints.ConvertError(f"cannot read variable {name} from {prefix} (truncated or corrupt "
                       f"checkpoint?): {reason}") from None
  report.tensors_read += 1
  report.bytes_read += value.nbytes
  return value


class _Writer:
  """Streams tensors from a checkpoint reader into one T5X checkpoint directory."""

  def __init__(self, reader, directory: pathlib.Path, report: Report, pool, workers):
    self.reader, self.directory, self.report = reader, directory, report
    self.pool, self.workers = pool, workers
    self.target, self.param_states = {}, {}

  def _read(self, name):
    return _read(self.reader, name, self.report.prefix, self.report)

  def _tensorstore(self, kind, path: checkpoints.Path, array):
    spec, written = write_zarr(self.directory, ".".join(path), array, self.pool, self.workers)
    self.report.bytes_written += written
    self.report.leaves[kind] += 1
    return spec

  def param(self, tensor: checkpoints.Tensor):
    value = self._read(tensor.name)
    if value.dtype.name != self.report.dtype:
      value = value.astype(_numpy_dtype(self.report.dtype))
    for path in tensor.paths:
      _set(self.target, path, self._tensorstore("params", ("target",) + path, value))

  def slots(self, tensor: checkpoints.Tensor):
    """Adafactor state of the tensor's T5X paths, zero (1,) dummies where T5X keeps unused."""
    if not tensor.slots:
      return
    values = {kind: self._read(name).astype(np.float32) for kind, name in tensor.slots.items()}
    for path in tensor.paths:
      if "v" in values:
        v = self._tensorstore("slots", ("state", "param_states") + path + ("v",), values["v"])
        state = {"m": _DUMMY, "v": v, "v_row": _DUMMY, "v_col": _DUMMY}
      else:
        state = {"m": _DUMMY, "v": _DUMMY, "v_row": values["vr"], "v_col": values["vc"]}
        self.report.leaves["slots"] += 2
      self.report.leaves["zero dummies"] += sum(value is _DUMMY for value in state.values())
      _set(self.param_states, path, state)

  def finish(self, step, params_only):
    """The msgpack file, written last: a directory without it is no checkpoint to T5X."""
    state = {"step": np.asarray(step, np.int32)}
    if not params_only:
      state["param_states"] = self.param_states
    tree = {"version": T5X_VERSION, "optimizer": {"target": self.target, "state": state}}
    data = msgpack.packb(_inline(tree), use_bin_type=True)
    (self.directory / "checkpoint").write_bytes(data)
    self.report.bytes_written += len(data)


def _inline(tree):
  """Inline ndarray leaves -> msgpack ExtType, recursively."""
  if isinstance(tree, dict):
    return {key: _inline(value) for key, value in tree.items()}
  return _ext(tree) if isinstance(tree, np.ndarray) else tree


def _numpy_dtype(name):
  if name == "bfloat16":
    import ml_dtypes  # pylint: disable=g-import-not-at-top
    return ml_dtypes.bfloat16
  return np.dtype(name)


# ---------------------------------------------------------------- the T5X gin file

# How T5X fine-tunes from a checkpoint without optimizer state: its `strict=False` only applies
# to TensorFlow checkpoints, and a native one then fails on the missing 'param_states'.
PARAMS_ONLY_RESTORE = (
    "utils.RestoreCheckpointConfig.assignment_map = ((r'state/param_states.*', None),)",
    "utils.RestoreCheckpointConfig.fallback_to_scratch = True")


def gin_text(model: checkpoints.Model, prefix: str, step: int,
             operative: operative_config.OperativeConfig, params_only: bool = False) -> str:
  """A T5X gin config for the converted model: t5x's stock config, our sizes."""
  vocabulary = operative.value("task_name.vocabulary")
  lines = [f"# T5X model for {prefix} (step {step}), converted by code_t5.convert.t5x.",
           f"# {model.describe()}", "from __gin__ import dynamic_registration",
           *(["import seqio"] if vocabulary == "byte" else []), ""]
  if params_only:
    lines += ["# No optimizer state (--params-only). To fine-tune from this checkpoint, restore",
              "# the params and start the optimizer afresh (strict=False does not do it for",
              "# T5X's native checkpoints: 'param_states' would be missing). In the train gin:",
              *(f"#   {binding}" for binding in PARAMS_ONLY_RESTORE), ""]
  if model.kind == "encoder-decoder":
    lines += ["from t5x.examples.t5 import network", "",
              "include 't5x/examples/t5/t5_1_1/base.gin'", ""]
    if model.shared:
      lines += ["# Mesh TF's encoder and decoder shared ONE set of variables",
                "# (make_bitransformer.encoder_name = 'decoder'). T5X's network has two towers:",
                "# the shared tensors were copied into both; they start equal and T5X trains",
                "# them as separate weights.", ""]
    config = "network.T5Config"
    sizes = [f"num_encoder_layers = {model.num_encoder_layers}",
             f"num_decoder_layers = {model.num_decoder_layers}"]
  else:
    lines += ["from t5x import models", "from t5x.examples.decoder_only import network", "",
              "include 't5x/examples/decoder_only/models/base.gin'", ""]
    if model.prefix_lm:
      lines += ["# Prefix LM (Mesh TF Unitransformer.input_full_attention = True):",
                "# bidirectional attention over the inputs part.",
                "models.DecoderOnlyModel.inputs_bidirectional_attention = True", "",
                "# CAUTION: Mesh TF computed its relative-position buckets BIDIRECTIONALLY over",
                "# the whole sequence (fully_autoregressive is False), while t5x's stock",
                "# decoder_only network uses unidirectional buckets (DecoderLayer:",
                "# relative_embedding(l, l, False)). Logits match Mesh TF only with a decoder",
                "# that passes bidirectional=True there.", ""]
    config = "network.TransformerConfig"
    sizes = [f"num_layers = {model.num_decoder_layers}"]
  if vocabulary == "byte":
    lines += ["# The vocabulary the Mesh TF model was trained with: code_t5's 'byte' (UTF-8 bytes",
              "# + sentinels, task_name.vocabulary in its operative_config.gin).",
              "VOCABULARY = @seqio.ByteVocabulary()",
              f"seqio.ByteVocabulary.extra_ids = {BYTE_EXTRA_IDS}", ""]
  else:
    trained_with = (f"code_t5's {vocabulary!r} (task_name.vocabulary in its operative_config.gin; "
                    "a code_t5.data.spm_vocabulary.CodeSentencePieceVocabulary)" if vocabulary
                    else "not recorded (no operative_config.gin)")
    lines += [f"# The vocabulary the Mesh TF model was trained with: {trained_with}.",
              "# Bind the same one here; its size must give the vocab_size below.",
              "VOCABULARY = %gin.REQUIRED", ""]
  lines += [f"{config}:", f"  vocab_size = {model.vocab_size}",
            "  # Mesh TF computed in float32 (get_variable_dtype.activation_dtype).",
            "  dtype = 'float32'", f"  emb_dim = {model.d_model}",
            f"  num_heads = {model.num_heads}"]
  lines += [f"  {s}" for s in sizes]
  lines += [f"  head_dim = {model.head_dim}", f"  mlp_dim = {model.d_ff}",
            f"  mlp_activations = {tuple(model.activations)!r}"
            + ("  # assumed: no operative_config.gin" if model.activations_assumed else ""),
            f"  logits_via_embedding = {model.logits_via_embedding}", ""]
  return "\n".join(lines)


# ---------------------------------------------------------------- conversion

def convert(source: pathlib.Path, out: pathlib.Path, step: Optional[int] = None,
            dtype: str = "float32", params_only: bool = False, force: bool = False) -> Report:
  """Converts a Mesh TF checkpoint into out/checkpoint_<step>/ (see the module docstring)."""
  start = time.time()
  if dtype not in DTYPES:
    raise checkpoints.ConvertError(f"--dtype {dtype!r} is not one of {', '.join(DTYPES)}")
  prefix = checkpoints.find_checkpoint(pathlib.Path(source), step)
  import tensorflow as tf  # pylint: disable=g-import-not-at-top  (slow; after argument checks)
  try:
    reader = tf.train.load_checkpoint(prefix)
  except (tf.errors.OpError, ValueError) as e:
    raise checkpoints.ConvertError(f"cannot read the checkpoint index of {prefix}: "
                       f"{(str(e).strip().splitlines() or [type(e).__name__])[0]}") from None
  operative = operative_config.OperativeConfig.of_model_dir(pathlib.Path(prefix).parent)
  the_plan = checkpoints.plan(reader.get_variable_to_shape_map(), prefix, params_only, operative)
  report = Report(prefix, out, 0, the_plan.model, params_only, dtype)
  report.step = int(_read(reader, "global_step", prefix, report))
  final = out / f"checkpoint_{report.step}"
  if final.exists() and not force:
    raise checkpoints.ConvertError(f"{final} exists: pass --force to replace it")
  created_out = not out.exists()
  with errors.writing(f"the T5X checkpoint {final}", out, "give another OUT"):
    out.mkdir(parents=True, exist_ok=True)
    processes.remove_stale_temporaries(out)  # left by a killed convert
    # Hidden and not "checkpoint_<n>": nothing that lists checkpoints takes it for one.
    temporary = out / processes.temporary_name(f".{final.name}")
    try:
      temporary.mkdir()
      workers = os.cpu_count() or 1
      with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        writer = _Writer(reader, temporary, report, pool, workers)
        for tensor in the_plan.tensors:
          writer.param(tensor)
          writer.slots(tensor)
      writer.finish(report.step, params_only)
      (temporary / "model.gin").write_text(gin_text(the_plan.model, prefix, report.step,
                                                    operative, params_only))
      _replace(temporary, final)
    except BaseException:
      shutil.rmtree(temporary, ignore_errors=True)
      if created_out and not any(out.iterdir()):
        out.rmdir()
      raise
  report.seconds = time.time() - start
  return report


def _replace(temporary: pathlib.Path, final: pathlib.Path):
  """Renames the finished directory into place; an old one (--force) is moved away first."""
  old = final.with_name(f".{final.name}.old-{os.getpid()}")
  if final.exists():
    final.rename(old)
  temporary.rename(final)
  shutil.rmtree(old, ignore_errors=True)


def summary(report: Report) -> str:
  """The table `convert` prints."""
  model = report.model
  rows = [("checkpoint", f"{report.prefix} (step {report.step})"),
          ("output", f"{report.output / f'checkpoint_{report.step}'} "
                     f"(+ model.gin; params {report.dtype})"),
          ("model", model.describe())]
  if model.shared:
    rows.append(("shared", "one Mesh TF variable set serves both towers: its SelfAttention, "
                           "DenseReluDense, norms and relative bias were copied into T5X's "
                           "encoder AND decoder"))
  if model.prefix_lm:
    rows.append(("prefix LM", "Mesh TF used bidirectional relative-position buckets; t5x's stock "
                              "decoder_only network uses unidirectional ones (see model.gin)"))
  if report.params_only:
    rows.append(("optimizer", "none (--params-only); to fine-tune, restore with "
                              + " and ".join(PARAMS_ONLY_RESTORE) + " (see model.gin)"))
  mb = report.bytes_read / 1e6
  rows += [("tensors read", f"{report.tensors_read} ({mb:.1f} MB)"),
           ("leaves written", ", ".join(f"{n} {k}" for k, n in sorted(report.leaves.items()))
            + f" ({report.bytes_written / 1e6:.1f} MB on disk)"),
           ("time", f"{report.seconds:.1f} s ({mb / max(report.seconds, 1e-9):.1f} MB/s read)")]
  width = max(len(k) for k, _ in rows)
  return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


# ---------------------------------------------------------------- command line

def add_arguments(parser: argparse.ArgumentParser):
  parser.add_argument("source", type=pathlib.Path,
                      help="Mesh TF model dir (latest checkpoint, or --step) or checkpoint prefix")
  parser.add_argument("out", type=pathlib.Path, help="T5X model dir; gets checkpoint_<step>/")
  parser.add_argument("--step", type=int, help="checkpoint step in a model dir (default: latest)")
  parser.add_argument("--dtype", default="float32", choices=DTYPES, help="of the params")
  parser.add_argument("--params-only", action="store_true", help="no optimizer state")
  parser.add_argument("--force", action="store_true", help="replace an existing checkpoint_<step>")


def run(args) -> int:
  report = convert(args.source, args.out, step=args.step, dtype=args.dtype,
                   params_only=args.params_only, force=args.force)
  print(summary(report))
  return 0


def register_cli(subparsers):
  """`code-t5 convert`: see the module docstring."""
  parser = subparsers.add_parser("convert", help="convert a Mesh TF checkpoint to T5X's native "
                                 "format (+ a T5X gin file), without t5x")
  add_arguments(parser)
  parser.set_defaults(func=run)


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(prog="convert_checkpoint_to_t5x", description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
  add_arguments(parser)
  args = parser.parse_args(argv)
  try:
    return run(args)
  except errors.UserError as e:
    print(f"convert_checkpoint_to_t5x: {e}", file=sys.stderr)
    return 2
