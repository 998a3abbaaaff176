"""Mesh TF checkpoints -> T5X's native checkpoint format, exactly, without t5x installed.

    code-t5 convert runs/shared-prefix_lm-tiny-cpu /data/t5x/shared [--step N] \
        [--dtype float32|bfloat16] [--params-only] [--force]

writes OUT/checkpoint_<step>/: the msgpack `checkpoint` (version 3: {"version", "optimizer":
{"target", "state": {"step", "param_states"}}}), one zarr v2 directory per TensorStore leaf
(gzip level 1, as t5x), and the files to train it on in T5X (docs/t5x.md):

  model.gin     the T5X model: sizes, the loss as Mesh TF took it (Z_LOSS, LOSS_NORMALIZING_FACTOR;
                a causal LM needs a targets-only task), the vocabulary;
  vocab.model   the SentencePiece model it was trained with (model.gin binds seqio's
                SentencePieceVocabulary to it, extra_ids=100: the project's ids);
  task.gin      the task it was trained on, in T5X: MIXTURE_OR_TASK_NAME, TASK_FEATURE_LENGTHS,
                the run settings the loss depends on (dropout), for cursor_lm, prefix_lm and
                span_corruption;
  t5x_task.py   the module task.gin imports (code_t5/convert/t5x_task.py: seqio + TensorFlow).

Names are those of t5x's
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
import errno
import gzip
import json
import os
import pathlib
import re
import shlex
import shutil
import stat
import time
from typing import Optional, Tuple

import msgpack
import numpy as np

from code_t5 import errors
from code_t5 import processes
from code_t5 import stranger_paths
from code_t5.training import checkpoints
from code_t5.training import operative_config

T5X_VERSION = 3
ZARR_CHUNK_BYTES = 64 << 20  # t5x's chunk size limit
PARALLEL_MIN_BYTES = 1 << 20  # smaller tensors are one chunk: not worth a thread hand-off
DTYPES = ("float32", "bfloat16")
_NUMBER = (int, float)  # an operative config's rates and losses: either literal
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
  vocabulary: str = ""
  task: str = ""
  task_gin: bool = False
  task_root: str = ""  # the FLCC root task.gin reads (the one the model was trained on)
  objective: str = ""


def _read(reader, name, prefix, report):
  """One tensor from the checkpoint; a read error (e.g. a truncated .data shard) names it."""
  value = checkpoints.read_tensor(reader, name, prefix)
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


VOCABULARY_FILE = "vocab.model"  # the SentencePiece model, copied next to the checkpoint
TASK_MODULE = pathlib.Path(__file__).resolve().with_name("t5x_task.py")
TASK_GIN = "task.gin"
# Objectives code_t5/convert/t5x_task.py gives a T5X task for (its OBJECTIVES).
TASK_OBJECTIVES = ("cursor_lm", "prefix_lm", "span_corruption")
# What each version of cursor_lm changed (code_t5/data/tasks.py): (cursors in leading indentation,
# sampled pieces, the share of contexts that start with the code below the cursor's line). v4's
# 0.5 is tasks.py's, not a gin setting of the model dir.
_CURSOR_LM_VERSIONS = {"v1": (True, False, 0.0), "v2": (False, False, 0.0),
                       "v3": (False, True, 0.0), "v4": (False, True, 0.5)}


@dataclasses.dataclass
class Training:
  """What the model dir's operative_config.gin says the T5X files must reproduce."""
  vocabulary: Optional[str]  # code_t5's name ('byte', 'spm_dev'), None when not recorded
  vocabulary_source: Optional[pathlib.Path]  # its SentencePiece model (None: bytes or unknown)
  objective: Optional[str]
  version: str
  operative: operative_config.OperativeConfig

  @classmethod
  def of(cls, operative: operative_config.OperativeConfig) -> "Training":
    from code_t5.data import task_names  # pylint: disable=g-import-not-at-top  (no TensorFlow)
    from code_t5.data import vocab  # pylint: disable=g-import-not-at-top
    scope = "MIXTURE_NAME"
    name = operative.value("task_name.vocabulary", scope=scope, kind=str)
    source = vocab.VOCABULARIES.get(name) if name else None
    objective = (operative.value("task_name.objective", scope=scope, kind=str)
                 if operative.exists else None)
    return cls(name, source, objective,
               operative.value("task_name.version", task_names.VERSION, scope=scope, kind=str),
               operative)


