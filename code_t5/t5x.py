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

Architectures, told apart by the variable names (transformer.py's scopes:
`<tower>/block_NNN/<layer>/<Class>/...`, <layer> as make_layer_stack names it, or layer_NNN):
* encoder-decoder (`encoder/...`, `decoder/...`, `shared/embedding`): T5.1.0 or T5.1.1, tied or
  untied logits (`decoder/logits/kernel`);
* decoder-only LM / prefix LM (`transformer/...`) -> T5X's decoder_only network. A prefix LM's
  relative-position buckets were bidirectional in Mesh TF; model.gin says what that means in T5X;
* shared encoder-decoder (make_bitransformer.encoder_name = "decoder"): both Unitransformers are
  named "decoder" and their layers are named (self_attention, enc_dec_attention,
  dense_relu_dense), so the encoder's SelfAttention, DenseReluDense, their norms, the block-0
  relative bias and the final norm ARE the decoder's variables; only EncDecAttention is the
  decoder's alone. T5X's encoder-decoder has two towers: those tensors are copied into both.

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
import re
import shutil
import sys
import time
from typing import Dict, List, Optional, Sequence, Tuple

import msgpack
import numpy as np

from code_t5 import errors
from code_t5 import operative_config
from code_t5 import processes

T5X_VERSION = 3
ZARR_CHUNK_BYTES = 64 << 20  # t5x's chunk size limit
PARALLEL_MIN_BYTES = 1 << 20  # smaller tensors are one chunk: not worth a thread hand-off
DTYPES = ("float32", "bfloat16")
_NUM_BUCKETS = 32  # the only number of relative-position buckets T5X's example networks build
BYTE_EXTRA_IDS = 100  # code_t5.vocab.NUM_EXTRA_IDS (not imported: it would import TensorFlow)

Path = Tuple[str, ...]


class ConvertError(errors.UserError):
  """A one-line reason why a checkpoint cannot be converted, naming the variable or path."""


# ---------------------------------------------------------------- finding the checkpoint

_CKPT_INDEX = re.compile(r"^(.*\.ckpt-(\d+))\.index$")


def find_checkpoint(path: pathlib.Path, step: Optional[int] = None) -> str:
  """The checkpoint prefix for a model dir (latest, or --step) or a prefix given as is."""
  if pathlib.Path(f"{path}.index").is_file():
    if step is not None:
      raise ConvertError(f"--step applies to a model dir; {path} is a checkpoint prefix")
    return str(path)
  if not path.is_dir():
    raise ConvertError(f"{path} is neither a Mesh TF model dir nor a checkpoint prefix "
                       "(no such dir, no .index file)")
  steps = {int(m.group(2)): m.group(1) for p in path.iterdir()
           if (m := _CKPT_INDEX.match(str(p)))}
  if not steps:
    raise ConvertError(f"{path} holds no Mesh TF checkpoint (no *.ckpt-<step>.index)")
  if step is None:
    return steps[max(steps)]
  if step not in steps:
    raise ConvertError(f"{path} has no checkpoint for step {step} "
                       f"(steps: {', '.join(map(str, sorted(steps)))})")
  return steps[step]


# ---------------------------------------------------------------- what the variables are

_BLOCK_VAR = re.compile(r"^(encoder|decoder|transformer)/block_(\d+)/([^/]+)/(.+)$")
_SUBLAYER = re.compile(r"^(?:(SelfAttention|EncDecAttention)/(q|k|v|o|relative_attention_bias)"
                       r"|(DenseReluDense)/(wi|wi_0|wi_1|wo)/kernel|(rms_norm|layer_norm)/scale)$")
_GLOBAL_VAR = re.compile(r"^(?:(shared|transformer)/embedding"
                         r"|(encoder|decoder|transformer)/(?:rms_norm|final_layer_norm)/scale"
                         r"|(decoder|transformer)/logits/kernel|(global_step))$")
