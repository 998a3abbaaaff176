"""What a command does with outputs it cannot write, an output that is not its own, closed or
full standard streams, and values no command can use: one line each, before the work, and
nothing of the user's replaced (code_t5/cli.py, processes.check_output_file; each case was a
traceback, a lost file or a wait in helper-33's audit)."""

import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

from code_t5 import cli
from code_t5 import test_utils
from code_t5.data import sources

_PNG = b"\x89PNG\r\n\x1a\n"
SOURCE = "import os\n\n\ndef main():\n    path = os.path."


def _code_t5(*args, **kwargs) -> subprocess.CompletedProcess:
  kwargs = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **kwargs}
  return subprocess.run([sys.executable, "-P", "-m", "code_t5.cli", *map(str, args)], text=True,
                        timeout=600, **kwargs)


def _one_line(capsys, *argv) -> str:
  assert cli.main([str(a) for a in argv]) == 2
  err = capsys.readouterr().err.strip()
  assert "\n" not in err and "Traceback" not in err, err
  return err


@pytest.fixture
def run_with_a_curve(tmp_path) -> pathlib.Path:
  run = tmp_path / "run"
  (run / "logs").mkdir(parents=True)
  (run / "logs" / "train_loss.tsv").write_text("".join(f"{s}\t{5 - s / 10}\n" for s in range(1, 9)))
  return run


def test_plot_replaces_an_earlier_curve_but_no_other_file_without_force(run_with_a_curve,
                                                                        tmp_path, capsys):
  """`plot --out a.py` wrote a PNG over the user's a.py."""
  mine = tmp_path / "a.py"
  mine.write_text("x = 1\n")
  assert _one_line(capsys, "plot", "--model-dir", run_with_a_curve, "--out", mine) == (
      f"code-t5 plot: --out {mine} exists: pass --force to replace it")
  assert mine.read_text() == "x = 1\n"
  curve = tmp_path / "loss.png"
  for _ in range(2):  # drawn, then drawn again over itself
    assert cli.main(["plot", "--model-dir", str(run_with_a_curve), "--out", str(curve)]) == 0
    assert curve.read_bytes().startswith(_PNG)
  assert cli.main(["plot", "--model-dir", str(run_with_a_curve), "--out", str(mine),
                   "--force"]) == 0
  assert mine.read_bytes().startswith(_PNG)
  capsys.readouterr()
  assert _one_line(capsys, "plot", "--model-dir", run_with_a_curve, "--out", tmp_path) == (
      f"code-t5 plot: --out {tmp_path} is a folder: give the path of a file")
  assert _one_line(capsys, "plot", "--model-dir", run_with_a_curve, "--out", mine / "x.png") == (
      f"code-t5 plot: cannot write the loss curve {mine / 'x.png'}: Not a directory: give "
      "another --out")


@pytest.mark.parametrize("command", [["baseline", "--max-files", "1"],
                                     ["keystrokes", "--max-files", "1"],
                                     ["vocab", "--root", sources.DEV_ROOT, "--size", "300"]])
def test_an_out_that_cannot_be_written_is_said_before_the_work(command, tmp_path, capsys):
  """baseline and keystrokes scored or typed for minutes, then ended in a traceback."""
  in_the_way = tmp_path / "a_file"
  in_the_way.write_text("")
  start = time.time()
  err = _one_line(capsys, *command, "--out", in_the_way / "results.json")
  what = "the vocabulary" if command[0] == "vocab" else "the results"
  assert err == (f"code-t5 {command[0]}: cannot write {what} {in_the_way / 'results.json'}: "
                 "Not a directory: give another --out")
  assert time.time() - start < 10  # before the work
  assert _one_line(capsys, *command, "--out", tmp_path, "--force") == (
      f"code-t5 {command[0]}: --out {tmp_path} is a folder: give the path of a file")


def test_complete_says_in_one_line_that_its_output_or_input_is_gone(tmp_path):
  source = tmp_path / "t.py"
  source.write_text(SOURCE)
  with open("/dev/full", "w") as full:
    result = _code_t5("complete", source, stdout=full)
  assert result.returncode == 1
  assert result.stderr.strip() == ("code-t5 complete: cannot write its output: No space left on "
                                   "device")
  result = _code_t5("complete", "-", stdin=subprocess.DEVNULL, close_fds=True,
                    preexec_fn=lambda: os.close(0))
  assert result.returncode == 2
  assert result.stderr.strip() == "code-t5 complete: stdin is closed: pipe the code in, or give FILE"


def test_lsp_with_a_closed_stdin_says_so(tmp_path):
  result = _code_t5("lsp", preexec_fn=lambda: os.close(0))
  assert result.returncode == 2
  assert result.stderr.strip() == ("code-t5 lsp: stdin or stdout is closed: an editor starts "
                                   "`code-t5 lsp` with a pipe on each")


