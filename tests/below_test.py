"""The code below the cursor's line as the model's own context: a model trained on cursor_lm v4
(fill-in-the-middle, the code below first) is given the context training gave it
(code_t5/engine/complete.py, Completer.context_ids; code_t5/data/preprocessors.py, below_first).

The shipped model was trained on v3 and reads only the code before the cursor (the code below
reaches it through the copy cache and retrieved lines); the context's layout depends on the
vocabulary and the lengths alone, so the shipped network, told it reads below, checks the engine's
side against training's."""

import pytest
import tensorflow.compat.v2 as tf

from code_t5 import test_utils
from code_t5.data import preprocessors
from code_t5.data import spm_vocabulary
from code_t5.data import task_names
from code_t5.data import tasks
from code_t5.engine import complete

# The model alone: no copy cache, no retrieved lines, no gate; what it ranks first.
MODEL_ONLY = complete.EngineOptions(top=3, min_score=complete.DEFAULT_MIN_SCORE, cache=False,
                                    retrieval=False)


@pytest.fixture(scope="module")
def shipped():
  return complete.Completer(test_utils.PRETRAINED, MODEL_ONLY)


@pytest.fixture
def completer(shipped):
  """The shipped network, read as a model trained on cursor_lm v4 would be."""
  shipped.reads_below = True
  yield shipped
  shipped.reads_below = task_names.reads_below(shipped.info.task)


def _training_inputs(before: str, below: str, inputs_length: int):
  """cursor_lm v4's inputs ids (without EOS) for the code `before` the cursor and `below` its
  line, as training builds them."""
  vocabulary = spm_vocabulary.get_vocabulary("spm_dev")
  example = {"inputs": tf.constant(vocabulary.encode(before), tf.int32), "below": below}
  dataset = tf.data.Dataset.from_tensors(example)
  put = preprocessors.below_first(dataset, tasks.output_features(vocabulary),
                                  {"inputs": inputs_length})
  return next(put.as_numpy_iterator())["inputs"].tolist()


def test_only_a_model_trained_on_v4_reads_the_code_below(shipped):
  assert shipped.info.task == "flcc_py_cursor_lm_spm_dev_v3" and not shipped.reads_below
  assert task_names.reads_below("flcc_py_cursor_lm_spm_dev_v4")
  assert task_names.reads_below("flcc_py_cursor_lm_v4")
  before = "def load(path):\n    data = "
  assert shipped.context_ids(before, "    return data\n") == (before, shipped.tokenizer.encode(before))


def test_a_v4_model_reads_the_code_below_as_training_put_it(completer):
  before = "import os\n\n\ndef load(path):\n    with open(path) as f:\n        data = "
  below = "    return json.loads(data)\n" + "".join(f"\n\ndef f{i}(x):\n    return x + {i}\n"
                                                for i in range(40))
  context, ids = completer.context_ids(before, below)
  assert context == before
  length = completer.info.sequence_length["inputs"]
  assert ids == _training_inputs(before, below, length)
  separator = ids.index(task_names.below_separator(completer.tokenizer.vocab_size))
  assert separator == task_names.BELOW_TOKENS and len(ids) <= length - 1
  # A long prefix leaves the below part whole and is cut on the left.
  long_before = "".join(f"value_{i} = compute({i})\n" for i in range(200)) + "x = "
  context, ids = completer.context_ids(long_before, below)
  assert long_before.endswith(context) and len(context) < len(long_before)
  assert ids.index(task_names.below_separator(completer.tokenizer.vocab_size)) == 64
  assert len(ids) <= length - 1
  # Nothing below (the file's last line), or the engine told not to read it: the context alone.
  assert completer.context_ids(before, "")[1] == completer.tokenizer.encode(before)


def test_a_cursor_at_the_start_of_a_file_reads_only_the_code_below(completer):
  below = "import os\nimport sys\n"
  context, ids = completer.context_ids("", below)
  assert context == "" and ids[-1] == task_names.below_separator(completer.tokenizer.vocab_size)
  # It decodes from the separator alone (nothing to heal). The shipped model was not trained to
  # read below (cursor_lm v3), so what it writes there is no test of quality: only that lines come.
  context, lines = completer.ranked("", below=below)
  assert context == "" and lines
