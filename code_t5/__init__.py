"""code_t5: T5 models for full-line code completion on FLCC Python repositories.

`import code_t5` (or `--module_import=code_t5`) registers the seqio tasks and mixtures and puts
the project's gin_configs/ on gin's search path, so `--gin_file=models/shared-prefix_lm.gin` works
from any directory.
"""

import importlib.resources
import os
import sys
import warnings

# The `code-t5` command imports this package, and with it TensorFlow, before any of its code runs:
# keep TF's C++ start-up messages (CUDA factories, TensorRT) and tensorflow_hub's pkg_resources
# deprecation, which say nothing about the command, off its terminal (TF_CPP_MIN_LOG_LEVEL set by
# the user wins). Mesh TF subprocesses get the same default from launcher.run.
if os.path.basename(sys.argv[0]) == "code-t5":
  os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
  warnings.filterwarnings("ignore", message="pkg_resources is deprecated", category=UserWarning)

import gin  # pylint: disable=g-import-not-at-top,wrong-import-position

import code_t5_compat
from code_t5 import mixtures  # pylint: disable=unused-import  (registers mixtures)
from code_t5 import tasks  # pylint: disable=unused-import  (registers tasks)

GIN_CONFIGS = str(importlib.resources.files("code_t5.gin_configs"))
gin.add_config_file_search_path(GIN_CONFIGS)
code_t5_compat.patch_gin_for_namespace_packages()
