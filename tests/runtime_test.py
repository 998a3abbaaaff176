"""code_t5.engine.runtime: the NumPy engine computes Mesh TF's logits, one cached step at a time.

Against Mesh TF's own logits (tests/mesh_tf_logits.py, conftest.mesh_tf_logits) for the three
families the project trains (shared encoder-decoder, decoder-only prefix LM, T5.1.1 gated-GELU
encoder-decoder): the context goes through `Network.start`, the targets one token per `step`
(teacher forcing), in a batch of beams that are reordered on the way, as beam search does. The
decoder-only causal LM and the SentencePiece vocabulary are checked end to end by
pretrained_test (greedy lines equal to the Mesh TF eval's decodes).
"""

import json
import shutil

import numpy as np
import pytest

from code_t5 import test_utils
from code_t5.engine import complete
from code_t5.engine import runtime

from conftest import LOGITS_MODELS, TINY_STEPS  # pylint: disable=g-bad-import-order

TOLERANCE = 1e-4


@pytest.fixture(scope="module")
def network(tiny_run):
  """network(model) -> the runtime of the tiny run's checkpoint (written once per model)."""
  cache = {}

  def get(model):
    if model not in cache:
      _, model_dir = tiny_run(model)
      info = complete.model_info(model_dir)
      cache[model] = complete.load_network(info)
    return cache[model]

  return get


@pytest.mark.parametrize("model", LOGITS_MODELS)
def test_cached_steps_give_mesh_tf_logits(model, network, mesh_tf_logits, logits_batch):
  net = network(model)
  reference = mesh_tf_logits[model]
  inputs = logits_batch["inputs"][0]
  context = [int(t) for t in inputs[:int((inputs > 0).sum()) - 1]]  # start() adds the EOS
  targets = logits_batch["targets"][0]
  # delimited_lm: Mesh TF's logits run over inputs + targets; the completion starts after them.
  offset = len(context) + 1 if net.decoder_only else 0
  expected = reference["logits"][0, offset:offset + len(targets)]
  assert reference["targets"][0, offset:offset + len(targets)].tolist() == targets.tolist()

  prefix = net.start(context)
  got = [prefix.logits[:expected.shape[-1]]]
  # Three beams; beam 1 carries the targets, the others other tokens; reordered every step.
  beams = runtime.Beams(net, prefix, 1)
  beams.reorder(np.zeros(3, np.int64))
  rng = np.random.default_rng(1)
  for token in targets[:-1]:
    tokens = np.array([rng.integers(3, 259), token, rng.integers(3, 259)])
    logits = net.step(beams, tokens)
    got.append(logits[1, :expected.shape[-1]])
    beams.reorder(np.array([1, 1, 0]))  # the carrier stays at index 1 (and is copied to 0)
  assert np.abs(np.stack(got) - expected).max() < TOLERANCE


@pytest.mark.parametrize("model", LOGITS_MODELS)
def test_lines_read_at_once_give_mesh_tf_logits(model, network, mesh_tf_logits, logits_batch):
  # decoding.LineSearch.score reads a batch of known lines in one block (Network.read_after):
  # the targets beside a line of other tokens, padded at its end, as score pads shorter lines.
  net = network(model)
  reference = mesh_tf_logits[model]
  inputs = logits_batch["inputs"][0]
  context = [int(t) for t in inputs[:int((inputs > 0).sum()) - 1]]
  targets = logits_batch["targets"][0]
  offset = len(context) + 1 if net.decoder_only else 0
  expected = reference["logits"][0, offset + 1:offset + len(targets)]
  prefix = net.start(context)
  other = np.random.default_rng(2).integers(3, 259, len(targets) - 1)
  other[-3:] = 1  # EOS padding
  fed = np.stack([other, targets[:-1]])
  got = net.read_after(prefix, fed)[1, :, :expected.shape[-1]]
  assert got.shape == expected.shape
  assert np.abs(got - expected).max() < TOLERANCE


@pytest.mark.parametrize("model", LOGITS_MODELS)
def test_only_a_causal_decoder_reuses_an_earlier_reading(model, network, logits_batch):
  # A prefix LM's positions see the ones after them and an encoder reads the whole context: an
  # earlier reading of the same ids is read again (the causal LM's reuse: decoding_test).
  net = network(model)
  inputs = logits_batch["inputs"][0]
  context = [int(t) for t in inputs[:int((inputs > 0).sum()) - 1]]
  first = net.start(context)
  again = net.start(context, reuse=first)
  assert first.inputs is None and again.read == again.length
  assert np.array_equal(again.logits, first.logits)


