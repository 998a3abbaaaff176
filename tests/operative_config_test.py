"""Reading a Mesh TF model dir's operative_config.gin without gin."""

import pytest

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