_SLOT = re.compile(r"^(.+)_slot_(v|vr|vc)$")
# Mesh TF's AdamWeightDecayOptimizer keeps <param>/adam_m and <param>/adam_v. T5X's Adafactor state
# has no place for them: --params-only (and the completion runtime, which reads params only)
# leaves them out; a full conversion refuses them.
_ADAM_SLOT = re.compile(r"^(.+)/adam_(m|v)$")
_NORM = "norm"
_T5X_ATTENTION = {"q": "query", "k": "key", "v": "value", "o": "out"}
_T5X_SUBLAYER = {("encoder", "SelfAttention"): "attention",
                 ("decoder", "SelfAttention"): "self_attention",
                 ("decoder", "EncDecAttention"): "encoder_decoder_attention",
                 ("encoder", "DenseReluDense"): "mlp", ("decoder", "DenseReluDense"): "mlp"}
_T5X_NORM = {("encoder", "SelfAttention"): "pre_attention_layer_norm",
             ("encoder", "DenseReluDense"): "pre_mlp_layer_norm",
             ("decoder", "SelfAttention"): "pre_self_attention_layer_norm",
             ("decoder", "EncDecAttention"): "pre_cross_attention_layer_norm",
             ("decoder", "DenseReluDense"): "pre_mlp_layer_norm"}
_STACK_CLASSES = {"encoder": ("SelfAttention", "DenseReluDense"),
                  "decoder": ("SelfAttention", "EncDecAttention", "DenseReluDense"),
                  "transformer": ("SelfAttention", "DenseReluDense")}


@dataclasses.dataclass(frozen=True)
class BlockVar:
  """`<tower>/block_<block>/<layer>/<cls>/<leaf>`; cls is "norm" for the layer's norm scale."""
  name: str
  tower: str
  block: int
  layer: str
  cls: str
  leaf: str


def _parse_block_var(name, prefix) -> Optional[BlockVar]:
  m = _BLOCK_VAR.match(name)
  if not m:
    return None
  sub = _SUBLAYER.match(m.group(4))
  if not sub:
    raise ConvertError(f"unknown variable {name} in {prefix}")
  cls, leaf = ((sub.group(1), sub.group(2)) if sub.group(1) else
               (sub.group(3), sub.group(4)) if sub.group(3) else (_NORM, sub.group(5)))
  return BlockVar(name, m.group(1), int(m.group(2)), m.group(3), cls, leaf)


@dataclasses.dataclass(frozen=True)
class Model:
  """The architecture as read from the variables (and the operative config)."""
  kind: str  # "encoder-decoder" or "decoder-only"
  shared: bool
  vocab_size: int
  d_model: int
  num_heads: int
  head_dim: int
  d_ff: int
  num_encoder_layers: int
  num_decoder_layers: int
  activations: Tuple[str, ...]
  activations_assumed: bool
  logits_via_embedding: bool
  prefix_lm: bool

  def describe(self) -> str:
    layers = (f"{self.num_encoder_layers}+{self.num_decoder_layers}"
              if self.kind == "encoder-decoder" else str(self.num_decoder_layers))
    kind = ("shared encoder-decoder" if self.shared else
            "decoder-only prefix LM" if self.prefix_lm else
            "decoder-only LM" if self.kind == "decoder-only" else self.kind)
    return (f"{kind}: d_model {self.d_model}, {self.num_heads} heads x {self.head_dim}, d_ff "
            f"{self.d_ff}, {layers} layers, vocab {self.vocab_size}, "
            f"{'/'.join(self.activations)}{' (assumed)' if self.activations_assumed else ''}, "
            f"{'tied' if self.logits_via_embedding else 'untied'} logits")


@dataclasses.dataclass
class Tensor:
  """One Mesh TF parameter: where it goes in T5X (several paths when shared), and its slots."""
  name: str
  paths: List[Path]
  slots: Dict[str, str] = dataclasses.field(default_factory=dict)  # "v"|"vr"|"vc" -> variable


def _towers_to_stacks(towers, has_cross_attention, prefix) -> Dict[str, List[str]]:
  """Mesh TF tower -> the T5X stacks it feeds."""
  if towers == {"encoder", "decoder"}:
    return {"encoder": ["encoder"], "decoder": ["decoder"]}
  if towers == {"transformer"}:
    return {"transformer": ["decoder"]}
  if towers == {"decoder"} and has_cross_attention:
    return {"decoder": ["encoder", "decoder"]}  # shared: the encoder ran in the decoder's scope
  raise ConvertError(f"cannot tell the architecture of {prefix} from its towers "
                     f"{sorted(towers) or 'none'}: expected encoder+decoder, transformer, or "
                     "decoder with EncDecAttention (shared)")


