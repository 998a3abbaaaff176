"""seqio mixtures of the FLCC tasks."""

import seqio

from code_t5 import tasks

PREFIX_LM_AND_SPAN_CORRUPTION = "flcc_py_prefix_lm_span_corruption_v1"

# Equal rates: both tasks read the same files, so "proportional to size" would also be 1:1.
seqio.MixtureRegistry.add(
    PREFIX_LM_AND_SPAN_CORRUPTION,
    [(tasks.PREFIX_LM, 1.0), (tasks.SPAN_CORRUPTION, 1.0)])
