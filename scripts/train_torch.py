"""Trains the shipped causal LM's network in PyTorch on a GPU, on the cursor_lm v3 task's examples.

For a machine with a GPU and no TensorFlow (Mesh TF cannot run there): the network is the one
Mesh TF trains for models/causal_lm.gin (T5.1.0 decoder-only: RMS norms, ReLU MLP, one shared
relative-position bias with 32 unidirectional buckets up to distance 128, unscaled dot-product
attention, logits = final norm x embedding^T / sqrt(d_model)), as code_t5.engine.runtime
computes it; tests/train_torch_test.py checks the two give the same logits. The examples are
cursor_lm v3's (code_t5/data/preprocessors.py), drawn here in Python from the corpus's texts:
per file ceil(bytes / 2,040) cursors, half after a random line's indentation and half anywhere
outside leading indentation; the 255 pieces before the cursor and the 255 after it, each side
tokenized on its own with BPE-dropout 0.05, each with its EOS; packed into rows of 512 positions
as Mesh TF's delimited_lm packs them (an example's inputs then its targets, positions from 0).

    python scripts/export_texts.py --root /data/sitepackages --max-mb 252 --out texts.xz
    python scripts/train_torch.py --texts texts.xz --vocab code_t5/vocabs/flcc_dev_spm.model \
        --model mini:4:1e-3:code_t5/pretrained/MODEL/runtime/stepN --minutes 8 --out DIR
    python scripts/import_torch_weights.py DIR/mini.npz --like code_t5/pretrained/MODEL \
        --step N --model-dir MODEL_DIR            # then code-t5 pack MODEL_DIR --out OUT

--model NAME:LAYERS:LR[:INIT] (repeatable: several networks train on the same batches): INIT is
a runtime folder (or this script's output); layers it lacks start as residual no-ops. AdamW,
warm-up over --warmup steps, then the rate falls linearly to 0 at --minutes (time, not steps:
the run ends annealed whenever its time is up). Output: NAME.npz (Mesh TF variable names ->
bfloat16 bits), written every --save-every seconds and at the end, and NAME.json (steps, the
training loss every 50 steps; with --heldout the loss on held-out repositories before and after).
docs/training.md has the run that made the shipped model.

It imports nothing of code_t5: importing the package registers its tasks, which imports TensorFlow.
So the few pieces it shares with the package are written here again (the tokenizer's split at a
literal "\u2581", runtime's relative-position buckets and parameter files, cursor_lm's constants
and cursors), each checked against the package's own by tests/train_torch_test.py.
"""

import argparse
import json
import lzma
import math
import os
import pathlib
import signal
import struct
import sys
import time

import numpy as np

LEFT_CHARS = RIGHT_CHARS = 16 * 255  # preprocessors.cursor_lm: MAX_CHARS_PER_TOKEN x length
FIRST_TRY_CHARS = 1600  # most cursors have 255 pieces within this many characters
WINDOW_BYTES = 4 * 510  # _BYTES_PER_TOKEN["subword"] x (inputs + targets lengths)
PIECES = 255
SIMILAR_PIECES = 192  # similar_code.MAX_PIECES
GROUP_FILES = 64
ROW = 512
EOS = 1
SPACE_SYMBOL = "\u2581"


# ------------------------------------------------------------------------------------------------
# Examples


def read_texts(path: pathlib.Path):
  data = lzma.decompress(pathlib.Path(path).read_bytes())
  texts, i = [], 0
  while i < len(data):
    (n,) = struct.unpack_from("<I", data, i)
    texts.append(data[i + 4:i + 4 + n])
    i += 4 + n
  return texts


def cursor_positions(text: str):
  """(allowed, line_starts): characters outside leading indentation, and each line's first
  code character (preprocessors._outside_indentation and _line_code_starts)."""
  chars = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
  newline = chars == 10
  indent = (chars == 32) | (chars == 9) | (chars == 12)
  code = ~(newline | indent)
  line = np.cumsum(newline) - newline
  code_before = np.cumsum(code) - code
  first_of_line = np.ones(len(chars), bool)
  first_of_line[1:] = line[1:] != line[:-1]
  line_start_code_before = code_before[first_of_line][line]
  leading = indent & (code_before == line_start_code_before)
  allowed = np.flatnonzero(~leading)
  # first code character per line: code chars whose code_before equals their line's start value
  code_idx = np.flatnonzero(code)
  starts = code_idx[code_before[code_idx] == line_start_code_before[code_idx]]
  return allowed, starts


