"""launcher.run and train_and_eval: children that die with the launcher, signals forwarded, the loss
table on disk line by line, one trainer per model dir, what a killed run reports, progress lines.

Most tests run launcher.run on a small Python child that prints Mesh TF's loss lines (what the
launcher reads) and sleeps; the last one kills a real `code-t5 train`.
"""

import argparse
import os
import pathlib
import shlex
import signal
import subprocess
import sys
import textwrap

import pytest

from code_t5 import cli
from code_t5 import errors
from code_t5 import processes
from code_t5 import test_utils
from code_t5.training import curves
from code_t5.training import launcher

# Prints three of Mesh TF's per-step loss lines, records its pid, then waits to be killed.
TRAINER = textwrap.dedent("""
    import os, pathlib, signal, sys, time
    for step in range(1, 4):
      print(f"I1122 19:09:35.188298 1 basic_session_run_hooks.py:1] step, tf_loss[{3 - step / 10}][{step}]", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: (print("trainer got SIGTERM", flush=True), sys.exit(3)))
    pathlib.Path(sys.argv[1]).write_text(str(os.getpid()))
    time.sleep(3600)  # longer than any wait below: it ends by a signal or not at all
""")


def _launch(tmp_path) -> subprocess.Popen:
  """A process running launcher.run(TRAINER) with a loss table, as `code-t5 train` does."""
  script = textwrap.dedent(f"""
      import pathlib, sys
      from code_t5.training import launcher
      tmp = pathlib.Path({str(tmp_path)!r})
      code = launcher.run([sys.executable, "-c", {TRAINER!r}, str(tmp / "trainer.pid")],
                          tmp / "train.log", loss_table=tmp / "train_loss.tsv", first_step=1,
                          after_a_stop="a rerun resumes from the newest checkpoint")
      sys.exit(code)
  """)
  return subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)


def _trainer_pid(tmp_path, launcher_process) -> int:
  pid_file = tmp_path / "trainer.pid"
  test_utils.wait_for(
      lambda: pid_file.exists() and pid_file.read_text() or launcher_process.poll(),
      "the trainer to start")
  assert launcher_process.poll() is None, launcher_process.stdout.read()
  return int(pid_file.read_text())


def test_kill_9_of_the_launcher_kills_the_trainer_and_keeps_the_loss_curve(tmp_path):
  launched = _launch(tmp_path)
  trainer = _trainer_pid(tmp_path, launched)
  table = tmp_path / "train_loss.tsv"
  # The launcher has read the three loss lines once they are in the table; before, a killed
  # launcher's table was empty (buffered).
  test_utils.wait_for(lambda: table.exists() and table.read_text().count("\n") == 3,
                      "3 lines in the table")
  assert launched.poll() is None  # on disk while the launcher runs, not when it exits
  launched.kill()
  launched.wait()
  test_utils.wait_for(lambda: not processes.pid_alive(trainer),
                      "the trainer to die with its launcher")
  assert table.read_text() == "1\t2.9\n2\t2.8\n3\t2.7\n"


def test_sigterm_is_forwarded_and_reported(tmp_path):
  launched = _launch(tmp_path)
  trainer = _trainer_pid(tmp_path, launched)
  launched.send_signal(signal.SIGTERM)
  out, _ = launched.communicate()
  assert launched.returncode == 3, out  # the trainer's own exit status, after its handler ran
  assert not processes.pid_alive(trainer)
  assert "trainer got SIGTERM" in (tmp_path / "train.log").read_text()
  assert ("stopped by SIGTERM (forwarded to mesh_transformer_main); a rerun resumes from the "
          "newest checkpoint; full log: ") in out


def test_ctrl_c_is_forwarded_and_reported_without_the_trainers_traceback(tmp_path):
  """The trainer's KeyboardInterrupt traceback stays in the log: its first line alone was shown
  (helper-19's audit)."""
  launched = _launch(tmp_path)
  trainer = _trainer_pid(tmp_path, launched)
  launched.send_signal(signal.SIGINT)
  out, _ = launched.communicate()
  assert launched.returncode == 256 - signal.SIGINT, out  # sys.exit(-2): the trainer's status
  assert not processes.pid_alive(trainer)
  assert "KeyboardInterrupt" in (tmp_path / "train.log").read_text()
  assert "Traceback" not in out, out
  assert "stopped by SIGINT (forwarded to mesh_transformer_main)" in out, out


