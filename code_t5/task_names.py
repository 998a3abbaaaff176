"""The names of the seqio tasks and mixtures: objective x vocabulary -> versioned name.

code_t5/tasks.py registers the tasks under these names (and re-exports them: tasks.name_of,
tasks.PREFIX_LM, ...); they live here, without seqio, so that naming a model dir's task
(operative_config.OperativeConfig.task, e.g. in `code-t5 complete`) imports no TensorFlow and
registers nothing.
"""

from code_t5 import vocab

VERSION = "v1"
PREFIX_LM = "flcc_py_prefix_lm_v1"
SPAN_CORRUPTION = "flcc_py_span_corruption_v1"
LINE_COMPLETION = "flcc_py_line_completion_v1"
# A mixture (code_t5/mixtures.py) is named like a task of this objective.
COMPLETION_LM = "flcc_py_completion_lm_v1"
PREFIX_LM_AND_SPAN_CORRUPTION = "prefix_lm_span_corruption"
OBJECTIVES = ("prefix_lm", "span_corruption", PREFIX_LM_AND_SPAN_CORRUPTION, "completion_lm",
              "cursor_lm", "line_completion")


def name_of(objective: str, vocabulary: str = "byte") -> str:
  """The registered name for an objective and a vocabulary name (of vocab.VOCABULARIES)."""
  if objective not in OBJECTIVES:
    raise ValueError(f"code_t5.task_name: objective {objective!r} is not one of "
                     f"{', '.join(OBJECTIVES)}")
  if vocabulary not in vocab.VOCABULARIES:
    raise ValueError(f"code_t5.task_name: vocabulary {vocabulary!r} is not one of "
                     f"{', '.join(vocab.VOCABULARIES)}")
  suffix = "" if vocabulary == "byte" else f"_{vocabulary}"
  return f"flcc_py_{objective}{suffix}_{VERSION}"
