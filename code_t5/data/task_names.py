"""The names of the seqio tasks and mixtures: objective x vocabulary -> versioned name.

code_t5/data/tasks.py registers the tasks under these names (and re-exports them: tasks.name_of,
tasks.PREFIX_LM, ...); they live here, without seqio, so that naming a model dir's task
(operative_config.OperativeConfig.task, e.g. in `code-t5 complete`) imports no TensorFlow and
registers nothing.
"""

from code_t5 import errors
from code_t5.data import vocab

VERSION = "v1"
# Objectives whose examples changed keep each version registered: a model dir's operative config
# names the version it was trained on (none bound: v1), so old checkpoints still load, evaluate
# and reproduce. cursor_lm v2 draws its "anywhere" cursors outside leading indentation; v3 also
# samples each side's pieces in training (BPE-dropout); v4 also puts the code below the cursor's
# line before half of the contexts (BELOW_TOKENS pieces, then the separator).
VERSIONS = {"cursor_lm": ("v1", "v2", "v3", "v4")}
# cursor_lm v4's contexts that read the code below: its first BELOW_TOKENS pieces (from the line
# after the cursor's), the separator id (below_separator), then the code before the cursor; the
# engine builds the same for a model trained on it (reads_below).
BELOW_TOKENS = 64
PREFIX_LM = "flcc_py_prefix_lm_v1"
SPAN_CORRUPTION = "flcc_py_span_corruption_v1"
LINE_COMPLETION = "flcc_py_line_completion_v1"
# A mixture (code_t5/data/mixtures.py) is named like a task of this objective.
COMPLETION_LM = "flcc_py_completion_lm_v1"
PREFIX_LM_AND_SPAN_CORRUPTION = "prefix_lm_span_corruption"
OBJECTIVES = ("prefix_lm", "span_corruption", PREFIX_LM_AND_SPAN_CORRUPTION, "completion_lm",
              "cursor_lm", "line_completion")


class TaskNameError(errors.UserError, ValueError):
  """An objective, vocabulary or version no task is registered for (a gin binding's value)."""


def name_of(objective: str, vocabulary: str = "byte", version: str = VERSION) -> str:
  """The registered name for an objective, a vocabulary name (of vocab.VOCABULARIES) and a
  version of the objective's examples (VERSIONS; every objective has v1)."""
  if objective not in OBJECTIVES:
    raise TaskNameError(f"code_t5.task_name: objective {objective!r} is not one of "
                        f"{', '.join(OBJECTIVES)}")
  if vocabulary not in vocab.VOCABULARIES:
    raise TaskNameError(f"code_t5.task_name: vocabulary {vocabulary!r} is not one of "
                        f"{', '.join(vocab.VOCABULARIES)}")
  versions = VERSIONS.get(objective, (VERSION,))
  if version not in versions:
    raise TaskNameError(f"code_t5.task_name: objective {objective!r} has no version "
                        f"{version!r}; it has {', '.join(versions)}")
  suffix = "" if vocabulary == "byte" else f"_{vocabulary}"
  return f"flcc_py_{objective}{suffix}_{version}"


def below_separator(vocab_size: int) -> int:
  """The id between the code below and the code before the cursor: the first sentinel
  (t5's extra_id_0, the last id), which no text encodes to."""
  return vocab_size - 1


def reads_below(task: str) -> bool:
  """Whether a model trained on `task` reads the code below the cursor's line first."""
  return any(task == name_of("cursor_lm", vocabulary, "v4") for vocabulary in vocab.VOCABULARIES)
