"""The installed venv runs the legacy stack: the mesh-tensorflow shim is active from start-up."""

import os
import pathlib
import subprocess
import sys
import sysconfig

import pytest


_ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
_REPO = pathlib.Path(__file__).resolve().parent.parent


def _python(code: str) -> subprocess.CompletedProcess:
  return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_ENV)


def test_pth_file_is_installed_into_site_packages():
  pth = pathlib.Path(sysconfig.get_paths()["purelib"]) / "code_t5_compat.pth"
  assert pth.read_text().strip() == "import code_t5_compat"


def test_mesh_tensorflow_imports_in_a_fresh_interpreter():
  result = _python("import mesh_tensorflow, t5.models; print('ok')")
  assert result.returncode == 0, result.stderr[-2000:]
  assert result.stdout.strip().endswith("ok")


def test_without_the_shim_mesh_tensorflow_fails_on_this_tensorflow():
  # Proves the shim is what makes the import work (and tells us when it stops being needed).
  result = _python(
      "import sys\n"
      "sys.meta_path[:] = [f for f in sys.meta_path\n"
      "                    if type(f).__name__ != '_PatchBeforeMeshTensorflow']\n"
      "import mesh_tensorflow\n")
  assert result.returncode != 0
  assert "register_tensor_conversion_function" in result.stderr


def test_shim_imports_nothing_heavy_at_startup():
  result = _python("import sys; print('tensorflow' in sys.modules, 'code_t5_compat' in sys.modules)")
  assert result.stdout.split() == ["False", "True"]


def test_tensorflow_uses_onednn_on_every_cpu_unless_told_otherwise():
  # TF 2.15 picks Eigen's products on CPUs without AVX-512 VNNI (the AVX2 machine: 1.3-1.4x
  # slower training); the shim asks for oneDNN before TensorFlow starts, the environment wins.
  probe = ("from tensorflow.python.util import _pywrap_util_port as port\n"
           "print(port.IsMklEnabled())\n")
  default_env = {k: v for k, v in _ENV.items() if k != "TF_ENABLE_ONEDNN_OPTS"}
  on = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                      env=default_env)
  off = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                       env=dict(default_env, TF_ENABLE_ONEDNN_OPTS="0"))
  assert (on.stdout.split()[-1:], off.stdout.split()[-1:]) == (["True"], ["False"]), (
      on.stderr[-2000:], off.stderr[-2000:])


# OpenBLAS's kernel sets that use AVX2 and FMA (its Zen kernels are Haswell's).
_AVX2_OPENBLAS_CORES = {"Haswell", "SkylakeX", "Cooperlake", "SapphireRapids", "Zen"}


def _openblas_core(env) -> str:
  probe = ("import numpy, threadpoolctl\n"
           "print(*[i['architecture'] for i in threadpoolctl.threadpool_info()\n"
           "        if i['internal_api'] == 'openblas'])\n")
  result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env)
  assert result.returncode == 0, result.stderr[-2000:]
  return result.stdout.strip()


def test_numpy_multiplies_with_kernels_for_this_cpu():
  # code_t5_compat (8.): NumPy's OpenBLAS ran its SSE3 (Prescott) kernels on an Intel Xeon it did
  # not know, the engine's products 2.5-5x slower; an OPENBLAS_CORETYPE of the user's wins.
  default_env = {k: v for k, v in _ENV.items() if k != "OPENBLAS_CORETYPE"}
  import code_t5_compat  # pylint: disable=g-import-not-at-top
  if {"avx2", "fma"} <= set(code_t5_compat.this_cpu()["flags"].split()):
    assert _openblas_core(default_env) in _AVX2_OPENBLAS_CORES
  assert _openblas_core(dict(default_env, OPENBLAS_CORETYPE="Prescott")) == "Prescott"


