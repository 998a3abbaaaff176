"""Completion without TensorFlow: a checkpoint's weights as NumPy arrays and a cached forward pass.

Serving through TensorFlow costs ~0.85 GB of RAM and seconds of import before the first request,
and Mesh TF's decoders cannot rank whole lines (no beam search for decoder-only models, no
constraint on the first pieces for token healing). The engine here computes what Mesh TF
computes, in float32 NumPy, one token at a time with cached keys and values, so that
`code_t5.engine.decoding` can search lines as it likes (a decoder-only network's decode step runs
in C where the package's library was built: code_t5.engine.native):

    write(model_dir)  ->  <model_dir>/runtime/step<N>/{model.json, params.npz[, vocab.model]}
    Network.load(that dir)

`write` needs TensorFlow once (to read the Mesh TF checkpoint); loading and running need only
NumPy (and sentencepiece for a SentencePiece vocabulary). The parameters are stored as Mesh TF
has them (bfloat16 as its raw 16 bits), named as in the checkpoint, with their T5X paths
(code_t5.training.checkpoints.plan): the network below is T5X's T5 network (tests/numpy_t5.py is
an independent full-sequence version of it; runtime_test checks the two agree), which computes
Mesh TF's logits.

Mesh TF semantics kept here (mesh_tensorflow/transformer/transformer.py, sample_autoregressive):
a decoder-only (delimited_lm) model reads [0, context..., EOS] and predicts the completion's first
token at the EOS; an encoder-decoder reads [context..., EOS] in the encoder and starts its decoder
from 0. Relative-position buckets are bidirectional unless the model is fully autoregressive
(a prefix LM is not: it also attends bidirectionally over [0, context..., EOS]).
"""

import dataclasses
import functools
import json
import math
import pathlib
import reprlib
import zipfile
import zlib
from typing import Dict, List, Optional, Tuple

import numpy as np

from code_t5 import errors
from code_t5 import stranger_paths
from code_t5.engine import arrays_file
from code_t5.engine import native
from code_t5.engine import tokenizers

RUNTIME_DIR = "runtime"
FORMAT = 1
MODEL_FILE = "model.json"
PARAMS_FILE = "params.npz"
VOCAB_FILE = "vocab.model"
_NUM_BUCKETS = 32
_MAX_DISTANCE = 128
_MASKED = -1e10
# Positions a causal decoder's `Network.start` reads per product (see there). Smaller blocks leave
# less to read again when a context changes near its end, but multiply in smaller, slower products.
# The shipped model's contexts (~450 positions with the similar code) as a user types along a
# line: blocks of 64, 128, 192: 25, 42, 31 % of the positions read again, 7.1, 9.7, 7.9 ms
# (a full reading ~20 ms, within noise of one product for 192; measured here).
READ_BLOCK = 192
_EPSILON = 1e-6
_HUGE_PAGE = 2 << 20  # bytes: Linux's transparent huge pages on x86-64 (Network._in_one_block)


class RuntimeFolderError(errors.UserError):
  """A runtime folder that is missing, from another format, or inconsistent; one line."""


def runtime_dir(model_dir: pathlib.Path, step: int) -> pathlib.Path:
  return pathlib.Path(model_dir) / RUNTIME_DIR / f"step{step}"


# ------------------------------------------------------------------------------------------------
# Writing (TensorFlow): once per checkpoint.


def _vocabulary_spec(vocabulary, out: pathlib.Path) -> dict:
  """How tokenizers.py rebuilds the seqio vocabulary; a SentencePiece model is copied to `out`."""
  import seqio  # pylint: disable=g-import-not-at-top
  if isinstance(vocabulary, seqio.ByteVocabulary):
    return {"kind": "bytes", "extra_ids": vocabulary.extra_ids,
            "vocab_size": vocabulary.vocab_size}
  if isinstance(vocabulary, seqio.SentencePieceVocabulary):
    (out / VOCAB_FILE).write_bytes(vocabulary.sp_model)
    spec = {"kind": "pieces", "extra_ids": vocabulary.extra_ids, "file": VOCAB_FILE,
            "vocab_size": vocabulary.vocab_size}
    if load_tokenizer(spec, out).vocab_size != vocabulary.vocab_size:
      raise RuntimeFolderError(f"vocabulary {vocabulary} is not a code_t5 SentencePiece vocabulary "
                          "(its sentinels are pieces of the model): the engine cannot serve it")
    return spec
  raise RuntimeFolderError(f"vocabulary {type(vocabulary).__name__} has no TensorFlow-free "
                           "tokenizer (code_t5.engine.tokenizers): byte and SentencePiece "
                           "vocabularies do")