class Encoder:

  def __init__(self, model_file, alpha):
    import sentencepiece  # pylint: disable=g-import-not-at-top
    self.sp = sentencepiece.SentencePieceProcessor(model_file=str(model_file))
    self.alpha = alpha
    self.space_ids = [self.sp.piece_to_id(f"<0x{b:02X}>") for b in SPACE_SYMBOL.encode("utf-8")]

  def encode(self, text):
    ids = []
    for i, part in enumerate(text.split(SPACE_SYMBOL)):
      if i:
        ids.extend(self.space_ids)
      if self.alpha:
        ids.extend(self.sp.encode(part, enable_sampling=True, alpha=self.alpha, nbest_size=-1))
      else:
        ids.extend(self.sp.encode(part))
    return ids


def example(text: str, cursor: int, encoder: Encoder, similar: str = ""):
  """inputs (last 255 pieces before the cursor + EOS) + targets (first 255 after it + EOS).

  With `similar` (similar_code.find's window for the cursor), its last SIMILAR_PIECES pieces come
  first, as the engine puts them before the context (complete.Completer.context_ids), and the
  targets are cut to what fits in one row."""
  start = max(0, cursor - FIRST_TRY_CHARS)
  left = encoder.encode(text[start:cursor])
  if len(left) < PIECES and start > 0:
    left = encoder.encode(text[max(0, cursor - LEFT_CHARS):cursor])
  right = encoder.encode(text[cursor:cursor + FIRST_TRY_CHARS])
  if len(right) < PIECES and cursor + FIRST_TRY_CHARS < len(text):
    right = encoder.encode(text[cursor:cursor + RIGHT_CHARS])
  inputs = left[-PIECES:]
  if similar:
    inputs = encoder.encode(similar)[-SIMILAR_PIECES:] + inputs
  return inputs + [EOS] + right[:min(PIECES, ROW - len(inputs) - 2)] + [EOS]


def code_t5_module(name: str):
  """The module code_t5.`name`, loaded without running the package's __init__ (which imports
  TensorFlow, absent on the device machine): the project's own code, not a copy."""
  import importlib  # pylint: disable=g-import-not-at-top
  import types  # pylint: disable=g-import-not-at-top
  package = pathlib.Path(__file__).resolve().parent.parent / "code_t5"
  for package_name, folder in (("code_t5", package), ("code_t5.engine", package / "engine")):
    if package_name not in sys.modules:
      module = types.ModuleType(package_name)
      module.__path__ = [str(folder)]
      sys.modules[package_name] = module
  return importlib.import_module(f"code_t5.{name}")


def similar_code_module():
  """code_t5.engine.similar_code: the engine's own RepoCoder look-up."""
  return code_t5_module("engine.similar_code")


def similar_groups(paths, group_files=GROUP_FILES):
  """Per record of `paths` ([repository, path] pairs), the records it may take similar code from:
  its repository's files in fixed random groups of up to `group_files` (a look-up in a whole
  large repository costs 30-50 ms, in a group ~1 ms; what the model learns is to use the window
  it is given)."""
  by_repo = {}
  for i, (repo, _) in enumerate(paths):
    by_repo.setdefault(repo, []).append(i)
  group_of, groups = [0] * len(paths), []
  rng = np.random.default_rng(0)  # the same groups in every worker
  for repo in sorted(by_repo):
    members = [by_repo[repo][i] for i in rng.permutation(len(by_repo[repo]))]
    for start in range(0, len(members), group_files):
      for i in members[start:start + group_files]:
        group_of[i] = len(groups)
      groups.append(members[start:start + group_files])
  return group_of, groups