@pytest.mark.parametrize("vendor, flags, core", [
    ("GenuineIntel", "fpu avx avx2 fma avx512f avx512dq avx512cd avx512bw avx512vl", "SkylakeX"),
    ("GenuineIntel", "fpu sse2 avx avx2 fma avx512f", "Haswell"),  # AVX-512 F alone: not SkylakeX's
    ("GenuineIntel", "fpu sse2 avx avx2 fma", "Haswell"),
    ("GenuineIntel", "fpu sse2 avx", None),
    ("AuthenticAMD", "fpu sse2 avx avx2 fma avx512f avx512dq avx512cd avx512bw avx512vl", None),
])
def test_openblas_core_follows_the_first_cpu_of_cpuinfo(vendor, flags, core):
  import code_t5_compat  # pylint: disable=g-import-not-at-top
  first = f"processor\t: 0\nvendor_id\t: {vendor}\nflags\t\t: {flags}\n"
  other = "processor\t: 1\nvendor_id\t: GenuineIntel\nflags\t\t: avx2 fma\n"
  cpu = code_t5_compat.first_cpu((first + "\n" + other).splitlines())
  assert code_t5_compat.openblas_core(cpu) == core
  assert code_t5_compat.openblas_core(code_t5_compat.first_cpu([])) is None


def test_t5_models_leaves_out_pytorch_until_its_model_is_used(tmp_path):
  # `import t5.models` (Mesh TF's main, code-t5 train and eval) no longer imports torch, ~3 s of
  # each process; t5's PyTorch model still works through t5.models when a user asks for it.
  result = _python(
      "import sys\n"
      "import t5.models\n"
      "print('torch' in sys.modules)\n"
      "import torch, transformers\n"
      "config = transformers.T5Config(vocab_size=32, d_model=8, d_kv=4, d_ff=8, num_layers=1,\n"
      "                               num_heads=2)\n"
      f"model = t5.models.HfPyTorchModel(config, {str(tmp_path)!r}, torch.device('cpu'))\n"
      "real = sys.modules['t5.models.hf_model'].HfPyTorchModel\n"
      "print(type(model) is real is t5.models.HfPyTorchModel,\n"
      "      isinstance(model, t5.models.t5_model.T5Model), model.step)\n")
  assert result.returncode == 0, result.stderr[-2000:]
  assert result.stdout.split() == ["False", "True", "True", "0"]


def test_libraries_this_project_never_calls_run_on_first_use():
  # t5's metrics of other tasks (rouge_score with nltk, sacrebleu, scipy.stats, sklearn.metrics),
  # seqio's tunable mixtures (pyglove) and tensorflow_text's Hub tokenizers (tensorflow_hub), ~2 s
  # of every process that imports them, run only when a name is read from them; the names read
  # as they are imported (sklearn's `from scipy.stats import rankdata`, t5's GLUE tables' sklearn
  # metrics) are forwarders that run the module when called.
  result = _python(
      "import sys\n"
      "import code_t5, t5.models\n"
      "print('nltk' in sys.modules, *(type(sys.modules[name]).__name__\n"
      "      for name in ('pyglove', 'tensorflow_hub', 'scipy.stats', 'sklearn.metrics')))\n"
      "from t5.data import glue_utils\n"
      "cola, = glue_utils.get_glue_metric('cola')  # t5's wrapper of sklearn's, forwarded\n"
      "print(round(cola([0, 1, 1, 0], [0, 1, 0, 0])['matthews_corrcoef'], 1),\n"
      "      type(sys.modules['sklearn.metrics']).__name__)\n"
      "from sklearn.metrics import _ranking\n"
      "print(list(_ranking.rankdata([30, 10, 20])), type(sys.modules['scipy.stats']).__name__)\n"
      "from t5.evaluation import metrics\n"
      "print(round(metrics.rouge(['a b c'], ['a b d'])['rouge1'], 1),\n"
      "      round(metrics.bleu(['a b c d'], ['a b c d'])['bleu']), 'nltk' in sys.modules,\n"
      "      round(metrics.spearman_corrcoef([1, 2, 3], [1, 3, 2])['spearman_corrcoef']))\n"
      "import pyglove\n"
      "print(pyglove.hyper.HyperPrimitive.__name__, type(pyglove).__name__)\n"
      "import tensorflow_hub\n"
      "print(tensorflow_hub.load.__name__, type(tensorflow_hub).__name__)\n")
  assert result.returncode == 0, result.stderr[-2000:]
  assert result.stdout.split() == [
      "False", "ModuleOnFirstUse", "ModuleOnFirstUse", "ModuleOnFirstUse", "ModuleOnFirstUse",
      "57.7", "module",
      "[3.0,", "1.0,", "2.0]", "module",
      "66.7", "100", "True", "50",
      "HyperPrimitive", "module", "load", "module"]