def _loss_lines(model: checkpoints.Model, operative: operative_config.OperativeConfig):
  """Z_LOSS, LABEL_SMOOTHING and LOSS_NORMALIZING_FACTOR as Mesh TF's loss took them."""
  assumed = "" if operative.exists else "  # assumed: no operative_config.gin"
  z_loss = operative.value("Unitransformer.z_loss", 1e-4, kind=_NUMBER)  # Mesh TF's defaults
  smoothing = operative.value("Unitransformer.label_smoothing", 0.0, kind=_NUMBER)
  loss_fn = operative.text("Unitransformer.loss_fn") or ""
  denominator = operative.value("Unitransformer.loss_denominator", kind=_NUMBER)
  if loss_fn.endswith("loss_per_target_token"):
    factor, why = "'NUM_REAL_TARGET_TOKENS'", ("code_t5.loss_per_target_token: the summed loss "
                                               "over the tokens it is taken on")
  elif denominator is not None:
    factor, why = repr(float(denominator)), "Unitransformer.loss_denominator"
  else:
    factor, why = "'NUM_TOTAL_TARGET_TOKENS'", ("Mesh TF's default: the summed loss over "
                                                "batch x length, padding included")
  lines = ["# ------------------- The loss, as Mesh TF took it (operative_config.gin)",
           f"Z_LOSS = {z_loss!r}{assumed}", f"LABEL_SMOOTHING = {smoothing!r}{assumed}",
           f"# {why}", f"LOSS_NORMALIZING_FACTOR = {factor}{assumed}", ""]
  if model.kind == "decoder-only" and not model.prefix_lm:
    lines[1:1] = [
        "# A causal LM: Mesh TF (delimited_lm, loss_on_targets_only = False) took the loss on",
        "# EVERY token of 'inputs EOS targets EOS'. In T5X that is a TARGETS-ONLY task:",
        "#   TASK_FEATURE_LENGTHS = {'targets': inputs length + targets length}",
        "# whose one 'targets' feature holds the whole sequence (task.gin, t5x_task.py). Given",
        "# an 'inputs' feature, seqio's DecoderFeatureConverter switches to its PrefixLM",
        "# converter (loss_on_targets_only=True) and the loss silently changes: the code",
        "# before the cursor is no longer trained on.", ""]
  elif model.prefix_lm:
    lines[1:1] = [
        "# A prefix LM: Mesh TF took the loss on the targets only (loss_on_targets_only).",
        "# In T5X that is a task WITH an 'inputs' feature (seqio's PrefixLM converter):",
        "#   TASK_FEATURE_LENGTHS = {'inputs': ..., 'targets': ...}", ""]
  return lines


def _vocabulary_lines(training: Training, vocabulary_file: Optional[pathlib.Path]):
  if training.vocabulary == "byte":
    return ["# The vocabulary the Mesh TF model was trained with: code_t5's 'byte' (UTF-8 bytes",
            "# + sentinels, task_name.vocabulary in its operative_config.gin).",
            "VOCABULARY = @seqio.ByteVocabulary()",
            f"seqio.ByteVocabulary.extra_ids = {BYTE_EXTRA_IDS}", ""]
  if vocabulary_file is not None:
    return [
        f"# The vocabulary the Mesh TF model was trained with: code_t5's {training.vocabulary!r}",
        f"# ({training.vocabulary_source.name}), copied here as {VOCABULARY_FILE}, as plain seqio.",
        "# The ids are code_t5's CodeSentencePieceVocabulary's (pad 0, eos 1, unk 2, the pieces,",
        f"# then {BYTE_EXTRA_IDS} sentinels, <extra_id_0> the highest) for every text but two",
        "# spellings, which no file of dataset-dev holds (tests/t5x_task_test.py):",
        "#   * a literal '\u2581' (SentencePiece's space mark) is read as a space here; code_t5",
        "#     encodes it as its three UTF-8 byte pieces;",
        "#   * ' <extra_id_N>' (after a space) encodes as sentinel N here; code_t5 never encodes",
        "#     text to a sentinel.",
        "# Moved the checkpoint? --gin.VOCABULARY_FILE=\"'/new/path/vocab.model'\"",
        f"VOCABULARY_FILE = {str(vocabulary_file)!r}",
        "VOCABULARY = @seqio.SentencePieceVocabulary()",
        "seqio.SentencePieceVocabulary.sentencepiece_model_file = %VOCABULARY_FILE",
        f"seqio.SentencePieceVocabulary.extra_ids = {BYTE_EXTRA_IDS}", ""]
  trained_with = (f"code_t5's {training.vocabulary!r}, whose model file code_t5 does not know"
                  if training.vocabulary else "not recorded (no operative_config.gin)")
  return [f"# The vocabulary the Mesh TF model was trained with: {trained_with}.",
          "# Bind the same one here; its size must give the vocab_size below.",
          "VOCABULARY = %gin.REQUIRED", ""]