def _mesh_name(tower, block, layer, cls, leaf) -> str:
  """The Mesh TF name of a block variable (inverse of _parse_block_var)."""
  scope = f"{tower}/block_{block:03d}/{layer}"
  if cls == _NORM:
    return f"{scope}/{leaf}/scale"
  return f"{scope}/{cls}/{leaf}/kernel" if cls == "DenseReluDense" else f"{scope}/{cls}/{leaf}"


def _check_blocks(tower, block_vars, prefix) -> int:
  """Every block has the variables any block has (block 0's relative bias aside); -> #blocks."""
  per_block = {}
  for var in block_vars:
    if var.leaf != "relative_attention_bias":
      per_block.setdefault(var.block, set()).add((var.layer, var.cls, var.leaf))
  union = set().union(*per_block.values())
  num_blocks = 1 + max(var.block for var in block_vars)
  for block in range(num_blocks):
    for layer, cls, leaf in sorted(union - per_block.get(block, set())):
      raise ConvertError(f"missing variable {_mesh_name(tower, block, layer, cls, leaf)} "
                         f"in {prefix}")
  return num_blocks


def _layer_classes(tower, block_vars, prefix) -> Dict[str, str]:
  """layer scope -> its Mesh TF class (the norm of a scope belongs to that class's sublayer)."""
  classes = {}
  for var in block_vars:
    if var.cls != _NORM and classes.setdefault(var.layer, var.cls) != var.cls:
      raise ConvertError(f"{tower}/block_{var.block:03d}/{var.layer} in {prefix} holds both "
                         f"{classes[var.layer]} and {var.cls}: its norm cannot be placed")
  for var in block_vars:
    if var.cls == _NORM and var.layer not in classes:
      raise ConvertError(f"variable {var.name} in {prefix} is a norm without a sublayer")
  return classes


def _check_sublayers(tower, block0, classes, prefix):
  """The sublayers T5X's stack needs, one of each per block, each with all of its variables."""
  wanted = _STACK_CLASSES[tower]
  extra = sorted(set(classes.values()) - set(wanted))
  if extra:
    raise ConvertError(f"{tower} in {prefix} has {extra[0]} layers, which T5X's network for "
                       "this architecture lacks")
  have = {(v.layer, v.cls, v.leaf) for v in block0}
  for cls in wanted:
    layers = [layer for layer, c in classes.items() if c == cls]
    if not layers:
      raise ConvertError(f"missing variables {tower}/block_NNN/*/{cls}/* in {prefix}: T5X's "
                         f"{_T5X_SUBLAYER.get(('decoder', cls))} needs them")
    if len(layers) > 1:
      raise ConvertError(f"{tower} blocks in {prefix} have {len(layers)} {cls} layers; "
                         "T5X's networks have one")
    layer = layers[0]
    gated = any((layer, cls, leaf) in have for leaf in ("wi_0", "wi_1"))
    needed = {"SelfAttention": ["q", "k", "v", "o", "relative_attention_bias"],
              "EncDecAttention": ["q", "k", "v", "o"],
              "DenseReluDense": ["wi_0", "wi_1", "wo"] if gated else ["wi", "wo"]}[cls]
    for leaf in needed:
      if (layer, cls, leaf) not in have:
        raise ConvertError(f"missing variable {_mesh_name(tower, 0, layer, cls, leaf)} "
                           f"in {prefix}")
    if not any(v.cls == _NORM and v.layer == layer for v in block0):
      raise ConvertError(f"missing variable {_mesh_name(tower, 0, layer, _NORM, 'rms_norm')} "
                         f"in {prefix}")


