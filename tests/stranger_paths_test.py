"""A model folder from a stranger is data: what it holds cannot block a command, ask for any
amount of memory, send the engine's writes out of it, or run code (code_t5/stranger_paths.py and
its callers: complete, serve, export, convert, pack, baseline). Each case was a hang, a traceback,
a file of the user's deleted or a marker file touched before the fix."""

import json
import math
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from typing import Optional

import hostile_checkpoints
import pytest

from code_t5 import stranger_paths
from code_t5 import test_utils
from code_t5.data import line_completion
from code_t5.engine import runtime
from code_t5.evaluation import baseline

RUNTIME = pathlib.Path(runtime.RUNTIME_DIR) / f"step{test_utils.PRETRAINED_STEP}"
# A hang is the failure here: a command that reads a FIFO waits for a writer that never comes.
TIMEOUT = 240


def _code_t5(*args, cwd=None) -> subprocess.CompletedProcess:
  # -P: as the installed `code-t5` command, which does not put the working folder on the path
  # (`python -m` would, and the model folder's t5/ would stand in for t5 in this process).
  return subprocess.run([sys.executable, "-P", "-m", "code_t5.cli", *map(str, args)], cwd=cwd,
                        capture_output=True, text=True, timeout=TIMEOUT)


def _one_line_error(result: subprocess.CompletedProcess, *expected: str) -> str:
  """The command's error line (after any progress lines; no traceback)."""
  assert result.returncode == 2, result.stdout[-2000:] + result.stderr[-3000:]
  lines = [line for line in result.stderr.splitlines() if line.strip()]
  assert lines and lines[-1].startswith("code-t5 "), result.stderr[-3000:]
  assert "Traceback" not in result.stderr, result.stderr[-3000:]
  for text in expected:
    assert text in lines[-1]
  return lines[-1]


@pytest.fixture
def model(tmp_path) -> pathlib.Path:
  copy = tmp_path / "model"
  shutil.copytree(test_utils.PRETRAINED, copy)
  return copy


@pytest.fixture
def source(tmp_path) -> pathlib.Path:
  path = tmp_path / "t.py"
  path.write_text("import os\n\n\ndef main():\n    path = os.path.")
  return path


def test_a_fifo_or_a_device_is_refused_without_opening_it_for_good(tmp_path):
  fifo = tmp_path / "fifo"
  os.mkfifo(fifo)
  with pytest.raises(OSError, match="not a regular file \\(a FIFO\\)"):
    stranger_paths.read_regular(fifo, 100)
  with pytest.raises(OSError, match="a character device"):
    stranger_paths.read_regular("/dev/zero", 100)
  big = tmp_path / "big"
  big.write_bytes(b"x" * 101)
  with pytest.raises(OSError, match="101 bytes, more than the 100"):
    stranger_paths.read_regular(big, 100)
  assert stranger_paths.read_regular(big, 101) == b"x" * 101


def _lowest_free_descriptor() -> int:
  """The number the next file opened gets (POSIX: the lowest one free)."""
  fd = os.open(os.devnull, os.O_RDONLY)
  os.close(fd)
  return fd


def test_a_ctrl_c_while_a_file_is_opened_stays_a_ctrl_c(source):
  # Each must end in KeyboardInterrupt: `code-t5 prepare` counted an OSError (EBADF, the
  # descriptor closed twice) as an unreadable file, dropped it and went on, 4 Ctrl-Cs in 30 while
  # it read files. The descriptor is closed after each, except where the Ctrl-C came as os.open
  # returned, before its number was held (a process ending on Ctrl-C closes it).
  free = _lowest_free_descriptor()
  leaked = []

  def check(interrupted, opened):
    if not interrupted:
      with opened:
        assert opened.read() == source.read_bytes()
    if _lowest_free_descriptor() != free:  # the one open_regular took is still open
      leaked.append(free)
      os.close(free)

  points = test_utils.interrupt_at_each_point(
      lambda: None, lambda: stranger_paths.open_regular(source, 100), check)
  assert points > 5
  assert len(leaked) <= 1, leaked