def test_a_stand_in_lists_its_names_and_reloads_like_any_module(tmp_path):
  # dir() (help, inspect.getmembers) runs a stand-in's code, to list what it defines; reloading a
  # module that ran runs its code again and leaves an ordinary module (it used to turn it back
  # into a stand-in holding the old objects); reloading one that has not run runs it. And the
  # trainer's start-up, which lists nothing, still leaves them waiting.
  result = _python(
      "import importlib, sys\n"
      "import code_t5, t5.models\n"
      "stats, metrics = sys.modules['scipy.stats'], sys.modules['sklearn.metrics']\n"
      "print(type(stats).__name__, 'rankdata' in dir(stats), 'norm' in dir(stats),\n"
      "      type(stats).__name__)\n"
      "again = importlib.reload(stats)\n"
      "print(again is stats, type(stats).__name__, type(stats.__spec__.loader).__name__,\n"
      "     stats.rankdata([30, 10, 20]).tolist())\n"
      "importlib.reload(metrics)\n"
      "print(type(metrics).__name__, metrics.accuracy_score([1, 0], [1, 1]))\n")
  assert result.returncode == 0, result.stderr[-2000:]
  assert result.stdout.split() == ["ModuleOnFirstUse", "True", "True", "module",
                                   "True", "module", "SourceFileLoader", "[3.0,", "1.0,", "2.0]",
                                   "module", "0.5"]
  (tmp_path / "stand_in_probe.py").write_text(
      "import os, sys\n"
      "print(*(type(sys.modules[name]).__name__\n"
      "        for name in ('scipy.stats', 'sklearn.metrics', 'pandas')), flush=True)\n"
      "os._exit(0)\n")
  trainer = subprocess.run(
      [sys.executable, "-m", "t5.models.mesh_transformer_main", "--module_import=stand_in_probe"],
      capture_output=True, text=True, env=dict(_ENV, PYTHONPATH=str(tmp_path)))
  assert trainer.stdout.split() == ["ModuleOnFirstUse"] * 3, trainer.stderr[-2000:]


