"""Test helpers: small FLCC trees on disk (stdlib only, like code_t5.data.flcc), a checkpoint's
variables and a Mesh TF graph run on a CPU mesh (TensorFlow and Mesh TF, imported only when
called)."""

import contextlib
import hashlib
import importlib.util
import itertools
import json
import pathlib
import shutil
from typing import Callable, Iterator, Mapping, Sequence, Union

from code_t5.data import flcc

# The model shipped in the package (docs/training.md), which the tests of
# completion, serving and evaluation run, and benchmarks/latency_benchmark.py --shipped times.
PRETRAINED = pathlib.Path(__file__).parent / "pretrained" / "causal_lm-mini-spm_dev-sitepackages"
# Its checkpoint's step (the runtime's folder is runtime/step<PRETRAINED_STEP>).
PRETRAINED_STEP = json.loads((PRETRAINED / "pack.json").read_text())["step"]
# Fixed fake flattening times, so trees built by the same call are identical.
_BASE_TIME_NS = 1_600_000_000_000_000_000


def load_script(name: str):
  """A checkout's scripts/<name>.py as a module (the scripts are not a package; in a checkout only)."""
  path = pathlib.Path(__file__).resolve().parent.parent / "scripts" / f"{name}.py"
  spec = importlib.util.spec_from_file_location(name, path)
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


def make_flcc_tree(root, repos: Mapping[str, Mapping[str, Union[str, bytes]]], *,
                   nested_repositories: bool = False) -> pathlib.Path:
  """Writes an FLCC tree under `root` (created if needed) and returns `root`, the folder of v3/.

  Args:
    root: where to put v3/.
    repos: {"owner/name": {"real/path.py": text or bytes}}; "dev/null/<uuid>" for a repository of
      unknown owner; a key may end in "@<init-hash>" (default: the sha1 of the repository id), so
      one repository can have several init-hash folders.
    nested_repositories: write metadata under v3/repositories/repositories/ (the variant layout).

  Files are flattened to `<stem>_<time_ns>.py` and listed in paths.json with files.json and a
  git-log-style METADATA beside it.
  """
  root = pathlib.Path(root)
  clock = itertools.count(_BASE_TIME_NS, 1000)
  for key, files in repos.items():
    repo_id, _, init_hash = key.partition("@")
    init_hash = init_hash or hashlib.sha1(repo_id.encode()).hexdigest()
    files_dir = root.joinpath("v3", *flcc.PYTHON_DIR, *repo_id.split("/"), init_hash)
    repositories = ("repositories", "repositories") if nested_repositories else ("repositories",)
    meta_dir = root.joinpath("v3", *repositories, *repo_id.split("/"), init_hash)
    files_dir.mkdir(parents=True, exist_ok=True)
    meta_dir.mkdir(parents=True, exist_ok=True)
    paths = {}
    for path, content in sorted(files.items()):
      name = f"{pathlib.PurePosixPath(path).name.removesuffix('.py')}_{next(clock)}.py"
      data = content.encode() if isinstance(content, str) else content
      (files_dir / name).write_bytes(data)
      paths[name] = path
    (meta_dir / "paths.json").write_text(json.dumps(paths, indent=2, sort_keys=True))
    (meta_dir / "files.json").write_text(json.dumps({"Python/.py": len(paths)}))
    (meta_dir / "METADATA").write_text(
        "1600000000\n\n" + "".join(f"A\t{p}\n" for p in sorted(paths.values())))
  return root


def dataset_file(root, repo: str, path: str) -> pathlib.Path:
  """The file on disk that paths.json of `repo` ("owner/name[@init-hash]") maps to `path`."""
  repo_id, _, init_hash = repo.partition("@")
  for meta in sorted(pathlib.Path(root, "v3", "repositories").glob(
      f"**/{repo_id}/{init_hash or '*'}/paths.json")):
    for name, real_path in json.loads(meta.read_text()).items():
      if real_path == path:
        return pathlib.Path(root).joinpath("v3", *flcc.PYTHON_DIR, repo_id, meta.parent.name, name)
  raise KeyError(f"{repo}: no file {path}")


def repo_in_split(split: str, splits: flcc.Splits = flcc.Splits(), prefix: str = "owner/repo",
                  skip: int = 0) -> str:
  """A repository id `<prefix><n>` that `flcc.split_of` puts in `split` (the skip+1-th such)."""
  matches = (f"{prefix}{n}" for n in itertools.count()
             if flcc.split_of(f"{prefix}{n}", splits) == split)
  return next(itertools.islice(matches, skip, None))


def tree_listing(root) -> dict:
  """{posix path relative to root: bytes} of every file below root, for comparing trees."""
  root = pathlib.Path(root)
  return {p.relative_to(root).as_posix(): p.read_bytes()
          for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink()}


@contextlib.contextmanager
def folder_chain(top, depth: int) -> Iterator[pathlib.Path]:
  """`depth` nested folders `d/d/.../d` below `top`, yielding the deepest; removed bottom up
  afterwards with what was put in them (shutil.rmtree, and so pytest's clean-up, recurses once
  per level and fails past Python's recursion limit)."""
  folders = [pathlib.Path(top)]
  folders[0].mkdir(parents=True)
  for _ in range(depth):  # one level at a time: mkdir(parents=True) recurses per level
    folders.append(folders[-1] / "d")
    folders[-1].mkdir()
  try:
    yield folders[-1]
  finally:
    for folder in reversed(folders[1:]):
      for entry in folder.iterdir():
        if entry.name == "d":
          continue
        if entry.is_dir() and not entry.is_symlink():
          shutil.rmtree(entry)
        else:
          entry.unlink()
      folder.rmdir()