def _block_paths(var, stacks, classes) -> List[Path]:
  """T5X paths of one block variable (relative to target/)."""
  cls = classes[var.layer] if var.cls == _NORM else var.cls
  paths = []
  for stack in stacks:
    if (stack, cls) not in _T5X_SUBLAYER:
      continue  # the shared decoder's EncDecAttention has no encoder copy
    layer = f"layers_{var.block}"
    if var.cls == _NORM:
      paths.append((stack, layer, _T5X_NORM[(stack, cls)], "scale"))
    elif var.leaf == "relative_attention_bias":
      paths.append((stack, "relpos_bias", "rel_embedding"))
    elif cls == "DenseReluDense":
      paths.append((stack, layer, "mlp", var.leaf, "kernel"))
    else:
      paths.append((stack, layer, _T5X_SUBLAYER[(stack, cls)], _T5X_ATTENTION[var.leaf],
                    "kernel"))
  return paths


def _global_paths(name, stacks_of) -> List[Path]:
  m = _GLOBAL_VAR.match(name)
  if m.group(1) == "shared":
    return [("token_embedder", "embedding")]
  if m.group(1):
    return [("decoder", "token_embedder", "embedding")]
  if m.group(2):
    return [(stack, f"{stack}_norm", "scale") for stack in stacks_of[m.group(2)]]
  return [("decoder", "logits_dense", "kernel")]


def _mesh_tf_factored(shape) -> Optional[Tuple[Tuple[int, ...], Tuple[int, ...]]]:
  """Shapes of Mesh TF Adafactor's (vr, vc) for a param shape: it drops the largest dim for vr
  and the second largest for vc (optimize.py _factored_dims: sorted by size, stable)."""
  if len(shape) < 2:
    return None
  order = sorted(range(len(shape)), key=lambda i: -shape[i])
  drop = lambda i: tuple(d for j, d in enumerate(shape) if j != i)
  return drop(order[0]), drop(order[1])


def _model_dims(tensors, shapes, prefix) -> Tuple[int, int, int, int, int]:
  """(d_model, vocab, heads, heads * head_dim, d_ff) as the model's first tensors define them."""
  def first(pattern):
    name = next(t.name for t in tensors if re.search(pattern, t.name))
    if len(shapes[name]) != 2:
      raise ConvertError(f"shape mismatch: variable {name} in {prefix} has shape "
                         f"{list(shapes[name])}, expected 2 dims")
    return shapes[name]
  vocab, d_model = first(r"/embedding$")
  heads, inner, d_ff = (first(r"/relative_attention_bias$")[0], first(r"Attention/q$")[1],
                        first(r"/wi(_0)?/kernel$")[1])
  if inner % heads:
    raise ConvertError(f"{prefix}: attention width {inner} is not a multiple of {heads} heads")
  return d_model, vocab, heads, inner, d_ff


def _expected_shape(name, dims) -> Tuple[int, ...]:
  d_model, vocab, heads, inner, d_ff = dims
  if name.endswith("/embedding"):
    return vocab, d_model
  if name.endswith("/logits/kernel"):
    return d_model, vocab
  leaf = name.rsplit("/", 2)[-2] if name.endswith("/kernel") else name.rsplit("/", 1)[-1]
  return {"q": (d_model, inner), "k": (d_model, inner), "v": (d_model, inner),
          "o": (inner, d_model), "relative_attention_bias": (heads, _NUM_BUCKETS),
          "wi": (d_model, d_ff), "wi_0": (d_model, d_ff), "wi_1": (d_model, d_ff),
          "wo": (d_ff, d_model), "scale": (d_model,)}[leaf]


def _check_shapes(tensors, shapes, dims, prefix):
  """Every parameter and slot against the dims the model's own tensors define."""
  for tensor in tensors:
    expected = {tensor.name: _expected_shape(tensor.name, dims)}
    vr_vc = _mesh_tf_factored(expected[tensor.name]) or ((), ())
    for kind, slot in tensor.slots.items():
      expected[slot] = expected[tensor.name] if kind == "v" else vr_vc[kind == "vc"]
    for name, shape in expected.items():
      if tuple(shapes[name]) != shape:
        raise ConvertError(f"shape mismatch: variable {name} in {prefix} has shape "
                           f"{list(shapes[name])}, expected {list(shape)}")


