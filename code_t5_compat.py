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

2. gin-config 0.5.0 and folders named like gin sub-folders, and gin files that import the
   project's modules by the paths they had before they moved (both called by `import code_t5`).

3. TF 1.x training hooks and the graph, and autograph in tf.data (used by
   code_t5/training/training.py while it trains, if gin says so).

4. t5.models' PyTorch model, imported when first used (activated at interpreter start-up).

5. TensorFlow's oneDNN kernels on every x86 CPU (set at interpreter start-up, before TensorFlow
   is imported; `TF_ENABLE_ONEDNN_OPTS=0` in the environment keeps TensorFlow's choice).

Why: TensorFlow 2.15 turns oneDNN on by itself only on CPUs with AVX-512 VNNI/BF16 or AMX; on an
AVX2-only CPU its matrix products fall back to Eigen's contraction, which multiplies the training
step's skinny products (4,096 x 256 by 256 x 8,192 for the logits) at 58-60 GFLOP/s against
oneDNN's 142-153 on the same 2-core AMD EPYC (benchmarks/products_benchmark.py). The causal LM
mini trained 1.3-1.4x faster there (docs/speed.md); on the AVX-512 machine it changes nothing
(oneDNN was already on).

6. Libraries that t5 and seqio import at their top and this project never calls, run on first
   use (activated at interpreter start-up; MODULES_ON_FIRST_USE says which and why).

7. Python's cyclic garbage collector, idle while `python -m t5.models.mesh_transformer_main`
   starts (set at interpreter start-up in that process only; START_UP_GC_THRESHOLDS says why),
   and as usual again, start-up's objects frozen, once training's session exists or an eval
   begins (code_t5/training/training.py calls collect_as_usual).

8. NumPy's OpenBLAS kernels on Intel CPUs newer than it knows (set at interpreter start-up, before
   NumPy is imported; an `OPENBLAS_CORETYPE` in the environment wins).

9. seqio Tasks' example shuffle buffer chosen by the run (used by code_t5/training/training.py
   while it builds the training input, if gin says so).

10. JAX's hook in Python's garbage collector, left out of the `code-t5` command and the trainer
    (activated at interpreter start-up in those processes only; JAX_GC_HOOK says why), and the
    empty folder JAX makes in $TMPDIR removed (JAX_AUTOTUNE_FOLDER).

11. Beam's local workers end with the job that started them (activated at interpreter start-up
    in a worker whose environment names its job; BEAM_DRIVER_ENV says why).
