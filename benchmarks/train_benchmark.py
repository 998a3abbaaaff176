"""Where a `mesh_transformer_main` training run spends its time, and how fast it trains.

    python benchmarks/train_benchmark.py --size tiny --steps 100 [--torch] [--label NAME]
        [--gin-param BINDING]... [--env NAME=VALUE]... [--json out.json]

Runs the canonical training command (what `code-t5 train` runs, with the project's gin files) in a
fresh model dir, timestamps every line it prints, and reports, in seconds since launch:
model_fn / graph finalized / session ready / first step; the step-0 checkpoint (all that happens
between a ready session and the end of the first save: graph.pbtxt, the graph in the events file,
the meta graph, the checkpoint), the final save; steady steps/s and token slots/s (inputs +
targets, padding included) from the median step interval away from saves; compute/wall (steps x
median step time over the whole process' wall time); model FLOPs utilisation (MFU): 6 N FLOPs
per token, N = the weights the token passes through (model_flops_per_step; attention's
O(length^2) FLOPs not counted), against the machine's matmul peak measured in the same run
(before and after the training; the higher) and in the products' precision (--products: on a
CPU with AMX "auto" is bf16, and so are PyTorch's products and the peak); beside it, the same
rate from Mesh TF's own count of the step's einsum multiply-adds (attention and logits
included). Token slots are batch x (inputs + targets) for every model: the encoder-decoders' two
sequences, the decoder-only models' one sequence of both.

With --torch it then trains the same architecture and batch in PyTorch and prints its token
slots/s and our ratio to it: transformers' T5 with the encoder's layers tied to the decoder's, as
in `shared-prefix_lm`, or, for `causal_lm`, transformers' T5 decoder stack alone (no
encoder-decoder attention) with the logits through the embedding; ReLU, no dropout, Adafactor.
Prints figures only; asserts nothing.

With --profile N, every N-th step is traced (`code_t5.train_model.profile_steps`) and the last
trace is summed up: the traced step's wall time, the ops' summed time (above the wall where ops
ran at once on TensorFlow's inter-op threads) by op type, the matrix products by what they
compute (logits, MLP, attention projections, attention scores), and the wall by how many ops ran
at once (what ran alone is on the step's path) -- where the step's time goes.

    python benchmarks/train_benchmark.py --model causal_lm --size mini --vocab spm_dev --torch
    python benchmarks/train_benchmark.py --model causal_lm --size mini --vocab spm_dev \
        --steps 25 --profile 10
"""

import argparse
import collections
import json
import math
import pathlib
import re
import shutil
import statistics
import sys
import tempfile
import time
from typing import Dict

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import bench_utils  # pylint: disable=g-import-not-at-top,wrong-import-position

from code_t5.training import launcher  # pylint: disable=g-import-not-at-top,wrong-import-position
from code_t5.training import precision  # pylint: disable=g-import-not-at-top,wrong-import-position

SIZES = {  # d_model, d_ff, layers, heads, d_kv: gin_configs/sizes/*.gin
    "tiny": (64, 256, 2, 4, 16),
    "mini": (256, 1024, 4, 4, 64),
    "small": (512, 2048, 6, 8, 64),
    "base": (768, 3072, 12, 12, 64),
}