def write(model_dir: pathlib.Path, step: int, info: dict, vocabulary, echo=None) -> pathlib.Path:
  """Writes runtime_dir(model_dir, step) from checkpoint `step` (atomically); returns it.

  info: what the model dir's operative config says (task, model_type, sequence_length).
  """
  from code_t5.training import checkpoints  # pylint: disable=g-import-not-at-top
  from code_t5.training import operative_config  # pylint: disable=g-import-not-at-top
  from code_t5 import processes  # pylint: disable=g-import-not-at-top
  model_dir = pathlib.Path(model_dir)
  # The model folder may be a stranger's: its `runtime` (or `runtime/stepN`) must not be a link
  # that sends this write, and the removal of an older runtime, into a folder of the user's.
  final = stranger_paths.inside(model_dir, RUNTIME_DIR, runtime_dir(model_dir, step).name)
  prefix = str(model_dir / f"model.ckpt-{step}")
  reader = checkpoints.open_checkpoint(prefix, RuntimeFolderError)  # (TensorFlow: only here)
  operative = operative_config.OperativeConfig.of_model_dir(model_dir)
  plan = checkpoints.plan(reader.get_variable_to_shape_map(), prefix, params_only=True,
                          operative=operative)
  # Read everything first: a failure in the block below is one of its writes.
  arrays, tensors = {}, {}
  for i, tensor in enumerate(plan.tensors):
    value = np.asarray(checkpoints.read_tensor(reader, tensor.name, prefix, RuntimeFolderError))
    dtype = value.dtype.name
    if dtype == "bfloat16":  # stored as its 16 bits: NumPy has no bfloat16
      value = value.view(np.uint16)
    elif dtype != "float32":
      value, dtype = value.astype(np.float32), "float32"
    arrays[f"t{i}"] = value
    tensors[f"t{i}"] = {"name": tensor.name, "dtype": dtype,
                        "paths": ["/".join(p) for p in tensor.paths]}
  with processes.folder_written_beside(
      final, f"the NumPy runtime {final}",
      f"copy {model_dir} to a folder you can write and use the copy", echo) as tmp:
    arrays_file.save(tmp / PARAMS_FILE, arrays)
    meta = {
        "format": FORMAT, "source": str(model_dir.resolve()), "step": step,
        "task": info["task"], "model_type": info["model_type"],
        "sequence_length": info["sequence_length"],
        "architecture": dataclasses.asdict(plan.model),
        "vocabulary": _vocabulary_spec(vocabulary, tmp),
        "tensors": tensors,
    }
    (tmp / MODEL_FILE).write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
  return final


def load_tokenizer(spec: dict, directory: pathlib.Path) -> tokenizers.Tokenizer:
  """The tokenizer `spec` (model.json's "vocabulary") describes; its SentencePiece model is read
  from `directory`. RuntimeFolderError, naming the file, for a damaged or mismatched one."""
  kind = spec.get("kind")
  if not isinstance(spec.get("extra_ids"), int) or kind not in ("bytes", "pieces") or (
      kind == "pieces" and (not isinstance(spec.get("file"), str) or "/" in spec["file"])):
    raise _damaged(pathlib.Path(directory) / MODEL_FILE, f"vocabulary {reprlib.repr(spec)}: "
                   "neither bytes nor pieces from a file of the runtime folder")
  if kind == "bytes":
    return tokenizers.Bytes(spec["extra_ids"])
  path = pathlib.Path(directory) / spec["file"]
  try:
    tokenizer = tokenizers.Pieces(stranger_paths.read_regular(path, _MAX_VOCAB_BYTES),
                                  spec["extra_ids"])
  except (OSError, ValueError) as e:
    raise _damaged(path, _why(e)) from None
  if tokenizer.vocab_size != spec.get("vocab_size", tokenizer.vocab_size):
    raise _damaged(path, f"{tokenizer.vocab_size} ids, but {MODEL_FILE} says "
                   f"{spec['vocab_size']}")
  return tokenizer


def _why(error: BaseException) -> str:
  """An exception as a short reason: its strerror, or the first line of its message."""
  if isinstance(error, OSError) and error.strerror:
    return error.strerror
  lines = str(error).strip().splitlines()
  return lines[0].strip() if lines else type(error).__name__


def _damaged(path: pathlib.Path, why: str) -> RuntimeFolderError:
  """The one-line error for a file of a runtime folder that is unreadable or does not fit."""
  return RuntimeFolderError(f"{path} cannot be read ({why}): remove {path.parent} to write the "
                            "runtime again from the checkpoint, or copy the model again")


def _mismatch(directory: pathlib.Path, why: str) -> RuntimeFolderError:
  """The one-line error for a params.npz that does not hold what model.json describes."""
  return RuntimeFolderError(
      f"{directory / PARAMS_FILE} does not hold the weights {directory / MODEL_FILE} describes "
      f"({why}): one is damaged or from another model; remove {directory} to write the runtime "
      "again from the checkpoint, or copy the model again")


def _read_meta(directory: pathlib.Path) -> dict:
  """model.json: a JSON object of this format with what loading reads (checked, not trusted)."""
  path = directory / MODEL_FILE
  try:
    meta = json.loads(stranger_paths.read_regular(path, _MAX_MODEL_JSON_BYTES).decode("utf-8"))
  except (OSError, ValueError, RecursionError) as e:  # not JSON, UTF-8, or nested past the limit
    raise _damaged(path, _why(e)) from None
  if not isinstance(meta, dict):
    raise _damaged(path, "not a JSON object")
  if meta.get("format") != FORMAT:
    raise RuntimeFolderError(f"{path} has format {meta.get('format')!r}, this code_t5 reads "
                             f"{FORMAT}: remove {directory} to write it again")
  kinds = {"task": str, "step": int, "model_type": str, "sequence_length": dict,
           "architecture": dict, "vocabulary": dict, "tensors": dict}
  for key, kind in kinds.items():
    if not isinstance(meta.get(key), kind):
      raise _damaged(path, f"no {key} ({kind.__name__})")
  arch = meta["architecture"]
  for key in _ARCHITECTURE_INTS:
    if not isinstance(arch.get(key), int) or isinstance(arch[key], bool) or arch[key] < 0:
      raise _damaged(path, f"architecture.{key} {reprlib.repr(arch.get(key))} is not a size")
  if arch.get("kind") not in ("decoder-only", "encoder-decoder"):
    raise _damaged(path, f"architecture.kind {reprlib.repr(arch.get('kind'))}")
  if not isinstance(arch.get("prefix_lm"), bool):
    raise _damaged(path, f"architecture.prefix_lm {reprlib.repr(arch.get('prefix_lm'))}")
  lengths = meta["sequence_length"]
  if not all(isinstance(lengths.get(k), int) and 0 < lengths[k] <= _MAX_SEQUENCE_LENGTH
             for k in ("inputs", "targets")):
    raise _damaged(path, f"sequence_length {reprlib.repr(lengths)}")
  working = working_bytes(arch, lengths)
  if working > MAX_WORKING_BYTES:  # (not _damaged: written again, it would say the same)
    raise RuntimeFolderError(
        f"{path}: its architecture and sequence lengths would take {working / 2**30:,.1f} GiB "
        f"to run, more than the {MAX_WORKING_BYTES >> 30} GiB code_t5's engine allows: it runs "
        "smaller models, or this one trained at shorter lengths")
  activations = arch.get("activations")
  if (not isinstance(activations, list) or not activations or
      any(a not in _ACTIVATIONS for a in activations)):
    raise _damaged(path, f"architecture.activations {reprlib.repr(activations)}")
  named = set()
  for key, tensor in meta["tensors"].items():
    if (not isinstance(tensor, dict) or tensor.get("dtype") not in _STORED_DTYPES or
        not isinstance(tensor.get("paths"), list) or
        not all(isinstance(p, str) for p in tensor["paths"])):
      raise _damaged(path, f"tensor {reprlib.repr(key)}: {reprlib.repr(tensor)}")
    # An array stands for at most the encoder's and the decoder's copy of a shared weight, each
    # path once: one array named as 30,000 layers' made the network ask for 90 GB from a 10 MB
    # params.npz (helper-20's audit).
    paths = tensor["paths"]
    if (len(paths) > _MAX_PATHS_PER_ARRAY or named.intersection(paths)
        or len(set(paths)) < len(paths)):
      raise _damaged(path, f"tensor {reprlib.repr(key)} names {len(paths)} paths, or a path "
                     "another tensor names: code_t5 writes each path once, an array for at most "
                     f"{_MAX_PATHS_PER_ARRAY}")
    named.update(paths)
  return meta