def gin_text(model: checkpoints.Model, prefix: str, step: int,
             operative: operative_config.OperativeConfig, params_only: bool = False,
             vocabulary_file: Optional[pathlib.Path] = None) -> str:
  """A T5X gin config for the converted model: t5x's stock config, our sizes, vocabulary and
  loss. `vocabulary_file`: where the SentencePiece model was copied (None: none was)."""
  training = Training.of(operative)
  # A TPU run's (runs/tpu_v3_8.gin) was bfloat16; every comment said float32 (helper-44's audit).
  activations = ("bfloat16" if operative.value("get_variable_dtype.activation_dtype")
                 == "bfloat16" else "float32")
  lines = [f"# T5X model for {errors.printable(str(prefix))} (step {step}), converted by "
           "code_t5.convert.t5x.",
           f"# {model.describe()}", "from __gin__ import dynamic_registration",
           "import seqio", ""]
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
  lines += _loss_lines(model, operative)
  lines += _vocabulary_lines(training, vocabulary_file)
  lines += [f"{config}:", f"  vocab_size = {model.vocab_size}",
            f"  # Mesh TF computed in {activations} (get_variable_dtype.activation_dtype).",
            f"  dtype = '{activations}'", f"  emb_dim = {model.d_model}",
            f"  num_heads = {model.num_heads}"]
  lines += [f"  {s}" for s in sizes]
  lines += [f"  head_dim = {model.head_dim}", f"  mlp_dim = {model.d_ff}",
            f"  mlp_activations = {tuple(model.activations)!r}"
            + ("  # assumed: no operative_config.gin" if model.activations_assumed else ""),
            f"  logits_via_embedding = {model.logits_via_embedding}", ""]
  return "\n".join(lines)


def _batch_size(operative: operative_config.OperativeConfig, lengths) -> Optional[int]:
  """Mesh TF's sequences per batch (utils.run.batch_size), as mesh_tensorflow computes it."""
  batch = operative.batch_size()
  if not isinstance(batch, tuple):
    return batch if isinstance(batch, int) else None
  method, value = batch
  if method == "sequences_per_batch":
    return value
  if method == "tokens_per_batch":
    return value // max(lengths.values())
  return None


def trained_root(operative: operative_config.OperativeConfig) -> str:
  """The FLCC root the model was trained on (code_t5.flcc_dataset.root; dataset-dev if unset)."""
  return str(operative.value("flcc_dataset.root", kind=str)
             or pathlib.Path(__file__).resolve().parents[2] / "dataset-dev")  # sources.DEV_ROOT


