"""seqio mixtures of the FLCC tasks (one per vocabulary, named as tasks.name_of says)."""

import seqio

from code_t5.data import tasks
from code_t5.data import vocab

for _vocabulary_name in vocab.VOCABULARIES:
  # Equal rates: both tasks read the same files, so "proportional to size" would also be 1:1.
  seqio.MixtureRegistry.add(
      tasks.name_of(tasks.PREFIX_LM_AND_SPAN_CORRUPTION, _vocabulary_name),
      [(tasks.name_of("prefix_lm", _vocabulary_name), 1.0),
       (tasks.name_of("span_corruption", _vocabulary_name), 1.0)])