"""

import _thread  # (not threading: this module runs at every interpreter start-up, via the .pth)
import contextlib
import functools
import gc
from importlib import _bootstrap  # the import system's per-module locks (_run_module)
import importlib.machinery
import importlib.util
import os
import sys
import types


def patch_tensorflow_for_mesh_tensorflow():
  """Restores `ops.register_tensor_conversion_function` where TF >= 2.14 removed it."""
  from tensorflow.python.framework import ops  # pylint: disable=g-import-not-at-top
  if not hasattr(ops, "register_tensor_conversion_function"):
    from tensorflow.python.framework import tensor_conversion_registry  # pylint: disable=g-import-not-at-top
    ops.register_tensor_conversion_function = (
        tensor_conversion_registry.register_tensor_conversion_function)


# The finders below are finders by their methods alone (find_spec; create_module and exec_module
# for a loader): importlib.abc's base classes would import importlib.resources and tempfile at
# every interpreter start-up, ~18 ms of each process of this venv on the slower 2-core machine.


class _PatchBeforeMeshTensorflow:
  """A meta path finder that runs the patch when `mesh_tensorflow` is first imported; finds
  nothing itself."""

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


def patch_gin_for_moved_modules(moved):
  """Lets gin files import modules by the paths they had before they moved (`moved`: old -> new).

  gin imports every module a file's `import` statements name (ParseContext.process_import) and
  raises ImportError for one that is gone, and an operative_config.gin that Mesh TF wrote repeats
  the imports of the gin files it was trained with. So a module that moves would make the model
  dirs trained before unreadable to gin; this imports the module at its new path instead, and the
  config gin records (and writes to later operative configs) names the new path.
  """
  from gin import config  # pylint: disable=g-import-not-at-top
  if getattr(config.ParseContext, "_code_t5_patched", False):
    return
  process_import = config.ParseContext.process_import

  def process_import_at_new_path(self, statement):
    if statement.module in moved:
      statement = statement._replace(module=moved[statement.module])
    return process_import(self, statement)

  config.ParseContext.process_import = process_import_at_new_path
  config.ParseContext._code_t5_patched = True  # pylint: disable=protected-access


@contextlib.contextmanager
def training_without_graph_def():
  """While active, TF's CheckpointSaverHook and summary writers do not serialise the graph.

  Why: Mesh TF's training graph (tens of thousands of ops) takes a while to turn into a GraphDef
  each time, and nothing reads the result back. TF's CheckpointSaverHook does that five times
  before the first step (graph.pbtxt, the graph and meta graph in the events file -- through
  FileWriterCache, which always passes the graph, and in after_create_session, which adds them
  even with save_graph_def=False -- and model.ckpt-0.meta) and again for every checkpoint's
  .meta (figures before/after: benchmarks/train_benchmark.py, README "Training speed"). Mesh TF
  creates the hook itself with no option for it (mesh_tensorflow/transformer/utils.py), so this
  sets the hook's own `save_graph_def` switch, skips the graph part of after_create_session and
  gives the writer cache graph-less writers.
  Nothing reads those files back: Mesh TF rebuilds the graph from gin and restores variables by
  name; what is lost is the graph view in TensorBoard and `.meta` files.
  """
  from tensorflow.python.summary.writer import writer  # pylint: disable=g-import-not-at-top
  from tensorflow.python.summary.writer import writer_cache  # pylint: disable=g-import-not-at-top
  from tensorflow.python.training import basic_session_run_hooks  # pylint: disable=g-import-not-at-top

  hook = basic_session_run_hooks.CheckpointSaverHook
  real_init, real_after_create_session = hook.__init__, hook.after_create_session
  real_get = writer_cache.FileWriterCache.__dict__["get"]

  def init_without_graph_def(self, *args, **kwargs):
    real_init(self, *args, **kwargs)
    self._save_graph_def = False  # pylint: disable=protected-access

  def after_create_session_without_graph_def(self, session, coord):
    # TF's method, less what it does regardless of save_graph_def: building a MetaGraphDef and
    # adding the graph and meta graph to the events file.
    del coord
    global_step = session.run(self._global_step_tensor)  # pylint: disable=protected-access
    self._save(session, global_step)  # pylint: disable=protected-access
    self._timer.update_last_triggered_step(global_step)  # pylint: disable=protected-access

  def get_without_graph(logdir):
    with writer_cache.FileWriterCache._lock:  # pylint: disable=protected-access
      cache = writer_cache.FileWriterCache._cache  # pylint: disable=protected-access
      if logdir not in cache:
        cache[logdir] = writer.FileWriter(logdir)
      return cache[logdir]

  hook.__init__ = init_without_graph_def
  hook.after_create_session = after_create_session_without_graph_def
  writer_cache.FileWriterCache.get = staticmethod(get_without_graph)
  try:
    yield
  finally:
    hook.__init__ = real_init
    hook.after_create_session = real_after_create_session
    writer_cache.FileWriterCache.get = real_get


@contextlib.contextmanager
def tf_data_without_autograph():
  """While active, `tf.data` map/filter functions built in this thread are traced as written.

  Why: `Dataset.map` runs every Python function it is given through autograph, which reads and
  rewrites the source of the function and of everything it calls. For t5's objectives (prefix_lm,
  span_corruption: denoise, random_spans_noise_mask, select_random_chunk, ...) and seqio's
  preprocessors that is 4-5 s of every training start-up on this machine, for no change: these
  preprocessors are written with tf ops (tf.cond, tf.while_loop), not Python control flow on
  tensors, and the datasets built with and without it are identical example for example
  (tests/training_test.py). TensorFlow has no public switch for autograph in tf.data; its own
  context stack (`ag_ctx.ControlStatusCtx`, thread-local) is what `Dataset.map` consults.
  A function that does need autograph fails at trace time with TF's "using a tf.Tensor as a
  Python bool" error, not silently.
  """
  from tensorflow.python.autograph.core import ag_ctx  # pylint: disable=g-import-not-at-top
  with ag_ctx.ControlStatusCtx(status=ag_ctx.Status.DISABLED):
    yield


def set_run_config(estimator, **changes):
  """Makes a built tf.estimator train with RunConfig `changes` (session_config, save_summary_steps).

  Why: Mesh TF builds its TPUEstimator with a fixed RunConfig (utils.get_estimator: no session
  config unless on TPU, summaries every 100 steps) and exposes no setting for it; the Estimator
  reads `_config` when it trains, and copies the session config into `_session_config` at
  construction.
  """
  estimator._config = estimator._config.replace(**changes)  # pylint: disable=protected-access
  if "session_config" in changes:
    estimator._session_config = changes["session_config"]  # pylint: disable=protected-access


HF_MODEL = "t5.models.hf_model"


def _real_hf_model() -> types.ModuleType:
  """Imports t5's real hf_model (and so PyTorch) in place of the stand-in, once."""
  module = sys.modules.get(HF_MODEL)
  if isinstance(module, _HfModelOnFirstUse):
    del sys.modules[HF_MODEL]
    _DeferHfModel.passing = True
    try:
      module = importlib.import_module(HF_MODEL)
    finally:
      _DeferHfModel.passing = False
    models = sys.modules["t5.models"]
    models.hf_model, models.HfPyTorchModel = module, module.HfPyTorchModel
  return module