def test_a_write_path_through_a_link_or_a_file_is_refused(tmp_path):
  root, elsewhere = tmp_path / "root", tmp_path / "elsewhere"
  root.mkdir()
  elsewhere.mkdir()
  assert stranger_paths.inside(root, "runtime", "step1") == root / "runtime" / "step1"
  (root / "runtime").symlink_to(elsewhere)
  with pytest.raises(stranger_paths.LinkOutError, match="runtime is a link"):
    stranger_paths.inside(root, "runtime", "step1")
  (root / "logs").write_text("")
  with pytest.raises(stranger_paths.LinkOutError, match="logs is not a folder"):
    stranger_paths.inside(root, "logs", "export.log")
  # The root itself is the user's choice.
  (tmp_path / "link").symlink_to(root)
  assert stranger_paths.inside(tmp_path / "link", "export") == tmp_path / "link" / "export"


def test_complete_writes_no_runtime_through_a_link_out_of_the_model(model, source, tmp_path):
  """The runtime is written once per checkpoint, replacing an older one: through a link named
  `runtime` that replaced a folder of the user's."""
  shutil.rmtree(model / runtime.RUNTIME_DIR)
  users = tmp_path / "thesis"
  (users / RUNTIME.name).mkdir(parents=True)
  (users / RUNTIME.name / "thesis.tex").write_text("the user's own file")
  (model / runtime.RUNTIME_DIR).symlink_to(users)
  _one_line_error(_code_t5("complete", source, "--checkpoint", model),
                  f"{model / 'runtime'} is a link", "remove the link")
  assert [p.name for p in (users / RUNTIME.name).iterdir()] == ["thesis.tex"]


def test_export_writes_nothing_through_links_out_of_the_model(model, tmp_path):
  users_file, users_folder = tmp_path / "bashrc", tmp_path / "projects"
  users_file.write_text("export PATH=$HOME/bin:$PATH\n")
  users_folder.mkdir()
  (model / "logs").mkdir()
  (model / "logs" / "export.log").symlink_to(users_file)
  _one_line_error(_code_t5("export", "--checkpoint", model), "export.log is a link")
  (model / "logs" / "export.log").unlink()
  (model / "export").symlink_to(users_folder)
  _one_line_error(_code_t5("export", "--checkpoint", model), f"{model / 'export'} is a link")
  (model / "export").unlink()
  # mesh_transformer_main records its command in commands/ (helper-24's audit: through a link
  # there, into a folder of the user's).
  (model / "commands").symlink_to(users_folder)
  _one_line_error(_code_t5("export", "--checkpoint", model), f"{model / 'commands'} is a link")
  (model / "commands").unlink()
  (model / "commands").mkdir()
  (model / "commands" / "command").symlink_to(users_file)
  _one_line_error(_code_t5("export", "--checkpoint", model), "command is a link")
  assert users_file.read_text() == "export PATH=$HOME/bin:$PATH\n"
  assert not list(users_folder.iterdir())


def _marker_module(folder: pathlib.Path, name: str, marker: pathlib.Path) -> None:
  folder.mkdir(parents=True, exist_ok=True)
  (folder / name).write_text(f"import pathlib\npathlib.Path({str(marker)!r}).touch()\n")


