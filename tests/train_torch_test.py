"""scripts/train_torch.py and import_torch_weights.py: the same network, data and checkpoint as Mesh TF's.

The PyTorch trainer exists for machines with a GPU and no TensorFlow; what it trains must be the
network Mesh TF trains and the engine runs, on the examples the cursor_lm v3 task makes, and come
back as a checkpoint Mesh TF and the engine read.
"""

import errno
import json
import lzma
import os
import pathlib
import struct
import subprocess
import sys

import numpy as np
import torch

from code_t5 import cli
from code_t5 import processes
from code_t5 import test_utils
from code_t5.engine import runtime

REPO = pathlib.Path(__file__).resolve().parent.parent
SHIPPED_RUNTIME = runtime.runtime_dir(test_utils.PRETRAINED, test_utils.PRETRAINED_STEP)
VOCAB = REPO / "code_t5" / "vocabs" / "flcc_dev_spm.model"


train_torch = test_utils.load_script("train_torch")

TEXT = ("import os\n\n\nclass Widget:\n\tdef __init__(self, name):\n        self.name = name  # ok\n"
        "    \n    def run(self):\n        return os.path.join(self.name, 'x')\n\fx = 1\n")


def _packed(rows):
  """tokens and segment ids of `rows`, each a list of examples (lists of ids)."""
  tokens = np.zeros((len(rows), train_torch.ROW), np.int32)
  segments = np.zeros_like(tokens)
  for r, examples in enumerate(rows):
    used = 0
    for s, ids in enumerate(examples, 1):
      tokens[r, used:used + len(ids)] = ids
      segments[r, used:used + len(ids)] = s
      used += len(ids)
  return tokens, segments


def test_network_computes_the_engines_logits_in_packed_rows():
  network = runtime.Network.load(SHIPPED_RUNTIME)
  net = train_torch.build(torch, 4)
  assert net.load(train_torch.read_weights(SHIPPED_RUNTIME)) == []
  rng = np.random.default_rng(0)
  context = [int(i) for i in rng.integers(3, 8000, 200)]
  other = [int(i) for i in rng.integers(3, 8000, 90)] + [1]
  row = context + [1, 77, 78]
  tokens, segments = _packed([[row], [other, row]])
  with torch.no_grad():
    logits = net(torch.from_numpy(tokens), torch.from_numpy(segments)).numpy()
  expected = network.start(context).logits  # reads [0, context..., EOS]
  # Position p reads token p - 1: the EOS is read at len(context) + 1 of the example.
  np.testing.assert_allclose(logits[0, len(context) + 1], expected, atol=1e-4)
  np.testing.assert_allclose(logits[1, len(other) + len(context) + 1], expected, atol=1e-4)


