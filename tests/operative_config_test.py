"""Reading a Mesh TF model dir's operative_config.gin without gin."""

import pytest

from code_t5 import test_utils
from code_t5.training import launcher
from code_t5.training import operative_config


def _config(tmp_path, text):
  (tmp_path / operative_config.FILE_NAME).write_text(text)
  return operative_config.OperativeConfig.of_model_dir(tmp_path)


@pytest.mark.parametrize("model,task", [("shared-prefix_lm", "flcc_py_prefix_lm_v1"),
                                        ("span_corruption", "flcc_py_span_corruption_v1")])
def test_reads_what_a_real_training_run_recorded(tiny_run, model, task):
  _, model_dir = tiny_run(model)
  config = operative_config.OperativeConfig.of_model_dir(model_dir)
  assert config.task() == task  # MIXTURE_NAME = @code_t5.task_name(), resolved
  assert config.value("run.sequence_length") == {"inputs": 256, "targets": 256}
  assert config.value("run.model_type") == "bitransformer"
  assert config.value("Unitransformer.vocab_divisor") == 128


def test_task_name_call_is_resolved_in_the_macro_scope(tmp_path):
  config = _config(tmp_path, "\n".join([
      "MIXTURE_NAME = @code_t5.task_name()",
      "get_vocabulary.mixture_or_task_name = %MIXTURE_NAME",
      "# Parameters for MIXTURE_NAME/task_name:",
      "MIXTURE_NAME/task_name.objective = 'span_corruption'",
      "MIXTURE_NAME/task_name.vocabulary = 'spm_dev'",
      "other/task_name.objective = 'line_completion'",
  ]))
  assert config.task() == "flcc_py_span_corruption_spm_dev_v1"


@pytest.mark.parametrize("version_line,task", [
    ("", "flcc_py_cursor_lm_spm_dev_v1"),  # written before versions were bound: v1
    ("MIXTURE_NAME/task_name.version = 'v2'", "flcc_py_cursor_lm_spm_dev_v2")])
def test_the_recorded_version_of_the_objective_names_the_task(tmp_path, version_line, task):
  config = _config(tmp_path, "\n".join([
      "MIXTURE_NAME = @code_t5.task_name()",
      "get_vocabulary.mixture_or_task_name = %MIXTURE_NAME",
      "MIXTURE_NAME/task_name.objective = 'cursor_lm'",
      version_line,
      "MIXTURE_NAME/task_name.vocabulary = 'spm_dev'",
  ]))
  assert config.task() == task


def test_a_literal_task_name_is_returned_as_is(tmp_path):
  config = _config(tmp_path, "MIXTURE_NAME = 'some_task'\n"
                   "get_vocabulary.mixture_or_task_name = %MIXTURE_NAME\n")
  assert config.task() == "some_task"


def test_continued_and_bracketed_statements_are_joined(tmp_path):
  config = _config(tmp_path, "import code_t5\n"
                   "DenseReluDense.activation = \\\n    ['gelu', 'linear']\n"
                   "run.sequence_length = {\n    'inputs': 8,\n    'targets': 4,\n}\n")
  assert config.value("DenseReluDense.activation") == ["gelu", "linear"]
  assert config.value("run.sequence_length") == {"inputs": 8, "targets": 4}


def test_missing_file_binds_nothing(tmp_path):
  config = operative_config.OperativeConfig.of_model_dir(tmp_path)
  assert not config.exists
  assert config.task() is None
  assert config.value("run.model_type", "bitransformer") == "bitransformer"


def test_a_value_that_is_not_a_literal_is_a_one_line_error(tmp_path):
  config = _config(tmp_path, "run.sequence_length = @some.fn()\n")
  with pytest.raises(operative_config.OperativeConfigError,
                     match=r"binds run.sequence_length to '@some.fn\(\)', not a literal"):
    config.value("run.sequence_length")


def test_an_unknown_recorded_objective_is_a_one_line_error(tmp_path):
  config = _config(tmp_path, "MIXTURE_NAME = @code_t5.task_name()\n"
                   "get_vocabulary.mixture_or_task_name = %MIXTURE_NAME\n"
                   "MIXTURE_NAME/task_name.objective = 'nonsense'\n")
  with pytest.raises(operative_config.OperativeConfigError, match="objective 'nonsense'"):
    config.task()


def test_a_version_the_objective_lacks_is_a_one_line_error(tmp_path):
  config = _config(tmp_path, "MIXTURE_NAME = @code_t5.task_name()\n"
                   "get_vocabulary.mixture_or_task_name = %MIXTURE_NAME\n"
                   "MIXTURE_NAME/task_name.objective = 'prefix_lm'\n"
                   "MIXTURE_NAME/task_name.version = 'v2'\n")
  with pytest.raises(operative_config.OperativeConfigError,
                     match="objective 'prefix_lm' has no version 'v2'; it has v1"):
    config.task()


# ------------------------------------------------------------------ gin text from a stranger


@pytest.mark.parametrize("model", launcher.MODELS)
def test_what_each_training_records_is_not_refused(tiny_run, model):
  _, model_dir = tiny_run(model)
  text = (model_dir / operative_config.FILE_NAME).read_text()
  assert operative_config.unsafe_statement(text) is None


def test_the_shipped_model_and_the_projects_gin_files_are_not_refused():
  paths = [test_utils.PRETRAINED / operative_config.FILE_NAME]
  paths += sorted(launcher.GIN_CONFIGS.rglob("*.gin"))
  assert len(paths) > 20
  for path in paths:
    assert operative_config.unsafe_statement(path.read_text()) is None, path