def _attach_slots(tensors, slot_names, params_only, prefix):
  """Adafactor slots onto their params; every param needs `v` or (`vr`, `vc`)."""
  by_name = {t.name: t for t in tensors}
  for name in slot_names:
    m = _SLOT.match(name)
    if m.group(1) not in by_name:
      raise ConvertError(f"unknown variable {name} in {prefix} (a slot of no known parameter)")
    by_name[m.group(1)].slots[m.group(2)] = name
  if params_only:
    for tensor in tensors:
      tensor.slots.clear()
    return
  if not slot_names:
    raise ConvertError(f"{prefix} has no Adafactor slot variables (*_slot_v, *_slot_vr/_vc): "
                       "convert it with --params-only")
  for tensor in tensors:
    kinds = set(tensor.slots)
    if kinds in ({"v"}, {"vr", "vc"}):
      continue
    if "v" in kinds:
      raise ConvertError(f"variable {tensor.name} in {prefix} has both _slot_v and _slot_vr/_vc")
    missing = sorted({"vr", "vc"} - kinds) if kinds else ["v"]
    raise ConvertError(f"missing variable {tensor.name}_slot_{missing[0]} in {prefix}")


@dataclasses.dataclass
class Plan:
  model: Model
  tensors: List[Tensor]  # global_step aside: it becomes state.step