class _HfPyTorchModelOnFirstUse(type):
  """The metaclass of t5.models.HfPyTorchModel's stand-in: calling it, reading its attributes or
  checking an instance against it imports the real class and hands over to it."""

  def __call__(cls, *args, **kwargs):
    return _real_hf_model().HfPyTorchModel(*args, **kwargs)

  def __getattr__(cls, name):
    return getattr(_real_hf_model().HfPyTorchModel, name)

  def __instancecheck__(cls, instance):
    return isinstance(instance, _real_hf_model().HfPyTorchModel)

  def __subclasscheck__(cls, subclass):
    return issubclass(subclass, _real_hf_model().HfPyTorchModel)


class _HfModelOnFirstUse(types.ModuleType):
  """t5.models.hf_model until a name other than HfPyTorchModel is read from it."""

  def __getattr__(self, name):
    if name.startswith("__"):  # the import system's own look-ups (__path__, __file__, ...)
      raise AttributeError(name)
    return getattr(_real_hf_model(), name)


class _DeferHfModel:  # a meta path finder and the loader of what it finds
  """Makes `import t5.models` (as mesh_transformer_main does) leave out PyTorch.

  Why: t5/models/__init__.py imports hf_model, t5's PyTorch model, whose first lines import torch
  and torch.utils.tensorboard: about 3 s of every process that imports t5.models on this machine
  (every `code-t5 train` and `eval`, Mesh TF's main, the tests), for a model this project never
  uses. hf_model's top level only imports and defines, so running it later changes nothing:
  `import t5.models` gets a stand-in module whose HfPyTorchModel imports the real module on
  first use (a call, an attribute, an isinstance check); any other name read from the stand-in
  does the same. Only subclassing the stand-in class is not forwarded.
  """
  passing = False  # set while the real module is imported

  def find_spec(self, fullname, path=None, target=None):
    if fullname != HF_MODEL or self.passing:
      return None
    return importlib.machinery.ModuleSpec(fullname, self)

  def create_module(self, spec):
    return _HfModelOnFirstUse(spec.name)

  def exec_module(self, module):
    module.HfPyTorchModel = _HfPyTorchModelOnFirstUse("HfPyTorchModel", (), {
        "__module__": HF_MODEL, "__doc__": "t5's PyTorch model, imported on first use."})


# Run when a name is first read from them, not when imported (6.). t5.evaluation.metrics imports
# rouge_score (and through it nltk) and sacrebleu for metrics of other tasks than this project's;
# seqio.dataset_providers imports pyglove for its tunable mixtures. Together ~0.6 s of every
# process that imports t5 or seqio on the slower 2-core machine (`import code_t5` 6.6 against
# 7.1 s at the median of 6 alternated pairs), and nothing of them runs at their importers' top.
# tensorflow_text imports tensorflow_hub for its two Hub-module tokenizers: 155-164 ms of
# `import code_t5` on the Zen 3 machine (`python -X importtime`), of which ~50 ms is
# pkg_resources, which Mesh TF's transformer utils import anyway. scipy.stats, imported at the top
# of t5.evaluation.metrics and of sklearn (which t5's GLUE tables read as t5 is imported), is
# 0.9-1.2 s more there, most of it scipy parsing its own docstrings; of its names only
# `rankdata` is read as they are imported (sklearn.metrics._ranking: `from scipy.stats import
# rankdata`), so its stand-in holds a forwarder of that one. sklearn.metrics (~0.3 s more) is read
# as t5's GLUE tables are built, through t5's sklearn_metrics_wrapper of fbeta_score and
# matthews_corrcoef (a hasattr, then the function), so its stand-in forwards those two. pandas
# (with pyarrow, which it imports) is 0.7-1.0 s more: Keras imports it for `fit` on data frames
# and tensorflow_datasets for its notebook display (`as_dataframe`, whose module subclasses
# pandas.DataFrame at its top, so that module waits too and tensorflow_datasets' `from ... import
# as_dataframe` gets a forwarder). Each module maps to the names its stand-in forwards (functions
# only: a forwarder runs the module when first called).
MODULES_ON_FIRST_USE = {
    "rouge_score.rouge_scorer": (), "rouge_score.scoring": (), "sacrebleu": (), "pyglove": (),
    "tensorflow_hub": (), "scipy.stats": ("rankdata",),
    "sklearn.metrics": ("fbeta_score", "matthews_corrcoef"), "pandas": (),
    "tensorflow_datasets.core.as_dataframe": ("as_dataframe",)}


