"""seqio tasks over FLCC Python code (registered on `import code_t5`).

Names are versioned (`_v1`): a change that alters examples gets a new name, so caches and
results never mix versions. Every task reads the FLCC root bound to `code_t5.flcc_dataset.root`
in gin (dataset-dev/ by default). Each vocabulary of `vocab.VOCABULARIES` gets its own tasks; the
vocabulary is part of the name, except for the byte vocabulary (the original names):

  flcc_py_prefix_lm_v1, flcc_py_completion_lm_v1, flcc_py_span_corruption_v1,
  flcc_py_line_completion_v1                                                           (bytes)
  flcc_py_prefix_lm_spm_dev_v1, flcc_py_completion_lm_spm_dev_v1, ...
                                                          (code_t5/vocabs/flcc_dev_spm.model)

An objective whose examples changed keeps its old versions registered beside the new one
(task_names.VERSIONS): flcc_py_cursor_lm_spm_dev_v1, _v2 and _v3. A model file picks one with
`code_t5.task_name.version`, and a model dir's operative config records it.

gin picks one with `MIXTURE_NAME = @code_t5.task_name()` (see `task_name`).
"""

import functools

import gin
import seqio
from t5.data import preprocessors as t5_preprocessors

from code_t5.data import line_completion_data
from code_t5.data import metrics
from code_t5.data import postprocessors
from code_t5.data import preprocessors
from code_t5.data import sources
from code_t5.data import spm_vocabulary
from code_t5.data import vocab
# The names live in code_t5/data/task_names.py (no seqio there); tasks.PREFIX_LM, tasks.name_of...
# stay.
from code_t5.data.task_names import (  # pylint: disable=unused-import,g-multiple-import
    COMPLETION_LM, LINE_COMPLETION, OBJECTIVES, PREFIX_LM, PREFIX_LM_AND_SPAN_CORRUPTION,
    SPAN_CORRUPTION, VERSION, VERSIONS, name_of)


@gin.configurable(module="code_t5")
def task_name(objective: str = "prefix_lm", vocabulary: str = "byte",
              version: str = VERSION) -> str:
  """gin's way to name the task: `MIXTURE_NAME = @code_t5.task_name()`.

  The model file binds the objective (`code_t5.task_name.objective`), dataset.gin the vocabulary
  ('byte'), and gin_configs/vocabs/*.gin switch the vocabulary, so each composes with every model.
  A model file may bind the objective's version (`code_t5.task_name.version`, VERSIONS).
  """
  return name_of(objective, vocabulary, version)


def output_features(vocabulary=None):
  vocabulary = vocabulary or vocab.byte_vocabulary()
  return {
      "inputs": seqio.Feature(vocabulary=vocabulary, add_eos=True, required=False),
      "targets": seqio.Feature(vocabulary=vocabulary, add_eos=True),
  }


def _text_to_tokens():
  """Whole files as `targets` tokens; everything before the cache point is deterministic."""
  return [
      functools.partial(seqio.preprocessors.rekey, key_map={"targets": "text"}),
      seqio.preprocessors.tokenize,
      seqio.CacheDatasetPlaceholder(),
  ]


def register(name, objective, features):
  """A task whose objective cuts token sequences (files are tokenized once, before the cache)."""
  seqio.TaskRegistry.add(
      name,
      source=sources.FlccDataSource(),
      preprocessors=_text_to_tokens() + [
          objective,
          preprocessors.add_pretokenized,
          seqio.preprocessors.append_eos_after_trim,
      ],
      output_features=features,
      postprocess_fn=postprocessors.to_json_line,
      metric_fns=[metrics.completion_metrics])


def register_on_text(name, objective, features, tokenize=preprocessors.tokenize_near_cursor,
                     below=False):
  """A task whose objective cuts texts, then tokenizes each side on its own (cursor_lm); `below`:
  the objective also gives the code below the cursor's line, put before the inputs."""
  seqio.TaskRegistry.add(
      name,
      source=sources.FlccDataSource(),
      preprocessors=[
          seqio.CacheDatasetPlaceholder(),
          objective,
          tokenize,
          *([preprocessors.below_first] if below else []),
          preprocessors.fit_to_lengths,
          seqio.preprocessors.append_eos_after_trim,
      ],
      output_features=features,
      postprocess_fn=postprocessors.to_json_line,
      metric_fns=[metrics.completion_metrics])


def register_line_completion(name, features):
  """Held-out repositories only (validation, test): an evaluation task; see line_completion.py."""
  seqio.TaskRegistry.add(
      name,
      source=line_completion_data.LineCompletionSource(),
      preprocessors=[
          line_completion_data.points_to_examples,
          seqio.preprocessors.tokenize,  # keeps the texts as *_pretokenized
          line_completion_data.left_truncate_inputs,
          seqio.preprocessors.append_eos_after_trim,
      ],
      output_features=features,
      postprocess_fn=postprocessors.line_to_json_line,
      metric_fns=[metrics.line_completion_metrics])


for _vocabulary_name in vocab.VOCABULARIES:
  _features = output_features(spm_vocabulary.get_vocabulary(_vocabulary_name))
  # Prefix LM: a random chunk of a file is cut at a random point; inputs = the code before the
  # cut, targets = the code after it (t5's prefix_lm objective, noise density 0.5).
  register(name_of("prefix_lm", _vocabulary_name), t5_preprocessors.prefix_lm, _features)
  # Prefix LM at random cursors, both sides full length: preprocessors.completion_lm.
  register(name_of("completion_lm", _vocabulary_name), preprocessors.completion_lm, _features)
  # The same at an editor's cursors (characters, half of them at line starts), each side
  # tokenized on its own as the line-completion eval and `complete` do: preprocessors.cursor_lm.
  # v1 also draws cursors inside leading indentation, where no completion is asked for; v2 not.
  register_on_text(name_of("cursor_lm", _vocabulary_name, "v1"), functools.partial(
      preprocessors.cursor_lm, cursors_in_indentation=True), _features)
  register_on_text(name_of("cursor_lm", _vocabulary_name, "v2"), functools.partial(
      preprocessors.cursor_lm, cursors_in_indentation=False), _features)
  # v3: v2's cursors, each side's pieces sampled by BPE-dropout (tokenize_with_subword_sampling).
  register_on_text(name_of("cursor_lm", _vocabulary_name, "v3"), functools.partial(
      preprocessors.cursor_lm, cursors_in_indentation=False), _features,
                   tokenize=preprocessors.tokenize_with_subword_sampling)
  # v4: v3, with the code below the cursor's line before the context in half of the examples
  # (fill-in-the-middle, suffix first: preprocessors.below_first).
  register_on_text(name_of("cursor_lm", _vocabulary_name, "v4"), functools.partial(
      preprocessors.cursor_lm, cursors_in_indentation=False, below_rate=0.5), _features,
                   tokenize=preprocessors.tokenize_with_subword_sampling, below=True)
  # Span corruption: 15% of tokens in spans of mean length 3 replaced by sentinels (T5's).
  register(name_of("span_corruption", _vocabulary_name), t5_preprocessors.span_corruption,
           _features)
  # Line completion at seeded points of held-out files: inputs = the code before the cursor,
  # targets = the rest of its line.
  register_line_completion(name_of("line_completion", _vocabulary_name), _features)