def checkpoint_parameters(model_dir: pathlib.Path) -> Dict[str, int]:
  """Weights in the latest checkpoint by top scope ("encoder", "decoder", "shared", ...), and
  those of the decoder's encoder-decoder attention; optimizer slots and counters excluded."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  path = tf.train.latest_checkpoint(str(model_dir))
  counts = collections.Counter()
  for name, shape in tf.train.list_variables(path):
    if "_slot_" in name or name == "global_step" or not shape:
      continue
    counts[name.split("/")[0]] += math.prod(shape)
    if "/EncDecAttention/" in name:
      counts["enc_dec_attention"] += math.prod(shape)
  return dict(counts)


def model_flops_per_step(params: Dict[str, int], batch: int, length: int) -> float:
  """6 N FLOPs per token, N = the weights that token passes through (an encoder-decoder's input
  tokens go through the encoder, its target tokens through the decoder and the logits).

  A shared encoder-decoder (make_bitransformer.encoder_name = "decoder") has no encoder/
  variables: its encoder runs the decoder's weights less the encoder-decoder attention. A
  decoder-only model's variables are all under transformer/ (its embedding is also its logits
  layer), and every one of its 2 x length tokens passes through all of them.
  """
  if "transformer" in params:
    return 6 * batch * 2 * length * params["transformer"]
  embedding = params.get("shared", 0)  # the input lookup is no matmul, tied logits are one
  decoder = params.get("decoder", 0) + embedding
  encoder = params.get("encoder", params.get("decoder", 0) - params.get("enc_dec_attention", 0))
  return 6 * batch * length * (encoder + decoder)


def checkpoint_vocab_size(model_dir: pathlib.Path) -> int:
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  path = tf.train.latest_checkpoint(str(model_dir))
  shapes = dict(tf.train.list_variables(path))
  return next(shapes[name][0] for name in ("shared/embedding", "transformer/embedding")
              if name in shapes)


def _torch_decoder_only(transformers, torch, config):
  """The causal LM of models/causal_lm.gin in PyTorch: T5's decoder stack without its
  encoder-decoder attention, logits through the embedding (scaled by d_model^-0.5, as T5's tied
  logits are): a module, (ids, labels) -> mean cross-entropy."""
  config = transformers.T5Config(**{**config.to_dict(), "is_decoder": True,
                                    "is_encoder_decoder": False, "use_cache": False})
  embedding = torch.nn.Embedding(config.vocab_size, config.d_model)
  stack = transformers.models.t5.modeling_t5.T5Stack(config, embed_tokens=embedding)
  for block in stack.block:  # drop the unused cross-attention: self-attention, feed-forward
    block.layer = torch.nn.ModuleList([block.layer[0], block.layer[-1]])

  class DecoderOnly(torch.nn.Module):

    def __init__(self):
      super().__init__()
      self.stack = stack

    def forward(self, ids, labels):
      hidden = self.stack(input_ids=ids).last_hidden_state * config.d_model ** -0.5
      logits = hidden @ embedding.weight.T
      return torch.nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten())

  return DecoderOnly()


def torch_throughput(size: str, vocab_size: int, batch: int, length: int, steps: int,
                     threads: int, decoder_only: bool = False, products: str = "fp32") -> dict:
  """Token slots/s of the same model trained in PyTorch: the encoder-decoder with its towers
  sharing weights (batch x length in, batch x length out) or, with `decoder_only`, the causal
  LM over batch x 2 length tokens; its products in `products` precision, as Mesh TF's."""
  import torch  # pylint: disable=g-import-not-at-top
  import transformers  # pylint: disable=g-import-not-at-top
  from transformers.optimization import Adafactor  # pylint: disable=g-import-not-at-top

  torch.set_num_threads(threads)
  torch.manual_seed(0)
  bench_utils.set_torch_products(torch, products)
  d_model, d_ff, layers, heads, d_kv = SIZES[size]
  config = transformers.T5Config(
      vocab_size=vocab_size, d_model=d_model, d_ff=d_ff, num_layers=layers,
      num_decoder_layers=layers, num_heads=heads, d_kv=d_kv, feed_forward_proj="relu",
      dropout_rate=0.0, tie_word_embeddings=True, decoder_start_token_id=0, pad_token_id=0)
  generator = torch.Generator().manual_seed(0)
  if decoder_only:
    model = _torch_decoder_only(transformers, torch, config)
    ids = torch.randint(1, vocab_size, (batch, 2 * length), generator=generator)

    def loss_fn():
      return model(ids, ids)
  else:
    model = _torch_tied_encoder_decoder(transformers, config)
    inputs = torch.randint(1, vocab_size, (batch, length), generator=generator)
    labels = torch.randint(1, vocab_size, (batch, length), generator=generator)

    def loss_fn():
      return model(input_ids=inputs, labels=labels).loss
  model.train()
  params = sum(p.numel() for p in model.parameters())
  optimizer = Adafactor(model.parameters(), lr=1e-3, relative_step=False, scale_parameter=False)

  def step():
    loss = loss_fn()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return float(loss.detach())

  for _ in range(2):  # warm-up
    step()
  times = []
  for _ in range(steps):
    start = time.perf_counter()
    step()
    times.append(time.perf_counter() - start)
  step_s = statistics.median(times)
  return {"torch_params": params, "torch_step_s": step_s,
          "torch_token_slots_per_s": batch * 2 * length / step_s}


def _torch_tied_encoder_decoder(transformers, config):
  """shared-prefix_lm in PyTorch: transformers' T5 whose encoder runs the decoder's weights."""
  model = transformers.T5ForConditionalGeneration(config)
  # shared-prefix_lm: the encoder runs the decoder's self-attention and feed-forward weights.
  for enc, dec in zip(model.encoder.block, model.decoder.block):
    enc.layer[0].SelfAttention = dec.layer[0].SelfAttention
    enc.layer[0].layer_norm = dec.layer[0].layer_norm
    enc.layer[1] = dec.layer[2]
  model.encoder.final_layer_norm = model.decoder.final_layer_norm
  return model