_MAX_SEQUENCE_LENGTH = 1 << 16
# What a network may take to run beyond its weights (working_bytes), far above what code_t5's
# models take (the shipped model: ~10 MB; a T5-XL's 24 + 24 layers of 2,048 at 2,048 positions
# each way: ~3 GB): model.json's sizes are a stranger's, and a 1.3 MB params.npz whose
# architecture claimed 20,000 heads asked for a 19.5 GiB relative-bias table (helper-50's audit).
MAX_WORKING_BYTES = 8 << 30
_MAX_PATHS_PER_ARRAY = 2  # a weight an encoder-decoder's two stacks share
# Far above what code_t5 writes (the shipped model's model.json ~10 kB, vocab.model ~0.4 MB):
# files a reader takes whole, so a stranger's cannot ask for any amount of memory.
_MAX_MODEL_JSON_BYTES = 16 << 20
_MAX_VOCAB_BYTES = 256 << 20
# The sizes model.json's "architecture" must give: the shapes of the tensors follow from them.
_ARCHITECTURE_INTS = ("vocab_size", "d_model", "num_heads", "head_dim", "d_ff",
                      "num_encoder_layers", "num_decoder_layers")
# model.json's dtype -> how params.npz stores it (bfloat16 as its 16 bits).
_STORED_DTYPES = {"bfloat16": np.dtype("<u2"), "float32": np.dtype("<f4")}


def working_bytes(arch: dict, lengths: dict) -> int:
  """The float32 bytes a network of `arch` takes beyond its weights at its longest context: the
  relative-bias tables by relative position (_RelativeBias: heads x 2 x the lengths' sum, one a
  stack) and each layer's keys and values of every position (2 x heads x head_dim a position).
  Exact integers (a stranger's sizes may be any size)."""
  positions = lengths["inputs"] + lengths["targets"]
  stacks = 1 if arch["kind"] == "decoder-only" else 2
  layers = arch["num_decoder_layers"] + (arch["num_encoder_layers"] if stacks == 2 else 0)
  bias = stacks * arch["num_heads"] * (2 * positions + 1)
  cache = 2 * layers * arch["num_heads"] * arch["head_dim"] * positions
  return 4 * (bias + cache)


def _expected_shape(path: str, arch: dict) -> Optional[Tuple[int, ...]]:
  """The shape the architecture gives the parameter at T5X `path` (None: not one it knows)."""
  d_model, vocab = arch["d_model"], arch["vocab_size"]
  inner, d_ff = arch["num_heads"] * arch["head_dim"], arch["d_ff"]
  parts = path.split("/")
  if parts[-1] == "embedding" and parts[-2] == "token_embedder":
    return vocab, d_model
  if parts[-1] == "rel_embedding":
    return arch["num_heads"], _NUM_BUCKETS
  if parts[-1] == "scale":
    return (d_model,)
  if parts[-1] != "kernel":
    return None
  if parts[-2] == "logits_dense":
    return d_model, vocab
  if parts[-2] in ("query", "key", "value"):
    return d_model, inner
  if parts[-2] == "out":
    return inner, d_model
  if parts[-2] == "wo":
    return d_ff, d_model
  if parts[-2].startswith("wi"):
    return d_model, d_ff
  return None


def _npy_header(member, version) -> Tuple[Tuple[int, ...], bool, np.dtype]:
  readers = {(1, 0): np.lib.format.read_array_header_1_0,
             (2, 0): np.lib.format.read_array_header_2_0}
  if version not in readers:
    raise ValueError(f"npy format {version}")
  return readers[version](member)