def test_a_command_whose_child_a_signal_killed_exits_as_a_shell_says(monkeypatch):
  # launcher.run returns -signal; sys.exit(-2) was status 254 (helper-19's audit).
  for code, status in [(-signal.SIGINT, 130), (-signal.SIGTERM, 143), (3, 3), (0, 0)]:
    monkeypatch.setattr(cli, "_parse", lambda argv, code=code: argparse.Namespace(
        func=lambda args: code, verbose=False, command="train"))
    assert cli.main([]) == status


def test_mesh_tfs_decode_lines_are_not_shown_whatever_the_code_says(tmp_path):
  # Mesh TF logs some decodes (mesh_tensorflow.transformer.utils.decode): code that says "Error"
  # matched the lines worth showing (helper-19's audit).
  decodes = textwrap.dedent("""
      print("I1206 15:00:00.000000 1 utils.py:1356] decoded 4: b'class ParseError(RuntimeError):'")
      print("I1206 15:00:00.000000 1 utils.py:1357]             -> b'    raise ValueError(x)'")
      print("E1206 15:00:00.000000 1 x.py:1] OSError: a real error", flush=True)
  """)
  shown = []
  assert launcher.run([sys.executable, "-c", decodes], tmp_path / "eval.log",
                      echo=shown.append) == 0
  assert shown[1:] == ["  OSError: a real error"]


def test_a_trainer_killed_by_sigkill_is_reported_as_out_of_memory_with_the_batch(tmp_path):
  # What the kernel's OOM killer does to a trainer whose batch does not fit, once it has written
  # its operative config (Mesh TF does before the first step).
  hog = textwrap.dedent(f"""
      import os, pathlib, signal
      pathlib.Path({str(tmp_path / "operative_config.gin")!r}).write_text(
          "run.batch_size = ('tokens_per_batch', 65536)\\n"
          "run.mesh_shape = 'model:1,batch:1'\\n"
          "run.sequence_length = {{'inputs': 512, 'targets': 512}}\\n"
          "run.train_steps = 100\\n")
      b = bytearray(64 << 20)
      os.kill(os.getpid(), signal.SIGKILL)
  """)
  lines = []
  code = launcher.run([sys.executable, "-c", hog, f"--model_dir={tmp_path}"],
                      tmp_path / "train.log", echo=lines.append)
  assert code == -signal.SIGKILL
  message = lines[-1]
  assert message.startswith("killed (SIGKILL), probably out of memory (peak RSS ")
  assert ("the batch is 128 sequences x (512+512) = 131,072 token slots per step "
          "(utils.run.batch_size = ('tokens_per_batch', 65536)); lower it with --gin-param "
          "\"utils.run.batch_size = ('sequences_per_batch', 64)\"; full log: ") in message


def test_a_code_t5_error_in_the_trainer_is_the_launchers_one_line_error(tmp_path):
  # As code_t5.training.training.init_from_variable raises inside Mesh TF's process.
  failing = ("from code_t5.training import training\n"
             "raise training.InitFromError('--init-from: x is bad')")
  shown = []
  with pytest.raises(launcher.LaunchError) as raised:
    launcher.run([sys.executable, "-c", failing], tmp_path / "train.log", echo=shown.append)
  assert str(raised.value) == f"--init-from: x is bad (full log: {tmp_path / 'train.log'})"
  assert "Traceback" in (tmp_path / "train.log").read_text()
  assert shown == [f"$ {sys.executable} -c {shlex.quote(failing)}"]  # the error's line alone
  # Any other failure is the trainer's exit status, as before, with its traceback shown.
  shown.clear()
  code = launcher.run([sys.executable, "-c", "raise ValueError('a bug')"], tmp_path / "train.log",
                      echo=shown.append)
  assert code == 1
  assert shown[1:3] == ["  Traceback (most recent call last):", "  ValueError: a bug"]


