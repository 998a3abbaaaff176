"""Mesh TF checkpoints as training writes them: where a model dir's checkpoint is, and what its
variables are, mapped onto T5X's T5 parameter tree.

- `find_checkpoint`: the checkpoint prefix of a model dir (its newest, or a given step) or of a
  prefix given as is (`code-t5 train --init-from`, `code-t5 convert`).
- `plan`: checks a checkpoint's variable set and maps every variable to its T5X paths, and reads
  the architecture from the variables and the operative config (`Model`). `code-t5 convert`
  (code_t5/convert/t5x.py) writes T5X's format from it; the completion runtime
  (code_t5/engine/runtime.py) builds T5X's network from it, params only.

Architectures, told apart by the variable names (transformer.py's scopes:
`<tower>/block_NNN/<layer>/<Class>/...`, <layer> as make_layer_stack names it, or layer_NNN):
* encoder-decoder (`encoder/...`, `decoder/...`, `shared/embedding`): T5.1.0 or T5.1.1, tied or
  untied logits (`decoder/logits/kernel`);
* decoder-only LM / prefix LM (`transformer/...`) -> T5X's decoder_only network;
* shared encoder-decoder (make_bitransformer.encoder_name = "decoder"): both Unitransformers are
  named "decoder" and their layers are named (self_attention, enc_dec_attention,
  dense_relu_dense), so the encoder's SelfAttention, DenseReluDense, their norms, the block-0
  relative bias and the final norm ARE the decoder's variables; only EncDecAttention is the
  decoder's alone. T5X's encoder-decoder has two towers: those tensors go to both.

Activations and "prefix LM or not" are not in the checkpoint: they come from the
operative_config.gin Mesh TF writes beside it (T5 defaults, flagged as assumed, without one).
"""

import dataclasses
import os
import pathlib
import re
import reprlib
from typing import Dict, List, Optional, Sequence, Tuple

from code_t5 import errors
from code_t5 import stranger_paths
from code_t5.training import checkpoint_index
from code_t5.training import operative_config

_NUM_BUCKETS = 32  # the only number of relative-position buckets T5X's example networks build

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
    # (A file said "no such dir" too: helper-44's audit.)
    what = ("a file" if path.exists() else "no such file or folder") + f", and no {path}.index"
    raise ConvertError(f"{path} is neither a Mesh TF model dir nor a checkpoint prefix ({what})")
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


# What a checkpoint's variables may claim beyond twice the bytes its shards store (holes left
# out): see open_checkpoint.
_HOLES_ALLOWED = 64 << 20