class Examples:
  """Endless cursor_lm examples from `texts`, a file drawn in proportion to its cursors."""

  def __init__(self, texts, encoder, line_start_rate=0.5, seed=0, paths=None, similar_rate=0.0):
    self.texts = texts
    counts = np.array([(len(t) + WINDOW_BYTES - 1) // WINDOW_BYTES for t in texts], np.float64)
    self.cumulative = np.cumsum(counts)
    self.encoder = encoder
    self.line_start_rate = line_start_rate
    self.rng = np.random.default_rng(seed)
    self.paths = paths
    self.similar_rate = similar_rate if paths else 0.0
    if self.similar_rate:
      self.similar_code = similar_code_module()
      self.group_of, self.groups = similar_groups(paths)
      self.indexes = {}  # group -> its WindowIndex, built when first drawn

  def similar(self, f: int, text: str, cursor: int) -> str:
    """similar_code.find for the cursor: the file below its line and the other files of its
    group."""
    g = self.group_of[f]
    if g not in self.indexes:
      index = self.similar_code.WindowIndex()
      for i in self.groups[g]:
        index.add(self.paths[i][1], self.texts[i].decode("utf-8"))
      self.indexes[g] = index
    end = text.find("\n", cursor)
    below = text[end + 1:] if end >= 0 else ""
    return self.similar_code.find(text[:cursor], below, self.indexes[g], self.paths[f][1])

  def __iter__(self):
    while True:
      f = int(np.searchsorted(self.cumulative, self.rng.random() * self.cumulative[-1],
                              side="right"))
      text = self.texts[f].decode("utf-8")
      if not text:
        continue
      allowed, starts = cursor_positions(text)
      if len(starts) and self.rng.random() < self.line_start_rate:
        cursor = int(starts[self.rng.integers(len(starts))])
      else:
        cursor = int(allowed[self.rng.integers(len(allowed))]) if len(allowed) else 0
      similar = (self.similar(f, text, cursor)
                 if self.similar_rate and self.rng.random() < self.similar_rate else "")
      yield example(text, cursor, self.encoder, similar)


def pack(examples, rows):
  """[rows, 512] tokens and segment ids (0 = padding), greedily filled in order."""
  tokens = np.zeros((rows, ROW), np.int32)
  segments = np.zeros((rows, ROW), np.int32)
  r = used = segment = 0
  for ids in examples:
    if used + len(ids) > ROW:
      r += 1
      used = segment = 0
      if r == rows:
        break
    segment += 1
    tokens[r, used:used + len(ids)] = ids
    segments[r, used:used + len(ids)] = segment
    used += len(ids)
  return tokens, segments


# ------------------------------------------------------------------------------------------------
# The network


def read_weights(path: pathlib.Path):
  """Mesh TF name -> float32 array, from a runtime folder (model.json + params.npz, bfloat16 as
  raw 16 bits) or from this script's output (name -> raw bfloat16 bits)."""
  path = pathlib.Path(path)
  if path.is_dir():
    meta = json.loads((path / "model.json").read_text())
    stored = np.load(path / "params.npz")
    raw = {t["name"]: stored[key] for key, t in meta["tensors"].items()}
  else:
    raw = dict(np.load(path))
  return {name: (a.astype(np.uint32) << 16).view(np.float32) if a.dtype == np.uint16 else
          a.astype(np.float32) for name, a in raw.items()}


def bfloat16_bits(a: np.ndarray) -> np.ndarray:
  """float32 -> bfloat16's 16 bits, rounded to nearest even (as TensorFlow's cast)."""
  bits = np.ascontiguousarray(a, np.float32).view(np.uint32)
  return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def relative_position_bucket(relative_position):
  """runtime._relative_position_bucket, unidirectional (Mesh TF for a causal LM)."""
  num_buckets, max_exact, max_distance = 32, 16, 128
  n = np.maximum(-relative_position, 0)
  large = max_exact + (np.log(n.astype(np.float32) / max_exact + np.finfo(np.float32).eps)
                       / np.log(max_distance / max_exact)
                       * (num_buckets - max_exact)).astype(np.int64)
  return np.where(n < max_exact, n, np.minimum(large, num_buckets - 1))


def layer_names(i):
  b = f"transformer/block_{i:03d}"
  return {"q": f"{b}/layer_000/SelfAttention/q", "k": f"{b}/layer_000/SelfAttention/k",
          "v": f"{b}/layer_000/SelfAttention/v", "o": f"{b}/layer_000/SelfAttention/o",
          "norm1": f"{b}/layer_000/rms_norm/scale", "wi": f"{b}/layer_001/DenseReluDense/wi/kernel",
          "wo": f"{b}/layer_001/DenseReluDense/wo/kernel", "norm2": f"{b}/layer_001/rms_norm/scale"}


EMBEDDING = "transformer/embedding"
FINAL_NORM = "transformer/rms_norm/scale"
RELATIVE_BIAS = "transformer/block_000/layer_000/SelfAttention/relative_attention_bias"


def build(torch, layers, d_model=256, heads=4, head_dim=64, d_ff=1024, vocab=8192):
  nn = torch.nn
  F = torch.nn.functional

  def rms_norm(x, scale):
    x32 = x.float()
    return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype) * scale.to(x.dtype)

  class Network(nn.Module):

    def __init__(self):
      super().__init__()
      self.layers, self.heads, self.d_model = layers, heads, d_model
      p = {EMBEDDING: (vocab, d_model), FINAL_NORM: (d_model,), RELATIVE_BIAS: (heads, 32)}
      for i in range(layers):
        n = layer_names(i)
        p.update({n["q"]: (d_model, heads * head_dim), n["k"]: (d_model, heads * head_dim),
                  n["v"]: (d_model, heads * head_dim), n["o"]: (heads * head_dim, d_model),
                  n["norm1"]: (d_model,), n["wi"]: (d_model, d_ff), n["wo"]: (d_ff, d_model),
                  n["norm2"]: (d_model,)})
      self.names = sorted(p)
      self.params = nn.ParameterList([nn.Parameter(torch.zeros(p[k])) for k in self.names])
      self.index = {k: i for i, k in enumerate(self.names)}
      relative = np.arange(ROW)[None, :] - np.arange(ROW)[:, None]
      self.register_buffer("buckets", torch.from_numpy(relative_position_bucket(relative)),
                           persistent=False)
      self.register_buffer("causal", torch.from_numpy(relative <= 0), persistent=False)

    def p(self, name):
      return self.params[self.index[name]]

    def init_random(self, seed):
      """Mesh TF's initializers: embedding N(0, 1); q N(0, (d_model * head_dim)^-1/2); k, v, o
      and the MLP N(0, fan_in^-1/2); norms 1; relative bias N(0, 1) (scaled down)."""
      g = torch.Generator().manual_seed(seed)
      with torch.no_grad():
        for name in self.names:
          t = self.p(name)
          if name.endswith("scale"):
            t.fill_(1.0)
          elif name == EMBEDDING:
            t.copy_(torch.randn(t.shape, generator=g))
          elif name == RELATIVE_BIAS:
            t.copy_(torch.randn(t.shape, generator=g) * 0.1)
          elif name.endswith("/q"):
            t.copy_(torch.randn(t.shape, generator=g) * (t.shape[0] * head_dim) ** -0.5)
          else:
            t.copy_(torch.randn(t.shape, generator=g) * t.shape[0] ** -0.5)

    def load(self, arrays, zero_new=True):
      """Weights by Mesh TF name; layers the arrays lack start as residual no-ops (their
      attention output and MLP output kernels zero)."""
      with torch.no_grad():
        for name in self.names:
          if name in arrays:
            self.p(name).copy_(torch.from_numpy(np.asarray(arrays[name], np.float32)))
          elif zero_new and (name.endswith("/o") or name.endswith("wo/kernel")):
            self.p(name).zero_()
      return [n for n in self.names if n not in arrays]

    def forward(self, tokens, segments):
      """logits [B, 512, vocab] (float32) for packed rows; each segment reads [0, its tokens
      shifted right]."""
      b, length = tokens.shape
      starts = torch.ones_like(segments, dtype=torch.bool)
      starts[:, 1:] = segments[:, 1:] != segments[:, :-1]
      shifted = torch.zeros_like(tokens)
      shifted[:, 1:] = tokens[:, :-1]
      inputs = torch.where(starts, torch.zeros_like(tokens), shifted)
      same = segments[:, :, None] == segments[:, None, :]
      allowed = same & self.causal[:length, :length][None]
      bias = self.p(RELATIVE_BIAS)[:, self.buckets[:length, :length]]  # [h, L, L]
      dtype = torch.bfloat16 if tokens.is_cuda else torch.float32
      mask = torch.where(allowed[:, None], bias[None].to(dtype), torch.tensor(-1e9, dtype=dtype,
                                                                              device=tokens.device))
      x = self.p(EMBEDDING).to(dtype)[inputs]
      for i in range(self.layers):
        n = layer_names(i)
        h = rms_norm(x, self.p(n["norm1"]))

        def heads(kernel):
          return (h @ self.p(kernel).to(dtype)).view(b, length, self.heads, -1).transpose(1, 2)

        q, k, v = heads(n["q"]), heads(n["k"]), heads(n["v"])
        att = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=1.0)
        x = x + att.transpose(1, 2).reshape(b, length, -1) @ self.p(n["o"]).to(dtype)
        h = rms_norm(x, self.p(n["norm2"]))
        x = x + torch.relu(h @ self.p(n["wi"]).to(dtype)) @ self.p(n["wo"]).to(dtype)
      x = rms_norm(x, self.p(FINAL_NORM))
      return (x @ self.p(EMBEDDING).to(dtype).t()).float() / math.sqrt(self.d_model)

  return Network()


