"""seqio tasks over FLCC Python code (registered on `import code_t5`).

Names are versioned (`_v1`): a change that alters examples gets a new name, so caches and
results never mix versions. Every task reads `sources.FlccDataSource`, i.e. the FLCC root bound to
`code_t5.flcc_dataset.root` in gin (dataset-dev/ by default). Each task has one preprocessor list:
text -> tokens -> [cache point] -> objective -> eval strings.
"""

import functools

import seqio
from t5.data import preprocessors as t5_preprocessors

from code_t5 import metrics
from code_t5 import postprocessors
from code_t5 import preprocessors
from code_t5 import sources
from code_t5 import vocab

PREFIX_LM = "flcc_py_prefix_lm_v1"
SPAN_CORRUPTION = "flcc_py_span_corruption_v1"


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


# Prefix LM: a random chunk of a file is cut at a random point; inputs = the code before the cut,
# targets = the code after it (t5's prefix_lm objective, noise density 0.5).
register(PREFIX_LM, t5_preprocessors.prefix_lm, output_features())

# Span corruption: 15% of tokens in spans of mean length 3 replaced by sentinels (T5's objective).
register(SPAN_CORRUPTION, t5_preprocessors.span_corruption, output_features())