def task_gin_text(model: checkpoints.Model, prefix: str, step: int,
                  operative: operative_config.OperativeConfig,
                  params_only: bool = False) -> Optional[str]:
  """task.gin: the T5X task of the model's objective (t5x_task.py, copied beside it), its
  feature lengths and the run settings the first step's loss depends on (and, --params-only,
  how to restore the params alone); None for objectives t5x_task.py does not cover."""
  training = Training.of(operative)
  if training.objective not in TASK_OBJECTIVES:
    return None
  lengths = operative.sequence_length() or {"inputs": 512, "targets": 512}
  causal = model.kind == "decoder-only" and not model.prefix_lm
  if causal and training.objective != "cursor_lm":
    return None  # a causal LM on a t5 objective: not a combination the project trains
  layout = "targets_only" if causal else "inputs_targets"
  root = trained_root(operative)
  settings = [("objective", repr(training.objective)), ("layout", repr(layout)),
              ("root", repr(str(root)) + "  # code_t5.flcc_dataset.root"),
              ("vocab", "%VOCABULARY  # model.gin's"),
              ("inputs_length", f"{lengths['inputs']}  # Mesh TF's run.sequence_length"),
              ("targets_length", str(lengths["targets"]))]
  if training.objective == "cursor_lm":
    in_indentation, sampled, below_rate = _CURSOR_LM_VERSIONS.get(training.version,
                                                                  (False, False, 0.0))
    alpha = (operative.value("tokenize_with_subword_sampling.alpha", 0.1, kind=_NUMBER)
             if sampled else 0.0)
    settings += [("line_start_rate",
                  repr(operative.value("cursor_lm.line_start_rate", 0.5, kind=_NUMBER))),
                 ("cursors_in_indentation", f"{in_indentation}  # task {training.version}"),
                 ("subword_alpha", f"{alpha!r}  # BPE-dropout (v3)"),
                 ("below_rate", f"{below_rate!r}  # the code below the cursor's line first (v4)")]
  settings += [(f"{split}_fraction",
                repr(operative.value(f"flcc_dataset.{split}_fraction", 0.05, kind=_NUMBER)))
               for split in ("validation", "test")]
  held_out_roots = operative.value("flcc_dataset.held_out_roots", kind=(list, tuple))
  if held_out_roots:  # --held-out-root: the files trained without stay out in T5X too
    settings += [("held_out_roots", f"{list(held_out_roots)!r}  # code_t5.flcc_dataset's"),
                 ("held_out_min_share",
                  repr(operative.value("flcc_dataset.held_out_min_share", 0.5, kind=_NUMBER)))]
  if layout == "targets_only":
    feature_lengths = {"targets": lengths["inputs"] + lengths["targets"]}
  else:
    feature_lengths = {"inputs": lengths["inputs"], "targets": lengths["targets"]}
  from code_t5.data import task_names  # pylint: disable=g-import-not-at-top  (no TensorFlow)
  project_task = task_names.name_of(training.objective, training.vocabulary or "byte",
                                    training.version)
  lines = [f"# T5X task for {errors.printable(str(prefix))} (step {step}), converted by "
           "code_t5.convert.t5x: the FLCC",
           f"# files it was trained on, as code_t5's {project_task} made them (same ids).",
           "# Give it AFTER model.gin and the run file (t5x/configs/runs/finetune.gin or",
           "# pretrain.gin): it sets some of their macros. t5x_task.py, next to this file, must be",
           "# importable: PYTHONPATH=<this folder>. Another FLCC root:",
           "#   --gin.t5x_task.task_name.root=\"'/data/flcc'\"",
           "from __gin__ import dynamic_registration", "import t5x_task",
           *(["from t5x import utils"] if params_only else []), "",
           "MIXTURE_OR_TASK_NAME = @t5x_task.task_name()", "t5x_task.task_name:"]
  lines += [f"  {key} = {value}" for key, value in settings]
  lines += [""]
  if layout == "targets_only":
    lines += ["# The causal LM's whole sequence 'inputs EOS targets EOS' as ONE feature: the loss on",
              "# every token, as Mesh TF took it. Do not add an 'inputs' length (model.gin)."]
  lines += [f"TASK_FEATURE_LENGTHS = {feature_lengths!r}",
            "USE_CACHED_TASKS = False  # read from the FLCC root, as Mesh TF did"]
  dropout = operative.value("SelfAttention.dropout_rate", kind=_NUMBER)
  if dropout is not None:
    lines += [f"DROPOUT_RATE = {dropout!r}  # Mesh TF's (the run files set 0.1)"]
  batch = _batch_size(operative, lengths)
  if batch:
    lines += [f"BATCH_SIZE = {batch}  # Mesh TF's run.batch_size "
              f"{operative.value('run.batch_size')!r}"]
  if params_only:
    lines += ["", "# No optimizer state in this checkpoint (--params-only): restore the params alone",
              "# and start Adafactor afresh.", *PARAMS_ONLY_RESTORE]
  return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- conversion