def test_the_command_reads_files_as_utf8_whatever_the_locale(tmp_path, monkeypatch):
  """gin reads gin files with open(): in a GBK locale a model folder's text read as GBK hid a
  call that the UTF-8 check did not see (helper-25's audit)."""
  monkeypatch.setenv("PYTHONUTF8", "0")
  monkeypatch.setenv("LC_ALL", "C")
  show = "import locale, sys; print('mode', sys.flags.utf8_mode, locale.getpreferredencoding())"
  log = tmp_path / "run.log"
  assert launcher.run([sys.executable, "-c", show], log, echo=lambda *_: None) == 0
  assert "mode 1 utf-8" in log.read_text()


def test_env_sets_variables_for_the_command_over_the_launchers_defaults(tmp_path, monkeypatch):
  monkeypatch.delenv("TF_CPP_MIN_LOG_LEVEL", raising=False)
  show = "import os; print('vars', os.environ['TF_CPP_MIN_LOG_LEVEL'], os.environ['CODE_T5_PROBE'])"
  log = tmp_path / "run.log"
  assert launcher.run([sys.executable, "-c", show], log, echo=lambda *_: None,
                      env={"CODE_T5_PROBE": "x"}) == 0
  assert "vars 3 x" in log.read_text()  # the launcher's quiet TensorFlow by default
  assert launcher.run([sys.executable, "-c", show], log, echo=lambda *_: None,
                      env={"CODE_T5_PROBE": "y", "TF_CPP_MIN_LOG_LEVEL": "0"}) == 0
  assert "vars 0 y" in log.read_text()


def test_progress_lines_give_steps_tokens_per_second_and_eta(tiny_run):
  _, model_dir = tiny_run("shared-prefix_lm")  # a real operative_config.gin: 8 x (256+256)
  shape = launcher.run_shape(model_dir)
  assert (shape.sequences, shape.token_slots, shape.train_steps) == (8, 4096, 4)
  now = [1000.0]
  lines = []
  progress = launcher._Progress(model_dir, lines.append, clock=lambda: now[0])  # pylint: disable=protected-access
  for step in range(1, 8):
    now[0] += 1.0  # 1 step per second, a line after 5 s
    progress.step(step, 2.5)
  assert lines == ["  step      6  loss 2.5000  1.00 steps/s  4,096 tokens/s  ETA 0:00 to step 4"
                   "  [6 s]"]
  shape = launcher.RunShape(sequences=8, lengths={"inputs": 256, "targets": 256},
                            train_steps=10_000, batch_binding=("sequences_per_batch", 8))
  progress.shape = shape
  for step in range(8, 16):
    now[0] += 0.5  # faster: steps 7-15 in 5 s since the last line, 1.8 steps/s
    progress.step(step, 2.25)
  assert len(lines) == 2
  assert lines[-1] == ("  step     15  loss 2.2500  1.80 steps/s  7,373 tokens/s  "
                       "ETA 1:32:27 to step 10000  [11 s]")


def test_a_run_on_another_task_than_its_init_from_model_says_so_at_its_first_step(tiny_run):
  _, model_dir = tiny_run("shared-prefix_lm")  # trained on flcc_py_prefix_lm_v1
  assert launcher.run_shape(model_dir).task == "flcc_py_prefix_lm_v1"
  # The clock at 0: the run's operative_config.gin is newer than the run's start, as it is live.
  lines = []
  launcher._Progress(model_dir, lines.append, clock=lambda: 0.0,  # pylint: disable=protected-access
                     init_task="flcc_py_cursor_lm_spm_dev_v3").step(1, 2.5)
  assert lines == ["  note: --init-from's model was trained on flcc_py_cursor_lm_spm_dev_v3; this "
                   "run trains on flcc_py_prefix_lm_v1 (--gin-param \"code_t5.task_name.version = "
                   "...\" picks the version)"]
  same = []
  launcher._Progress(model_dir, same.append, clock=lambda: 0.0,  # pylint: disable=protected-access
                     init_task="flcc_py_prefix_lm_v1").step(1, 2.5)
  assert not same
  # The shipped model's task, read from the operative_config.gin beside its checkpoint.
  assert launcher._trained_task(  # pylint: disable=protected-access
      test_utils.PRETRAINED / f"model.ckpt-{test_utils.PRETRAINED_STEP}") == (
          "flcc_py_cursor_lm_spm_dev_v3")


