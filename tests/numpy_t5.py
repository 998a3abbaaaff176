"""An independent NumPy forward pass of T5X's T5 networks, reading only a T5X checkpoint.

Written for the tests from T5X's network definitions (t5x/examples/t5/network.py for the
encoder-decoder, t5x/examples/decoder_only/network.py for the decoder-only LM, layers.py for both),
not from the converter: it reads the checkpoint with msgpack + tensorstore only, and computes in
float32 what T5X computes in eval mode (no dropout):

* pre-norm residual blocks; T5 RMS LayerNorm (epsilon 1e-6, scale, no bias);
* attention without 1/sqrt(d) scaling, a shared relative-position bias per stack (T5X's bucket
  function, bidirectional in the encoder), masks as T5X's make_attention_mask/make_decoder_mask
  (added as -1e10);
* MLP: product of activations (('relu',) or ('gelu', 'linear'), flax's tanh-approximate gelu);
* logits: through the embedding divided by sqrt(d_model) when there is no logits_dense kernel.
"""

import dataclasses
import os
from typing import Any, Dict, Optional, Sequence

import msgpack
import numpy as np
import tensorstore as ts

_MASKED = -1e10
_NUM_BUCKETS = 32
_MAX_DISTANCE = 128


# ------------------------------------------------------------------ reading a T5X checkpoint

def _ext_hook(code, data):
  """flax.serialization's ndarray (1) and numpy scalar (3) extension types."""
  if code in (1, 3):
    shape, dtype, buffer = msgpack.unpackb(data)
    array = np.frombuffer(buffer, dtype=_dtype(dtype)).reshape(shape)
    return array if code == 1 else array[()]
  return msgpack.ExtType(code, data)


def _dtype(name):
  if name == "bfloat16":
    import ml_dtypes  # pylint: disable=g-import-not-at-top
    return ml_dtypes.bfloat16
  return np.dtype(name)


def read_leaves(node, directory):
  """Replaces TensorStore spec leaves by the arrays they point at (relative to `directory`)."""
  if isinstance(node, dict) and "driver" in node and "kvstore" in node:
    spec = dict(node, kvstore=dict(node["kvstore"],
                                   path=os.path.join(directory, node["kvstore"]["path"])))
    # T5X's reader drops chunks/compressor from the spec: the .zarray on disk decides.
    spec["metadata"] = {k: v for k, v in spec.get("metadata", {}).items()
                        if k not in ("chunks", "compressor")}
    return ts.open(spec, open=True).result().read().result()
  if isinstance(node, dict):
    return {key: read_leaves(value, directory) for key, value in node.items()}
  return node


def read_checkpoint(checkpoint_dir) -> Dict[str, Any]:
  """The msgpack tree of `checkpoint_dir/checkpoint` with every leaf read as a NumPy array."""
  with open(os.path.join(checkpoint_dir, "checkpoint"), "rb") as f:
    tree = msgpack.unpackb(f.read(), ext_hook=_ext_hook, raw=False)
  return read_leaves(tree, str(checkpoint_dir))


def flatten(tree, prefix=()) -> Dict[str, Any]:
  """{"a/b/c": leaf} of a nested dict."""
  out = {}
  for key, value in tree.items():
    if isinstance(value, dict):
      out.update(flatten(value, prefix + (key,)))
    else:
      out["/".join(prefix + (key,))] = value
  return out


# ------------------------------------------------------------------ the network

@dataclasses.dataclass(frozen=True)
class Config:
  num_heads: int
  mlp_activations: Sequence[str] = ("relu",)
  # T5X's decoders use unidirectional buckets; Mesh TF's prefix LM used bidirectional ones.
  bidirectional_decoder_relpos: bool = False


def _f32(params):
  return {key: _f32(value) if isinstance(value, dict) else np.asarray(value, np.float32)
          for key, value in params.items()}


def _rms_norm(x, scale):
  return x / np.sqrt(np.mean(np.square(x), axis=-1, keepdims=True) + 1e-6) * scale


def _gelu(x):
  return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))


_ACTIVATIONS = {"relu": lambda x: np.maximum(x, 0.0), "gelu": _gelu, "linear": lambda x: x}


def relative_position_bucket(relative_position, bidirectional):
  """T5X's RelativePositionBiases._relative_position_bucket (32 buckets, max distance 128)."""
  num_buckets, ret = _NUM_BUCKETS, 0
  n = -relative_position
  if bidirectional:
    num_buckets //= 2
    ret += (n < 0).astype(np.int32) * num_buckets
    n = np.abs(n)
  else:
    n = np.maximum(n, 0)
  max_exact = num_buckets // 2
  large = max_exact + (np.log(n.astype(np.float32) / max_exact + np.finfo(np.float32).eps)
                       / np.log(_MAX_DISTANCE / max_exact)
                       * (num_buckets - max_exact)).astype(np.int32)
  return ret + np.where(n < max_exact, n, np.minimum(large, num_buckets - 1))


def _relpos_bias(table, length, bidirectional):
  """[heads, length, length] bias from the [heads, buckets] table."""
  position = np.arange(length)
  buckets = relative_position_bucket(position[None, :] - position[:, None], bidirectional)
  return table[:, buckets]


