"""code_t5: T5 models for full-line code completion on Python repositories (Mesh TF / seqio)."""

import os

import setuptools
from setuptools.command.build_py import build_py
from setuptools.command.editable_wheel import editable_wheel

_PTH = "code_t5_compat.pth"
_HERE = os.path.dirname(os.path.abspath(__file__))
# TensorFlow 2.15, the last with the estimator API Mesh TF's trainer needs, has no wheels past
# Python 3.11: there the training stack is installed; on newer Pythons the completion engine alone.
_TRAINING_PYTHON = "python_version < '3.12'"


def _stack_pin(name: str) -> str:
  """requirements/stack.txt's line for `name` (`name==version`): the pins stay in one place."""
  with open(os.path.join(_HERE, "requirements", "stack.txt"), encoding="utf-8") as stack:
    for line in stack:
      if line.split("==")[0].strip() == name:
        return line.strip()
  raise ValueError(f"requirements/stack.txt does not pin {name}")


class _BuildPyWithPth(build_py):
  """Puts code_t5_compat.pth at the root of the wheel, i.e. into site-packages.

  site-packages/*.pth files run at interpreter start-up; this one activates the mesh-tensorflow
  shim (see code_t5_compat.py) so that `python -m t5.models.mesh_transformer_main` works as typed.
  """

  def run(self):
    super().run()
    self.copy_file(os.path.join(_HERE, _PTH), os.path.join(self.build_lib, _PTH))


class _EditableWheelWithPth(editable_wheel):
  """Editable installs do not run build_py's copy, so add the .pth to the editable wheel too."""

  def _create_wheel_file(self, bdist_wheel):
    wheel_path = super()._create_wheel_file(bdist_wheel)
    from wheel.wheelfile import WheelFile  # pylint: disable=g-import-not-at-top
    with WheelFile(wheel_path, "a") as wheel:
      wheel.write(os.path.join(_HERE, _PTH), _PTH)
    return wheel_path


setuptools.setup(
    name="code_t5",
    version="0.1.0",
    description=__doc__,
    python_requires=">=3.11",
    packages=["code_t5", "code_t5.convert", "code_t5.data", "code_t5.engine",
              "code_t5.evaluation", "code_t5.training", "code_t5.gin_configs"],
    package_dir={"code_t5.gin_configs": "gin_configs"},
    package_data={"code_t5.gin_configs": ["*.gin", "*/*.gin"], "code_t5": ["vocabs/*.model", "pretrained/*/*", "pretrained/*/runtime/*/*"]},
    py_modules=["code_t5_compat", "code_t5_console"],
    # The engine's decode step in C (code_t5/engine/native.py). A plain C library loaded with
    # ctypes, not a Python module; optional: without a C compiler the install goes on and the
    # engine computes in NumPy.
    ext_modules=[setuptools.Extension(
        "code_t5.engine._native", ["code_t5/engine/_few_rows.c", "code_t5/engine/_decode_step.c"],
        depends=["code_t5/engine/_native.h"], extra_compile_args=["-O3"],
        libraries=[] if os.name == "nt" else ["m"], optional=True)],
    cmdclass={"build_py": _BuildPyWithPth, "editable_wheel": _EditableWheelWithPth},
    # The exact, tested versions of Python 3.11's stack live in requirements/stack.txt (installed
    # by scripts/bootstrap.sh, which installs this package with --no-deps). t5 and mesh-tensorflow
    # are absent on purpose: they must be installed with --no-deps (see there).
    install_requires=[
        # The completion engine (complete, serve, lsp, keystrokes, baseline, import, vocab): every
        # Python from 3.11. The three whose behaviour the engine reads are pinned as there.
        "numpy<2; " + _TRAINING_PYTHON,  # TensorFlow 2.15 is built against NumPy 1
        "numpy>=1.26",
        "sentencepiece",
        "editdistance",
        "msgpack",
        "tqdm",
        "threadpoolctl",
        _stack_pin("pyflakes"),
        _stack_pin("pygls"),
        _stack_pin("lsprotocol"),
        # The training stack (train, eval, prepare, cache, export, pack, convert, plot).
        "tensorflow>=2.15,<2.16; " + _TRAINING_PYTHON,
        "tensorflow-text>=2.15,<2.16; " + _TRAINING_PYTHON,
        "seqio-nightly; " + _TRAINING_PYTHON,
        "tfds-nightly; " + _TRAINING_PYTHON,
        "gin-config; " + _TRAINING_PYTHON,
        "matplotlib; " + _TRAINING_PYTHON,
    ],
    entry_points={"console_scripts": ["code-t5=code_t5_console:main"]},
)