def test_a_second_trainer_on_a_model_dir_is_refused_while_the_first_runs(tmp_path):
  lock = tmp_path / launcher.TRAIN_LOCK
  holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
      import pathlib, time
      from code_t5 import processes
      with processes.exclusive_lock(pathlib.Path({str(lock)!r}), "x"):
        print("locked", flush=True)
        time.sleep(600)
  """)], stdout=subprocess.PIPE, text=True)
  try:
    assert holder.stdout.readline() == "locked\n"
    result = subprocess.run([sys.executable, "-m", "code_t5.cli", "train", "--model-dir",
                             str(tmp_path), "--steps", "1"], capture_output=True, text=True)
    assert result.returncode == 2, result.stderr[-3000:]
    assert result.stderr.strip().splitlines()[-1] == (
        f"code-t5 train: --model-dir {tmp_path} is being trained already (process {holder.pid}, "
        f"lock {lock}): stop it first, or wait for it to finish")
  finally:
    holder.kill()
    holder.wait()
  # The holder was killed: its lock is stale and the next trainer takes it over.
  with processes.exclusive_lock(lock, "x"):
    assert lock.read_text() == f"{os.getpid()}\n"


def test_killing_code_t5_train_leaves_no_trainer_and_keeps_the_curve(prepared_dir, tmp_path):
  model_dir = tmp_path / "model"
  train = subprocess.Popen(
      [sys.executable, "-m", "code_t5.cli", "train", "--model-dir", str(model_dir), "--steps",
       "100000", "--no-eval", "--gin-param",
       f"code_t5.flcc_dataset.prepared_dir = '{prepared_dir}'"],
      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
  table = model_dir / curves.LOSS_TABLE
  try:
    test_utils.wait_for(lambda: (table.exists() and table.read_text().count("\n") >= 3) or
                        train.poll() is not None, "3 training steps")
    assert train.poll() is None, (model_dir / "logs" / "train.log").read_text()[-3000:]
    children = pathlib.Path(f"/proc/{train.pid}/task/{train.pid}/children").read_text().split()
    assert len(children) == 1  # mesh_transformer_main
    lines = table.read_text().count("\n")
  finally:
    train.kill()
    train.wait()
  test_utils.wait_for(lambda: not processes.pid_alive(int(children[0])),
                      "mesh_transformer_main to die")
  assert table.read_text().count("\n") >= lines  # every step the launcher saw is on disk
  with processes.exclusive_lock(model_dir / launcher.TRAIN_LOCK, "x"):
    pass  # free again


def test_checkpoints_are_told_once_where_they_go_then_in_the_progress_lines(tmp_path):
  # The first run saves every 100 steps: its first save line is shown (where checkpoints go),
  # the others ride on the progress lines, and the last one is shown when the run ends.
  saves = "; ".join(f"print('I1122 19:09:35.188298 1 saver.py:1] Saving checkpoints for {k} "
                    f"into runs/x/model.ckpt.', flush=True)" for k in range(0, 600, 100))
  shown = []
  assert launcher.run([sys.executable, "-c", saves], tmp_path / "train.log",
                      echo=shown.append) == 0
  assert [line for line in shown[1:] if "Saving" in line] == [  # after the command line
      "  Saving checkpoints for 0 into runs/x/model.ckpt.",
      "  Saving checkpoints for 500 into runs/x/model.ckpt."]
  now = [0.0]
  lines = []
  progress = launcher._Progress(None, lines.append, clock=lambda: now[0])  # pylint: disable=protected-access
  assert progress.saved("Saving checkpoints for 0 into runs/x/model.ckpt.")
  progress.step(1, 2.5)
  assert not progress.saved("Saving checkpoints for 100 into runs/x/model.ckpt.")
  now[0] = 6.0
  progress.step(101, 2.0)
  assert lines == ["  step    101  loss 2.0000  16.67 steps/s  checkpoint 100  [6 s]"]
  assert progress.unshown_save is None  # told: not shown again at the end


def _record(model_dir: pathlib.Path, command: str, name: str = "command") -> None:
  """A command line as mesh_transformer_main records it: " ".join(sys.argv), unquoted."""
  (model_dir / "commands").mkdir(parents=True, exist_ok=True)
  (model_dir / "commands" / name).write_text(command)


def test_the_newest_recorded_training_command_names_the_composition(tmp_path):
  _record(tmp_path, "main.py --model_dir=x --gin_file=dataset.gin --gin_file=models/prefix_lm.gin "
          "--gin_file=sizes/mini.gin --gin_file=runs/cpu.gin "
          "--gin_param=utils.run.train_steps = 10", "command")
  _record(tmp_path, "main.py --model_dir=x --gin_file=dataset.gin --gin_file=models/causal_lm.gin "
          "--gin_file=vocabs/spm_dev.gin --gin_file=sizes/tiny.gin --gin_file=runs/cpu.gin "
          "--gin_file=extra/mine.gin --gin_param=code_t5.task_name.version = 'v3' "
          "--gin_param=utils.run.train_steps = 20", "command.1")
  _record(tmp_path, "main.py --model_dir=x --gin_file=runs/eval.gin", "command.2")  # an eval
  recorded = launcher.recorded_training(tmp_path)
  assert (recorded.model, recorded.size, recorded.vocab) == ("causal_lm", "tiny", "spm_dev")
  assert recorded.path == tmp_path / "commands" / "command.1"
  assert recorded.extra_gin_files == ("extra/mine.gin",)
  assert recorded.model_params() == ["code_t5.task_name.version = 'v3'"]
  assert launcher.recorded_training(tmp_path / "elsewhere") is None


def test_an_exports_or_evals_command_is_no_training_of_a_packed_model_dir(tmp_path):
  # A packed model dir keeps no training command: an export's was read as one, its bindings
  # named as missing and its task version asked of a resume (helper-58's audit).
  _record(tmp_path, "main.py --model_dir=x --gin_file=/p/operative_config.gin --gin_file=runs/cpu.gin "
          "--gin_file=runs/export.gin --gin_param=utils.run.mode = 'export_infer'", "command")
  _record(tmp_path, "main.py --model_dir=x --gin_file=/p/operative_config.gin "
          "--gin_file=runs/eval_line_completion.gin", "command.1")
  assert launcher.recorded_training(tmp_path) is None


def test_what_one_run_did_is_not_carried_to_the_next_however_it_is_named(tmp_path):
  """A stranger's recorded command could otherwise switch an export to training, or point the
  dataset at a folder of the user's, by naming the binding another way."""
  params = ["run.mode = 'train'", "train/utils.run.mode = 'train'",
            "mesh_tensorflow.transformer.utils.run.mode = 'score_from_strings'",
            "flcc_dataset.prepared_dir = '/home/me'", "code_t5.flcc_dataset.root = '/home/me'",
            "run.train_steps = 5", "import code_t5.training.training",
            "utils.run.sequence_length = {'inputs': 64, 'targets': 64}"]
  _record(tmp_path, "main.py --gin_file=models/causal_lm.gin --gin_file=sizes/tiny.gin "
          + " ".join(f"--gin_param={p}" for p in params))
  assert launcher.recorded_training(tmp_path).model_params() == [params[-1]]