@pytest.mark.parametrize("text, refused", [
    # gin's dynamic registration makes any attribute of an imported module callable: os.system.
    ("from __gin__ import dynamic_registration\nimport code_t5.processes\n"
     "utils.run.eval_dir_suffix = @code_t5.processes.os.system()\n",
     "from __gin__ import dynamic_registration"),
    ("import stranger_mod\n", "import stranger_mod"),
    ("import os\n", "import os"),
    ("include '/etc/evil.gin'\n", "include '/etc/evil.gin'"),
    ("include '../evil.gin'\n", "include '../evil.gin'"),
    # Mesh TF's save_scores writes where its bindings say, called by gin...
    ("run.eval_summary_dir = @utils.save_scores()\n"
     "utils.save_scores.scores_filename = '/home/me/notes'\n",
     "run.eval_summary_dir = @utils.save_scores()"),
    # ... or by Mesh TF, which calls each entry of a layer list with its keyword arguments.
    ("make_layer_stack.layers = [\n    [@utils.save_scores, {'scores_filename': '/x'}],\n"
     "    @mesh_tensorflow.transformer.transformer_layers.SelfAttention]\n",
     "make_layer_stack.layers = ... @utils.save_scores ..."),
    # The dataset functions prepare (and clean) data where flcc_dataset.prepared_dir says.
    ("run.eval_dir_suffix = @mesh_transformer.mesh_train_dataset_fn()\n",
     "run.eval_dir_suffix = @mesh_transformer.mesh_train_dataset_fn()"),
    ("decoder/make_layer_stack.layers = [@t5.models.mesh_transformer.mesh_train_dataset_fn]\n",
     "decoder/make_layer_stack.layers = [@t5.models.mesh_transformer.mesh_train_dataset_fn]"),
    # TFDS imports the module a dataset folder's features.json names.
    ("run.eval_dir_suffix = @dataset.untokenized_tfds_dataset()\n",
     "run.eval_dir_suffix = @dataset.untokenized_tfds_dataset()"),
    # A configurable of the allowed ones' name in another module is another configurable.
    ("run.learning_rate_schedule = @evil.linear_decay\n",
     "run.learning_rate_schedule = @evil.linear_decay"),
    ("MACRO = @utils.save_scores()\nrun.eval_summary_dir = %MACRO\n",
     "MACRO = @utils.save_scores()"),
    ("run.mode = 'train\n", "text gin cannot read"),
    # Helper-20's audit. A block's bindings came back from gin's parser without the references
    # read in the block: save_scores wrote where the block said.
    ("utils.run:\n  perplexity_eval_steps = @mesh_tensorflow.transformer.utils.save_scores()\n",
     "utils.run:"),
    # gin takes an include it finds in no folder to its readers: `file:` reads any file, and a
    # `pkg/sub/x.gin` imports pkg (`this` prints the Zen of Python).
    ("include 'file:///etc/evil.gin'\n", "include 'file:///etc/evil.gin'"),
    ("include 'this/x/y.gin'\n", "include 'this/x/y.gin'"),
    ("include 'models/no_such.gin'\n", "include 'models/no_such.gin'"),
    # helper-24's audit: a lone "\r" ends a line where gin reads a file (open()); a name with a
    # trailing "/" is a file to pathlib, a package to import to gin's resource reader.
    ("# a note\rrun.eval_summary_dir = @utils.save_scores()\n",
     "run.eval_summary_dir = @utils.save_scores()"),
    ("include 'dataset.gin/'\n", "include 'dataset.gin/'"),
    ("include './dataset.gin'\n", "include './dataset.gin'"),
    ("run.x = " + "[" * 100_000 + "]" * 100_000 + "\n", "text gin cannot read"),
])
def test_gin_text_that_could_run_code_or_write_is_refused(text, refused):
  assert operative_config.unsafe_statement(text).startswith(refused)


def test_training_functions_are_allowed_only_where_training_binds_them():
  for text in ("utils.run.train_dataset_fn = @t5.models.mesh_transformer.mesh_train_dataset_fn",
               "run.train_model_fn = @code_t5.train_model",
               "utils.run.eval_dataset_fn = @code_t5.eval_datasets_without_autotune",
               "code_t5.eval_datasets_without_autotune.eval_dataset_fn = "
               "@t5.models.mesh_transformer.mesh_eval_dataset_fn",
               "utils.run.learning_rate_schedule = @learning_rate_schedules.linear_decay",
               "MIXTURE_NAME = @code_t5.task_name()"):
    assert operative_config.unsafe_statement(text + "\n") is None, text
  assert operative_config.unsafe_statement(
      "utils.run.eval_dataset_fn = @code_t5.train_model\n") is not None


def test_brackets_in_strings_and_comments_leave_statements_as_they_are():
  # `x = '('` kept the statement open, and every binding after it was swallowed (helper-50's
  # audit); a comment's bracket did the same, and a comment stayed in the value.
  # A string left open runs to its line's end (scanned again from each escaped quote, a line of
  # them took seconds: helper-53's review).
  text = ("a = '('\nb = \"[#\"\nc = [1,  # (the first\n     # a line of comment (\n     2]\n"
          "d = f(  # ]\n  3)\ne = 'it\\'s ('\nh = 'open (\ng = 4  # note\n")
  assert operative_config.parse_bindings(text) == {
      "a": "'('", "b": '"[#"', "c": "[1, 2]", "d": "f( 3)", "e": "'it\\'s ('", "h": "'open (",
      "g": "4"}