def _read_params(directory: pathlib.Path, meta: dict) -> Dict[str, np.ndarray]:
  """params.npz's arrays as float32 by T5X path, each checked against model.json before it is
  read (a damaged header cannot ask for more memory than the architecture gives) and read to
  its end (where zipfile checks its CRC)."""
  path = directory / PARAMS_FILE
  arch = meta["architecture"]
  params = {}
  claimed = 0  # the bytes of the arrays read so far
  try:
    with stranger_paths.open_regular(path, max_bytes=None) as f, zipfile.ZipFile(f) as archive:
      # Stored uncompressed, the arrays are at most the bytes the file stores: one claiming more
      # stands on a hole (a sparse file of 11 MB on disk read 1.5 GB into memory, and one of 64
      # GB ran out of it: helper-50's audit), as checkpoints.py refuses for a checkpoint's.
      stored = stranger_paths.stored_bytes(f)
      members = set(archive.namelist())
      for key, tensor in meta["tensors"].items():
        shapes = {_expected_shape(p, arch) for p in tensor["paths"]} - {None}
        if len(shapes) > 1:
          raise _damaged(directory / MODEL_FILE, f"tensor {key} has paths of different shapes: "
                         f"{tensor['paths']}")
        if f"{key}.npy" not in members:
          raise _mismatch(directory, f"no array {key}, which {MODEL_FILE} lists as "
                          f"{tensor.get('name')}")
        if archive.getinfo(f"{key}.npy").compress_type != zipfile.ZIP_STORED:
          # arrays_file.save stores them: a compressed member could inflate far beyond the file.
          raise _damaged(path, f"array {key} is compressed, which code_t5 never writes")
        with archive.open(f"{key}.npy") as member:
          shape, fortran, dtype = _npy_header(member, np.lib.format.read_magic(member))
          if dtype != _STORED_DTYPES[tensor["dtype"]]:
            raise _mismatch(directory, f"array {key} is {dtype}, {MODEL_FILE} says "
                            f"{tensor['dtype']}")
          if shapes and shape not in shapes:
            raise _mismatch(directory, f"array {key} ({tensor.get('name')}) has shape "
                            f"{list(shape)}, the architecture gives {list(shapes.pop())}")
          size = math.prod(shape) * dtype.itemsize  # (NumPy's product could overflow)
          claimed += size
          if claimed > stored:
            raise _damaged(path, f"its arrays up to {key} take {claimed:,} bytes, more than the "
                           f"{stored:,} the file stores")
          data = member.read(size + 1)  # + 1: reading to the end makes zipfile check the CRC
          if len(data) != size:
            raise _damaged(path, f"array {key} has {len(data)} bytes, its shape needs {size}")
        value = np.frombuffer(data, dtype).reshape(shape, order="F" if fortran else "C")
        if tensor["dtype"] == "bfloat16":
          value = (value.astype(np.uint32) << 16).view(np.float32)
        value = np.ascontiguousarray(value, np.float32)
        for p in tensor["paths"]:
          params[p] = value
  except (OSError, EOFError, ValueError, zipfile.BadZipFile, zlib.error,
          NotImplementedError) as e:  # NotImplementedError: a compression zipfile does not know
    raise _damaged(path, _why(e)) from None
  return params


# ------------------------------------------------------------------------------------------------
# The network.


def _relative_position_bucket(relative_position: np.ndarray, bidirectional: bool) -> np.ndarray:
  """Mesh TF's / T5X's bucket of memory_position - query_position (32 buckets, distance 128)."""
  num_buckets, ret = _NUM_BUCKETS, 0
  n = -relative_position
  if bidirectional:
    num_buckets //= 2
    ret = (n < 0).astype(np.int64) * num_buckets
    n = np.abs(n)
  else:
    n = np.maximum(n, 0)
  max_exact = num_buckets // 2
  large = max_exact + (np.log(n.astype(np.float32) / max_exact + np.finfo(np.float32).eps)
                       / np.log(_MAX_DISTANCE / max_exact)
                       * (num_buckets - max_exact)).astype(np.int64)
  return ret + np.where(n < max_exact, n, np.minimum(large, num_buckets - 1))


class _RelativeBias:
  """[heads, queries, keys] biases from a [heads, 32] table, looked up by key - query."""

  def __init__(self, table: np.ndarray, bidirectional: bool, max_length: int):
    self._offset = max_length
    relative = np.arange(-max_length, max_length + 1)
    self._by_relative = np.ascontiguousarray(
        table[:, _relative_position_bucket(relative, bidirectional)])

  def __call__(self, first_query: int, queries: int, first_key: int, keys: int) -> np.ndarray:
    """The biases of the positions first_query.. (`queries` of them) against first_key.. (`keys`).

    Consecutive positions are what every caller asks for, so the answer is a read-only view of
    the table by relative position: each query's row is the one before it moved by one column
    (a gather of [heads, 192, 450] floats was ~1 ms of each block `Network.start` reads). Past
    the table's reach (a distance over max_length, which the callers' windows do not reach) the
    distance is clipped to it, where the buckets have long been the last one."""
    table = self._by_relative
    start = first_key - first_query + self._offset  # the column of query 0 against key 0
    if start - (queries - 1) >= 0 and start + keys <= table.shape[1]:
      heads, column = table.strides
      # np.ndarray itself: np.lib.stride_tricks.as_strided's checks took ~50 µs a call.
      view = np.ndarray((len(table), queries, keys), table.dtype, table, start * column,
                        (heads, -column, column))
      view.flags.writeable = False
      return view
    relative = (np.arange(first_key, first_key + keys)[None, :]
                - np.arange(first_query, first_query + queries)[:, None])
    return table[:, np.clip(relative, -self._offset, self._offset) + self._offset]


def _use_one_blas_thread() -> None:
  """Limits NumPy's BLAS (OpenBLAS here) to one thread for the rest of the process.

  A decode step multiplies a few beams' vectors by each matrix: too little work to share, and
  OpenBLAS's worker threads spin-wait for the CPU when anything else is running. On this 2-core
  machine, beside a training job, the shipped model's best line took 2.5 s (median) with 2
  threads and 0.15 s with one. On an idle machine two threads were faster (80 against 111 ms,
  before `logits` went row by row): a trade made for an editor's machine, which is rarely idle.
  """
  import threadpoolctl  # pylint: disable=g-import-not-at-top
  threadpoolctl.threadpool_limits(limits=1, user_api="blas")