def test_an_export_ends_with_its_own_mode(tmp_path):
  experiment = launcher.Experiment(model="causal_lm", model_dir=tmp_path,
                                   gin_params=["utils.run.mode = 'train'"])
  command = experiment.export_command(tmp_path / "out", extra_gin_params=["x.y = 1"])
  modes = [part for part in command if part.startswith("--gin_param=utils.run.mode")]
  assert modes[-1] == "--gin_param=utils.run.mode = 'export_infer'"
  assert command.index(modes[-1]) > command.index("--gin_param=utils.run.mode = 'train'")


def test_paths_reach_gin_as_they_are_whatever_they_hold(tmp_path):
  """A quote ends a gin string early (a traceback from gin), and a backslash sequence such as
  `\\x2f` would be read as `/`: a folder named so would point Mesh TF elsewhere."""
  from gin import config_parser  # pylint: disable=g-import-not-at-top

  class Literals(config_parser.ParserDelegate):
    def configurable_reference(self, scoped_configurable_name, evaluate):
      raise AssertionError(scoped_configurable_name)

    def macro(self, macro_name):
      raise AssertionError(macro_name)

  weird = tmp_path / "it's a\\x2f..\\x2fb"
  (weird / "v3" / "languages" / "Python" / ".py").mkdir(parents=True)  # an (empty) FLCC root
  experiment = launcher.Experiment(model="causal_lm", model_dir=tmp_path, root=weird,
                                   prepared_dir=weird)
  params = [part[len("--gin_param="):] for part in experiment.export_command(weird)
            if part.startswith("--gin_param=") and str(weird.name)[:4] in part]
  assert len(params) == 3  # the root, the prepared shards, the export
  for param in params:
    statement = config_parser.ConfigParser(param, Literals()).parse_statement()
    assert statement.value == str(weird), param