def test_a_stand_in_is_run_once_for_its_readers_and_before_its_modules(tmp_path):
  # A package standing in (code_t5_compat.MODULES_ON_FIRST_USE) whose code takes a while: a thread
  # reading from it while another runs it waits for the run (it used to find a partly run module
  # and an AttributeError), and a module of it imported before anything was read from it runs
  # after the package's own code, once (`from pandas.api.types import is_list_like` after `import
  # code_t5` failed: pandas' modules need what its __init__ sets up).
  package = tmp_path / "slow_package"
  package.mkdir()
  (package / "_state.py").write_text("ready = False\n")
  (package / "__init__.py").write_text(
      "import time\n"
      "RUNS = globals().get('RUNS', 0) + 1\n"
      "time.sleep(1.0)\n"
      "from slow_package import _state\n"
      "_state.ready = True  # what its modules need, as pandas' options\n"
      "ready = True\n"
      "from slow_package import child\n")
  (package / "child.py").write_text(
      "from slow_package._state import ready\n"
      "assert ready, 'run before its package'\n"
      "CHILD_RUNS = 1\n")
  script = (
      "import sys, threading, time\n"
      "import code_t5_compat\n"
      "code_t5_compat.MODULES_ON_FIRST_USE['slow_package'] = ()\n"
      "import slow_package\n"
      "print(type(slow_package).__name__)\n"
      "if sys.argv[1] == 'threads':\n"
      "  seen = []\n"
      "  first = threading.Thread(target=lambda: seen.append(slow_package.RUNS))\n"
      "  first.start()\n"
      "  time.sleep(0.3)\n"
      "  seen.append(slow_package.ready)  # while the first thread runs it\n"
      "  first.join()\n"
      "  print(*seen)\n"
      "else:\n"
      "  from slow_package.child import CHILD_RUNS\n"
      "  print(CHILD_RUNS, slow_package.RUNS, slow_package.child is sys.modules['slow_package.child'],\n"
      "        type(slow_package).__name__)\n")
  env = dict(_ENV, PYTHONPATH=str(tmp_path))
  outputs = [subprocess.run([sys.executable, "-c", script, way], capture_output=True, text=True,
                            env=env) for way in ("threads", "module first")]
  assert [o.stdout.split() for o in outputs] == [
      ["ModuleOnFirstUse", "1", "True"], ["ModuleOnFirstUse", "1", "1", "True", "module"]], (
          [o.stderr[-2000:] for o in outputs])
  # The same with pandas, as code_t5's processes have it.
  result = _python("import code_t5, t5.models\n"
                   "from pandas.api.types import is_list_like\n"
                   "import pandas\n"
                   "print(is_list_like([1]), pandas.DataFrame({'a': [1, 2]}).shape[0])\n")
  assert result.stdout.split() == ["True", "2"], result.stderr[-2000:]


def test_a_standing_in_package_runs_as_a_program(tmp_path):
  # `python -m sacrebleu` (a stand-in in every process of the venv): runpy asks its __main__'s
  # loader for the code, and the package runs before its modules (it used to fail with a circular
  # ImportError, then with "no attribute 'get_code'").
  (tmp_path / "line.txt").write_text("a b c d\n")
  result = subprocess.run(
      [sys.executable, "-m", "sacrebleu", "line.txt", "-i", "line.txt", "-b"], cwd=tmp_path,
      capture_output=True, text=True, env=_ENV)
  assert result.returncode == 0 and result.stdout.split() == ["100.0"], result.stderr[-2000:]


def test_pandas_runs_when_first_used():
  # Keras and tensorflow_datasets import pandas (with pyarrow, 0.7-1.0 s) for data frames this
  # project never makes; tensorflow_datasets' as_dataframe, which subclasses pandas.DataFrame,
  # still makes one.
  result = _python(
      "import sys\n"
      "import code_t5, t5.models\n"
      "print(*(type(sys.modules[name]).__name__\n"
      "        for name in ('pandas', 'tensorflow_datasets.core.as_dataframe')),\n"
      "      'pyarrow' in sys.modules)\n"
      "import tensorflow as tf, tensorflow_datasets as tfds\n"
      "frame = tfds.as_dataframe(tf.data.Dataset.from_tensor_slices({'a': [1, 2, 3]}))\n"
      "import pandas\n"
      "print(type(frame).__name__, isinstance(frame, pandas.DataFrame), list(frame['a']))\n")
  assert result.returncode == 0, result.stderr[-2000:]
  assert result.stdout.split() == ["ModuleOnFirstUse", "ModuleOnFirstUse", "False",
                                   "StyledDataFrame", "True", "[1,", "2,", "3]"]


def test_mesh_transformer_main_helpfull_runs():
  result = subprocess.run(
      [sys.executable, "-m", "t5.models.mesh_transformer_main", "--helpfull"],
      capture_output=True, text=True, env=_ENV)
  # absl's help flags print the flags and exit with status 1 by design; a failed import would
  # print a traceback and no flags.
  assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr[-2000:]
  assert "--module_import" in result.stdout and "--gin_file" in result.stdout