# Rows up to which OpenBLAS's vector-matrix product, row by row, beats one matrix product of all
# of them (one thread, the slower AVX2 machine, [R, 256] by [256, 1,024]: 4 rows 108 against 228
# µs, 12 rows 274 against 286, 16 rows 414 against 315; by the [256, 8,192] logits kernel: 4 rows
# 0.66 against 1.81 ms, 12 rows 1.97 against 2.01 ms), and so does native.product.
_ROWS_ONE_BY_ONE = 12


def _few_rows(rows, kernel):
  """rows [R, d] @ kernel [d, k] for R <= _ROWS_ONE_BY_ONE: native.product where it was built
  (the kernel read once for all rows), else row by row."""
  if native.available:
    return native.product(np.ascontiguousarray(rows), kernel)
  return (rows[:, None, :] @ kernel)[:, 0]


def _product(x, kernel):
  """x [..., d] @ kernel [d, k] for a stack of rows (x with 3 or more axes, `step`'s beams and
  `read_after`'s lines): all rows in one matrix product, or `_few_rows` where there are few of
  them (_ROWS_ONE_BY_ONE). numpy would multiply a [B, T, d] stack as B products of T rows,
  OpenBLAS's slowest shape for the few pieces of a retrieved line. A 2-D x (`start`'s blocks)
  is one product, as before."""
  if x.ndim < 3:
    return x @ kernel
  rows = x.reshape(-1, x.shape[-1])
  product = _few_rows(rows, kernel) if len(rows) <= _ROWS_ONE_BY_ONE else rows @ kernel
  return product.reshape(x.shape[:-1] + (kernel.shape[1],))


def _rms_norm(x, scale):
  # np.mean's sum and division without its bookkeeping (a third of its time at a decode step's
  # sizes); the same bits.
  mean_square = np.add.reduce(np.square(x), axis=-1, keepdims=True)
  mean_square /= x.shape[-1]
  return x * (1.0 / np.sqrt(mean_square + _EPSILON)) * scale


def _gelu(x):
  return 0.5 * x * (1.0 + np.tanh(np.float32(np.sqrt(2.0 / np.pi)) * (x + 0.044715 * x ** 3)))


# Each applied to a product's fresh result, so relu may write into it.
_ACTIVATIONS = {"relu": lambda x: np.maximum(x, 0.0, out=x), "gelu": _gelu,
                "linear": lambda x: x}


def _softmax(logits):
  """The softmax over the last axis, computed in `logits` (a temporary of the caller's): the same
  bits as with new arrays, without allocating three."""
  logits -= logits.max(axis=-1, keepdims=True)
  np.exp(logits, out=logits)
  logits /= logits.sum(axis=-1, keepdims=True)
  return logits


@dataclasses.dataclass
class _Attention:
  query: np.ndarray  # [d_model, heads * head_dim]
  key: np.ndarray
  value: np.ndarray
  out: np.ndarray  # [heads * head_dim, d_model]
  num_heads: int

  def heads(self, x, kernel):
    """[..., n, d_model] -> [..., heads, n, head_dim]."""
    return self.split(x @ kernel)

  def split(self, y):
    """[..., n, heads * head_dim] -> [..., heads, n, head_dim]."""
    y = y.reshape(y.shape[:-1] + (self.num_heads, -1))
    return np.swapaxes(y, -2, -3)

  @functools.cached_property
  def query_key_value(self) -> np.ndarray:
    """[d_model, 3 * heads * head_dim]: the three projections as one matrix product (made when
    first asked for: cross-attention never is; `Network._in_one_block` replaces it with a view)."""
    return np.concatenate([self.query, self.key, self.value], axis=1)

  def query_key_value_heads(self, x):
    """heads(x, query), heads(x, key), heads(x, value), with one matrix product."""
    y = _product(x, self.query_key_value)
    width = y.shape[-1] // 3  # slices, not np.split: the same views without its Python overhead
    return (self.split(y[..., :width]), self.split(y[..., width:2 * width]),
            self.split(y[..., 2 * width:]))

  def merge(self, y):
    """[..., heads, n, head_dim] -> [..., n, d_model]."""
    y = np.swapaxes(y, -2, -3)
    return _product(y.reshape(y.shape[:-2] + (-1,)), self.out)


@dataclasses.dataclass
class _Layer:
  self_attention: _Attention
  self_norm: np.ndarray
  mlp_in: List[np.ndarray]
  mlp_out: np.ndarray
  mlp_norm: np.ndarray
  cross_attention: Optional[_Attention] = None
  cross_norm: Optional[np.ndarray] = None


@dataclasses.dataclass
class Prefix:
  """What every candidate line shares: the context's keys/values (per decoder layer, batch 1),
  the encoder's cross-attention keys/values, and the logits of the first token."""
  keys: List[np.ndarray]  # [heads, n, head_dim]
  values: List[np.ndarray]
  cross: Optional[List[Tuple[np.ndarray, np.ndarray]]]
  length: int  # decoder positions the prefix takes (the first generated token's input position)
  logits: np.ndarray  # [vocab] for the first generated token
  # A causal decoder's input ids (what a later `start` may reuse; None for other models).
  inputs: Optional[np.ndarray] = None
  read: int = 0  # how many positions `start` read (the others were reused)

  @functools.cached_property
  def keys_t(self) -> List[np.ndarray]:
    """The keys as [heads, head_dim, n], contiguous: what every decode step multiplies by."""
    return [np.ascontiguousarray(np.swapaxes(k, -1, -2)) for k in self.keys]