class ModuleOnFirstUse(types.ModuleType):
  """A module of MODULES_ON_FIRST_USE whose code has not run: it holds what the import system set
  (__spec__, __path__, ...) and its forwarders. Reading any other name runs the module's code in
  this module object, which then is an ordinary module. (importlib's LazyLoader would run it on
  the next `import` of it anywhere, which reads __spec__: sklearn imports scipy.stats again.)"""

  def __getattr__(self, name):  # called only for names the module does not hold
    if name == "__path__":  # `from x import y` asks whether x is a package; a package holds it
      raise AttributeError(name)
    module = _run_module(self)
    if isinstance(module, ModuleOnFirstUse):  # this thread is running its code: partly run
      raise AttributeError(f"partially initialized module {self.__name__!r} has no attribute "
                           f"{name!r}")
    return getattr(module, name)

  def __dir__(self):  # dir(), help(), inspect.getmembers(): the names the module's code defines
    return dir(_run_module(self))


def _run_module(module: types.ModuleType) -> types.ModuleType:
  """Runs a stand-in's code, once, under the import system's own lock for the module: a thread
  that reads from it meanwhile waits for it, as for a module another thread imports (it used to
  find a partly run module, without the names it asked for), and a cycle of threads waiting on
  each other's modules is told apart as the import system tells it (a lock of our own, taken
  while the module's code imports others, could hang such threads for good). While it runs it
  stays a ModuleOnFirstUse with __spec__._initializing set, which the running thread's own reads
  see as a partly run module."""
  if not isinstance(module, ModuleOnFirstUse):
    return module
  spec = module.__spec__
  with _bootstrap._ModuleLockManager(spec.name):  # pylint: disable=protected-access
    if isinstance(module, ModuleOnFirstUse) and not getattr(spec, "_initializing", False):
      real = spec.loader.real  # (a _StandInLoader until the module's code has run)
      spec._initializing = True  # pylint: disable=protected-access
      try:
        real.exec_module(module)
      finally:
        spec._initializing = False  # pylint: disable=protected-access
      spec.loader = module.__loader__ = real
      module.__class__ = types.ModuleType
  return module


def _forwarder(module: types.ModuleType, name: str):
  def forward(*args, **kwargs):
    return getattr(_run_module(module), name)(*args, **kwargs)
  forward.__name__ = forward.__qualname__ = name
  return forward


class _AroundLoader:
  """A loader that does its part around the real loader's, and answers the rest of the loader
  protocols (get_code, get_source, is_package, get_resource_reader: runpy, inspect,
  importlib.resources) as the real one does: `python -m sacrebleu` asks its __main__'s loader
  for get_code."""

  def __init__(self, real):
    self.real = real

  def __getattr__(self, name):  # called only for names this loader does not hold
    if name == "real":  # (not set yet: copy and pickle make instances without __init__)
      raise AttributeError(name)
    return getattr(self.real, name)


class _StandInLoader(_AroundLoader):
  def __init__(self, real, forwarded):
    super().__init__(real)
    self.forwarded = forwarded

  def exec_module(self, module):  # (create_module: the real loader's, through _AroundLoader)
    for name in self.forwarded:
      setattr(module, name, _forwarder(module, name))
    module.__class__ = ModuleOnFirstUse


class _AfterItsPackage(_AroundLoader):
  """The loader of a module of a package that is still a ModuleOnFirstUse (`from pandas.api.types
  import is_list_like` before anything read from pandas, which failed: pandas' modules need what
  its __init__ sets up): the package's code runs first, as it would have been imported, and where
  that code imported the module itself (pandas' __init__ imports pandas.api), that module is
  handed back rather than run a second time. The package runs here, under the module's import
  lock, not in find_spec: the import system calls finders under its global import lock, and a
  module's code run there would block every other thread's imports."""

  def __init__(self, real, package):
    super().__init__(real)
    self.package = package
    self.imported = self.imported_spec = None  # the module the package's code imported

  def create_module(self, spec):
    _run_module(self.package)
    self.imported = sys.modules.get(spec.name)
    if self.imported is not None:
      self.imported_spec = self.imported.__spec__
      return self.imported
    return self.real.create_module(spec)

  def exec_module(self, module):
    if module is self.imported:
      module.__spec__ = self.imported_spec  # the import system set ours on it
    else:
      self.real.exec_module(module)
      module.__spec__.loader = module.__loader__ = self.real