def open_checkpoint(prefix, error=ConvertError, follow_links=True):
  """TensorFlow's reader of checkpoint `prefix`; error(one line) where it cannot be opened (or
  check_checkpoint refuses it)."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top  (slow: only where one is read)
  check_checkpoint(prefix, error, follow_links)
  try:
    return tf.train.load_checkpoint(str(prefix))
  except (tf.errors.OpError, ValueError) as e:
    raise error(f"cannot read the checkpoint index of {prefix}: {_first_line(e)}") from None


def check_checkpoint(prefix, error=ConvertError, follow_links=True) -> None:
  """error(one line) unless checkpoint `prefix` is one TensorFlow's reader can be given (it, or
  Mesh TF through it, reads the checkpoint after this; nothing here imports TensorFlow).

  The model dir may be a stranger's, and TensorFlow's reader trusts it: it blocks forever on a
  FIFO, reads a device to its end, aborts the process on a shape it cannot hold and allocates
  whatever shape a variable claims before reading it (a 2 TiB embedding: a crash; 4 GB over a
  sparse file of a few MB: 4 GB of memory). So the index is read first (checkpoint_index), the
  .data shards it names must be regular files, and its variables together may claim no more
  bytes than the shards hold (the sum of their sizes, as TensorFlow writes them), nor much more
  than they store on disk (a sparse file's holes left out).
  follow_links=False (pack, convert: they copy the checkpoint into their output) refuses an
  index or shard that is a link, which could lead to a checkpoint of the user's."""
  index_path = pathlib.Path(f"{prefix}.index")
  if os.path.isdir(prefix):  # (or a link to one)
    # TensorFlow's reader takes a folder at the prefix for a model dir and reads the checkpoint
    # its `checkpoint` file names, anywhere, past every check below.
    raise error(f"{prefix} is there as a folder of its own beside {index_path.name}, which "
                "TensorFlow would read instead: remove it or copy the checkpoint again")
  try:
    if not follow_links:
      stranger_paths.not_a_link(index_path)
    index = checkpoint_index.read(index_path)
  except OSError as e:
    raise error(f"cannot read {index_path}: {e.strerror}: copy the checkpoint again") from None
  except checkpoint_index.BadIndex as e:
    raise error(f"cannot read the checkpoint index of {prefix}: {e}") from None
  size = stored = 0
  shards = [pathlib.Path(f"{prefix}.data-{i:05d}-of-{index.num_shards:05d}")
            for i in sorted({v.shard for v in index.variables})]
  for path in shards:
    if not follow_links:
      stranger_paths.not_a_link(path)
    try:
      with stranger_paths.open_regular(path, max_bytes=None) as f:
        size += os.fstat(f.fileno()).st_size
        stored += stranger_paths.stored_bytes(f)
    except OSError as e:
      raise error(f"cannot read {path}: {e.strerror}: copy the checkpoint again") from None
  claimed = sum(v.bytes for v in index.variables)
  # Holes are allowed where a genuine checkpoint has them (zero-filled slots of a step-0
  # checkpoint, copied sparse or kept on a file system that stores zero records as holes), not
  # where the file is mostly hole: a few MB that would become gigabytes of memory.
  if claimed > size or claimed > 2 * stored + _HOLES_ALLOWED:
    largest = max(index.variables, key=lambda v: v.bytes)
    raise error(
        f"{index_path} claims {claimed:,} bytes of variables ({largest.name}: "
        f"{list(largest.shape)} {largest.dtype}, {largest.bytes:,} bytes), more than the "
        f"{stored:,} bytes stored in {shards[0].name if len(shards) == 1 else 'its .data files'}"
        f"{'' if size == stored else f' (of {size:,})'}:"
        " the checkpoint is truncated or damaged; copy it again")


def read_tensor(reader, name: str, prefix, error=ConvertError):
  """Variable `name` of the checkpoint `reader` reads; error(one line) naming it where it cannot
  be read (e.g. a truncated .data shard)."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  try:
    return reader.get_tensor(name)
  # pybind turns the reader's statuses into these: OUT_OF_RANGE (a short .data shard) is an
  # IndexError, INVALID_ARGUMENT a ValueError, the rest RuntimeError or an OpError.
  except (tf.errors.OpError, IndexError, ValueError, RuntimeError) as e:
    raise error(f"cannot read variable {name} from {prefix} (truncated or corrupt "
                f"checkpoint?): {_first_line(e)}") from None


def _first_line(error: BaseException) -> str:
  return (str(error).strip().splitlines() or [type(error).__name__])[0]


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
  operative = operative or operative_config.OperativeConfig()
  model = _model(towers, stacks_of, num_layers, globals_, tensors, operative,
                 (d_model, vocab, heads, inner // heads, d_ff))
  _check_config_fits(operative, prefix, model.kind == "decoder-only", _mlp_inputs(tensors),
                     None if model.activations_assumed else model.activations)
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


def _mlp_inputs(tensors) -> int:
  """The input kernels of each MLP: wi_0, wi_1, ... (a gated MLP), else one (wi)."""
  return len({m.group(1) for t in tensors if (m := re.search(r"/wi_(\d+)/", t.name))}) or 1


# Mesh TF's model types (utils.run.model_type) of the two architectures' checkpoints.
_MODEL_TYPES = {"lm": True, "delimited_lm": True, "bitransformer": False}  # -> decoder-only


def _check_config_fits(operative, prefix, decoder_only: bool, mlp_inputs: int,
                       activations: Optional[Tuple[str, ...]]) -> None:
  """ConvertError where the operative config is another architecture's than the checkpoint's
  variables: a model dir mixed up so was converted without a word, into a model.gin (gelu and
  linear beside one input kernel) that T5X cannot load the checkpoint with (helper-44's audit)."""
  model_type = operative.value("run.model_type", kind=str)
  if model_type in _MODEL_TYPES and _MODEL_TYPES[model_type] != decoder_only:
    raise ConvertError(
        f"{operative.path} is the config of a {model_type} model (run.model_type), and {prefix} "
        f"holds {'a decoder-only' if decoder_only else 'an encoder-decoder'} network: the two are "
        "not one model's; give the checkpoint's own model dir")
  if activations is not None and len(activations) != mlp_inputs:
    raise ConvertError(
        f"{operative.path} binds DenseReluDense.activation to {list(activations)}, and {prefix}'s "
        f"MLP has {mlp_inputs} input kernel{'s' if mlp_inputs > 1 else ''} "
        f"({'wi_0, wi_1' if mlp_inputs > 1 else 'wi'}): the two are not one model's; give the "
        "checkpoint's own model dir")


# Mesh TF's and T5X's activations are named by identifiers ("relu", "gelu", "linear", "swish").
_ACTIVATION = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _model(towers, stacks_of, num_layers, globals_, tensors, operative, dims) -> Model:
  d_model, vocab, heads, head_dim, d_ff = dims
  gated = any("/wi_0/" in t.name for t in tensors)
  activations = operative.value("DenseReluDense.activation")
  assumed = activations is None
  if assumed:
    activations = ["gelu", "linear"] if gated else "relu"
  activations = tuple(activations) if isinstance(activations, (list, tuple)) else (activations,)
  for activation in activations:
    # Each name goes into the T5X model.gin convert writes (and its comment): from a stranger's
    # operative config, anything but a name could be gin text that T5X carries out.
    if not (isinstance(activation, str) and _ACTIVATION.fullmatch(activation)):
      raise ConvertError(f"{operative.path} binds DenseReluDense.activation to "
                         f"{reprlib.repr(activation)}, not an activation's name: fix that binding")
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