def test_the_trainer_starts_with_the_collector_rarer_and_other_processes_do_not(tmp_path):
  # code_t5_compat (7.): collections during the imports and the graph's building cost 1-2 s of a
  # training launch; only `python -m t5.models.mesh_transformer_main` and t5's console script
  # `t5_mesh_transformer` start so, and by the time --module_import runs (after t5's imports) the
  # thresholds are still the start-up ones. Once start-up is over, the trainer freezes what it
  # left and collects as usual; another process that calls collect_as_usual freezes nothing.
  (tmp_path / "gc_probe.py").write_text(
      "import gc, os, code_t5_compat\n"
      "print('thresholds', *gc.get_threshold(), flush=True)\n"
      "code_t5_compat.collect_less_while_starting()\n"
      "code_t5_compat.collect_as_usual()\n"
      "print('after', *gc.get_threshold(), gc.get_freeze_count() > 100_000, flush=True)\n"
      "os._exit(0)\n")
  env = dict(_ENV, PYTHONPATH=str(tmp_path))
  import code_t5_compat  # pylint: disable=g-import-not-at-top
  expected = [str(t) for t in code_t5_compat.START_UP_GC_THRESHOLDS]
  script = os.path.join(os.path.dirname(sys.executable), code_t5_compat.TRAINER_SCRIPT)
  for command in ([sys.executable, "-m", code_t5_compat.TRAINER_MODULE], [script]):
    trainer = subprocess.run(command + ["--module_import=gc_probe"], capture_output=True,
                             text=True, env=env)
    lines = [line.split() for line in trainer.stdout.splitlines()]
    assert lines == [["thresholds", *expected], ["after", "700", "10", "10", "True"]], (
        command, trainer.stderr[-2000:])
  other = subprocess.run([sys.executable, "-c", "import gc_probe"], capture_output=True,
                         text=True, env=env)
  assert other.stdout.split() == ["thresholds", "700", "10", "10",
                                  "after", "700", "10", "10", "False"], other.stderr[-2000:]


# A probe run at the end of a process (PYTHONPATH's sitecustomize, which `site` imports at
# start-up): with 2M objects alive, so that each full collection takes a while, a Ctrl-C is sent
# while the collector runs again and again; it prints whether the Ctrl-C stopped the loop, and
# the gc callbacks that are Python functions.
_CTRL_C_PROBE = """
import atexit, gc, os, signal, sys, threading, time, types

def probe():
  kept = [[i] for i in range(2_000_000)]
  threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()
  try:
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
      gc.collect()
    print("ctrl-c lost", flush=True)
  except KeyboardInterrupt:
    print("ctrl-c stopped it", flush=True)
  print("hooks", *[c.__name__ for c in gc.callbacks if isinstance(c, types.FunctionType)],
        flush=True)

signal.signal(signal.SIGINT, signal.default_int_handler)  # (pytest-xdist's workers ignore it)
atexit.register(probe)
"""