def as_typed(text: str, cursor: int) -> str:
  """`text` as an editor holds it while the line `cursor` is on is typed up to `cursor`: the rest
  of that line not there yet (what the evaluation's points complete; the engine offers only what
  fits before text after the cursor)."""
  end = text.find("\n", cursor)
  return text[:cursor] + (text[end:] if end >= 0 else "")


def keystrokes(text: str, cursor: int) -> range:
  """The cursors of a user typing the line `cursor` is on, from its first non-blank character to
  its end: where an editor asks for a completion."""
  start = text.rfind("\n", 0, cursor) + 1
  end = text.find("\n", cursor)
  end = len(text) if end < 0 else end
  return range(start + len(text[start:end]) - len(text[start:end].lstrip()), end + 1)


def wait_for(predicate, what: str, seconds: float = 900) -> None:
  """Polls until predicate() is true; fails naming `what` after `seconds` (a hang, not a timing)."""
  import time  # pylint: disable=g-import-not-at-top
  deadline = time.monotonic() + seconds
  while not predicate():
    assert time.monotonic() < deadline, f"gave up waiting for {what}"
    time.sleep(0.1)


def interrupt_at_each_point(prepare: Callable[[], None], run: Callable[[], object],
                            check: Callable[[bool, object], None]) -> int:
  """A Ctrl-C at each point of `run` in turn; returns how many points it has.

  Python raises a Ctrl-C between two steps of the code that runs: as a function begins or
  returns, after a call into C returns. A profile function raises KeyboardInterrupt at the first
  such point of `run()`, then (`prepare()` again, untraced) at the second, ... until a run ends
  without one. After each run, `check(interrupted, what run returned or None)`.
  """
  import sys  # pylint: disable=g-import-not-at-top
  for point in itertools.count():
    prepare()
    seen = 0

    def interrupt_at_the_point(frame, event, arg):
      nonlocal seen
      del frame, arg
      if event in ("call", "return", "c_return"):
        seen += 1
        if seen == point + 1:
          raise KeyboardInterrupt

    result = None
    sys.setprofile(interrupt_at_the_point)
    try:
      result = run()
    except KeyboardInterrupt:
      pass
    finally:
      sys.setprofile(None)
    interrupted = seen > point
    check(interrupted, result)
    if not interrupted:
      return point


def checkpoint_variables(prefix) -> dict:
  """Every variable of the TF checkpoint `prefix` (model.ckpt-<step>), by name, as arrays."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top  (only callers that need it)
  reader = tf.train.load_checkpoint(str(prefix))
  return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()}


def run_on_mesh(mesh_shape: str, layout_rules: str, build, inputs: Mapping[str, tuple],
                device: str = ""):
  """Builds a Mesh TF graph and runs it on a placement mesh of `mesh_shape` CPU slices.

  `inputs` maps a name to (NumPy array, [mtf.Dimension...]); each is imported into the mesh and
  `build(**tensors)` returns the mtf tensors to compute. `device`: every slice's device name
  ("": TensorFlow's choice; runs/cpu.gin names "cpu:0"). Returns (their NumPy values, the
  lowered tf.Graph, for inspecting the ops). Mesh TF and TensorFlow are imported only when called.
  """
  # pylint: disable=g-import-not-at-top  (only callers that need them)
  import mesh_tensorflow as mtf
  import tensorflow.compat.v1 as tf
  devices = [device] * mtf.convert_to_shape(mesh_shape).size
  graph = mtf.Graph()
  mesh = mtf.Mesh(graph, "mesh")
  with tf.Graph().as_default() as tf_graph:
    outputs = build(**{name: mtf.import_tf_tensor(mesh, tf.constant(value), dims)
                       for name, (value, dims) in inputs.items()})
    mesh_impl = mtf.placement_mesh_impl.PlacementMeshImpl(mesh_shape, layout_rules, devices)
    lowering = mtf.Lowering(graph, {mesh: mesh_impl})
    with tf.Session() as session:
      values = session.run([lowering.export_to_tf_tensor(t) for t in outputs])
  return values, tf_graph


def random_string(rng, alphabet: Sequence[str], max_length: int = 40) -> str:
  """Up to `max_length` characters drawn from `alphabet` (for fuzzing a parser or a protocol)."""
  return "".join(rng.choice(alphabet) for _ in range(rng.randrange(max_length)))


def random_json(rng, alphabet: Sequence[str], depth: int = 0, more: Sequence = ()):
  """A random JSON-like value for fuzzing: null, true, 30-digit integers, huge floats, NaN and
  infinities, strings of `alphabet`, lists and objects of these (nested at most 4 deep); `more`:
  further kinds, functions of the depth, drawn like the lists and objects (not at the deepest
  level)."""
  kinds = [lambda: None, lambda: True, lambda: rng.randrange(-10**30, 10**30),
           lambda: rng.random() * 1e300, lambda: random_string(rng, alphabet),
           lambda: float(rng.choice(["nan", "inf", "-inf"])),
           lambda: [random_json(rng, alphabet, depth + 1, more)
                    for _ in range(rng.randrange(4))],
           lambda: {random_string(rng, alphabet, 8): random_json(rng, alphabet, depth + 1, more)
                    for _ in range(rng.randrange(4))},
           *[lambda kind=kind: kind(depth + 1) for kind in more]]
  return kinds[rng.randrange(len(kinds) if depth < 4 else 6)]()