def plan(shapes: Dict[str, Sequence[int]], prefix: str, params_only: bool = False,
         operative: Optional[operative_config.OperativeConfig] = None) -> Plan:
  """Checks the variable set of a checkpoint and maps every variable to its T5X paths."""
  slot_names = sorted(n for n in shapes if _SLOT.match(n))
  adam = sorted(n for n in shapes if (m := _ADAM_SLOT.match(n)) and m.group(1) in shapes)
  if adam and not params_only:
    raise ConvertError(f"{prefix} was trained with Adam ({adam[0]}): T5X's Adafactor state has no "
                       "place for its slots; convert it with --params-only")
  block_vars, globals_ = [], []
  for name in sorted(set(shapes) - set(slot_names) - set(adam)):
    var = _parse_block_var(name, prefix)
    if var:
      block_vars.append(var)
    elif _GLOBAL_VAR.match(name):
      globals_.append(name)
    else:
      raise ConvertError(f"unknown variable {name} in {prefix}")
  towers = {v.tower for v in block_vars}
  stacks_of = _towers_to_stacks(towers, any(v.cls == "EncDecAttention" for v in block_vars),
                                prefix)
  _check_globals(towers, globals_, prefix)
  tensors, num_layers, classes_of = [], {}, {}
  for tower in sorted(towers):
    own = [v for v in block_vars if v.tower == tower]
    num_layers[tower] = _check_blocks(tower, own, prefix)
    classes_of[tower] = _layer_classes(tower, own, prefix)
    _check_sublayers(tower, [v for v in own if v.block == 0], classes_of[tower], prefix)
    for var in own:
      if var.leaf == "relative_attention_bias" and var.block:
        raise ConvertError(f"variable {var.name} in {prefix}: per-layer relative attention bias "
                           "(relative_attention_type 'bias'); T5X's networks share one per stack")
      tensors.append(Tensor(var.name, _block_paths(var, stacks_of[tower], classes_of[tower])))
  for name in globals_:
    if name != "global_step":
      tensors.append(Tensor(name, _global_paths(name, stacks_of)))
  _attach_slots(tensors, slot_names, params_only, prefix)
  d_model, vocab, heads, inner, d_ff = dims = _model_dims(tensors, shapes, prefix)
  _check_shapes(tensors, shapes, dims, prefix)
  if tuple(shapes["global_step"]) != ():
    raise ConvertError(f"shape mismatch: variable global_step in {prefix} has shape "
                       f"{list(shapes['global_step'])}, expected []")
  model = _model(towers, stacks_of, num_layers, globals_, tensors,
                 operative or operative_config.OperativeConfig(),
                 (d_model, vocab, heads, inner // heads, d_ff))
  return Plan(model, tensors)


def _check_globals(towers, globals_, prefix):
  """The embedding, each tower's final norm and global_step; nothing of another architecture."""
  decoder_only = towers == {"transformer"}
  needed = [("global_step",), ("transformer/embedding",) if decoder_only else ("shared/embedding",)]
  needed += [(f"{tower}/rms_norm/scale", f"{tower}/final_layer_norm/scale")  # current, legacy
             for tower in sorted(towers)]
  for names in needed:
    if not set(names) & set(globals_):
      raise ConvertError(f"missing variable {names[0]} in {prefix}")
  scopes = towers | {"global_step"} | (set() if decoder_only else {"shared"})
  for name in globals_:
    if name.split("/")[0] not in scopes:
      raise ConvertError(f"unknown variable {name} in {prefix} (not part of this architecture)")


def _model(towers, stacks_of, num_layers, globals_, tensors, operative, dims) -> Model:
  d_model, vocab, heads, head_dim, d_ff = dims
  gated = any("/wi_0/" in t.name for t in tensors)
  activations = operative.value("DenseReluDense.activation")
  assumed = activations is None
  if assumed:
    activations = ["gelu", "linear"] if gated else "relu"
  activations = tuple(activations) if isinstance(activations, (list, tuple)) else (activations,)
  shared = stacks_of.get("decoder") == ["encoder", "decoder"]
  decoder_only = towers == {"transformer"}
  decoder_tower = "transformer" if decoder_only else "decoder"
  return Model(
      kind="decoder-only" if decoder_only else "encoder-decoder", shared=shared,
      vocab_size=vocab, d_model=d_model, num_heads=heads, head_dim=head_dim, d_ff=d_ff,
      num_encoder_layers=num_layers["decoder"] if shared else num_layers.get("encoder", 0),
      num_decoder_layers=num_layers[decoder_tower],
      activations=activations, activations_assumed=assumed,
      logits_via_embedding=not any(n.endswith("/logits/kernel") for n in globals_),
      prefix_lm=decoder_only and bool(
          operative.value("Unitransformer.input_full_attention")))


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


def _set(tree, path: Path, value):
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
  model: Model
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
    raise ConvertError(f"cannot read variable {name} from {prefix} (truncated or corrupt "
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

  def _tensorstore(self, kind, path: Path, array):
    spec, written = write_zarr(self.directory, ".".join(path), array, self.pool, self.workers)
    self.report.bytes_written += written
    self.report.leaves[kind] += 1
    return spec

  def param(self, tensor: Tensor):
    value = self._read(tensor.name)
    if value.dtype.name != self.report.dtype:
      value = value.astype(_numpy_dtype(self.report.dtype))
    for path in tensor.paths:
      _set(self.target, path, self._tensorstore("params", ("target",) + path, value))

  def slots(self, tensor: Tensor):
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


def gin_text(model: Model, prefix: str, step: int,
             operative: operative_config.OperativeConfig, params_only: bool = False) -> str:
  """A T5X gin config for the converted model: t5x's stock config, our sizes."""
  vocabulary = operative.value("task_name.vocabulary")
  lines = [f"# T5X model for {prefix} (step {step}), converted by code_t5.t5x.",
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
                    "a code_t5.spm_vocabulary.CodeSentencePieceVocabulary)" if vocabulary
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
    raise ConvertError(f"--dtype {dtype!r} is not one of {', '.join(DTYPES)}")
  prefix = find_checkpoint(pathlib.Path(source), step)
  import tensorflow as tf  # pylint: disable=g-import-not-at-top  (slow; after argument checks)
  try:
    reader = tf.train.load_checkpoint(prefix)
  except (tf.errors.OpError, ValueError) as e:
    raise ConvertError(f"cannot read the checkpoint index of {prefix}: "
                       f"{(str(e).strip().splitlines() or [type(e).__name__])[0]}") from None
  operative = operative_config.OperativeConfig.of_model_dir(pathlib.Path(prefix).parent)
  the_plan = plan(reader.get_variable_to_shape_map(), prefix, params_only, operative)
  report = Report(prefix, out, 0, the_plan.model, params_only, dtype)
  report.step = int(_read(reader, "global_step", prefix, report))
  final = out / f"checkpoint_{report.step}"
  if final.exists() and not force:
    raise ConvertError(f"{final} exists: pass --force to replace it")
  created_out = not out.exists()
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
    (temporary / "model.gin").write_text(gin_text(the_plan.model, prefix, report.step, operative,
                                                  params_only))
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