def convert(source: pathlib.Path, out: pathlib.Path, step: Optional[int] = None,
            dtype: str = "float32", params_only: bool = False, force: bool = False) -> Report:
  """Converts a Mesh TF checkpoint into out/checkpoint_<step>/ (see the module docstring)."""
  start = time.time()
  if dtype not in DTYPES:
    raise checkpoints.ConvertError(f"--dtype {dtype!r} is not one of {', '.join(DTYPES)}")
  check_out(pathlib.Path(out))
  prefix = checkpoints.find_checkpoint(pathlib.Path(source), step)
  if pathlib.Path(out).resolve() == pathlib.Path(prefix).parent.resolve():
    # (T5X's checkpoint_<step>/, model.gin and task.gin went in among Mesh TF's files: helper-
    # 44's audit.)
    raise checkpoints.ConvertError(f"OUT {out} is the model dir being converted: give another "
                                   "folder, which gets checkpoint_<step>/")
  # Both copied into OUT (the config's bindings into model.gin and task.gin): neither through a
  # link, which could lead to a file of the user's.
  reader = checkpoints.open_checkpoint(prefix, follow_links=False)  # (imports TensorFlow)
  stranger_paths.not_a_link(pathlib.Path(prefix).parent / operative_config.FILE_NAME)
  operative = operative_config.OperativeConfig.of_model_dir(pathlib.Path(prefix).parent)
  the_plan = checkpoints.plan(reader.get_variable_to_shape_map(), prefix, params_only, operative)
  report = Report(prefix, out, 0, the_plan.model, params_only, dtype)
  report.step = int(_read(reader, "global_step", prefix, report))
  final = out / f"checkpoint_{report.step}"
  if final.exists() and not force:
    raise checkpoints.ConvertError(f"{final} exists: pass --force to replace it")
  created_out = not out.exists()
  with errors.writing(f"the T5X checkpoint {final}", out, "give another OUT"):
    try:
      out.mkdir(parents=True, exist_ok=True)
    except (FileNotFoundError, FileExistsError) as e:
      # What check_out cannot see without writing: a folder that takes no new ones (/proc,
      # /sys), or OUT made a file since.
      raise checkpoints.ConvertError(f"OUT {out} cannot be made a folder ({e.strerror}): give "
                                     "another OUT") from None
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
      training = Training.of(operative)
      vocabulary_file = None
      if training.vocabulary_source is not None:
        shutil.copyfile(training.vocabulary_source, temporary / VOCABULARY_FILE)
        vocabulary_file = final.resolve() / VOCABULARY_FILE
      report.vocabulary = (
          f"{training.vocabulary} ({VOCABULARY_FILE}, seqio.SentencePieceVocabulary)"
          if vocabulary_file else training.vocabulary or "not recorded: bind VOCABULARY in "
          "model.gin")
      (temporary / "model.gin").write_text(gin_text(the_plan.model, prefix, report.step, operative,
                                                    params_only, vocabulary_file))
      task_gin = task_gin_text(the_plan.model, prefix, report.step, operative, params_only)
      if task_gin:
        (temporary / TASK_GIN).write_text(task_gin)
        shutil.copyfile(TASK_MODULE, temporary / TASK_MODULE.name)
        report.task = f"{training.objective} {training.version} ({TASK_GIN}, {TASK_MODULE.name})"
        report.task_gin = True
        report.task_root = trained_root(operative)
        report.objective = training.objective
      else:
        report.task = (f"none for objective {training.objective!r} (t5x_task.py covers "
                       f"{', '.join(TASK_OBJECTIVES)})" if training.objective else
                       "none: no operative_config.gin")
      processes.move_into_place(temporary, final, replace=force)
    except BaseException:
      shutil.rmtree(temporary, ignore_errors=True)
      if created_out and not any(out.iterdir()):
        out.rmdir()
      raise
  report.seconds = time.time() - start
  return report


def check_out(out: pathlib.Path) -> None:
  """Refuses, before the checkpoint is read, an OUT that cannot be the folder checkpoint_<step>/
  goes in: one that is no folder, or a missing one under a file or a link that leads nowhere
  (mkdir would fail there with a traceback, or after reading the whole checkpoint)."""
  for path in (out, *out.parents):
    try:
      folder = stat.S_ISDIR(path.stat().st_mode)
    except OSError as e:
      if e.errno not in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
        return  # e.g. a folder it may not look into: the write says so (errors.writing)
      if path.is_symlink():
        where = "is" if path == out else f"is under {path}, which is"
        raise checkpoints.ConvertError(f"OUT {out} {where} a symbolic link that leads nowhere: "
                                       "give another OUT") from None
      continue
    if not folder:
      where = "is" if path == out else f"is under {path}, which is"
      raise checkpoints.ConvertError(f"OUT {out} {where} not a folder: give a new or existing "
                                     "folder, which gets checkpoint_<step>/")
    return