@pytest.mark.parametrize("argv, says", [
    (["complete", "t.py", "--min-score", "nan"], "--min-score nan must be 1 or less"),
    (["export", "--checkpoint", test_utils.PRETRAINED, "--temperature", "nan"],
     "--temperature nan must be 0 (greedy) or more"),
    (["export", "--checkpoint", test_utils.PRETRAINED],
     "is the model shipped in the package, which export would write into: copy it"),
    (["eval", "--max-files", "2"], "--max-files needs --line-completion"),
    (["cache", "--output-cache-dir", "cache", "--min-shards", "0"],
     "--min-shards 0 must be 1 or more"),
    (["cache", "--output-cache-dir", "cache", "--gin-file", "missing.gin"],
     "--gin-file: Unable to open file: missing.gin"),
])
def test_a_value_no_command_can_use_is_one_line(argv, says, tmp_path, capsys, monkeypatch):
  """Each was accepted (nan gates showed nothing; a nan temperature failed inside Mesh TF's gin,
  said only in the log; --max-files was dropped; export wrote into the installed package), or a
  traceback (gin's missing file)."""
  monkeypatch.chdir(tmp_path)
  (tmp_path / "t.py").write_text(SOURCE)
  package = sorted(p.name for p in test_utils.PRETRAINED.iterdir())
  err = _one_line(capsys, *argv)
  assert says in err, err
  assert sorted(p.name for p in test_utils.PRETRAINED.iterdir()) == package


def test_ctrl_c_stops_vocab_at_once_and_leaves_nothing(tmp_path):
  """SentencePiece trains in C++: Ctrl-C waited until it returned (minutes on a large root)."""
  process = subprocess.Popen([sys.executable, "-P", "-m", "code_t5.cli", "vocab", "--root",
                              str(sources.DEV_ROOT), "--size", "2000", "--out",
                              str(tmp_path / "v.model")], stderr=subprocess.PIPE, text=True,
                             # As from a terminal: pytest-xdist's workers ignore SIGINT, and a
                             # child keeps that (Python then installs no KeyboardInterrupt).
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
  assert process.stderr.readline().startswith("training 2000 pieces")
  time.sleep(1)
  process.send_signal(signal.SIGINT)
  start = time.time()
  assert process.wait(timeout=60) == 130
  assert time.time() - start < 2
  assert list(tmp_path.iterdir()) == []


# Put in a `code-t5 pack` as PYTHONPATH's sitecustomize (which `site` imports at start-up): a
# library swallows a Ctrl-C (or SIGTERM) after the arguments are checked, as JAX's bare `except:`
# does in its docstring parsing while TensorFlow imports it (pack imports TensorFlow next).
_SWALLOWED_SIGNAL = """
import os, signal
import code_t5_compat

def swallowed_after_the_check(pack):
  check_out = pack._check_out
  def check_out_then_a_swallowed_signal(*args, **kwargs):
    check_out(*args, **kwargs)
    try:
      signal.raise_signal(getattr(signal, os.environ["SWALLOWED_SIGNAL"]))
    except:  # pylint: disable=bare-except
      pass
  pack._check_out = check_out_then_a_swallowed_signal

code_t5_compat.after_import("code_t5.convert.pack", swallowed_after_the_check)
"""


@pytest.mark.parametrize("name, status", [("SIGINT", 130), ("SIGTERM", 143)])
def test_a_signal_a_library_swallowed_still_stops_the_command(tmp_path, name, status):
  """helper-38's audit: a Ctrl-C or SIGTERM while TensorFlow was imported was lost (`pack`,
  `plot`, `convert` ran to their end, status 0) or became a traceback of half-imported JAX."""
  (tmp_path / "sitecustomize.py").write_text(_SWALLOWED_SIGNAL)
  out = tmp_path / "packed"
  stopped = subprocess.run(
      [sys.executable, "-P", "-m", "code_t5.cli", "pack", str(test_utils.PRETRAINED), "--out",
       str(out)], capture_output=True, text=True, timeout=240,
      env=dict(os.environ, PYTHONPATH=str(tmp_path), SWALLOWED_SIGNAL=name),
      preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
  assert stopped.returncode == status, stopped.stdout[-2000:] + stopped.stderr[-3000:]
  assert "Traceback" not in stopped.stderr, stopped.stderr[-3000:]
  assert not out.exists()  # stopped before the weights were read


def test_a_ctrl_c_while_the_command_starts_ends_it_without_a_traceback(tmp_path):
  """helper-38's audit: a Ctrl-C in a command's first ~0.1 s, while the console script imported
  code_t5.cli, printed a KeyboardInterrupt traceback. Here it comes as that import ends (a
  sitecustomize's hook on it)."""
  (tmp_path / "sitecustomize.py").write_text(
      "import signal, code_t5_compat\n"
      "code_t5_compat.after_import('code_t5.cli', lambda module: signal.raise_signal(signal.SIGINT))\n")
  command = pathlib.Path(sys.executable).parent / "code-t5"
  started = subprocess.run([str(command), "--help"], capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, PYTHONPATH=str(tmp_path)),
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
  assert started.returncode == 130, started.stdout[-2000:] + started.stderr[-3000:]
  assert started.stderr == "" and started.stdout == ""
