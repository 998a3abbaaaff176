"""code_t5: T5 models for full-line code completion on FLCC Python repositories.

`import code_t5` (or `--module_import=code_t5`) registers the seqio tasks and mixtures and puts
the project's gin_configs/ on gin's search path, so `--gin_file=models/shared-prefix_lm.gin` works
from any directory.
"""

import importlib.resources

import gin

import code_t5_compat
from code_t5 import mixtures  # pylint: disable=unused-import  (registers mixtures)
from code_t5 import tasks  # pylint: disable=unused-import  (registers tasks)

GIN_CONFIGS = str(importlib.resources.files("code_t5.gin_configs"))
gin.add_config_file_search_path(GIN_CONFIGS)
code_t5_compat.patch_gin_for_namespace_packages()