def test_runtime_is_written_once_and_reused(tiny_run, network):
  _, model_dir = tiny_run("prefix_lm")
  network("prefix_lm")
  folder = runtime.runtime_dir(model_dir, TINY_STEPS)
  meta = json.loads((folder / runtime.MODEL_FILE).read_text())
  assert meta["step"] == TINY_STEPS and meta["architecture"]["prefix_lm"]
  stamp = (folder / runtime.PARAMS_FILE).stat().st_mtime_ns
  complete.load_network(complete.model_info(model_dir))
  assert (folder / runtime.PARAMS_FILE).stat().st_mtime_ns == stamp
  assert [p.name for p in folder.parent.iterdir()] == [folder.name]  # no temporary left


def test_runtime_of_another_format_is_a_one_line_error(tmp_path):
  (tmp_path / runtime.MODEL_FILE).write_text(json.dumps({"format": 99}))
  np.savez(tmp_path / runtime.PARAMS_FILE, x=np.zeros(1))
  with pytest.raises(runtime.RuntimeFolderError, match=r"has format 99, .* remove .* to write"):
    runtime.Network.load(tmp_path)


def test_unreadable_runtime_is_a_one_line_error(tmp_path):
  (tmp_path / runtime.MODEL_FILE).write_text("{not json")
  with pytest.raises(runtime.RuntimeFolderError, match=r"model.json cannot be read \(.*\): remove"):
    runtime.Network.load(tmp_path)


def test_a_runtime_claiming_a_huge_length_is_refused_before_anything_is_allocated(tmp_path):
  # A damaged digit would make the relative-bias tables heads x 2 x 10^9 floats.
  shutil.copytree(runtime.runtime_dir(test_utils.PRETRAINED, test_utils.PRETRAINED_STEP), tmp_path / "shipped")
  model_json = tmp_path / "shipped" / runtime.MODEL_FILE
  meta = json.loads(model_json.read_text())
  meta["sequence_length"]["inputs"] = 10 ** 9
  model_json.write_text(json.dumps(meta))
  with pytest.raises(runtime.RuntimeFolderError, match=r"model.json cannot be read \(sequence_"):
    runtime.Network.load(tmp_path / "shipped")


@pytest.mark.parametrize("bidirectional", [False, True])
def test_relative_biases_are_the_table_looked_up_by_distance(bidirectional):
  # Network.start/step/read_after ask for consecutive queries against consecutive keys and get
  # a view of the table by relative position; past the table's reach the distance is clipped
  # (its bucket is the farthest one either way).
  table = np.random.default_rng(0).standard_normal((4, runtime._NUM_BUCKETS)).astype(np.float32)
  max_length = 40
  bias = runtime._RelativeBias(table, bidirectional, max_length)
  buckets = runtime._relative_position_bucket(np.arange(-max_length, max_length + 1),
                                              bidirectional)
  for first_query, queries, first_key, keys in [(30, 1, 0, 30), (30, 1, 25, 6), (0, 12, 0, 12),
                                                (12, 9, 0, 21), (20, 5, 20, 5), (39, 1, 0, 40),
                                                (50, 1, 0, 51), (0, 60, 0, 60), (45, 3, 0, 3)]:
    distance = (np.arange(first_key, first_key + keys)[None, :]
                - np.arange(first_query, first_query + queries)[:, None])
    expected = table[:, buckets[np.clip(distance, -max_length, max_length) + max_length]]
    got = bias(first_query, queries, first_key, keys)
    assert np.array_equal(got, expected), (first_query, queries, first_key, keys)


def test_a_decode_steps_kernels_lie_in_one_block_from_a_huge_page():
  # Network._in_one_block: one array that the kernel can back with 2 MB pages, holding the
  # checkpoint's values (the logits tests above check what is computed with them).
  net = runtime.Network.load(runtime.runtime_dir(test_utils.PRETRAINED, test_utils.PRETRAINED_STEP))
  kernels = [net._logits_kernel]
  for layer in net.layers:
    kernels += [layer.self_attention.query_key_value, layer.self_attention.out, *layer.mlp_in,
                layer.mlp_out]
  block = kernels[0].base
  assert block is not None and all(k.base is block for k in kernels)
  assert kernels[0].ctypes.data % runtime._HUGE_PAGE == 0
  ends = [(k.ctypes.data, k.ctypes.data + k.nbytes) for k in kernels]
  assert all(end == next_start for (_, end), (next_start, _) in zip(ends, ends[1:]))
  attention = net.layers[0].self_attention
  assert np.array_equal(attention.query_key_value,
                        np.concatenate([attention.query, attention.key, attention.value], axis=1))