class Beams:
  """The generated part of a batch of candidate lines: per layer keys/values [B, heads,
  capacity, hd], of which the first `length` positions are the beams' so far (room for the next
  ones, so that a step writes its position in place)."""

  CAPACITY = 16  # positions at first; doubled when full (most lines end within 16 pieces)

  def __init__(self, network: "Network", prefix: Prefix, size: int):
    self.prefix = prefix
    self.size = size
    self.length = 0
    shape = (size, network.num_heads, self.CAPACITY, network.head_dim)
    self.keys = [np.zeros(shape, np.float32) for _ in network.layers]
    self.values = [np.zeros(shape, np.float32) for _ in network.layers]

  def make_room(self):
    """Room for position `length`: the capacity doubled if it is full."""
    if self.length == self.keys[0].shape[2]:
      grow = lambda a: np.concatenate([a, np.zeros_like(a)], axis=2)
      self.keys = [grow(k) for k in self.keys]
      self.values = [grow(v) for v in self.values]

  def reorder(self, parents: np.ndarray):
    self.keys = [k[parents] for k in self.keys]
    self.values = [v[parents] for v in self.values]
    self.size = len(parents)


class Network:
  """T5X's T5 network for one model (decoder-only or encoder-decoder), in float32 NumPy."""

  def __init__(self, meta: dict, params: Dict[str, np.ndarray], tokenizer: tokenizers.Tokenizer):
    arch = meta["architecture"]
    self.meta = meta
    self.tokenizer = tokenizer
    self.decoder_only = arch["kind"] == "decoder-only"
    self.prefix_lm = bool(arch["prefix_lm"])
    self.num_heads, self.head_dim = arch["num_heads"], arch["head_dim"]
    self.d_model = arch["d_model"]
    self.activations = tuple(arch["activations"])
    lengths = meta["sequence_length"]
    max_length = lengths["inputs"] + lengths["targets"] + 1
    self.max_length = max_length  # the most positions the relative-position tables reach
    stack = "decoder"
    root = "decoder/" if self.decoder_only else ""
    self.embedding = params[f"{root}token_embedder/embedding"]
    self.vocab_rows = self.embedding.shape[0]
    if "decoder/logits_dense/kernel" in params:
      self._logits_kernel = params["decoder/logits_dense/kernel"]
    else:
      self._logits_kernel = np.ascontiguousarray(
          self.embedding.T / np.sqrt(np.float32(self.d_model)))
    self.layers = self._stack(params, stack, cross=not self.decoder_only)
    self._in_one_block()
    self.final_norm = params[f"{stack}/decoder_norm/scale"]
    # Mesh TF: bidirectional buckets unless fully autoregressive (a prefix LM is not).
    self.bias = _RelativeBias(params[f"{stack}/relpos_bias/rel_embedding"], self.prefix_lm,
                              max_length)
    if not self.decoder_only:
      self.encoder_layers = self._stack(params, "encoder", cross=False, encoder=True)
      self.encoder_norm = params["encoder/encoder_norm/scale"]
      self.encoder_bias = _RelativeBias(params["encoder/relpos_bias/rel_embedding"], True,
                                        max_length)
    # `step` in C where the library was built and runs this network (else None: NumPy).
    self.native_step = native.DecodeStep.of(self)

  def _in_one_block(self):
    """Moves the kernels a decode step multiplies by into one array that starts at a huge page.

    A step streams all of them (~21 MB for the shipped model) for a few rows, so the products
    wait on memory, and on the TLB: in 4 kB pages that is ~5,000 pages per step. NumPy asks
    Linux for transparent huge pages (2 MB) for arrays of 4 MB or more; a layer's kernels are
    under 1 MB each, the block holds them all. The same values in the same products: the same
    bits. (The shipped model's products of one step, 5 beams: 3.1-3.2 -> 2.9-3.1 ms on the AVX2
    machine; no change where huge pages are off.)"""
    kernels = [self._logits_kernel]
    for layer in self.layers:
      kernels += [layer.self_attention.query_key_value, layer.self_attention.out,
                  *layer.mlp_in, layer.mlp_out]
    floats_per_page = _HUGE_PAGE // np.dtype(np.float32).itemsize
    block = np.empty(sum(k.size for k in kernels) + floats_per_page, np.float32)
    start = (-block.ctypes.data % _HUGE_PAGE) // block.itemsize  # the first float on a boundary
    views = []
    for kernel in kernels:
      view = block[start:start + kernel.size].reshape(kernel.shape)
      view[...] = kernel
      views.append(view)
      start += kernel.size
    views = iter(views)
    self._logits_kernel = next(views)
    for layer in self.layers:
      layer.self_attention.query_key_value, layer.self_attention.out = next(views), next(views)
      layer.mlp_in = [next(views) for _ in layer.mlp_in]
      layer.mlp_out = next(views)

  def _attention(self, params, path) -> _Attention:
    return _Attention(*(params[f"{path}/{k}/kernel"] for k in ("query", "key", "value", "out")),
                      num_heads=self.num_heads)

  def _stack(self, params, stack, cross, encoder=False) -> List[_Layer]:
    layers, i = [], 0
    while f"{stack}/layers_{i}/mlp/wo/kernel" in params:
      path = f"{stack}/layers_{i}"
      names = ["wi"] if len(self.activations) == 1 else [
          f"wi_{j}" for j in range(len(self.activations))]
      self_name, norm = (("attention", "pre_attention_layer_norm") if encoder else
                         ("self_attention", "pre_self_attention_layer_norm"))
      layer = _Layer(self._attention(params, f"{path}/{self_name}"),
                     params[f"{path}/{norm}/scale"],
                     [params[f"{path}/mlp/{n}/kernel"] for n in names],
                     params[f"{path}/mlp/wo/kernel"], params[f"{path}/pre_mlp_layer_norm/scale"])
      if cross:
        layer.cross_attention = self._attention(params, f"{path}/encoder_decoder_attention")
        layer.cross_norm = params[f"{path}/pre_cross_attention_layer_norm/scale"]
      layers.append(layer)
      i += 1
    return layers

  @classmethod
  def load(cls, directory: pathlib.Path) -> "Network":
    """The network of a runtime folder; from then on this process's BLAS runs on one thread.

    Every file is checked against the others (the tensors against model.json's architecture,
    the SentencePiece model against its size): a damaged or mixed-up file is a
    RuntimeFolderError naming it, not a traceback or a network computing nonsense.
    """
    directory = pathlib.Path(directory)
    _use_one_blas_thread()
    meta = _read_meta(directory)
    params = _read_params(directory, meta)
    tokenizer = load_tokenizer(meta["vocabulary"], directory)
    model_file = directory / MODEL_FILE
    try:
      network = cls(meta, params, tokenizer)
    except KeyError as e:  # the parameters __init__ looks up by path
      raise _mismatch(directory, f"no tensor has path {e.args[0]}") from None
    arch = meta["architecture"]
    layers = {"decoder": (len(network.layers), arch["num_decoder_layers"]),
              "encoder": (len(getattr(network, "encoder_layers", ())), arch["num_encoder_layers"])}
    if network.decoder_only:
      del layers["encoder"]
    for stack, (found, said) in layers.items():
      if found != said:
        raise _mismatch(directory, f"its tensors make {found} {stack} layers, the architecture "
                        f"says {said}")
    if tokenizer.vocab_size > network.vocab_rows:
      raise _damaged(model_file, f"its vocabulary has {tokenizer.vocab_size} ids, the embedding "
                     f"{network.vocab_rows} rows")
    return network

  # -------------------------------------------------------------------- pieces of the network

  def _mlp(self, layer: _Layer, x):
    h = _rms_norm(x, layer.mlp_norm)
    hidden = None
    for kernel, activation in zip(layer.mlp_in, self.activations):
      y = _ACTIVATIONS[activation](_product(h, kernel))
      hidden = y if hidden is None else hidden * y
    return x + _product(hidden, layer.mlp_out)

  def logits(self, y) -> np.ndarray:
    """[d_model] -> [vocab], or [B, d_model] -> [B, vocab] by `_few_rows`: OpenBLAS's
    matrix-vector product is ~4x faster than its matrix product for a few rows against the
    [d_model, vocab] kernel (5 x 256 x 8,100 on one thread: 0.66 against 2.7 ms; measured
    here), native.product ~2x faster again, and this product is most of a decode step."""
    normed = _rms_norm(y, self.final_norm)
    if normed.ndim == 1:
      return normed @ self._logits_kernel
    return _few_rows(normed, self._logits_kernel)

  def _encode(self, tokens: np.ndarray) -> np.ndarray:
    """The encoder's output for [n] tokens (no padding): [n, d_model]."""
    bias = self.encoder_bias(0, len(tokens), 0, len(tokens))
    x = self.embedding[tokens]
    for layer in self.encoder_layers:
      h = _rms_norm(x, layer.self_norm)
      att = layer.self_attention
      q, k, v = att.query_key_value_heads(h)
      x = x + att.merge(_softmax(q @ np.swapaxes(k, -1, -2) + bias) @ v)
      x = self._mlp(layer, x)
    return _rms_norm(x, self.encoder_norm)

  # -------------------------------------------------------------------- decoding

  def start(self, context_ids: List[int], reuse: Optional[Prefix] = None) -> Prefix:
    """Reads the context (ids, already cut to the model's input length) once.

    `reuse`: an earlier `start`'s result. In a causal decoder the keys and values at a position
    depend only on the ids up to it, so where both contexts begin with the same ids, the whole
    READ_BLOCKs of them are taken from `reuse` and only the rest is read: when an editor asks
    again as the user types on a line, all but the last block or two. Every block is computed by
    products of the same shapes whether read now or before (a block's rows, against the keys up
    to its end), so the state is bit for bit the one a full reading gives: BLAS products of
    different shapes round differently (tests/decoding_test.py checks it).
    """
    context = np.asarray(list(context_ids) + [tokenizers.EOS_ID], np.int64)
    if self.decoder_only:
      inputs = np.concatenate([[0], context])  # shifted right: position p reads token p - 1
      cross = None
    else:
      encoded = self._encode(context)
      inputs = np.zeros(1, np.int64)
      cross = [(layer.cross_attention.heads(encoded, layer.cross_attention.key),
                layer.cross_attention.heads(encoded, layer.cross_attention.value))
               for layer in self.layers]
    n = len(inputs)
    causal = self.decoder_only and not self.prefix_lm
    # A prefix LM's positions all see each other: read at once (an encoder-decoder's decoder
    # reads one position).
    block = READ_BLOCK if causal else n
    shared = self._shared_blocks(reuse, inputs) if causal else 0
    shape = (self.num_heads, n, self.head_dim)
    keys = [np.empty(shape, np.float32) for _ in self.layers]
    values = [np.empty(shape, np.float32) for _ in self.layers]
    for i in range(len(self.layers) if shared else 0):
      keys[i][:, :shared] = reuse.keys[i][:, :shared]
      values[i][:, :shared] = reuse.values[i][:, :shared]
    positions = np.arange(n)
    for begin in range(shared, n, block):
      end = min(begin + block, n)
      queries, seen = positions[begin:end], positions[:end]
      if causal:
        mask = np.where(seen[None, :] <= queries[:, None], 0.0, _MASKED).astype(np.float32)
      else:  # input_full_attention: the whole prefix sees itself
        mask = np.zeros((len(queries), end), np.float32)
      bias = self.bias(begin, end - begin, 0, end) + mask
      x = self.embedding[inputs[begin:end]]
      for i, layer in enumerate(self.layers):
        h = _rms_norm(x, layer.self_norm)
        att = layer.self_attention
        q, keys[i][:, begin:end], values[i][:, begin:end] = att.query_key_value_heads(h)
        k, v = keys[i][:, :end], values[i][:, :end]
        x = x + att.merge(_softmax(q @ np.swapaxes(k, -1, -2) + bias) @ v)
        if cross is not None:
          x = x + self._cross(layer, x, cross[i])
        x = self._mlp(layer, x)
    return Prefix(keys, values, cross, n, self.logits(x[-1]), inputs if causal else None,
                  read=n - shared)

  @staticmethod
  def _shared_blocks(reuse: Optional[Prefix], inputs: np.ndarray) -> int:
    """How many first positions of `inputs`, in whole READ_BLOCKs, `reuse` has read already (0:
    read them all). The last position is always read: its output gives the logits."""
    if reuse is None or reuse.inputs is None:
      return 0
    width = min(len(reuse.inputs), len(inputs) - 1)
    differ = np.nonzero(reuse.inputs[:width] != inputs[:width])[0]
    same = int(differ[0]) if len(differ) else width
    return same // READ_BLOCK * READ_BLOCK

  def _cross(self, layer: _Layer, x, cross):
    att = layer.cross_attention
    h = _rms_norm(x, layer.cross_norm)
    q = att.heads(h, att.query)
    k, v = cross
    return att.merge(_softmax(q @ np.swapaxes(k, -1, -2)) @ v)

  def step(self, beams: Beams, tokens: np.ndarray) -> np.ndarray:
    """Feeds one token per beam ([B] ids) at the next position; returns logits [B, vocab]."""
    prefix = beams.prefix
    position = prefix.length + beams.length
    prefix_bias = self.bias(position, 1, 0, prefix.length)  # [heads, 1, n]
    own_bias = self.bias(position, 1, prefix.length, beams.length + 1)  # [heads, 1, t + 1]
    t = beams.length
    beams.make_room()
    if self.native_step is not None:  # the same step in C (native.py)
      logits = self.native_step(
          self.embedding[tokens], prefix.keys_t, prefix.values,
          np.ascontiguousarray(prefix_bias[:, 0]), beams.keys, beams.values, t,
          np.ascontiguousarray(own_bias[:, 0]))
      beams.length += 1
      return logits
    x = self.embedding[tokens][:, None, :]  # [B, 1, d]
    for i, layer in enumerate(self.layers):
      q, k, v = layer.self_attention.query_key_value_heads(_rms_norm(x, layer.self_norm))
      beams.keys[i][:, :, t] = k[:, :, 0]
      beams.values[i][:, :, t] = v[:, :, 0]
      x = self._layer_after(layer, i, prefix, x, q, beams.keys[i][:, :, :t + 1],
                            beams.values[i][:, :, :t + 1], prefix_bias, own_bias)
    beams.length += 1
    return self.logits(x[:, 0])

  def read_after(self, prefix: Prefix, tokens: np.ndarray) -> np.ndarray:
    """Logits [B, T, vocab] after each of `tokens` [B, T], fed at the positions after `prefix`:
    what T `step`s of B beams give, read as one block per layer (the rows of a sequence and of
    the batch in one matrix product each) instead of T products of B rows. For scoring lines
    known in full (decoding.LineSearch.score): a line of 20 pieces costs one pass, not 20.
    Products of other shapes round differently: the logits agree with `step`'s to ~1e-5."""
    length = tokens.shape[1]
    n = prefix.length
    queries = np.arange(n, n + length)
    prefix_bias = self.bias(n, length, 0, n)  # [heads, T, n]
    own_bias = self.bias(n, length, n, length) + np.where(
        queries[None, :] <= queries[:, None], 0.0, _MASKED).astype(np.float32)  # [heads, T, T]
    x = self.embedding[tokens]  # [B, T, d]
    for i, layer in enumerate(self.layers):
      q, k, v = layer.self_attention.query_key_value_heads(_rms_norm(x, layer.self_norm))
      x = self._layer_after(layer, i, prefix, x, q, k, v, prefix_bias, own_bias)
    return _product(_rms_norm(x, self.final_norm), self._logits_kernel)

  def _layer_after(self, layer: _Layer, i: int, prefix: Prefix, x, q, k, v, prefix_bias,
                   own_bias):
    """Layer i's output for positions after `prefix` (`step`, `read_after`): x [B, T, d], their
    queries q [B, heads, T, hd] against the prefix's keys and their own k, v [B, heads, t, hd],
    with the biases [heads, T, n] and [heads, T, t] (the causal mask in the latter)."""
    att = layer.self_attention
    n = prefix.length
    # Against the prefix, one vector-matrix product per beam and head at a decode step: OpenBLAS's
    # matrix product of a few rows is the slower (a [heads, B, hd] x [heads, hd, n] product took
    # 2.3x as long at n = 400; measured here).
    weights = _softmax(np.concatenate([q @ prefix.keys_t[i] + prefix_bias,
                                       q @ np.swapaxes(k, -1, -2) + own_bias], axis=-1))
    x = x + att.merge(weights[..., :n] @ prefix.values[i] + weights[..., n:] @ v)
    if prefix.cross is not None:
      x = x + self._cross(layer, x, prefix.cross[i])
    return self._mlp(layer, x)


def load(model_dir: pathlib.Path, step: int) -> Optional[Network]:
  """The runtime of checkpoint `step` of model_dir, or None if it has not been written."""
  directory = runtime_dir(model_dir, step)
  if not (directory / MODEL_FILE).exists():
    return None
  return Network.load(directory)