def _attention(params, x_q, x_kv, mask, bias, num_heads):
  """Multi-head attention; mask [B, 1, q, k] (bool), bias [heads, q, k] or None."""
  def heads(x, kernel):
    y = x @ kernel
    return y.reshape(y.shape[:2] + (num_heads, -1))
  q = heads(x_q, params["query"]["kernel"])
  k = heads(x_kv, params["key"]["kernel"])
  v = heads(x_kv, params["value"]["kernel"])
  logits = np.einsum("bqhd,bkhd->bhqk", q, k)
  if bias is not None:
    logits = logits + bias[None]
  logits = logits + np.where(mask, 0.0, _MASKED).astype(np.float32)
  logits = logits - logits.max(axis=-1, keepdims=True)
  weights = np.exp(logits)
  weights /= weights.sum(axis=-1, keepdims=True)
  out = np.einsum("bhqk,bkhd->bqhd", weights, v)
  return out.reshape(out.shape[:2] + (-1,)) @ params["out"]["kernel"]


def _mlp(params, x, activations):
  names = ["wi"] if len(activations) == 1 else [f"wi_{i}" for i in range(len(activations))]
  hidden = np.ones((), np.float32)
  for name, activation in zip(names, activations):
    hidden = hidden * _ACTIVATIONS[activation](x @ params[name]["kernel"])
  return hidden @ params["wo"]["kernel"]


def _pair_mask(query_ok, key_ok):
  """[B, 1, q, k] from [B, q] and [B, k] booleans (make_attention_mask with multiply)."""
  return (query_ok[:, :, None] & key_ok[:, None, :])[:, None]


def _decoder_mask(target_tokens, causal_attention=None):
  """T5X's make_decoder_mask: causal (or bidirectional inside the prefix) and not padding."""
  length = target_tokens.shape[1]
  causal = np.tril(np.ones((length, length), bool))[None, None]
  if causal_attention is not None:
    prefix = causal_attention.astype(bool)
    causal = causal | _pair_mask(prefix, prefix)
  valid = target_tokens > 0
  return causal & _pair_mask(valid, valid)


def _logits(params, tokens_embedding, y):
  if "logits_dense" in params:
    return y @ params["logits_dense"]["kernel"]
  return (y @ tokens_embedding.T) / np.sqrt(np.float32(y.shape[-1]))


def _num_layers(stack):
  return len([key for key in stack if key.startswith("layers_")])


def encode(params, config, encoder_tokens):
  enc, embedding = params["encoder"], params["token_embedder"]["embedding"]
  mask = _pair_mask(encoder_tokens > 0, encoder_tokens > 0)
  bias = _relpos_bias(enc["relpos_bias"]["rel_embedding"], encoder_tokens.shape[1], True)
  x = embedding[encoder_tokens]
  for i in range(_num_layers(enc)):
    layer = enc[f"layers_{i}"]
    h = _rms_norm(x, layer["pre_attention_layer_norm"]["scale"])
    x = x + _attention(layer["attention"], h, h, mask, bias, config.num_heads)
    h = _rms_norm(x, layer["pre_mlp_layer_norm"]["scale"])
    x = x + _mlp(layer["mlp"], h, config.mlp_activations)
  return _rms_norm(x, enc["encoder_norm"]["scale"])


def _decoder_stack(dec, config, x, self_mask, cross=None):
  """The decoder layers and final norm; cross = (encoded, encoder-decoder mask) or None."""
  bias = _relpos_bias(dec["relpos_bias"]["rel_embedding"], x.shape[1],
                      config.bidirectional_decoder_relpos)
  for i in range(_num_layers(dec)):
    layer = dec[f"layers_{i}"]
    h = _rms_norm(x, layer["pre_self_attention_layer_norm"]["scale"])
    x = x + _attention(layer["self_attention"], h, h, self_mask, bias, config.num_heads)
    if cross is not None:
      h = _rms_norm(x, layer["pre_cross_attention_layer_norm"]["scale"])
      x = x + _attention(layer["encoder_decoder_attention"], h, cross[0], cross[1], None,
                         config.num_heads)
    h = _rms_norm(x, layer["pre_mlp_layer_norm"]["scale"])
    x = x + _mlp(layer["mlp"], h, config.mlp_activations)
  return _rms_norm(x, dec["decoder_norm"]["scale"])


def encoder_decoder_logits(target, config, encoder_tokens, decoder_input_tokens,
                           decoder_target_tokens):
  """T5X Transformer.__call__ (network.py), eval mode: [B, Lt, vocab] float32."""
  params = _f32(target)
  embedding = params["token_embedder"]["embedding"]
  encoded = encode(params, config, encoder_tokens)
  cross_mask = _pair_mask(decoder_target_tokens > 0, encoder_tokens > 0)
  y = _decoder_stack(params["decoder"], config, embedding[decoder_input_tokens],
                     _decoder_mask(decoder_target_tokens), cross=(encoded, cross_mask))
  return _logits(params["decoder"], embedding, y)


def decoder_only_logits(target, config, decoder_input_tokens, decoder_target_tokens,
                        decoder_causal_attention: Optional[np.ndarray] = None):
  """T5X decoder_only Decoder.__call__ (network.py), eval mode: [B, L, vocab] float32."""
  dec = _f32(target)["decoder"]
  embedding = dec["token_embedder"]["embedding"]
  y = _decoder_stack(dec, config, embedding[decoder_input_tokens],
                     _decoder_mask(decoder_target_tokens, decoder_causal_attention))
  return _logits(dec, embedding, y)


def shift_right(tokens):
  """Decoder inputs: the targets shifted right by one, 0 first (seqio's autoregressive inputs)."""
  return np.pad(tokens, ((0, 0), (1, 0)))[:, :-1]
