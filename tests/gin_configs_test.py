"""Every gin file parses in the compositions users run, and says what its name promises."""

import pathlib

import gin
import pkg_resources
import pytest
import seqio
from mesh_tensorflow.transformer import utils as mtf_utils  # registers Mesh TF's configurables
import t5.models.mesh_transformer  # pylint: disable=unused-import  (registers t5's configurables)

import code_t5
from code_t5 import test_utils
from code_t5.data import spm_vocabulary
from code_t5.data import vocab
from code_t5.training import launcher

GIN_DIR = pathlib.Path(code_t5.GIN_CONFIGS)
MESH_DEFAULTS = pkg_resources.resource_filename(mtf_utils.__name__, "gin/defaults.gin")
gin.add_config_file_search_path(pkg_resources.resource_filename("t5.models", "gin"))


def _parse(*files, bindings=()):
  """Parses files as mesh_transformer_main does: Mesh TF's defaults first, then ours in order."""
  gin.clear_config()
  gin.parse_config_file(MESH_DEFAULTS)
  gin.parse_config_files_and_bindings([str(GIN_DIR / f) for f in files], list(bindings))


def _experiment_files(model="shared-prefix_lm", size="tiny", run="cpu"):
  return launcher.Experiment(model=model, size=size, run=run).gin_files()


def _evaluated(name):
  """A bound value as Mesh TF receives it: `@fn()` references are called (in their scope)."""
  value = gin.query_parameter(name)
  while isinstance(value, gin.config.ConfigurableReference) and value.evaluate:
    value = value.scoped_configurable_fn()  # a %macro gives its value, maybe another @fn()
  return value


def _task():
  """The registered seqio task or mixture that %MIXTURE_NAME names."""
  name = _evaluated("%MIXTURE_NAME")
  assert isinstance(name, str) and name.startswith("flcc_py_")
  return seqio.get_mixture_or_task(name)  # raises for a name nothing registered


def test_every_gin_file_is_covered_by_a_composition():
  on_disk = {str(p.relative_to(GIN_DIR)) for p in GIN_DIR.rglob("*.gin")}
  composed = {"dataset.gin", "runs/eval.gin", "runs/eval_line_completion.gin",
              "runs/export.gin", "vocabs/spm_dev.gin", "schedules/warmup_constant_decay.gin"}
  composed |= {f"models/{m}.gin" for m in launcher.MODELS}
  composed |= {f"sizes/{s}.gin" for s in launcher.SIZES}
  composed |= {f"runs/{r}.gin" for r in launcher.RUNS}
  assert on_disk == composed


@pytest.mark.parametrize("model", launcher.MODELS)
@pytest.mark.parametrize("size", launcher.SIZES)
@pytest.mark.parametrize("run", launcher.RUNS)
def test_composition_parses(model, size, run):
  _parse(*_experiment_files(model, size, run))
  assert _task().output_features["targets"].vocabulary == vocab.byte_vocabulary()


def test_eval_composition_parses_with_a_fixed_seed():
  _parse(*_experiment_files(), "runs/eval.gin")
  assert gin.query_parameter("utils.run.mode") == "eval"
  assert gin.query_parameter("utils.run.dataset_split") == "validation"
  assert gin.query_parameter("mesh_eval_dataset_fn.seed") == 42
  # t5's mesh_eval_dataset_fn, read without tf.data's autotuning (code_t5/training/training.py)
  assert (gin.query_parameter("utils.run.eval_dataset_fn").selector ==
          "code_t5.eval_datasets_without_autotune")
  assert (gin.query_parameter("code_t5.eval_datasets_without_autotune.eval_dataset_fn").selector
          == "t5.models.mesh_transformer.mesh_eval_dataset_fn")


def test_launcher_vocabularies_are_the_registered_ones_with_a_gin_file_each():
  assert set(launcher.VOCABS) == set(vocab.VOCABULARIES)
  for name in launcher.VOCABS:
    files = launcher.Experiment(vocab=name).gin_files()
    if name != "byte":  # after the model file, whose objective it keeps
      assert files.index(f"vocabs/{name}.gin") == files.index("models/shared-prefix_lm.gin") + 1
      assert (GIN_DIR / "vocabs" / f"{name}.gin").is_file()