# How Mesh TF's process says a checkpoint's save found the disk full (TF 2.15): the session's
# traceback, then, lines below it, the file and the strerror.
_FULL_DISK_AT_A_SAVE = """
import sys
model = sys.argv[1]
for step in (0, 100):
  print(f"I1122 19:09:35.188298 1 saver.py:1] Saving checkpoints for {step} into {model}/model.ckpt.")
  print(f"tf_loss[2.5][{step + 1}]")
print("Traceback (most recent call last):")
print('  File "session.py", line 1421, in _do_call')
print("tensorflow.python.framework.errors_impl.ResourceExhaustedError: Graph execution error:")
print("Node: 'save/SaveV2_1'")
print(f"{model}/model.ckpt-100_temp/part-00001-of-00002.data-00000-of-00001.tempstate5; "
      "No space left on device")
sys.exit(1)
"""


def test_a_full_disk_at_any_save_is_one_write_error_without_the_traceback(tmp_path):
  """The ResourceExhaustedError's traceback read as memory, its cause 27 lines below in the log
  (helper-54's audit); at a save after the first, whose line was held, the traceback was still
  shown (helper-57's review)."""
  model = tmp_path / "m"
  shown = []
  with pytest.raises(errors.WriteError) as raised:
    launcher.run([sys.executable, "-c", _FULL_DISK_AT_A_SAVE, str(model),
                  f"--model_dir={model}"], tmp_path / "train.log", echo=shown.append)
  assert str(raised.value) == (f"cannot write {model}: No space left on device (full log: "
                               f"{tmp_path / 'train.log'})")
  assert not [line for line in shown[1:] if "Traceback" in line or "Error" in line], shown


def test_a_failed_write_the_trainer_went_on_from_does_not_hide_what_ended_it(tmp_path):
  # A warning naming a file of the model dir and "Permission denied" turned a later crash into
  # "cannot write", its traceback never shown (helper-57's review).
  model = tmp_path / "m"
  script = (f"print('W1122 x.py:1] {model}/events: Permission denied (retrying elsewhere)', "
            "flush=True)\nraise ValueError('the real cause')")
  shown = []
  assert launcher.run([sys.executable, "-c", script, f"--model_dir={model}"],
                      tmp_path / "train.log", echo=shown.append) == 1
  assert "  ValueError: the real cause" in shown


def test_a_traceback_the_run_went_on_from_is_shown_before_its_next_steps(tmp_path):
  # Held until the next line shown, it waited past every progress line, to the run's end
  # (helper-57's review). The command waits for the traceback to be shown; 3 if it never was.
  seen = tmp_path / "seen"
  script = textwrap.dedent(f"""
      import os, sys, time
      print("Traceback (most recent call last):")
      print('  File "x.py", line 1, in <module>')
      print("ValueError: survived")
      print("tf_loss[2.5][1]", flush=True)
      deadline = time.time() + 20
      while not os.path.exists({str(seen)!r}) and time.time() < deadline:
        time.sleep(0.05)
      sys.exit(0 if os.path.exists({str(seen)!r}) else 3)
      """)

  def echo(line):
    if line == "  ValueError: survived":  # (not the command's line, which holds it too)
      seen.touch()
  assert launcher.run([sys.executable, "-c", script], tmp_path / "train.log", echo=echo) == 0