def summary(report: Report) -> str:
  """The table `convert` prints."""
  model = report.model
  rows = [("checkpoint", f"{report.prefix} (step {report.step})"),
          ("output", f"{report.output / f'checkpoint_{report.step}'} "
                     f"(+ model.gin{', task.gin' if report.task_gin else ''}; "
                     f"params {report.dtype})"),
          ("model", model.describe()),
          ("vocabulary", report.vocabulary),
          ("task", report.task)]
  if model.shared:
    rows.append(("shared", "one Mesh TF variable set serves both towers: its SelfAttention, "
                           "DenseReluDense, norms and relative bias were copied into T5X's "
                           "encoder AND decoder"))
  if model.prefix_lm:
    rows.append(("prefix LM", "Mesh TF used bidirectional relative-position buckets; t5x's stock "
                              "decoder_only network uses unidirectional ones (see model.gin)"))
  if report.params_only:
    rows.append(("optimizer", "none (--params-only); to fine-tune, restore with "
                              + " and ".join(PARAMS_ONLY_RESTORE)
                              + (" (task.gin does)" if report.task_gin else " (see model.gin)")))
  mb = report.bytes_read / 1e6
  rows += [("tensors read", f"{report.tensors_read} ({mb:.1f} MB)"),
           ("leaves written", ", ".join(f"{n} {k}" for k, n in sorted(report.leaves.items()))
            + f" ({report.bytes_written / 1e6:.1f} MB on disk)"),
           ("time", f"{report.seconds:.1f} s ({mb / max(report.seconds, 1e-9):.1f} MB/s read)")]
  width = max(len(k) for k, _ in rows)
  return "\n".join(f"{k:<{width}}  {errors.printable(v)}" for k, v in rows)


# New steps in the command `continue_command` prints (an example: the user picks the number).
EXAMPLE_NEW_STEPS = 1000
# Path characters that need no quoting inside the command's "'...'" gin strings.
_PLAIN_PATH = re.compile(r"[A-Za-z0-9_./+=,:@-]+")


def continue_command(report: Report) -> str:
  """How to train the converted checkpoint further in T5X: the command docs/t5x.md gives (run
  there for every family), with this checkpoint's paths and steps filled in."""
  out = report.output.resolve()
  checkpoint, finetuned = out / f"checkpoint_{report.step}", out.with_name(out.name + "-finetuned")

  def gin_string(path: pathlib.Path) -> str:
    text = str(path)
    return f"\"'{text}'\"" if _PLAIN_PATH.fullmatch(text) else shlex.quote(repr(text))

  steps = report.step + EXAMPLE_NEW_STEPS
  lines = [f"To train it further in T5X ({EXAMPLE_NEW_STEPS:,} more steps; TRAIN_STEPS counts the "
           f"converted {report.step:,}), in a t5x checkout's root, with t5x's own environment"
           + (" and `pip install t5`" if report.objective in ("prefix_lm", "span_corruption")
              else "") + ":",
           f"  CK={shlex.quote(str(checkpoint))}",
           "  PYTHONPATH=$CK python -m t5x.train --gin_file=$CK/model.gin \\",
           "    --gin_file=t5x/configs/runs/finetune.gin --gin_file=$CK/task.gin \\",
           f"    --gin.MODEL_DIR={gin_string(finetuned)} --gin.INITIAL_CHECKPOINT_PATH=\"'$CK'\" \\",
           f"    --gin.TRAIN_STEPS={steps}",
           f"task.gin reads the FLCC root the model was trained on, "
           f"{errors.printable(report.task_root)}; for "
           "another (or on another machine) add --gin.t5x_task.task_name.root=\"'DIR'\"."]
  return "\n".join(lines)


# ---------------------------------------------------------------- command line

def add_arguments(parser: argparse.ArgumentParser):
  parser.add_argument("source", type=pathlib.Path,
                      help="Mesh TF model dir (latest checkpoint, or --step) or checkpoint prefix")
  parser.add_argument("out", type=pathlib.Path, help="T5X model dir; gets checkpoint_<step>/")
  parser.add_argument("--step", type=int, help="checkpoint step in a model dir (default: latest)")
  parser.add_argument("--dtype", default="float32", choices=DTYPES,
                      help="of the params (default %(default)s)")
  parser.add_argument("--params-only", action="store_true", help="no optimizer state")
  parser.add_argument("--force", action="store_true", help="replace an existing checkpoint_<step>")


def run(args) -> int:
  report = convert(args.source, args.out, step=args.step, dtype=args.dtype,
                   params_only=args.params_only, force=args.force)
  print(summary(report))
  if report.task_gin:
    print()
    print(continue_command(report))
  return 0


def register_cli(subparsers):
  """`code-t5 convert`: see the module docstring."""
  parser = subparsers.add_parser("convert", help="convert a Mesh TF checkpoint to T5X's native "
                                 "format (+ a T5X gin file), without t5x")
  add_arguments(parser)
  parser.set_defaults(func=run)