def test_a_killed_export_leaves_nothing_outside_the_model_and_the_next_removes_its_rest(
    model, tmp_path):
  """helper-39's audit: each killed export left an empty code_t5_export-* folder in $TMPDIR (its
  trainer's working folder) for good."""
  tmpdir = tmp_path / "tmpdir"
  tmpdir.mkdir()
  export = subprocess.Popen(
      [sys.executable, "-P", "-m", "code_t5.cli", "export", "--checkpoint", str(model)],
      env=dict(os.environ, TMPDIR=str(tmpdir), TF_CPP_MIN_LOG_LEVEL="3"),
      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
  deadline = time.monotonic() + TIMEOUT
  # Killed once the trainer's working folder is made (before its SavedModel is written).
  while not (list(tmpdir.iterdir())
             or list((model / "export").glob("*.tmp-*/working_folder"))):
    assert export.poll() is None and time.monotonic() < deadline
    time.sleep(0.02)
  export.kill()
  export.wait()
  assert list(tmpdir.iterdir()) == []
  (left,) = (model / "export").glob("*.tmp-*")
  result = _code_t5("export", "--checkpoint", model)
  assert result.returncode == 0, result.stderr[-3000:]
  assert f"removed {left}, left by a killed process" in result.stdout
  assert [p.name for p in (model / "export").iterdir()] == [pathlib.Path(
      result.stdout.strip().splitlines()[-1]).name]


@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, -signal.SIGTERM)])
def test_an_export_stopped_by_a_signal_ends_as_that_signal_ends_a_command(model, signum, status):
  """helper-38's audit: a Ctrl-C (to the terminal's process group) or a SIGTERM ended in "export
  exited with status -2 and wrote 0 SavedModels" and status 2, after "a rerun resumes from the
  newest checkpoint"."""
  export = subprocess.Popen(
      [sys.executable, "-P", "-m", "code_t5.cli", "export", "--checkpoint", str(model)],
      env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"), stdout=subprocess.PIPE,
      stderr=subprocess.PIPE, text=True, start_new_session=True,
      preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
  test_utils.wait_for(lambda: list((model / "export").glob("*.tmp-*/working_folder"))
                      or export.poll() is not None, "the export's trainer", TIMEOUT)
  time.sleep(1)  # (the trainer is starting)
  if signum == signal.SIGINT:
    os.killpg(export.pid, signum)
  else:
    export.send_signal(signum)
  out, err = export.communicate(timeout=TIMEOUT)
  assert export.returncode == status, out[-2000:] + err[-3000:]
  assert "Traceback" not in err and "exited with status" not in err, err[-3000:]
  assert f"stopped by {signum.name} (forwarded to mesh_transformer_main); nothing was exported" in out
  assert list((model / "export").iterdir()) == []


def test_export_runs_no_code_of_the_model_folder(model, tmp_path):
  """Run from inside the folder (as `cd model && code-t5 export --checkpoint .`): a gin `import`
  in its operative config is refused; its own t5/ package, or dataset.gin and runs/cpu.gin
  importing a module of its own, are not what the export reads."""
  marker = tmp_path / "ran"
  _marker_module(model, "stranger_mod.py", marker)
  _marker_module(model / "t5", "__init__.py", marker)
  for gin_file in ("dataset.gin", "runs/cpu.gin"):
    (model / gin_file).parent.mkdir(exist_ok=True)
    (model / gin_file).write_text("import stranger_mod\n")
  config = model / "operative_config.gin"
  original = config.read_text()
  config.write_text("import stranger_mod\n" + original)
  _one_line_error(_code_t5("export", "--checkpoint", ".", cwd=model),
                  "operative_config.gin has `import stranger_mod`")
  assert not marker.exists()
  config.write_text(original)
  result = _code_t5("export", "--checkpoint", ".", cwd=model)
  assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
  assert list((model / "export").glob("*/saved_model.pb"))
  assert not marker.exists()


@pytest.mark.parametrize("lines", [
    # Any attribute of an imported module becomes callable under dynamic registration.
    ["from __gin__ import dynamic_registration", "import code_t5.processes",
     "mesh_tensorflow.transformer.utils.run.eval_dir_suffix = @code_t5.processes.os.system()",
     "code_t5.processes.os.system.command = 'touch {marker}'"],
    # Mesh TF's save_scores writes wherever its bindings say.
    ["run.eval_summary_dir = @utils.save_scores()",
     "utils.save_scores.results = [{{'scores': 1.5}}]", "utils.save_scores.vocabulary = None",
     "utils.save_scores.scores_filename = '{marker}'"],
    # ... and a block of bindings hid the call (helper-20's audit: it wrote there).
    ["utils.run:", "  perplexity_eval_steps = @mesh_tensorflow.transformer.utils.save_scores()",
     "utils.save_scores.results = [{{'scores': 1.5}}]", "utils.save_scores.vocabulary = None",
     "utils.save_scores.scores_filename = '{marker}'"],
])
def test_export_refuses_gin_bindings_that_would_run_a_program_or_write(model, tmp_path, lines):
  marker = tmp_path / "ran"
  config = model / "operative_config.gin"
  config.write_text(config.read_text() + "\n".join(lines).format(marker=marker) + "\n")
  _one_line_error(_code_t5("export", "--checkpoint", model),
                  "operative_config.gin has `", lines[0][:30])
  assert not list(tmp_path.glob("ran*"))


def test_export_refuses_a_recorded_gin_file_that_is_no_file(model):
  """gin takes a name it finds nowhere to its file readers, which import the package a
  `pkg/sub/x.gin` names (helper-20's audit: `this/x/y.gin` ran `this`)."""
  (model / "commands").mkdir()
  (model / "commands" / "command").write_text(
      "mesh_transformer_main.py --module_import=code_t5 --gin_file=dataset.gin "
      "--gin_file=models/causal_lm.gin --gin_file=vocabs/spm_dev.gin --gin_file=sizes/mini.gin "
      "--gin_file=runs/cpu.gin --gin_file=this/x/y.gin --gin_param=utils.run.train_steps = 5")
  _one_line_error(_code_t5("export", "--checkpoint", model),
                  "this/x/y.gin, a --gin_file of the command recorded in ", "is no file here")
  assert not (model / "export").exists()


def test_a_fifo_in_the_model_folder_is_a_one_line_error_not_a_hang(model, source):
  for name in ("about.json", RUNTIME / "model.json", RUNTIME / "params.npz"):
    path = model / name
    saved = path.read_bytes()
    path.unlink()
    os.mkfifo(path)
    _one_line_error(_code_t5("complete", source, "--checkpoint", model),
                    f"{path}", "not a regular file (a FIFO)")
    path.unlink()
    path.write_bytes(saved)
  shutil.rmtree(model / runtime.RUNTIME_DIR)  # so that the checkpoint is read
  index = model / f"model.ckpt-{test_utils.PRETRAINED_STEP}.index"
  index.unlink()
  os.mkfifo(index)
  for command in (["complete", source, "--checkpoint", model],
                  ["pack", model, "--out", model.parent / "pack"]):
    _one_line_error(_code_t5(*command), f"{index}: not a regular file (a FIFO)")


def test_a_compressed_runtime_member_cannot_inflate_past_the_file(model, source):
  """code_t5 stores the arrays: a deflated member of 2 GB of zeros is a few MB on disk."""
  params = model / RUNTIME / "params.npz"
  with zipfile.ZipFile(params) as stored:
    members = {name: stored.read(name) for name in stored.namelist()}
  with zipfile.ZipFile(params, "w", zipfile.ZIP_DEFLATED) as deflated:
    for name, data in members.items():
      deflated.writestr(name, data)
  _one_line_error(_code_t5("complete", source, "--checkpoint", model),
                  "is compressed, which code_t5 never writes")


_EMBEDDING = "transformer/embedding"
_WI = "transformer/block_000/layer_001/DenseReluDense/wi/kernel"
_CHECKPOINT = f"model.ckpt-{test_utils.PRETRAINED_STEP}"
_DATA = f"{_CHECKPOINT}.data-00000-of-00001"


def _claim(model: pathlib.Path, shape_of) -> pathlib.Path:
  """The model's index claims bfloat16 variables of shape_of(name) (None: as stored), stored
  after its other variables; the index's path."""
  end = (model / _DATA).stat().st_size

  def claim(name, entry):
    dims = shape_of(name)
    if dims:
      del entry.shape.dim[:]
      for size in dims:
        entry.shape.dim.add(size=size)
      entry.offset, entry.size = end, min(2 * math.prod(dims), 2**63 - 1)

  hostile_checkpoints.change_checkpoint_index(model / _CHECKPOINT, claim)
  return model / f"{_CHECKPOINT}.index"


def test_a_checkpoint_that_claims_more_than_its_files_hold_is_refused_before_it_is_read(
    model, source, tmp_path):
  """d_ff claimed as 2^31 (1 TiB a kernel): TensorFlow's reader allocates a variable before it
  reads it, and each command that reads the checkpoint crashed (SIGSEGV, about every other run)
  or failed after the allocation."""
  shutil.rmtree(model / runtime.RUNTIME_DIR)  # so that `complete` reads the checkpoint
  stored = (model / _DATA).stat().st_size
  index = _claim(model, lambda name: (None if "/DenseReluDense/" not in name else
                                      [256, 2**31] if "/wi/" in name else [2**31, 256]))
  for command in (["complete", source, "--checkpoint", model],
                  ["pack", model, "--out", tmp_path / "pack"],
                  ["convert", model, tmp_path / "t5x", "--params-only"]):
    _one_line_error(_code_t5(*command), f"{index} claims ",
                    f"({_WI}: [256, 2147483648] bfloat16, 1,099,511,627,776 bytes), more than "
                    f"the {stored:,} bytes stored in {_DATA}")
  assert not (tmp_path / "pack").exists() and not (tmp_path / "t5x").exists()


def test_a_shape_tensorflow_cannot_count_is_refused_not_an_abort(model, tmp_path):
  """2^40 x 2^40 elements overflow TensorShape's count: TensorFlow's reader aborted the process
  (a failed CHECK, exit status 134) as it opened the checkpoint."""
  _claim(model, lambda name: [2**40, 2**40] if name == _EMBEDDING else None)
  _one_line_error(_code_t5("convert", model, tmp_path / "t5x", "--params-only"),
                  f"variable {_EMBEDDING} has shape [1099511627776, 1099511627776], which "
                  "TensorFlow cannot hold")


def test_a_claim_over_a_hole_in_a_sparse_data_file_is_refused_before_it_takes_memory(
    model, tmp_path):
  """1 GiB claimed over a .data file extended by a hole (a few MB on disk, as an archive's sparse
  member unpacks): `convert` allocated the GiB and read it, then failed on the checksum."""
  data = model / _DATA
  _claim(model, lambda name: [2**21, 256] if name == _EMBEDDING else None)
  os.truncate(data, data.stat().st_size + 2**30)
  if data.stat().st_blocks * 512 >= 2**30:
    pytest.skip("this file system stores the hole")
  _one_line_error(_code_t5("convert", model, tmp_path / "t5x", "--params-only"),
                  f"({_EMBEDDING}: [2097152, 256] bfloat16, 1,073,741,824 bytes), more than the ")


def test_a_folder_at_the_checkpoint_prefix_leads_no_reader_to_another_checkpoint(
    model, source, tmp_path):
  """A folder named as the checkpoint itself beside its .index, holding a `checkpoint` file that
  names the user's own checkpoint: TensorFlow's reader takes a folder for a model dir and read
  the user's weights (`pack` and `convert` wrote them into their output) past every check of
  the .index and .data files (helper-32's audit)."""
  mine = tmp_path / "mine"
  shutil.copytree(test_utils.PRETRAINED, mine)
  (model / _CHECKPOINT).mkdir()
  (model / _CHECKPOINT / "checkpoint").write_text(
      f'model_checkpoint_path: "{mine / _CHECKPOINT}"\n')
  shutil.rmtree(model / runtime.RUNTIME_DIR)  # so that `complete` reads the checkpoint
  for out, command in ((tmp_path / "pack", ["pack", model, "--out", tmp_path / "pack"]),
                       (tmp_path / "t5x", ["convert", model, tmp_path / "t5x", "--params-only"]),
                       (None, ["complete", source, "--checkpoint", model]),
                       (tmp_path / "run", ["train", "--init-from", model, "--steps", "1",
                                           "--no-eval", "--model-dir", tmp_path / "run"])):
    _one_line_error(_code_t5(*command), f"{model / _CHECKPOINT} is there as a folder of its own",
                    "remove it")
    assert out is None or not out.exists()


@pytest.mark.parametrize("linked", ["operative_config.gin", f"{_CHECKPOINT}.index", _DATA])
def test_pack_and_convert_copy_no_file_a_link_leads_to(model, tmp_path, linked):
  """The model folder's operative_config.gin, or a file of its checkpoint, a link to a file of the
  user's (one with a secret, their own model): `pack` copied it into the pack, and `convert`
  the weights into the T5X checkpoint."""
  mine = tmp_path / "mine"
  shutil.copytree(test_utils.PRETRAINED, mine)
  secret = tmp_path / "secret.gin"
  secret.write_text("secret token: hunter2\n" + (mine / "operative_config.gin").read_text())
  target = secret if linked == "operative_config.gin" else mine / linked
  (model / linked).unlink()
  (model / linked).symlink_to(target)
  for out, command in ((tmp_path / "pack", ["pack", model, "--out", tmp_path / "pack"]),
                       (tmp_path / "t5x", ["convert", model, tmp_path / "t5x", "--params-only"])):
    _one_line_error(_code_t5(*command), f"{model / linked} is a link (to {target})",
                    "put the file itself in place of the link")
    assert not out.exists()


@pytest.mark.parametrize("binding, says", [
    ("run.sequence_length = 'abc'", "not int or dict"),
    ("run.sequence_length = {'inputs': 256}", "not positive 'inputs' and 'targets'"),
    ("MIXTURE_NAME/task_name.vocabulary = ['spm_dev']", "not str"),
])
def test_an_operative_config_literal_of_another_type_is_a_one_line_error(model, source, binding,
                                                                          says):
  config = model / "operative_config.gin"
  config.write_text(config.read_text() + binding + "\n")  # (the later binding wins)
  _one_line_error(_code_t5("complete", source, "--checkpoint", model), f"{config} binds", says)


@pytest.mark.parametrize("about, says", [
    ({"total_steps": "many"}, "\"total_steps\" is 'many', not int"),
    ({"name": {"a": 1}}, "\"name\" is {'a': 1}, not str"),
    ({"min_score": float("nan")}, "\"min_score\" of at most"),
])
def test_an_about_field_of_another_type_is_a_one_line_error(model, source, about, says):
  (model / "about.json").write_text(json.dumps(about))
  _one_line_error(_code_t5("complete", source, "--checkpoint", model), says)


def _eval_decodes(model_dir: pathlib.Path, predictions: Optional[bytes]) -> pathlib.Path:
  """A line-completion eval of dataset-dev in model_dir: 2 targets and `predictions` (None: a
  FIFO); the predictions' path."""
  eval_dir = model_dir / f"validation_eval_{line_completion.eval_dir_suffix('dataset-dev')}"
  eval_dir.mkdir()
  (eval_dir / "flcc_py_line_completion_v1_targets").write_text('"a line"\n"another"\n')
  path = eval_dir / "flcc_py_line_completion_v1_100_predictions"
  if predictions is None:
    os.mkfifo(path)
  else:
    path.write_bytes(predictions)
  return path


@pytest.mark.parametrize("decodes, says", [
    (b'"a line"\nnot json\n', "_predictions:2 is not a decode"),
    (b'"a line"\n["a list"]\n', "_predictions:2 is not a decode"),
    (b'"\xff"\n', "_predictions is not UTF-8 text"),
    (None, "_predictions cannot be read (not a regular file (a FIFO))"),
])
def test_baseline_reads_a_model_folder_s_decodes_as_data(tmp_path, decodes, says):
  predictions = _eval_decodes(tmp_path, decodes)
  with pytest.raises(baseline.BaselineError, match=f"^{predictions}") as error:
    baseline.model_predictions(tmp_path, "validation", "dataset-dev")
  assert says in str(error.value)


def test_eval_counts_a_model_folder_s_decodes_line_by_line_and_not_past_a_bound(tmp_path,
                                                                                capsys):
  """`code-t5 eval` says how many points each decode file of the step covers: it read each whole
  into memory (a 3 GB sparse file named as a decode file of another task: a MemoryError;
  helper-32's audit), and a line that was no JSON was a traceback."""
  from code_t5 import cli  # pylint: disable=g-import-not-at-top
  (tmp_path / "a_task_7_predictions").write_text('"x = 1"\n""\nnot json\n')
  with open(tmp_path / "b_task_7_predictions", "wb") as f:
    f.truncate(3 << 30)
  os.mkfifo(tmp_path / "c_task_7_predictions")
  cli._show_decodes(tmp_path, 7)  # pylint: disable=protected-access
  out = capsys.readouterr().out.splitlines()
  assert out[0] == f"decodes: {tmp_path / 'a_task_7_predictions'} (3 points, 2 empty)"
  assert out[1].startswith(f"decodes: {tmp_path / 'b_task_7_predictions'} (not read: ")
  assert out[2].startswith(f"decodes: {tmp_path / 'c_task_7_predictions'} (not read: ")


def test_baseline_reads_no_more_predictions_than_targets_nor_a_large_file(tmp_path):
  """200 MB of `""` lines (the cap was 1 GB) took 5.46 GB of memory and 70 s, read whole and
  split, before the count was found wrong. Now the predictions stop at the first past the
  targets, and a file over 16 MB is refused unread."""
  cap = 16 << 20  # (not postprocessors.MAX_DECODES_BYTES: the bound is what is tested)
  predictions = _eval_decodes(tmp_path, b'""\n' * (cap // 3))
  with pytest.raises(baseline.BaselineError, match=f"^{predictions} holds more decodes than the 2 "
                     "targets of flcc_py_line_completion_v1_targets: run the eval again$"):
    baseline.model_predictions(tmp_path, "validation", "dataset-dev")
  predictions.write_bytes(b'"a line"\n' + b" " * cap + b'"another"\n')
  with pytest.raises(baseline.BaselineError, match=f"more than the {cap:,} such a file"):
    baseline.model_predictions(tmp_path, "validation", "dataset-dev")
  # Lines end at "\n" alone: a decode may hold U+2028, which the eval writes as it is.
  predictions.write_bytes('"a\u2028line"\n"another"\n'.encode())
  assert baseline.model_predictions(tmp_path, "validation", "dataset-dev")[3] == [
      "a\u2028line", "another"]