def test_export_composition_serves_one_request_at_a_time_greedily():
  _parse(*_experiment_files(), "runs/export.gin")
  assert gin.query_parameter("utils.run.mode") == "export_infer"
  assert gin.query_parameter("utils.run.batch_size") == ("sequences_per_batch", 1)
  assert gin.query_parameter("Bitransformer.decode.beam_size") == 1
  assert gin.query_parameter("Bitransformer.decode.temperature") == 0.0


def test_shared_prefix_lm_shares_one_set_of_weights_between_towers():
  _parse(*_experiment_files("shared-prefix_lm"))
  assert gin.query_parameter("make_bitransformer.encoder_name") == "decoder"
  assert gin.query_parameter("utils.run.model_type") == "bitransformer"
  assert _task().name == "flcc_py_prefix_lm_v1"


def test_prefix_lm_is_a_decoder_only_delimited_lm_with_full_attention_on_the_prefix():
  _parse(*_experiment_files("prefix_lm"))
  assert gin.query_parameter("utils.run.model_type") == "delimited_lm"
  assert gin.query_parameter("Unitransformer.input_full_attention") is True


@pytest.mark.parametrize("model", ["prefix_lm", "causal_lm"])
def test_decoder_only_models_never_take_the_loss_where_attention_sees_the_label(model):
  # With full attention over the inputs, an input position attends to the very token it would
  # predict: a loss there teaches copying (the prefix LM then predicts </s> after any context).
  _parse(*_experiment_files(model))
  assert gin.query_parameter("utils.run.model_type") == "delimited_lm"
  try:
    full_attention = gin.query_parameter("Unitransformer.input_full_attention")
  except ValueError:  # unbound: Mesh TF's default, causal attention everywhere
    full_attention = False
  assert gin.query_parameter("Unitransformer.loss_on_targets_only") is bool(full_attention)
  assert full_attention is (model == "prefix_lm")


def test_span_corruption_is_t5_1_1_with_gated_gelu():
  _parse(*_experiment_files("span_corruption"))
  assert gin.query_parameter("DenseReluDense.activation") == ["gelu", "linear"]
  assert _task().name == "flcc_py_span_corruption_v1"


@pytest.mark.parametrize("model,task", [("shared-prefix_lm", "flcc_py_prefix_lm_spm_dev_v1"),
                                        ("prefix_lm", "flcc_py_prefix_lm_spm_dev_v1"),
                                        ("span_corruption", "flcc_py_span_corruption_spm_dev_v1")])
def test_the_spm_vocabulary_file_switches_every_model_to_its_spm_task(model, task):
  _parse(*_experiment_files(model), "vocabs/spm_dev.gin")
  assert _task().name == task
  vocabulary = _task().output_features["targets"].vocabulary
  assert isinstance(vocabulary, spm_vocabulary.CodeSentencePieceVocabulary)
  assert vocabulary.sentencepiece_model_file == str(vocab.DEV_SPM_MODEL)
  # Mesh TF's vocabulary comes from the same task.
  assert _evaluated("mesh_transformer.get_vocabulary.mixture_or_task_name") == task
  assert _evaluated("mesh_train_dataset_fn.mixture_or_task_name") == task


@pytest.mark.parametrize("vocab_files,task", [((), "flcc_py_line_completion_v1"),
                                              (("vocabs/spm_dev.gin",),
                                               "flcc_py_line_completion_spm_dev_v1")])
def test_line_completion_eval_decodes_the_line_completion_task_of_the_training_vocabulary(
    vocab_files, task):
  _parse(*_experiment_files(), *vocab_files, "runs/eval_line_completion.gin")
  assert gin.query_parameter("utils.run.mode") == "eval"
  assert gin.query_parameter("utils.run.dataset_split") == "validation"
  assert _evaluated("mesh_eval_dataset_fn.mixture_or_task_name") == task
  assert _task().name.startswith("flcc_py_prefix_lm_")  # the trained task is unchanged
  assert gin.query_parameter("mesh_eval_dataset_fn.num_eval_examples") == -1
  assert gin.query_parameter("Bitransformer.decode.max_decode_length") == 96


def test_line_completion_eval_keeps_its_version_whatever_the_training_objective_binds():
  _parse(*_experiment_files("causal_lm"), "vocabs/spm_dev.gin", "runs/eval_line_completion.gin",
         bindings=["code_t5.task_name.version = 'v2'"])
  assert _task().name == "flcc_py_cursor_lm_spm_dev_v2"
  assert (_evaluated("mesh_eval_dataset_fn.mixture_or_task_name") ==
          "flcc_py_line_completion_spm_dev_v1")