def _is_product(op_type: str) -> bool:
  return "Einsum" in op_type or "MatMul" in op_type


def _product_kind(name: str) -> str:
  """What a traced product (an Einsum op, by its node name) computes in Mesh TF's transformer."""
  if "DenseReluDense" in name:
    return "MLP"
  if "SelfAttention" in name or "EncDecAttention" in name:
    # einsum_6 / einsum_7 (Mesh TF's attention): q.k and weights.v; the rest project.
    return ("attention scores and values" if re.search(r"/einsum_[67]/", name)
            else "attention projections")
  return "logits and the rest"


def profile_summary(trace: pathlib.Path, top: int = 12) -> str:
  """The traced step of a ProfilerHook timeline (Chrome trace JSON), summed up."""
  events = json.loads(trace.read_text())["traceEvents"]
  lanes = {e["pid"]: e["args"]["name"] for e in events
           if e.get("ph") == "M" and e.get("name") == "process_name"}
  ops = [e for e in events if e.get("ph") == "X" and "Compute" in lanes.get(e["pid"], "")]
  wall = (max(e["ts"] + e["dur"] for e in ops) - min(e["ts"] for e in ops)) / 1e3
  by_type, by_kind = collections.Counter(), collections.Counter()
  for e in ops:
    op = e["args"].get("op", e["name"])
    by_type[op] += e["dur"] / 1e3
    if _is_product(op):
      by_kind[_product_kind(e["args"].get("name", ""))] += e["dur"] / 1e3
  total = sum(by_type.values())
  lines = [f"traced step ({trace.name}): {wall:,.0f} ms wall, {total:,.0f} ms of ops "
           f"({total / wall:.2f} at once on average)"]
  lines += [f"  {op:40s} {ms:8,.0f} ms {ms / total:6.1%}" for op, ms in by_type.most_common(top)]
  lines.append("  matrix products by what they compute:")
  lines += [f"    {kind:38s} {ms:8,.0f} ms {ms / total:6.1%}" for kind, ms in by_kind.most_common()]
  lines.append("  the wall by how many ops ran at once:")
  lines += [f"    {running:38s} {ms:8,.0f} ms" for running, ms in _ops_at_once(ops).items()]
  return "\n".join(lines)


_AT_ONCE = ("none", "one: a product", "one: another op", "two: both products",
            "two: a product and another op", "two: neither a product", "three or more")


def _running(ops: int, products: int) -> str:
  """The _AT_ONCE row for `ops` ops running at once, `products` of them products."""
  if ops == 0:
    return "none"
  if ops == 1:
    return "one: a product" if products else "one: another op"
  if ops == 2:
    return ("two: neither a product", "two: a product and another op",
            "two: both products")[products]
  return "three or more"