class _ImportOnFirstUse:  # a meta path finder
  """Gives each module of MODULES_ON_FIRST_USE a ModuleOnFirstUse: `import x` binds a module
  whose code runs when a name is first read from it, so a library that is imported and never
  used costs nothing; and a module of such a package, imported before the package ran, an
  _AfterItsPackage."""

  def find_spec(self, fullname, path=None, target=None):
    package = sys.modules.get(fullname.rpartition(".")[0])
    after_its_package = isinstance(package, ModuleOnFirstUse)
    if not after_its_package:
      if fullname not in MODULES_ON_FIRST_USE:
        return None
      existing = sys.modules.get(fullname)
      if existing is not None:  # importlib.reload: the import system runs the module's code again
        if isinstance(existing, ModuleOnFirstUse):  # into this module, as the first run would
          existing.__class__ = types.ModuleType
        return None  # (a stand-in's loader would make it a stand-in again)
    spec = self._real_spec(fullname, path, target)
    if spec is None or not hasattr(spec.loader, "exec_module"):
      return spec
    if after_its_package:
      spec.loader = _AfterItsPackage(spec.loader, package)
    else:
      spec.loader = _StandInLoader(spec.loader, MODULES_ON_FIRST_USE[fullname])
    return spec

  def _real_spec(self, fullname, path, target):
    return _spec_of_other_finders(self, fullname, path, target)


def _spec_of_other_finders(finder, fullname, path, target):
  """What the meta path finders other than `finder` find, with the path the import system gave
  (the parent's __path__). Not importlib.util.find_spec: it imports the parent, and the import
  system calls finders under its global lock, so a parent another thread is running would make
  this thread wait for it while holding that lock, which the running thread needs for its own
  imports."""
  for other in sys.meta_path:
    if other is not finder and hasattr(other, "find_spec"):
      spec = other.find_spec(fullname, path, target)
      if spec is not None:
        return spec
  return None


# 10. JAX (which seqio imports at its top) puts a Python function into gc.callbacks, run before
# and after each collection. A Ctrl-C that arrives during a collection is raised as that function
# starts, and Python ignores what a gc callback raises: it printed "Exception ignored in:
# <function _xla_gc_callback>" with a traceback, and the command went on as if no key had been
# pressed (`code-t5 prepare` on the site-packages corpus, Ctrl-C 3-4.2 s after its start: lost 4
# times of 13, the prepared folder written and exit status 0). The hook frees the device buffers
# of JAX arrays that garbage held; the `code-t5` command and Mesh TF's trainer never make a JAX
# array, so there it goes as JAX puts it in. Other processes (a notebook with JAX, the
# benchmarks that run JAX) keep it.
JAX_GC_HOOK = ("jax._src.lib", "_xla_gc_callback")  # the module that adds it, and its name
# JAX's compiler module also makes a folder with tempfile.mkdtemp as it is imported, for GPU
# autotuning results that its processes share, and never removes it: each process that imported
# seqio left an empty tmpXXXXXXXX in $TMPDIR (2,972 of them in this machine's /tmp). The command
# and the trainer, which compile nothing with JAX, remove it at once (so a killed one leaves none
# either); other processes at their exit, if it is still empty.
JAX_AUTOTUNE_FOLDER = ("jax._src.compiler", "_compile_and_write_autotune_config")


class _AfterItsCode(_AroundLoader):
  """A loader that runs the module's code, then takes `finder` off the meta path and runs
  `after(module)`."""

  def __init__(self, real, after, finder):
    super().__init__(real)
    self.after, self.finder = after, finder

  def exec_module(self, module):
    self.real.exec_module(module)
    real = self.real
    while isinstance(real, _AfterItsCode):  # two hooks on one module: one wraps the other
      real = real.real
    module.__spec__.loader = module.__loader__ = real
    with contextlib.suppress(ValueError):  # (another thread's import of it took it off)
      sys.meta_path.remove(self.finder)
    self.after(module)


class _AfterImport:  # a meta path finder
  """Runs `after(module)` once the module `name`'s code has run (a module imported already: at
  once); finds nothing itself. It stays on the meta path until the module's code ran: a lookup
  that imports nothing (importlib.util.find_spec, as registration.tensorflow_installed asks)
  took it off, and the import after it ran no hook (`pack`'s Ctrl-C during TensorFlow's import
  was lost again)."""

  def __init__(self, name, after):
    self.name, self.after = name, after
    # The threads inside this finder's find_spec: two hooks on one module ask each other (each
    # asks the other finders), and the one asked again finds nothing, so the spec is wrapped
    # once by each.
    self._asking = set()

  def find_spec(self, fullname, path=None, target=None):
    thread = _thread.get_ident()
    if fullname != self.name or thread in self._asking:
      return None
    self._asking.add(thread)
    try:
      spec = _spec_of_other_finders(self, fullname, path, target)
    finally:
      self._asking.discard(thread)
    if spec is not None and hasattr(spec.loader, "exec_module"):
      spec.loader = _AfterItsCode(spec.loader, self.after, self)
    return spec