def test_a_ctrl_c_during_a_garbage_collection_stops_the_command_and_the_trainer(tmp_path):
  # (and none of them leaves JAX's folder in $TMPDIR)
  # code_t5_compat (10.): JAX, which seqio imports, hooks a Python function into the collector,
  # and a Ctrl-C raised in it is ignored: `code-t5 prepare` went on to its end. The command and
  # the trainer leave the hook out; another process that imports seqio keeps it.
  (tmp_path / "sitecustomize.py").write_text(_CTRL_C_PROBE)
  tmpdir = tmp_path / "tmpdir"
  tmpdir.mkdir()
  env = dict(_ENV, PYTHONPATH=str(tmp_path), TMPDIR=str(tmpdir))
  import code_t5_compat  # pylint: disable=g-import-not-at-top
  commands = {
      "code-t5 prepare": [sys.executable, "-m", code_t5_compat.CONSOLE_MODULE, "prepare",
                          "--prepared-dir", str(tmp_path / "prepared")],
      "trainer": [sys.executable, "-m", code_t5_compat.TRAINER_MODULE, "--helpfull"]}
  for name, command in commands.items():
    result = subprocess.run(command, capture_output=True, text=True, env=env, cwd=_REPO)
    assert result.stdout.splitlines()[-2:] == ["ctrl-c stopped it", "hooks"], (
        name, result.stdout[-1000:], result.stderr[-2000:])
  other = subprocess.run([sys.executable, "-c", "import seqio"], capture_output=True,
                         text=True, env=env)
  assert other.stdout.splitlines()[-1] == "hooks " + code_t5_compat.JAX_GC_HOOK[1], (
      other.stdout[-1000:], other.stderr[-2000:])
  # JAX's import makes an empty folder in $TMPDIR, and left it there (2,972 in this machine's
  # /tmp): each process removed it.
  assert list(tmpdir.iterdir()) == []


def test_bootstrap_refuses_another_python_before_installing_anything(tmp_path):
  # An interpreter that is not 3.11 (this stand-in answers every version check "no", as a 3.10,
  # 3.12 or 3.13 would): told at once, with how to get one, and no venv begun.
  other = tmp_path / "python3.12"
  other.write_text("#!/bin/sh\nexit 1\n")
  other.chmod(0o755)
  venv = tmp_path / "venv"
  result = subprocess.run(["bash", str(_REPO / "scripts" / "bootstrap.sh")], capture_output=True,
                          text=True, env=dict(_ENV, PYTHON=str(other), CODE_T5_VENV=str(venv)),
                          timeout=60)
  assert result.returncode == 2
  message = result.stderr.strip()
  assert message.count("\n") == 0, message
  assert message.startswith(f"bootstrap: needs Python 3.11 ({other} is not")
  assert "PYTHON=/path/to/python3.11" in message
  assert not venv.exists()


def test_a_hook_after_an_import_runs_once_whoever_looked_the_module_up_first(tmp_path):
  """code_t5_compat.after_import: a lookup that imports nothing (importlib.util.find_spec, which
  registration.tensorflow_installed does before TensorFlow is imported) took the hook off, so the
  import after it ran none (`pack`'s Ctrl-C during TensorFlow's import was lost again). Two hooks
  on one module both run, once each, after its code, and leave the module its own loader (the
  outer hook's wrapper set the inner one's: helper-41's audit)."""
  (tmp_path / "hooked.py").write_text("import sys\nsys.hooked_ran = True\n")
  result = _python(
      f"import sys, importlib.util; sys.path.insert(0, {str(tmp_path)!r})\n"
      "import code_t5_compat\n"
      "calls = []\n"
      "def first(module): calls.append(('first', module.__name__, sys.hooked_ran))\n"
      "def second(module): calls.append(('second', module.__name__, sys.hooked_ran))\n"
      "code_t5_compat.after_import('hooked', first)\n"
      "code_t5_compat.after_import('hooked', second)\n"
      "assert importlib.util.find_spec('hooked') is not None and calls == []\n"
      "import hooked\n"
      "print(type(hooked.__loader__).__name__, type(hooked.__spec__.loader).__name__)\n"
      "import importlib; importlib.reload(hooked)\n"
      "print(sorted(calls))\n"
      "code_t5_compat.after_import('hooked', first)\n"  # imported already: at once
      "print(calls[-1])\n"
      "print(sum(getattr(f, 'name', None) == 'hooked' for f in sys.meta_path))\n")
  assert result.returncode == 0, result.stderr[-2000:]
  assert result.stdout.splitlines() == ["SourceFileLoader SourceFileLoader",  # the hooks' gone
                                        "[('first', 'hooked', True), ('second', 'hooked', True)]",
                                        "('first', 'hooked', True)", "0"]
