"""The completion engine installed on a Python newer than 3.11, as a user installs it there.

TensorFlow 2.15 has no wheels past Python 3.11, so `pip install` on 3.12+ installs the engine alone
(setup.py's markers): the shipped model, NumPy 2, SentencePiece, pygls. Here a real venv of the
newest Python on PATH gets this checkout by `pip install` (its dependencies from the package
registry, as bootstrap.sh's come), and its `code-t5` must complete the same lines as this venv's,
answer an editor over LSP, and refuse the training stack's commands in one line before writing
anything. Skipped where no Python 3.12+ is found (CI's machines have pyenv's).
"""

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from code_t5 import test_utils

REPO = pathlib.Path(__file__).resolve().parent.parent
NEWER = ("python3.14", "python3.13", "python3.12")
# What setup.py builds from: the package, its C sources, the shim, the pins it reads.
SOURCES = ("setup.py", "code_t5", "gin_configs", "code_t5_compat.py", "code_t5_compat.pth",
           "code_t5_console.py", "requirements")
DEV_FILE = next((REPO / "dataset-dev").rglob("main_*.py"))  # a standard-library file of dataset-dev


def _newer_python():
  """The newest Python 3.12+ that can make a venv, or None: $CODE_T5_NEWER_PYTHON, else one on
  PATH, else one of pyenv's installed versions (its shims run only the versions it was told to)."""
  pyenv = pathlib.Path(os.environ.get("PYENV_ROOT", pathlib.Path.home() / ".pyenv")) / "versions"
  candidates = [os.environ.get("CODE_T5_NEWER_PYTHON")]
  for name in NEWER:
    candidates.append(shutil.which(name))
    candidates.extend(str(path) for path in sorted(pyenv.glob(f"{name[6:]}.*/bin/{name}"),
                                                   reverse=True))
  for path in filter(None, candidates):
    if subprocess.run([path, "-c", "import ensurepip, venv"],
                      capture_output=True).returncode == 0:
      return path
  return None


@pytest.fixture(scope="module")
def newer(tmp_path_factory) -> pathlib.Path:
  """The bin/ folder of a venv of that Python with this checkout installed by plain pip."""
  python = _newer_python()
  if python is None:
    pytest.skip("no Python 3.12+ found (pyenv install 3.13, or CODE_T5_NEWER_PYTHON=...)")
  work = tmp_path_factory.mktemp("newer_python")
  source = work / "code_t5"
  source.mkdir()
  for name in SOURCES:  # a copy: pip's build writes build/ and *.egg-info into its source
    if (REPO / name).is_dir():
      shutil.copytree(REPO / name, source / name,
                      ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    else:
      shutil.copy2(REPO / name, source / name)
  venv = work / "venv"
  subprocess.run([python, "-m", "venv", str(venv)], check=True)
  install = subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet",
                            "--disable-pip-version-check", str(source)],
                           capture_output=True, text=True, timeout=900)
  assert install.returncode == 0, install.stdout[-2000:] + install.stderr[-3000:]
  return venv / "bin"


def _run(command, cwd=None, **kwargs):
  return subprocess.run([str(part) for part in command], capture_output=True, text=True,
                        timeout=300, cwd=cwd, **kwargs)


def test_it_installs_the_engine_alone(newer):
  version = _run([newer / "python", "-c", "import sys; print(sys.version_info[:2])"])
  assert version.stdout.strip() != "(3, 11)"
  listed = _run([newer / "pip", "list", "--format=json", "--disable-pip-version-check"])
  installed = {package["name"].lower(): package["version"]
               for package in json.loads(listed.stdout)}
  assert "tensorflow" not in installed and "seqio-nightly" not in installed
  assert installed["numpy"].split(".")[0] == "2"
  assert installed["pygls"] == "2.1.1" and installed["pyflakes"] == "4.1.0"
  # `import code_t5` (and the .pth shim at every start) with nothing of the training stack.
  imported = _run([newer / "python", "-c",
                   "import sys, code_t5; print(sorted(m for m in sys.modules if m.split('.')[0] "
                   "in ('tensorflow', 'seqio', 'jax', 'gin')))"])
  assert imported.returncode == 0, imported.stderr[-2000:]
  assert imported.stdout.strip() == "[]"


def test_it_completes_the_lines_this_python_completes(newer, tmp_path):
  """`baseline --checkpoint` at dataset-dev's validation points: every line the full engine
  ranks, with its score, as here (NumPy 2's products, the newer Python's own tokenize)."""
  outputs = {}
  for name, command in (("here", [sys.executable, "-m", "code_t5.cli"]),
                        ("newer", [newer / "code-t5"])):
    outputs[name] = tmp_path / f"{name}.json"
    result = _run([*command, "baseline", "--root", REPO / "dataset-dev", "--max-files", "12",
                   "--checkpoint", "--rungs", "+similar", "--no-ngram-cache",
                   "--out", outputs[name]])
    assert result.returncode == 0, result.stderr[-3000:]
  here, there = (json.loads(outputs[name].read_text())["per_point"] for name in ("here", "newer"))
  assert len(here) == len(there) >= 40
  system = "engine:+similar"
  for point, other in zip(here, there):
    assert (point["path"], point["line"]) == (other["path"], other["line"])
    assert other["predictions"][system] == point["predictions"][system]
    assert other["scores"][system] == pytest.approx(point["scores"][system], abs=1e-4)


def _message(stream):
  header = stream.readline()
  match = re.fullmatch(rb"Content-Length: (\d+)\r\n", header)
  assert match, header
  while stream.readline() != b"\r\n":
    pass
  return json.loads(stream.read(int(match.group(1))))