def after_import(name: str, after) -> None:
  if name in sys.modules:
    after(sys.modules[name])
  elif not any(isinstance(f, _AfterImport) and (f.name, f.after) == (name, after)
               for f in sys.meta_path):
    sys.meta_path.insert(0, _AfterImport(name, after))


def _remove_jax_gc_hook(module):
  hook = getattr(module, JAX_GC_HOOK[1], None)
  gc.callbacks[:] = [callback for callback in gc.callbacks if callback is not hook]


def _remove_empty_folder(folder) -> None:
  try:
    os.rmdir(folder)
  except (OSError, TypeError):  # not empty, gone, or not a path (another JAX)
    pass


def _remove_jax_autotune_folder(module):
  _remove_empty_folder(getattr(getattr(module, JAX_AUTOTUNE_FOLDER[1], None),
                               "autotune_configs_dir", None))


def _remove_jax_autotune_folder_at_exit(module):
  import atexit  # pylint: disable=g-import-not-at-top  (only where JAX is imported)
  atexit.register(_remove_jax_autotune_folder, module)


# 7. Importing TensorFlow, t5 and seqio makes ~1.5M Python objects and Mesh TF's graph more. Python
# walks each young object once (every 700 allocations) and every surviving one again in each full
# pass, whenever the survivors grew by a quarter (7 full passes during the imports alone): ~1 s of
# the trainer's imports on the slower 2-core machine (6.2 against 5.3 s at the median of 5
# alternated pairs). The young objects' passes cost ~0.1 s per 100,000 objects there too, and a
# start-up makes ~1M of them and little garbage (~9,000 objects in all its passes, seen with
# gc.callbacks). So the trainer's start-up collects only once it made 2M objects on balance (a
# larger model's graph; or a process that never calls collect_as_usual, such as an export, runs
# on); collect_as_usual() then freezes what start-up left (gc.freeze: the collector skips those
# objects from then on, and they live as long as the process, start-up's bit of garbage with
# them), which spares the first pass after start-up walking them all (0.68 s), and collects as
# usual after. Launch -> first step of the Zen 3 machine's causal LM mini, 4 alternated pairs:
# 13.2-16.6 s against 14.8-17.8 with the young objects collected every 100,000 allocations and
# nothing frozen; peak memory +10-20 MB of 1.8 GB (docs/speed.md, "Launch: the imports and the
# collector at start-up").
TRAINER_MODULE = "t5.models.mesh_transformer_main"
TRAINER_SCRIPT = "t5_mesh_transformer"  # t5's console script for the same main()
CONSOLE_SCRIPT, CONSOLE_MODULE = "code-t5", "code_t5.cli"  # this project's command (setup.py)
START_UP_GC_THRESHOLDS = (2_000_000, 50, 100)
_USUAL_GC_THRESHOLDS = gc.get_threshold()
_started_as_trainer = False  # set by install()


def collect_less_while_starting():
  gc.set_threshold(*START_UP_GC_THRESHOLDS)


def collect_as_usual():
  """The collector's usual thresholds again; in the trainer's process (7.), the objects start-up
  left frozen first. (In any other process, say tests that train in theirs, nothing is frozen:
  objects that are alive now may be garbage later.)"""
  if _started_as_trainer and gc.get_threshold() == START_UP_GC_THRESHOLDS:
    gc.freeze()
  gc.set_threshold(*_USUAL_GC_THRESHOLDS)


def started_as(console_script: str, module: str) -> bool:
  """Whether this interpreter runs the console script `console_script` (sys.argv[0] names it) or
  `python -m module` (or `-mmodule`) and has not started the module yet: at start-up and while
  runpy imports the module's packages, sys.argv[0] is "-m" and only sys.orig_argv (Python 3.10+)
  holds the whole command line."""
  argv = getattr(sys, "argv", None) or [""]  # embedded interpreters may have no argv
  if os.path.basename(argv[0]) == console_script:
    return True
  command_line = getattr(sys, "orig_argv", [])
  return argv[0] == "-m" and any(
      (flag, name) == ("-m", module) or flag == "-m" + module
      for flag, name in zip(command_line, command_line[1:] + [""]))


