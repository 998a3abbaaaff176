"""code_t5.training's options change how fast training starts, never what it trains on."""

import pytest
import seqio
from t5.models import mesh_transformer

import code_t5_compat

pytestmark = pytest.mark.usefixtures("tasks_use_prepared_dir")
LENGTHS = {"inputs": 128, "targets": 128}


def _training_examples(task_name, num_examples=40):
  """What Mesh TF's trainer reads (packed, shuffled with a fixed seed), as plain lists."""
  vocabulary = seqio.get_mixture_or_task(task_name).output_features["targets"].vocabulary
  dataset = mesh_transformer.mesh_train_dataset_fn(task_name, LENGTHS, vocabulary, seed=7)
  return [{k: v.tolist() for k, v in ex.items()}
          for ex in dataset.take(num_examples).as_numpy_iterator()]


@pytest.mark.parametrize("task_name", ["flcc_py_prefix_lm_v1", "flcc_py_span_corruption_v1",
                                       "flcc_py_prefix_lm_span_corruption_spm_dev_v1"])
def test_input_pipeline_without_autograph_gives_the_same_examples(task_name):
  with code_t5_compat.tf_data_without_autograph():
    without = _training_examples(task_name)
  assert without == _training_examples(task_name)
  assert len(without) == 40 and any(ex["inputs"] != ex["targets"] for ex in without)