def test_an_editor_gets_completions_over_lsp(newer, tmp_path):
  project = tmp_path / "project"
  project.mkdir()
  text = "import os\n\n\ndef main():\n    path = os.path.jo"
  (project / "sample.py").write_text(text)
  server = subprocess.Popen([newer / "code-t5", "lsp", "--top", "3", "--min-score=-inf"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
  try:
    def send(message):
      body = json.dumps({"jsonrpc": "2.0", **message}).encode()
      server.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
      server.stdin.flush()

    def answer(request_id):
      while True:
        message = _message(server.stdout)
        if message.get("id") == request_id and "method" not in message:
          return message

    uri = (project / "sample.py").as_uri()
    send({"id": 1, "method": "initialize",
          "params": {"processId": None, "rootUri": project.as_uri(), "capabilities": {}}})
    assert "completionProvider" in answer(1)["result"]["capabilities"]
    send({"method": "initialized", "params": {}})
    send({"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "python", "version": 1, "text": text}}})
    send({"id": 2, "method": "textDocument/completion",
          "params": {"textDocument": {"uri": uri},
                     "position": {"line": 4, "character": len("    path = os.path.jo")}}})
    labels = [item["label"] for item in answer(2)["result"]["items"]]
    assert labels and all(label.startswith("jo") for label in labels)
    assert labels[0].startswith("join(")
    send({"id": 3, "method": "shutdown"})
    answer(3)
    send({"method": "exit"})
    assert server.wait(timeout=30) == 0
  finally:
    if server.poll() is None:
      server.kill()
      server.wait()


@pytest.mark.parametrize("command", [["train"], ["eval"], ["prepare"], ["plot", "--model-dir", "m"],
                                     ["pack", test_utils.PRETRAINED, "--out", "packed"]])
def test_the_training_stacks_commands_say_so_in_one_line_and_write_nothing(newer, tmp_path,
                                                                          command):
  result = _run([newer / "code-t5", *command], cwd=tmp_path)
  assert result.returncode == 2
  message = result.stderr.strip()
  assert message.count("\n") == 0, message
  assert message.startswith(f"code-t5 {command[0]}: this command needs the training stack "
                            "(TensorFlow 2.15, seqio, Mesh TF), which this environment lacks: it "
                            "runs on Python 3.11 only")
  assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", [["baseline", "--checkpoint"], ["keystrokes"]])
def test_the_dev_dataset_s_default_is_said_to_come_with_the_checkout(newer, tmp_path, command):
  """A package pip installed holds no dataset-dev/ (the checkout does): without --root these
  commands named a folder inside site-packages (helper-40's audit)."""
  result = _run([newer / "code-t5", *command, "--out", "x.json"], cwd=tmp_path)
  assert result.returncode == 2
  assert result.stderr.strip() == (
      f"code-t5 {command[0]}: --root was not given, and its default, dataset-dev/, comes with the "
      "checkout, not with the installed package: give --root CHECKOUT/dataset-dev, or another "
      "folder that holds v3/")
  assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", ["complete", "baseline", "keystrokes"])
def test_a_model_dir_without_its_runtime_says_how_to_get_one(newer, tmp_path, command):
  """The engine loads a model's runtime (NumPy weights); writing one from a Mesh TF checkpoint
  takes TensorFlow, so a model dir without it is refused with what to run where, before any other
  work (`baseline` fitted its n-gram first: helper-40's audit)."""
  model = tmp_path / "model"
  shutil.copytree(test_utils.PRETRAINED, model, ignore=shutil.ignore_patterns("runtime"))
  arguments = {"complete": [f"{DEV_FILE}:3:1"],
               "baseline": ["--root", REPO / "dataset-dev", "--out", tmp_path / "x.json"],
               "keystrokes": ["--root", REPO / "dataset-dev", "--out", tmp_path / "x.json"]}
  result = _run([newer / "code-t5", command, "--checkpoint", model, *arguments[command]])
  assert result.returncode == 2
  assert result.stdout == ""
  message = result.stderr.strip()
  assert message.count("\n") == 0, message
  assert message.startswith(f"code-t5 {command}: --checkpoint {model} has no runtime of step ")
  assert f"`code-t5 pack {model} --out FOLDER`" in message
  assert "needs the training stack" in message
  assert sorted(path.name for path in tmp_path.iterdir()) == ["model"]
  assert not (model / "runtime").exists()


@pytest.mark.parametrize("script,arguments,needs", [
    ("import_torch_weights", ["weights.npz", "--like", test_utils.PRETRAINED, "--step", "1",
                              "--model-dir", "model"], "the training stack"),
    ("t5x_parity", [test_utils.PRETRAINED, "--t5x-src", "t5x", "--t5x-python", "python"],
     "the training stack"),
    ("train_torch", ["--texts", "texts.xz", "--vocab", "v.model", "--model", "mini:4:1e-3",
                     "--out", "out"], "PyTorch")])
def test_the_checkout_s_scripts_name_what_they_lack_in_one_line(newer, tmp_path, script,
                                                                arguments, needs):
  """The 3.11 and GPU tools of scripts/ run from the checkout with this venv's Python: each one
  that needs what the engine-only install lacks says so in one line (they ended in a
  ModuleNotFoundError traceback), and writes nothing."""
  result = _run([newer / "python", REPO / "scripts" / f"{script}.py", *arguments], cwd=tmp_path)
  assert result.returncode == 2
  message = result.stderr.strip()
  assert message.count("\n") == 0, message
  assert message.startswith(f"{script}.py needs {needs}"), message
  assert list(tmp_path.iterdir()) == []