def test_cursors_are_the_tasks():
  """The characters outside leading indentation and each line's first code character, as
  preprocessors.cursor_lm draws them (its TensorFlow functions, on the same text)."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from code_t5.data import preprocessors  # pylint: disable=g-import-not-at-top
  for text in (TEXT, "x", "  \n\n  y = 'é'\n", "\tif a:\n\t\tpass"):
    codepoints = tf.strings.unicode_decode(text, "UTF-8")
    line, indent, code = preprocessors._lines(codepoints)  # pylint: disable=protected-access
    allowed = preprocessors._outside_indentation(line, indent, code).numpy()  # pylint: disable=protected-access
    starts = preprocessors._line_code_starts(line, code).numpy()  # pylint: disable=protected-access
    got_allowed, got_starts = train_torch.cursor_positions(text)
    np.testing.assert_array_equal(got_allowed, allowed)
    np.testing.assert_array_equal(got_starts, starts)
  # The task's windows: characters read per side, bytes per cursor.
  from code_t5.data import line_completion  # pylint: disable=g-import-not-at-top
  assert train_torch.LEFT_CHARS == train_torch.RIGHT_CHARS == (
      line_completion.MAX_CHARS_PER_TOKEN * train_torch.PIECES)
  assert train_torch.WINDOW_BYTES == preprocessors._BYTES_PER_TOKEN["subword"] * 2 * train_torch.PIECES  # pylint: disable=protected-access


def test_examples_are_the_last_and_first_pieces_each_side_on_its_own():
  from code_t5.engine import tokenizers  # pylint: disable=g-import-not-at-top
  pieces = tokenizers.Pieces(VOCAB.read_bytes(), extra_ids=100)
  encoder = train_torch.Encoder(VOCAB, alpha=0.0)
  text = TEXT * 60  # longer than 255 pieces on both sides of a middle cursor
  cursor = len(text) // 2 + 7
  ids = train_torch.example(text, cursor, encoder)
  left = pieces.encode(text[max(0, cursor - train_torch.LEFT_CHARS):cursor])[-255:]
  right = pieces.encode(text[cursor:cursor + train_torch.RIGHT_CHARS])[:255]
  assert ids == left + [1] + right + [1]
  assert train_torch.example("ab", 0, encoder) == [1] + pieces.encode("ab") + [1]
  assert encoder.encode("x = '\u2581'") == pieces.encode("x = '\u2581'")  # the literal "▁"


def test_packing_fills_rows_in_order_and_keeps_examples_whole():
  examples = iter([[5] * 300, [6] * 250, [7] * 100, [8] * 512, [9] * 10])
  tokens, segments = train_torch.pack(examples, 3)
  assert segments[0].max() == 1 and (tokens[0] == 5).sum() == 300  # 300 + 250 > 512
  assert (tokens[1] == 6).sum() == 250 and (tokens[1] == 7).sum() == 100
  assert list(segments[1, [0, 249, 250, 349, 350]]) == [1, 1, 2, 2, 0]
  assert (tokens[2] == 8).all()


def _write_texts(path, texts):
  with lzma.open(path, "wb") as f:
    for text in texts:
      data = text.encode("utf-8")
      f.write(struct.pack("<I", len(data)))
      f.write(data)


def test_a_small_network_learns_a_file_and_completes_its_lines_exactly(tmp_path):
  """Learning, not plumbing: trained through main() on one file, it continues the file."""
  _write_texts(tmp_path / "texts.xz", [TEXT])
  assert train_torch.read_texts(tmp_path / "texts.xz") == [TEXT.encode("utf-8")]
  net = train_torch.build(torch, 2, d_model=64, heads=2, head_dim=32, d_ff=128)
  net.init_random(0)
  encoder = train_torch.Encoder(VOCAB, alpha=0.0)
  stream = iter(train_torch.Examples([TEXT.encode("utf-8")], encoder, seed=0))
  optimizer = torch.optim.AdamW(net.parameters(), lr=5e-3)
  torch.manual_seed(0)
  schedule = torch.optim.lr_scheduler.LinearLR(optimizer, 1.0, 0.0, total_iters=200)
  for _ in range(200):
    tokens, segments = (torch.from_numpy(a) for a in train_torch.pack(stream, 2))
    loss, _ = train_torch.loss_fn(torch, net(tokens, segments), tokens)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    schedule.step()
  cursor = TEXT.index("return os")  # after the indentation, as an editor's cursor is
  context = encoder.encode(TEXT[:cursor])
  out = []
  with torch.no_grad():
    for _ in range(20):
      row = context + [1] + out + [0]
      tokens, segments = _packed([[row]])
      logits = net(torch.from_numpy(tokens), torch.from_numpy(segments))
      out.append(int(logits[0, len(row) - 1].argmax()))
  line = encoder.sp.decode(out).split("\n")[0]
  assert line == "return os.path.join(self.name, 'x')"


def test_main_trains_and_its_weights_become_a_model_the_engine_runs(tmp_path):
  """The command line end to end on CPU: a few steps from the shipped weights, the weights
  written as a Mesh TF checkpoint and runtime folder, which the engine loads and which holds
  exactly the trained values (in bfloat16)."""
  _write_texts(tmp_path / "texts.xz", [TEXT * 20, "def f():\n    return 1\n" * 40])
  out = tmp_path / "out"
  train_torch.main(["--texts", str(tmp_path / "texts.xz"), "--vocab", str(VOCAB),
                    "--model", f"m:4:1e-4:{SHIPPED_RUNTIME}", "--rows", "2", "--max-steps", "3",
                    "--warmup", "1", "--workers", "0", "--heldout", str(tmp_path / "texts.xz"),
                    "--heldout-rows", "16", "--out", str(out)])
  log = json.loads((out / "m.json").read_text())
  assert log["final"] and log["steps"] == 3
  assert sorted(p.name for p in out.iterdir()) == ["m.json", "m.npz"]  # no temporaries
  # A rerun into the same --out wrote over these weights (helper-54's audit).
  again = subprocess.run([sys.executable, str(REPO / "scripts" / "train_torch.py"), "--texts",
                          str(tmp_path / "texts.xz"), "--vocab", str(VOCAB), "--model", "m:1:1e-3",
                          "--out", str(out)], capture_output=True, text=True, timeout=120)
  assert again.returncode == 2 and again.stderr.splitlines()[-1].endswith(
      f"--out {out} holds m.npz already: pass --force to replace it, or give another --out")
  assert 0 < log["heldout_after"] != log["heldout_before"] > 0
  weights = train_torch.read_weights(out / "m.npz")
  shipped = train_torch.read_weights(SHIPPED_RUNTIME)
  assert set(weights) == set(shipped)
  assert any(not np.array_equal(weights[n], shipped[n]) for n in weights)  # it trained
  model = tmp_path / "model"
  script = [sys.executable, str(REPO / "scripts" / "import_torch_weights.py"), str(out / "m.npz"),
            "--like", str(test_utils.PRETRAINED), "--step", "12", "--model-dir", str(model)]
  subprocess.run(script, check=True, capture_output=True)
  assert cli.main(["pack", str(model), "--out", str(tmp_path / "packed")]) == 0
  folder = runtime.runtime_dir(tmp_path / "packed", 12)
  assert len(runtime.Network.load(folder).layers) == 4
  meta = json.loads((folder / "model.json").read_text())
  stored = np.load(folder / "params.npz")
  for key, tensor in meta["tensors"].items():
    value = (stored[key].astype(np.uint32) << 16).view(np.float32)
    np.testing.assert_array_equal(value, weights[tensor["name"]])
  again = subprocess.run(script, capture_output=True, text=True)
  assert again.returncode == 2 and "--force" in again.stderr
  # Nothing left of the writes beside the model dir and the pack (no temporaries).
  assert sorted(p.name for p in tmp_path.iterdir()) == ["model", "out", "packed", "texts.xz"]


def test_the_workers_die_with_a_killed_run(tmp_path):
  # Daemon workers end at a normal exit only: a kill -9 left them blocked in queue.put, 250 MB
  # each (helper-54's audit).
  _write_texts(tmp_path / "texts.xz", [TEXT * 20])
  run = subprocess.Popen([sys.executable, str(REPO / "scripts" / "train_torch.py"), "--texts",
                          str(tmp_path / "texts.xz"), "--vocab", str(VOCAB), "--model", "m:1:1e-3",
                          "--rows", "1", "--workers", "1", "--minutes", "5",
                          "--out", str(tmp_path / "out")], stdout=subprocess.PIPE, text=True)
  try:
    for line in run.stdout:
      if line.startswith("first batch"):
        break
    children = pathlib.Path(f"/proc/{run.pid}/task/{run.pid}/children").read_text().split()
    assert children, "no worker"
  finally:
    run.kill()
    run.wait()
  test_utils.wait_for(lambda: not any(processes.pid_alive(int(pid)) for pid in children),
                      "the workers to end", 30)


def test_compiled_training_computes_the_eager_loss_and_gradients(tmp_path):
  """--compile (torch.compile, for a GPU's kernel launches) trains the same network: its loss and
  gradients on a packed batch are eager's to float rounding, and a --compile run learns. (Runs
  are not compared weight by weight: Adam's first steps move every weight by about the rate
  whatever its gradient's size, so a gradient that rounds to the other sign moves a weight the
  other way.)"""
  net = train_torch.build(torch, 4)
  net.load(train_torch.read_weights(SHIPPED_RUNTIME))
  tokens, segments = (torch.from_numpy(a) for a in _packed(
      [([5, 6, 7, 1], [8, 9, 1]), ([10, 11, 1], [12, 13, 14, 1])]))
  results = []
  for forward in (net, torch.compile(net)):
    loss, _ = train_torch.train_loss(torch, forward, tokens, segments, "cpu")
    results.append((float(loss.detach()), torch.autograd.grad(loss, list(net.parameters()))))
  (eager_loss, eager_grads), (compiled_loss, compiled_grads) = results
  assert abs(compiled_loss - eager_loss) < 1e-5 * eager_loss
  for eager, compiled in zip(eager_grads, compiled_grads):
    assert float((compiled - eager).abs().max()) <= 1e-4 * float(eager.abs().max())

  _write_texts(tmp_path / "texts.xz", [TEXT * 20, "def f():\n    return 1\n" * 40])
  train_torch.main(["--texts", str(tmp_path / "texts.xz"), "--vocab", str(VOCAB),
                    "--model", f"m:4:1e-3:{SHIPPED_RUNTIME}", "--rows", "2", "--max-steps", "3",
                    "--warmup", "1", "--workers", "0", "--heldout", str(tmp_path / "texts.xz"),
                    "--heldout-rows", "16", "--out", str(tmp_path / "out"), "--compile"])
  log = json.loads((tmp_path / "out" / "m.json").read_text())
  assert log["steps"] == 3 and log["heldout_after"] < log["heldout_before"] - 0.05


def test_more_layers_than_the_init_start_as_no_ops():
  """A deeper network grown from the shipped weights computes the shipped network's logits
  until it trains: its new layers add nothing to the residual stream."""
  shallow, deep = train_torch.build(torch, 4), train_torch.build(torch, 6)
  weights = train_torch.read_weights(SHIPPED_RUNTIME)
  shallow.load(weights)
  deep.init_random(0)
  assert len(deep.load(weights)) == 16
  tokens, segments = _packed([[[int(i) for i in range(5, 300)]]])
  with torch.no_grad():
    a = shallow(torch.from_numpy(tokens), torch.from_numpy(segments))
    b = deep(torch.from_numpy(tokens), torch.from_numpy(segments))
  np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-5)
  grads = torch.autograd.grad(
      train_torch.loss_fn(torch, deep(torch.from_numpy(tokens), torch.from_numpy(segments)),
                          torch.from_numpy(tokens))[0],
      [deep.p(train_torch.layer_names(5)["wo"])])
  assert grads[0].abs().sum() > 0  # the new layers learn (their other weights are random)


def test_export_texts_writes_a_splits_files_for_the_trainer(tmp_path):
  from code_t5.data import flcc  # pylint: disable=g-import-not-at-top
  export_texts = test_utils.load_script("export_texts")
  root = REPO / "dataset-dev"
  expected = [f.text.encode("utf-8") for f in flcc.read_files(root, only_split="validation")]
  out = tmp_path / "texts.xz"
  assert export_texts.main(["--root", str(root), "--split", "validation", "--out", str(out)]) == 0
  assert train_torch.read_texts(out) == expected
  assert export_texts.main(["--root", str(root), "--split", "validation", "--out", str(out)]) == 2
  assert export_texts.main(["--root", str(root), "--split", "validation", "--out", str(out),
                            "--max-mb", "0.05", "--force"]) == 0
  subset = train_torch.read_texts(out)
  assert 0 < len(subset) < len(expected) and sum(map(len, subset)) <= 50_000
  assert all(text in expected for text in subset)
  assert export_texts.main(["--root", str(tmp_path / "none"), "--out", str(tmp_path / "x.xz")]) == 2
  assert not (tmp_path / "x.xz").exists()


def test_an_output_that_cannot_be_written_is_one_line_and_leaves_nothing(tmp_path):
  """--out / --model-dir through a file (ENOTDIR, which needs no privilege to provoke)."""
  blocker = tmp_path / "a_file"
  blocker.write_text("x")
  out = blocker / "texts.xz"
  done = subprocess.run([sys.executable, str(REPO / "scripts" / "export_texts.py"), "--root",
                         str(REPO / "dataset-dev"), "--split", "validation", "--out", str(out)],
                        capture_output=True, text=True, check=False)
  assert done.returncode == 2, done.stderr
  assert done.stderr.strip().splitlines()[-1] == (
      f"cannot write the texts file {out}: {os.strerror(errno.ENOTDIR)}: give another --out")
  np.savez(tmp_path / "m.npz", **{n: train_torch.bfloat16_bits(a) for n, a in
                                  train_torch.read_weights(SHIPPED_RUNTIME).items()})
  model = blocker / "sub" / "model"
  done = subprocess.run([sys.executable, str(REPO / "scripts" / "import_torch_weights.py"),
                         str(tmp_path / "m.npz"), "--like", str(test_utils.PRETRAINED), "--step",
                         "1", "--model-dir", str(model)], capture_output=True, text=True,
                        check=False)
  assert done.returncode == 2, done.stderr
  assert done.stderr.strip().splitlines()[-1] == (
      f"cannot write the model dir {model}: {os.strerror(errno.ENOTDIR)}: give another "
      "--model-dir")
  assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file", "m.npz"]


def test_similar_code_comes_first_as_the_engine_reads_it(tmp_path):
  """--similar-rate: the examples' inputs are the ids the engine reads with similar code
  (complete.Completer.context_ids), found by the engine's own similar_code.find among the
  files of the example's repository that export_texts --paths names."""
  from code_t5.data import flcc  # pylint: disable=g-import-not-at-top
  from code_t5.engine import complete  # pylint: disable=g-import-not-at-top
  from code_t5.engine import similar_code  # pylint: disable=g-import-not-at-top
  export_texts = test_utils.load_script("export_texts")
  out, paths_file = tmp_path / "texts.xz", tmp_path / "paths.json"
  assert export_texts.main(["--root", str(REPO / "dataset-dev"), "--split", "validation",
                            "--out", str(out), "--paths", str(paths_file)]) == 0
  files = list(flcc.read_files(REPO / "dataset-dev", only_split="validation"))
  paths = json.loads(paths_file.read_text())
  assert paths == [[f.repo, f.path] for f in files]
  texts = train_torch.read_texts(out)
  assert train_torch.similar_code_module() is similar_code  # the engine's, not a copy

  examples = train_torch.Examples(texts, train_torch.Encoder(VOCAB, alpha=0.0), seed=3,
                                  paths=paths, similar_rate=1.0)
  # The context cut as the task cuts it (its last pieces), not at a line's start as by default.
  completer = complete.Completer(test_utils.PRETRAINED, complete.EngineOptions(whole_lines=False))
  found = 0
  for _ in range(40):
    f = int(examples.rng.integers(len(texts)))
    text = texts[f].decode("utf-8")
    cursor = text.find("\n", int(examples.rng.integers(len(text)))) + 1
    similar = examples.similar(f, text, cursor)
    group = [files[i] for i in examples.groups[examples.group_of[f]]]
    assert all(g.repo == files[f].repo for g in group)
    index = similar_code.WindowIndex()
    for g in group:
      index.add(g.path, g.text)
    end = text.find("\n", cursor)
    assert similar == similar_code.find(text[:cursor], text[end + 1:] if end >= 0 else "",
                                        index, files[f].path)
    if not similar:
      continue
    found += 1
    ids = train_torch.example(text, cursor, examples.encoder, similar)
    _, engine_ids = completer.context_ids(text[:cursor], similar=similar)
    inputs = ids[:ids.index(1)]
    assert len(ids) <= train_torch.ROW
    similar_ids = examples.encoder.encode(similar)[-train_torch.SIMILAR_PIECES:]
    assert len(inputs) == len(engine_ids) and inputs[:len(similar_ids)] == similar_ids
    # The same but for the context's first piece: the task (and this trainer) keep the last 255
    # pieces of a longer encoding, the engine encodes the text it cut (complete.left_truncate).
    assert [i for i, (a, b) in enumerate(zip(inputs, engine_ids)) if a != b] in (
        [], [len(similar_ids)])
  assert found >= 10