def _ops_at_once(ops) -> Dict[str, float]:
  """ms of the traced step's wall during which no op, one op (a product, or another op), two
  (both products, or not) or more ran: where an op's time is alone on the step's path."""
  timed = [e for e in ops if e["dur"] > 0]
  edges = sorted([(e["ts"], 1, i) for i, e in enumerate(timed)] +
                 [(e["ts"] + e["dur"], -1, i) for i, e in enumerate(timed)])
  spans = collections.Counter()
  running, last = set(), edges[0][0] if edges else 0
  for ts, change, i in edges:
    products = sum(_is_product(timed[j]["args"].get("op", timed[j]["name"])) for j in running)
    spans[_running(len(running), products)] += (ts - last) / 1e3
    last = ts
    if change > 0:
      running.add(i)
    else:
      running.discard(i)
  return {key: spans[key] for key in _AT_ONCE if spans[key] >= 0.5}


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--model", default="shared-prefix_lm", choices=launcher.MODELS)
  parser.add_argument("--size", default="tiny", choices=list(SIZES))
  parser.add_argument("--run", default="cpu")
  parser.add_argument("--vocab", default="byte", choices=launcher.VOCABS)
  parser.add_argument("--steps", type=int, default=100)
  parser.add_argument("--batch", type=int, default=8, help="sequences per batch")
  parser.add_argument("--length", type=int, default=256, help="inputs and targets length")
  parser.add_argument("--save-steps", type=int, default=0,
                      help="checkpoint every N steps (default 0: only step 0 and the last; "
                      "-1: what the run's gin files say)")
  parser.add_argument("--summary-steps", type=int, default=0,
                      help="write the loss to the TensorBoard events every N steps")
  parser.add_argument("--plot", type=pathlib.Path,
                      help="write the loss against tokens (from the run's events) to this PNG")
  parser.add_argument("--gin-param", action="append", default=[])
  parser.add_argument("--env", action="append", default=[], help="NAME=VALUE for the run")
  parser.add_argument("--torch", action="store_true", help="also train the same model in PyTorch")
  parser.add_argument("--torch-steps", type=int, default=5)
  parser.add_argument("--label", default="")
  parser.add_argument("--json", type=pathlib.Path, help="append the figures as one JSON line")
  parser.add_argument("--keep", type=pathlib.Path, help="keep the model dir here")
  parser.add_argument("--profile", type=int, default=0, metavar="N",
                      help="trace every N-th step and print where the last traced step's "
                      "time went")
  parser.add_argument("--products", default="auto", choices=precision.MODES,
                      help="the products' precision (code_t5.products_precision.mode): PyTorch "
                      "and the peak are measured in the same")
  parser.add_argument("--prepared-dir", type=pathlib.Path,
                      default=pathlib.Path(tempfile.gettempdir()) / "code_t5_bench" / "prepared")
  args = parser.parse_args(argv)

  print(f"== train benchmark {args.label}: {args.model} {args.size} on {args.run}, "
        f"batch {args.batch} x {args.length}+{args.length}, {args.steps} steps; "
        f"load before: {bench_utils.load_average()}")
  print(bench_utils.cpu_kind())
  products = precision.products_precision(args.products)
  peak = bench_utils.matmul_peak_gflops(products=products)
  print(f"{products} products: matmul peak (1024^3, best of 10): " +
        ", ".join(f"{k} {v:.1f} GFLOP/s" for k, v in peak.items()))

  model_dir = pathlib.Path(tempfile.mkdtemp(prefix="train_benchmark-"))
  save_steps = args.save_steps or args.steps
  params = [f"code_t5.flcc_dataset.prepared_dir = '{args.prepared_dir}'",
            f"utils.run.sequence_length = {{'inputs': {args.length}, 'targets': {args.length}}}",
            f"utils.run.batch_size = ('sequences_per_batch', {args.batch})",
            f"code_t5.products_precision.mode = '{products}'"]
  if save_steps > 0:
    params.append(f"utils.run.save_checkpoints_steps = {save_steps}")
  if args.summary_steps:
    params.append(f"code_t5.train_model.summary_steps = {args.summary_steps}")
  if args.profile:
    params.append(f"code_t5.train_model.profile_steps = {args.profile}")
  experiment = launcher.Experiment(
      model=args.model, size=args.size, run=args.run, vocab=args.vocab,
      model_dir=model_dir / f"{args.model}-{args.size}-{args.run}",
      gin_params=params + args.gin_param)
  env = dict(item.split("=", 1) for item in args.env)
  command = experiment.train_command(args.steps)
  log = args.prepared_dir.parent / "logs" / f"train-{args.label or 'run'}-{args.size}.log"
  timeline = bench_utils.run_timed(command, log, env=env)
  print(f"timestamped log: {log}")
  if timeline.returncode:
    print("".join(line + "\n" for _, line in timeline.lines[-40:]))
    raise SystemExit(f"training failed (exit {timeline.returncode}); log: {log}")
  tokens_per_step = args.batch * 2 * args.length
  figures = timeline.summary(tokens_per_step)
  params = checkpoint_parameters(experiment.model_dir)
  figures["params"] = sum(v for k, v in params.items() if k != "enc_dec_attention")
  # Measured again after the run: where the machine's speed drifts during it (the Zen 2 kind's
  # peak read 69-138 GFLOP/s in one hour), the higher of the two keeps the shares conservative.
  peak_after = bench_utils.matmul_peak_gflops(products=products)
  print(f"{products} matmul peak after the run: " +
        ", ".join(f"{k} {v:.1f} GFLOP/s" for k, v in peak_after.items()) +
        "; the shares below are of the highest figure before or after")
  peak_gflops = max(list(peak.values()) + list(peak_after.values()))
  figures["matmul_peak_gflops"] = peak_gflops
  figures["products"] = products
  einsum_macs = timeline.einsum_macs_per_step()
  if "steps_per_s" in figures:
    flops = model_flops_per_step(params, args.batch, args.length)
    figures["model_gflops_per_s"] = flops * figures["steps_per_s"] / 1e9
    figures["mfu"] = figures["model_gflops_per_s"] / peak_gflops
    if einsum_macs:
      figures["einsum_gflops_per_s"] = 2 * einsum_macs * figures["steps_per_s"] / 1e9
      figures["einsum_utilisation"] = figures["einsum_gflops_per_s"] / peak_gflops
  losses = timeline.losses()
  print(f"launch -> model_fn {figures['launch_to_model_fn_s']:.1f} s -> graph finalized "
        f"{figures['launch_to_graph_finalized_s']:.1f} s -> session ready "
        f"{figures['launch_to_session_ready_s']:.1f} s -> first step "
        f"{figures['launch_to_first_step_s']:.1f} s")
  print(f"step-0 checkpoint (session ready -> saved) "
        f"{figures.get('session_ready_to_first_save_done_s', float('nan')):.2f} s, of which "
        f"Saver.save {figures.get('first_save_s', float('nan')):.2f} s; final save "
        f"{figures.get('last_save_s', float('nan')):.2f} s; session close "
        f"{figures.get('session_close_s', float('nan')):.2f} s; exit after the last line "
        f"{figures.get('exit_s', float('nan')):.2f} s; wall {figures['wall_s']:.1f} s")
  if "steps_per_s" in figures:
    print(f"steady: {figures['steps_per_s']:.2f} steps/s = {figures['token_slots_per_s']:,.0f} "
          f"token slots/s; compute/wall {figures['compute_share_of_wall']:.0%}; "
          f"params {figures['params']:,}; 6N FLOPs/token -> {figures['model_gflops_per_s']:.1f} "
          f"GFLOP/s = MFU {figures['mfu']:.1%} of {peak_gflops:.0f} GFLOP/s")
    if einsum_macs:
      print(f"Mesh TF's einsum count ({einsum_macs:.3g} multiply-adds per step, attention and "
            f"logits included): {figures['einsum_gflops_per_s']:.1f} GFLOP/s = "
            f"{figures['einsum_utilisation']:.1%} of the matmul peak")
  if losses:
    print(f"loss: step {losses[0][0]} {losses[0][1]:.3f} -> step {losses[-1][0]} "
          f"{losses[-1][1]:.3f}")

  traces = sorted(experiment.model_dir.glob("profile/timeline-*.json"),
                  key=lambda path: int(path.stem.split("-")[1]))
  if traces:
    print(profile_summary(traces[-1]))

  if args.torch:
    vocab_size = checkpoint_vocab_size(experiment.model_dir)
    decoder_only = "transformer" in params
    # In a fresh process: PyTorch next to TensorFlow's thread pools runs 10x+ slower.
    torch_figures = bench_utils.in_subprocess(
        "torch_throughput", args.size, vocab_size, args.batch, args.length, args.torch_steps, 2,
        decoder_only, products, module="train_benchmark")
    figures.update(torch_figures)
    if "token_slots_per_s" in figures:
      figures["ratio_to_torch"] = (figures["token_slots_per_s"] /
                                   torch_figures["torch_token_slots_per_s"])
    print(f"PyTorch (transformers T5, {'decoder only' if decoder_only else 'towers tied'}, "
          f"{torch_figures['torch_params']:,} params, "
          f"2 threads, {products} products): {torch_figures['torch_step_s']:.3f} s/step = "
          f"{torch_figures['torch_token_slots_per_s']:,.0f} token slots/s; "
          f"Mesh TF / PyTorch = {figures.get('ratio_to_torch', float('nan')):.2f}")
  if args.plot:
    from code_t5.training import curves  # pylint: disable=g-import-not-at-top
    args.plot.parent.mkdir(parents=True, exist_ok=True)
    points = curves.plot_loss(experiment.model_dir, args.plot, tokens_per_step=tokens_per_step,
                              tag="loss")
    print(f"loss against tokens ({points} points from the TensorBoard events): {args.plot}")
  print(f"load after: {bench_utils.load_average()}")
  if args.json:
    with open(args.json, "a", encoding="utf-8") as out:
      out.write(json.dumps({"label": args.label, "size": args.size, "model": args.model,
                            "steps": args.steps, "gin_params": args.gin_param, "env": env,
                            **figures}) + "\n")
  if args.keep:
    shutil.rmtree(args.keep, ignore_errors=True)
    shutil.copytree(experiment.model_dir, args.keep)
  shutil.rmtree(model_dir, ignore_errors=True)


if __name__ == "__main__":
  main()