# 8. The OpenBLAS bundled with NumPy 1.26 (0.3.23) picks its kernels by the CPU's family and
# model, and on an Intel CPU it does not know it falls back to its Prescott kernels (SSE3 only):
# on the 2-core Intel Xeon of family 6 model 207 (Emerald Rapids) the engine's products ran at
# 25-60 GFLOP/s against 130-300 with the SkylakeX kernels (480 x 256 by 256 x 1,024 and the like;
# its best line's p50 140 ms, of which 75 reading the context). Intel's CPUs with AVX-512 run the
# SkylakeX kernels (OpenBLAS's own choice for every AVX-512 Intel CPU it knows), those with AVX2
# and FMA the Haswell ones (likewise); other vendors keep OpenBLAS's choice (Zen: Haswell's).
OPENBLAS_CORES = (("SkylakeX", {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512cd"}),
                  ("Haswell", {"avx2", "fma"}))


def first_cpu(cpuinfo_lines) -> dict:
  """The fields of the first processor in /proc/cpuinfo's lines ("flags" -> "fpu vme ..."): its
  block ends at the first blank line, and a large machine lists hundreds more."""
  fields = {}
  for line in cpuinfo_lines:
    if not line.strip():
      break
    name, _, value = line.partition(":")
    fields[name.strip()] = value.strip()
  return fields


def this_cpu():
  """first_cpu of this machine's /proc/cpuinfo (read no further), or None where there is none."""
  try:
    with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as cpuinfo:
      return first_cpu(cpuinfo)
  except OSError:
    return None


def this_cpu_flags():
  """The set of this CPU's flags in /proc/cpuinfo ("avx2", "amx_bf16", ...), or None where there
  is no /proc/cpuinfo."""
  cpu = this_cpu()
  return None if cpu is None else set(cpu.get("flags", "").split())


def openblas_core(cpu: dict):
  """The OpenBLAS core type for a CPU (first_cpu's fields), or None for OpenBLAS's own choice
  (not Intel, or no AVX2)."""
  if cpu.get("vendor_id") != "GenuineIntel":
    return None
  flags = set(cpu.get("flags", "").split())
  return next((core for core, needs in OPENBLAS_CORES if needs <= flags), None)


def use_known_openblas_kernels():
  """OPENBLAS_CORETYPE for this CPU where OpenBLAS might not know it (8.); on Linux only."""
  if "OPENBLAS_CORETYPE" in os.environ:
    return
  cpu = this_cpu()
  core = openblas_core(cpu) if cpu is not None else None
  if core:
    os.environ["OPENBLAS_CORETYPE"] = core


# 9. seqio shuffles a Task's examples after they are tokenized, in a buffer of 1,000 by default,
# and the first example comes out once the buffer is full: ~2.3 s of SentencePiece on two cores
# before a CPU run's first step (the cursor_lm task; 0.9 s with 256 examples, 0.14 s unshuffled).
# Mesh TF's train_dataset_fn (t5's mesh_train_dataset_fn) has no way to ask for another size;
# seqio's Task.get_dataset has one, `shuffle_buffer_size`, used where the caller leaves it unset.
@contextlib.contextmanager
def tasks_shuffle_buffer(size: int):
  """While active, seqio Tasks' get_dataset shuffles in a buffer of `size` examples where the
  caller does not give a `shuffle_buffer_size` (mixtures read their tasks so too)."""
  import inspect  # pylint: disable=g-import-not-at-top  (not at every interpreter's start-up)
  import seqio  # pylint: disable=g-import-not-at-top
  original = seqio.Task.get_dataset
  signature = inspect.signature(original)

  @functools.wraps(original)
  def get_dataset(*args, **kwargs):
    call = signature.bind(*args, **kwargs)
    if call.arguments.get("shuffle_buffer_size") is None:
      call.arguments["shuffle_buffer_size"] = size
    return original(*call.args, **call.kwargs)

  seqio.Task.get_dataset = get_dataset
  try:
    yield
  finally:
    seqio.Task.get_dataset = original


# 11. Beam's local runner (`code-t5 cache`: the DirectRunner in multi_processing mode) starts each
# worker as `sh -c "python -m apache_beam.runners.worker.sdk_worker_main"`, so no parent-death
# signal reaches a worker when its job is killed: after `kill -9` of the job they went on for ~20
# s at 40 % of a core each (helper-39's audit), until gRPC gave up on the job. The job names
# itself in BEAM_DRIVER_ENV ("<pid> <host>") while it runs its pipeline, the workers inherit the
# environment, and a worker started so on the job's host ends once the job is gone.
BEAM_WORKER_MODULE = "apache_beam.runners.worker.sdk_worker_main"
BEAM_DRIVER_ENV = "CODE_T5_BEAM_DRIVER"
DRIVER_POLL_SECONDS = 1.0  # how often a worker looks whether its job still runs


def pid_alive(pid: int) -> bool:
  """Whether a process with this pid exists and is not a zombie (exited, not yet reaped)."""
  try:
    os.kill(pid, 0)
  except ProcessLookupError:
    return False
  except PermissionError:
    return True  # another user's process
  try:
    with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
      return f.read().rsplit(")", 1)[-1].split()[0] != "Z"
  except (OSError, IndexError):
    return True


@contextlib.contextmanager
def beam_workers_end_with_this_process(quiet: bool = False):
  """While active, the Beam workers this process starts end when it is gone (11.); `quiet`:
  they log nothing (Beam's workers logged ~70 lines of INFO and WARNING per job, and each error
  of theirs with its tracebacks, which the job raises again: a full disk was ~30 lines per
  bundle before the job's own one-line error, helper-54's audit)."""
  previous = os.environ.get(BEAM_DRIVER_ENV)
  os.environ[BEAM_DRIVER_ENV] = f"{os.getpid()} {os.uname().nodename}" + (" quiet" if quiet else "")
  try:
    yield
  finally:
    if previous is None:
      os.environ.pop(BEAM_DRIVER_ENV, None)
    else:
      os.environ[BEAM_DRIVER_ENV] = previous


def end_with_the_beam_driver():
  """In a Beam worker whose environment names its job on this host: a daemon thread that ends
  the process once the job is gone, and Ctrl-C left to the job (11.)."""
  pid, _, rest = os.environ.get(BEAM_DRIVER_ENV, "").partition(" ")
  host, _, flag = rest.partition(" ")
  if (not pid.isdigit() or host != os.uname().nodename
      or not started_as(BEAM_WORKER_MODULE.rpartition(".")[2], BEAM_WORKER_MODULE)):
    return
  import signal  # pylint: disable=g-import-not-at-top  (only in such a worker)
  import threading  # pylint: disable=g-import-not-at-top
  import time  # pylint: disable=g-import-not-at-top
  # A Ctrl-C in the terminal reaches the whole group: each worker printed its KeyboardInterrupt's
  # traceback and the job one per worker lost (helper-38's audit: 151 lines). The job stops on
  # it, and its workers with it.
  signal.signal(signal.SIGINT, signal.SIG_IGN)
  if flag == "quiet":
    import logging  # pylint: disable=g-import-not-at-top
    logging.disable(logging.ERROR)  # (whatever level the worker's main sets later)
    # A failed bundle's traceback is also printed (sdk_worker._execute), and sent to the job,
    # which raises it: the only copy the user needs.
    sys.stderr = open(os.devnull, "w", encoding="utf-8")  # pylint: disable=consider-using-with

  def watch():
    while pid_alive(int(pid)):
      time.sleep(DRIVER_POLL_SECONDS)
    os._exit(1)  # pylint: disable=protected-access  (from a thread; nothing it holds is wanted)

  threading.Thread(target=watch, name="code-t5-beam-driver-watch", daemon=True).start()


def use_onednn_everywhere():
  """TensorFlow's oneDNN kernels whatever the CPU, unless the environment says otherwise (5.)."""
  os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")


def install():
  use_onednn_everywhere()
  use_known_openblas_kernels()
  if started_as(TRAINER_SCRIPT, TRAINER_MODULE):
    global _started_as_trainer
    _started_as_trainer = True
    collect_less_while_starting()
  if _started_as_trainer or started_as(CONSOLE_SCRIPT, CONSOLE_MODULE):
    after_import(JAX_GC_HOOK[0], _remove_jax_gc_hook)
    after_import(JAX_AUTOTUNE_FOLDER[0], _remove_jax_autotune_folder)
  else:
    after_import(JAX_AUTOTUNE_FOLDER[0], _remove_jax_autotune_folder_at_exit)
  if "mesh_tensorflow" in sys.modules:
    patch_tensorflow_for_mesh_tensorflow()
  elif not any(isinstance(f, _PatchBeforeMeshTensorflow) for f in sys.meta_path):
    sys.meta_path.insert(0, _PatchBeforeMeshTensorflow())
  if BEAM_DRIVER_ENV in os.environ:
    end_with_the_beam_driver()
  if HF_MODEL not in sys.modules and not any(isinstance(f, _DeferHfModel) for f in sys.meta_path):
    sys.meta_path.insert(0, _DeferHfModel())
  if not any(isinstance(f, _ImportOnFirstUse) for f in sys.meta_path):
    sys.meta_path.insert(0, _ImportOnFirstUse())


install()