def loss_fn(torch, logits, tokens, z_loss=1e-4):
  weights = (tokens > 0).float()
  logz = torch.logsumexp(logits, -1)
  nll = logz - logits.gather(-1, tokens.long()[..., None])[..., 0]
  total = ((nll + z_loss * logz.square()) * weights).sum() / weights.sum()
  return total, (nll * weights).sum() / weights.sum()


# ------------------------------------------------------------------------------------------------
# Training


def heldout_batches(path, vocab, rows):
  """Fixed rows of held-out examples: cursors drawn with one seed, pieces canonical (as the
  engine encodes), 16 rows a batch."""
  stream = iter(Examples(read_texts(path), Encoder(vocab, alpha=0.0), seed=123))
  return [pack(stream, 16) for _ in range(max(1, rows // 16))]


def heldout_loss(torch, net, held, device):
  """Mean nats per piece over `held` (heldout_batches)."""
  total = count = 0
  with torch.no_grad():
    for tokens, segments in held:
      t = torch.from_numpy(tokens).to(device)
      _, nll = loss_fn(torch, net(t, torch.from_numpy(segments).to(device)), t)
      n = int((tokens > 0).sum())
      total, count = total + float(nll) * n, count + n
  return total / count


def train_loss(torch, forward, tokens, segments, device):
  """(loss with z-loss, nats per piece) of one batch, in bfloat16 autocast on a GPU."""
  with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=device == "cuda"):
    logits = forward(tokens, segments)
  return loss_fn(torch, logits, tokens)


def batches(args, texts, worker_seed, paths=None):
  encoder = Encoder(args.vocab, args.alpha)
  stream = iter(Examples(texts, encoder, seed=worker_seed, paths=paths,
                         similar_rate=args.similar_rate))
  while True:
    yield pack(stream, args.rows)


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--texts", type=pathlib.Path, required=True)
  parser.add_argument("--vocab", type=pathlib.Path, required=True)
  parser.add_argument("--alpha", type=float, default=0.05)
  parser.add_argument("--model", action="append", required=True, metavar="NAME:LAYERS:LR[:INIT]",
                      help="a network to train on the same batches (repeatable)")
  parser.add_argument("--rows", type=int, default=128, help="rows of 512 positions per batch")
  parser.add_argument("--minutes", type=float, default=8.0, help="training time; the learning "
                      "rate decays linearly to 0 over it")
  parser.add_argument("--warmup", type=int, default=300)
  parser.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 2) - 2),
                      help="processes drawing examples (0: this process draws them)")
  parser.add_argument("--save-every", type=float, default=90.0, help="seconds")
  parser.add_argument("--max-steps", type=int, default=0)
  parser.add_argument("--out", type=pathlib.Path, required=True)
  parser.add_argument("--force", action="store_true", help="replace the networks' NAME.npz and "
                      "NAME.json in --out")
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--heldout", type=pathlib.Path, help="texts of held-out repositories "
                      "(export_texts.py --split validation): each network's loss on them before "
                      "and after training, in NAME.json (--minutes 0: only measure)")
  parser.add_argument("--heldout-rows", type=int, default=128)
  parser.add_argument("--paths", type=pathlib.Path, help="export_texts.py --paths's file: the "
                      "texts' repositories, for --similar-rate")
  parser.add_argument("--similar-rate", type=float, default=0.0, help="share of the examples "
                      "whose inputs begin with the code most like the cursor's from its "
                      "repository (similar_code.find), as the engine reads it")
  parser.add_argument("--compile", action="store_true", help="run each network through "
                      "torch.compile (fused kernels: this 5M-weight network is bound by kernel "
                      "launches on a GPU); a network whose first compiled step fails trains eagerly")
  args = parser.parse_args(argv)
  if args.similar_rate and not args.paths:
    parser.error("--similar-rate needs --paths (export_texts.py --paths)")
  names = [spec.split(":")[0] for spec in args.model]
  # Before minutes of training: a rerun wrote over the last run's weights (helper-54's audit).
  existing = [args.out / f"{name}{suffix}" for name in names for suffix in (".npz", ".json")
              if (args.out / f"{name}{suffix}").exists()]
  if existing and not args.force:
    parser.error(f"--out {args.out} holds {existing[0].name} already: pass --force to replace "
                 "it, or give another --out")
  processes = code_t5_module("processes")
  arrays_file = code_t5_module("engine.arrays_file")

  try:
    import torch  # pylint: disable=g-import-not-at-top
  except ModuleNotFoundError:
    print("train_torch.py needs PyTorch, which this environment lacks: pip install torch (the "
          "build for your GPU, https://pytorch.org), then run it again", file=sys.stderr)
    return 2
  import torch.multiprocessing as mp  # pylint: disable=g-import-not-at-top
  device = "cuda" if torch.cuda.is_available() else "cpu"
  torch.backends.cuda.matmul.allow_tf32 = True
  args.out.mkdir(parents=True, exist_ok=True)

  models = []
  for spec in args.model:
    name, layers, lr, *init = spec.split(":")
    net = build(torch, int(layers))
    net.init_random(args.seed)  # what the init does not give (new layers) starts at random
    if init:
      missing = net.load(read_weights(init[0]))
      print(f"{name}: {layers} layers from {init[0]}; new: {len(missing)} tensors", flush=True)
    else:
      print(f"{name}: {layers} layers, random", flush=True)
    net.to(device)
    optimizer = torch.optim.AdamW(net.parameters(), lr=float(lr), betas=(0.9, 0.98), eps=1e-8,
                                  weight_decay=0.0, **({"fused": True} if device == "cuda" else {}))
    models.append({"name": name, "net": net, "opt": optimizer, "lr": float(lr), "log": [],
                   "forward": torch.compile(net) if args.compile else net})

  texts = read_texts(args.texts)  # once, shared with the forked workers
  paths = json.loads(args.paths.read_text()) if args.paths else None
  if paths is not None and len(paths) != len(texts):
    parser.error(f"--paths {args.paths} lists {len(paths):,} files, --texts holds {len(texts):,}")
  print(f"{len(texts):,} files, {sum(map(len, texts)) / 1e6:.0f} MB; device {device} "
        f"({torch.cuda.get_device_name() if device == 'cuda' else 'CPU'}), torch {torch.__version__}",
        flush=True)
  ctx = mp.get_context("fork")
  queue = ctx.Queue(maxsize=4 * max(args.workers, 1))

  die_with_this_process = processes.dying_with_this_process()

  def produce(seed):
    # A daemon worker ends with a run that exits; killed (kill -9, a SIGTERM), the run left its
    # workers blocked in queue.put, 250 MB each (helper-54's audit): the kernel ends them now.
    die_with_this_process()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C is the run's to handle
    for tokens, segments in batches(args, texts, seed, paths):
      queue.put((tokens, segments))

  workers = [ctx.Process(target=produce, args=(args.seed * 1000 + w,), daemon=True)
             for w in range(args.workers)]
  for w in workers:
    w.start()
  own = None if workers else batches(args, texts, args.seed * 1000, paths)

  def save(final=False):
    for m in models:
      arrays = {n: bfloat16_bits(m["net"].p(n).detach().float().cpu().numpy())
                for n in m["net"].names}
      processes.write_file_beside(args.out / f"{m['name']}.npz",
                                  lambda f: arrays_file.save(f, arrays), binary=True)
      summary = json.dumps({"steps": m["steps"], "final": final, "log": m["log"],
                            **{k: m[k] for k in ("heldout_before", "heldout_after") if k in m}},
                           indent=1)
      processes.write_file_beside(args.out / f"{m['name']}.json", lambda f: f.write(summary))

  held = heldout_batches(args.heldout, args.vocab, args.heldout_rows) if args.heldout else None
  for m in models:
    if held:
      m["heldout_before"] = heldout_loss(torch, m["net"], held, device)
      print(f"{m['name']}: held-out loss {m['heldout_before']:.4f} nats/piece", flush=True)

  budget = args.minutes * 60
  start = time.time()
  first = None
  last_save = last_print = start
  step = 0
  for m in models:
    m["steps"] = 0
  while True:
    tokens, segments = next(own) if own else queue.get()
    now = time.time()
    if first is None:
      first = now
      print(f"first batch after {now - start:.1f} s", flush=True)
    elapsed = now - first
    if elapsed >= budget or (args.max_steps and step >= args.max_steps):
      break
    tokens = torch.from_numpy(tokens).to(device, non_blocking=True)
    segments = torch.from_numpy(segments).to(device, non_blocking=True)
    frac = elapsed / budget
    for m in models:
      lr = m["lr"] * min(1.0, (step + 1) / args.warmup) * max(0.0, 1.0 - frac)
      for group in m["opt"].param_groups:
        group["lr"] = lr
      try:
        loss, nll = train_loss(torch, m["forward"], tokens, segments, device)
      except Exception as e:  # pylint: disable=broad-except
        if m["forward"] is m["net"] or m["steps"]:
          raise
        print(f"{m['name']}: torch.compile failed ({type(e).__name__}: {str(e)[:200]}); "
              "training eagerly", flush=True)
        m["forward"] = m["net"]
        loss, nll = train_loss(torch, m["forward"], tokens, segments, device)
      m["opt"].zero_grad(set_to_none=True)
      loss.backward()
      torch.nn.utils.clip_grad_norm_(m["net"].parameters(), 1.0)
      m["opt"].step()
      m["steps"] += 1
      if step % 50 == 0:
        m["log"].append([step, round(elapsed, 1), float(nll.detach())])
    step += 1
    if now - last_print > 15:
      last_print = now
      rate = step / max(elapsed, 1e-9)
      print(f"step {step} ({elapsed:.0f} s, {rate:.1f} steps/s, "
            f"{rate * args.rows * ROW / 1e6:.2f}M token slots/s, queue {queue.qsize() if workers else 0}): " +
            ", ".join(f"{m['name']} nll {m['log'][-1][2]:.3f}" for m in models if m["log"]),
            flush=True)
    if now - last_save > args.save_every:
      last_save = now
      save()
  for m in models:
    if held:
      m["heldout_after"] = heldout_loss(torch, m["net"], held, device)
      print(f"{m['name']}: held-out loss after {m['steps']} steps {m['heldout_after']:.4f}",
            flush=True)
  save(final=True)
  print(f"done: {step} steps in {time.time() - first:.0f} s", flush=True)
  for w in workers:
    w.terminate()


if __name__ == "__main__":
  try:
    sys.exit(main())
  except KeyboardInterrupt:  # one line, not a traceback per process (helper-54's audit)
    print("train_torch.py: stopped by Ctrl-C; --out holds the networks' last save (every "
          "--save-every seconds)", file=sys.stderr)
    sys.exit(130)