@pytest.mark.parametrize("size,d_model,layers", [("tiny", 64, 2), ("small", 512, 6),
                                                 ("base", 768, 12)])
def test_size_files_override_the_model_files(size, d_model, layers):
  _parse(*_experiment_files(size=size))
  assert gin.query_parameter("%d_model") == d_model
  assert gin.query_parameter("%num_layers") == layers


@pytest.mark.parametrize("run,mesh_shape,devices", [
    ("cpu", "model:1,batch:1", ["/device:CPU:0"]),
    ("cpu_x2", "model:1,batch:2", ["cpu:0", "cpu:1"]),
    ("cpu_x4", "model:1,batch:4", ["cpu:0", "cpu:1", "cpu:2", "cpu:3"]),
    ("gpu", "model:1,batch:1", ["gpu:0"]),
    ("gpu_x2", "model:1,batch:2", ["gpu:0", "gpu:1"]),
    ("gpu_x4", "model:1,batch:4", ["gpu:0", "gpu:1", "gpu:2", "gpu:3"]),
    ("gpu_x8", "model:1,batch:8", [f"gpu:{i}" for i in range(8)]),
])
def test_placement_meshes(run, mesh_shape, devices):
  _parse(*_experiment_files(run=run))
  assert gin.query_parameter("utils.run.mesh_shape") == mesh_shape
  assert gin.query_parameter("utils.run.mesh_devices") == devices
  assert gin.query_parameter("utils.get_variable_dtype.activation_dtype") == "float32"


def test_the_one_cpu_mesh_trains_float32_variables_in_place():
  """runs/cpu.gin names its device as TensorFlow writes a variable's: Mesh TF compares the two
  strings, and where they differ it gives every variable a second copy on the mesh and copy ops
  (~800 ops more in the causal LM mini's graph)."""
  import mesh_tensorflow as mtf  # pylint: disable=g-import-not-at-top
  import tensorflow.compat.v1 as tf  # pylint: disable=g-import-not-at-top
  _parse(*_experiment_files(run="cpu"))
  devices = gin.query_parameter("utils.run.mesh_devices")
  with tf.Graph().as_default():
    graph = mtf.Graph()
    mesh = mtf.Mesh(graph, "mesh")  # masters on "cpu:0", as Mesh TF's trainer places them
    slot = mtf.get_variable(mesh, "slot", mtf.Shape([mtf.Dimension("rows", 4)]),
                            initializer=tf.zeros_initializer(), trainable=False)
    mesh_impl = mtf.placement_mesh_impl.PlacementMeshImpl(
        mtf.convert_to_shape("model:1,batch:1"), mtf.convert_to_layout_rules(""), devices)
    lowering = mtf.Lowering(graph, {mesh: mesh_impl})
    assert lowering.variables[slot.operation].slice_is_master
    assert [v.op.name for v in tf.global_variables()] == ["slot"]


@pytest.mark.parametrize("run,devices", [("cpu", None), ("cpu_x2", 2), ("cpu_x4", 4)])
def test_cpu_runs_train_through_the_project_train_model(run, devices):
  """No graph serialisation, updates after the backward pass, and real devices for CPU meshes."""
  _parse(*_experiment_files(run=run))
  assert gin.query_parameter("utils.run.train_model_fn").selector == "code_t5.train_model"
  assert gin.query_parameter("code_t5.train_model.write_graph_def") is False
  assert gin.query_parameter("code_t5.train_model.autograph") is False
  assert gin.query_parameter("code_t5.train_model.data_autotune") is False
  assert gin.query_parameter("utils.run.optimizer").selector == "code_t5.updates_after_backward"
  assert gin.query_parameter("code_t5.updates_after_backward.fused_adafactor") is True
  if devices:
    assert gin.query_parameter("code_t5.train_model.cpu_devices") == devices
    assert gin.query_parameter("code_t5.train_model.soft_placement") is False


