"""The only place that bends third-party packages to this stack; each bend says why.

1. mesh-tensorflow 0.1.21 on TensorFlow 2.15 (activated at interpreter start-up).

Why it exists: mesh_tensorflow/tpu_variables.py calls
`tensorflow.python.framework.ops.register_tensor_conversion_function`, which TF 2.14 moved to
`tensorflow.python.framework.tensor_conversion_registry`. Without it `import mesh_tensorflow`
(and so `python -m t5.models.mesh_transformer_main`) fails with AttributeError before any project
code could run: t5 imports mesh_tensorflow at the top of the module, before `--module_import`.

How it is activated: `code_t5_compat.pth`, installed into site-packages with this project, runs
`import code_t5_compat` at interpreter start-up (see `site` module docs). That is all it does at
start-up: it puts a finder on `sys.meta_path` and imports nothing heavy. The finder applies the
patch the moment something imports `mesh_tensorflow`, then removes itself.

2. gin-config 0.5.0 and folders named like gin sub-folders (called by `import code_t5`).
"""

import importlib.abc
import importlib.util
import os
import sys


def patch_tensorflow_for_mesh_tensorflow():
  """Restores `ops.register_tensor_conversion_function` where TF >= 2.14 removed it."""
  from tensorflow.python.framework import ops  # pylint: disable=g-import-not-at-top
  if not hasattr(ops, "register_tensor_conversion_function"):
    from tensorflow.python.framework import tensor_conversion_registry  # pylint: disable=g-import-not-at-top
    ops.register_tensor_conversion_function = (
        tensor_conversion_registry.register_tensor_conversion_function)


class _PatchBeforeMeshTensorflow(importlib.abc.MetaPathFinder):
  """Runs the patch when `mesh_tensorflow` is first imported; finds nothing itself."""

  def find_spec(self, fullname, path=None, target=None):
    if fullname == "mesh_tensorflow":
      sys.meta_path.remove(self)
      patch_tensorflow_for_mesh_tensorflow()
    return None


def patch_gin_for_namespace_packages():
  """Lets `--gin_file=runs/cpu.gin` work when the working directory has a folder named `runs`.

  gin's Python-path file reader treats "runs/cpu.gin" as package `runs` + file name. A plain
  folder `runs/` (or `models/`) on sys.path -- such as a model-dir folder in the working
  directory -- imports as a namespace package with no origin, and gin then raises TypeError
  instead of going on to the next search path. Reporting "no such package" lets it go on.
  """
  from gin import resource_reader  # pylint: disable=g-import-not-at-top
  if getattr(resource_reader, "_code_t5_patched", False):
    return
  parse_config_path = resource_reader._parse_config_path  # pylint: disable=protected-access

  def parse_skipping_namespace_packages(config_path):
    head = os.path.dirname(config_path)
    if head:
      spec = importlib.util.find_spec(head.replace("/", "."))
      if spec is not None and spec.origin is None:
        raise ValueError("namespace package, not a gin resource package", head)
    return parse_config_path(config_path)

  resource_reader._parse_config_path = parse_skipping_namespace_packages  # pylint: disable=protected-access
  resource_reader._code_t5_patched = True  # pylint: disable=protected-access


def install():
  if "mesh_tensorflow" in sys.modules:
    patch_tensorflow_for_mesh_tensorflow()
  elif not any(isinstance(f, _PatchBeforeMeshTensorflow) for f in sys.meta_path):
    sys.meta_path.insert(0, _PatchBeforeMeshTensorflow())


install()