@pytest.mark.parametrize("run", ["gpu", "gpu_x2", "gpu_x4", "gpu_x8"])
def test_gpu_runs_order_the_updates_after_the_backward_pass(run):
  """A placement mesh on GPUs lowers as on CPUs, where the updates raced with the backward reads
  (only runs/cpu.gin ordered them: helper-44's audit); the CPU's speed options stay its own."""
  _parse(*_experiment_files(run=run))
  assert gin.query_parameter("utils.run.train_model_fn").selector == "code_t5.train_model"
  assert gin.query_parameter("utils.run.optimizer").selector == "code_t5.updates_after_backward"
  assert (gin.query_parameter("code_t5.updates_after_backward.optimizer").selector
          == "optimize.AdafactorOptimizer")
  with pytest.raises(ValueError):
    gin.query_parameter("code_t5.train_model.write_graph_def")


@pytest.mark.parametrize("run,topology,model_parallelism", [("tpu_v3_8", "v3-8", 1),
                                                           ("tpu_v3_32", "v3-32", 2)])
def test_tpu_meshes(run, topology, model_parallelism):
  _parse(*_experiment_files(run=run))
  assert gin.query_parameter("utils.tpu_mesh_shape.tpu_topology") == topology
  assert gin.query_parameter("utils.tpu_mesh_shape.model_parallelism") == model_parallelism


@pytest.mark.parametrize("size,sequences", [("tiny", 8), ("small", 8), ("base", 4)])
def test_cpu_runs_get_a_batch_that_fits_unless_overridden(size, sequences):
  # sizes/small.gin on CPU used to inherit dataset.gin's 65,536 tokens and be OOM-killed at 24 GB.
  _parse(*_experiment_files(size=size, run="cpu"))
  assert _evaluated("utils.run.batch_size") == ("sequences_per_batch", sequences)
  _parse(*_experiment_files(size=size, run="cpu_x2"))
  assert _evaluated("utils.run.batch_size") == ("sequences_per_batch", sequences)
  # Accelerators keep the size's own batch.
  _parse(*_experiment_files(size=size, run="gpu"))
  assert _evaluated("utils.run.batch_size") == (
      ("sequences_per_batch", 8) if size == "tiny" else ("tokens_per_batch", 65536))
  # A --gin_param (after every file) still wins, either way.
  for binding, expected in [("utils.run.batch_size = ('sequences_per_batch', 2)", 2),
                            ("CPU_BATCH_SIZE = ('sequences_per_batch', 3)", 3)]:
    _parse(*_experiment_files(size=size, run="cpu"), bindings=[binding])
    assert _evaluated("utils.run.batch_size") == ("sequences_per_batch", expected)


# The code_t5 imports of an operative_config.gin that Mesh TF wrote before code_t5/ was split
# into sub-packages by stage (as the shipped model's did): gin must still parse it. And the other
# modules that define configurables, as a gin file of one's own may have imported them.
OLD_IMPORTS = ["import code_t5.attention as code_t52", "import code_t5.embeddings as code_t53",
               "import code_t5.losses as code_t54", "import code_t5.training as code_t55"]
OLD_DATA_IMPORTS = ["import code_t5.line_completion_data", "import code_t5.preprocessors",
                    "import code_t5.sources", "import code_t5.tasks"]


def test_an_operative_config_that_imports_modules_at_their_old_paths_parses(tmp_path):
  shipped = (test_utils.PRETRAINED / "operative_config.gin").read_text()
  imports = [line for line in shipped.splitlines() if line.startswith("import code_t5.")]
  assert len(imports) == len(OLD_IMPORTS)
  old = tmp_path / "operative_config.gin"
  old.write_text(shipped.replace("\n".join(imports), "\n".join(OLD_IMPORTS + OLD_DATA_IMPORTS)))
  gin.clear_config()
  gin.parse_config_file(MESH_DEFAULTS)
  gin.parse_config_file(str(old))  # as `--gin_file=<model_dir>/operative_config.gin` parses it
  try:
    assert gin.query_parameter("code_t5.attention.heads_first") is True
    assert gin.query_parameter("code_t5.train_model.data_autotune") is False
    # What a later operative_config.gin would import: the modules at their new paths.
    recorded = {line.split()[1] for line in gin.config_str().splitlines()
                if line.startswith("import code_t5")}
  finally:
    gin.clear_config()  # its flcc_dataset.root is the corpus it was trained on, not the tests'
  assert recorded == {"code_t5", "code_t5.data.line_completion_data", "code_t5.data.preprocessors",
                      "code_t5.data.sources", "code_t5.data.tasks", "code_t5.training.attention",
                      "code_t5.training.embeddings", "code_t5.training.losses",
                      "code_t5.training.training"}
