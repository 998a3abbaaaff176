"""`code-t5 lsp`: a real Neovim editing a buffer and asking for completion (the shipped model), then
the protocol over pipes to an in-process server: UTF-16 positions after an emoji, incremental
edits, bad input answered empty while the server keeps answering, cancelled and stale requests
answered without running the model, inline completion for clients that support it. Then bad bytes:
the framing rules of lsp.MessageReader, the real process written raw bytes on stdin (wrong
Content-Lengths, JSON-RPC's rules, the lifecycle, exit codes), and a fuzz of its input.

The pipe tests mostly use a recording stand-in for the model, so they can say exactly which text
and cursor the model was given, and hold a model call open to make requests stale.
"""

import ast
import io
import json
import os
import pathlib
import queue
import random
import re
import shutil
import subprocess
import sys
import threading
import time

import pytest

from code_t5 import cli
from code_t5 import test_utils
from code_t5.data import flcc
from code_t5.data import sources
from code_t5.engine import complete
from code_t5.engine import encoding_memo
from code_t5.engine import lsp
from code_t5.engine import repository

# The line filters are the engine's business (complete_test); here the server's Completer and the
# test's own are built from the same flags and must agree.
# Every line the engine ranks, not only those the shipped model's gate (its about.json) shows:
# these tests are about what reaches the editor.
SERVER_FLAGS = ["--checkpoint", str(test_utils.PRETRAINED), "--top", "3", "--min-score=-inf"]
NVIM_SCRIPT = pathlib.Path(__file__).with_name("nvim_lsp_complete.lua")
URI = "file:///work/sample.py"
TIMEOUT = 30
REQUEST_CANCELLED = -32800


def _utf16(text: str) -> int:
  return len(text.encode("utf-16-le")) // 2


@pytest.fixture(scope="module")
def completer() -> complete.Completer:
  """The shipped model, with the options `code-t5 lsp SERVER_FLAGS` gives its own Completer."""
  args = cli.build_parser().parse_args(["lsp", *SERVER_FLAGS])
  return complete.Completer(args.checkpoint, complete.options_from(args))


class Recorder:
  """A stand-in model: records each (text, cursor) and answers `lines` (texts, or
  complete.Candidate); with `gate`, a call waits for it (so requests can pile up behind it)."""

  def __init__(self, lines=("ab()", "", "ab", "ab()"), gate=None):
    self.lines, self.gate, self.fail = lines, gate, None
    self.repo = self.repository = None  # a Completer's --repo and its index: none
    self.calls = []
    self.started = threading.Semaphore(0)

  def complete_at(self, text, cursor, repository=None, path=""):
    del repository, path  # what the server passes along; the recorder completes alike
    self.calls.append((text, cursor))
    self.started.release()
    if self.gate:
      assert self.gate.wait(TIMEOUT)
    if self.fail:
      raise self.fail
    return complete.Completion(
        candidates=tuple(line if isinstance(line, complete.Candidate)
                         else complete.Candidate(line, -1.0) for line in self.lines),
        context_chars=cursor, truncated=False, ms=0.0)


class Client:
  """A minimal LSP client over two pipes to lsp.make_server(...) running in a thread."""

  def __init__(self, model, capabilities=None, top=None, root_uri=None, client_info=None):
    self.server = lsp.make_server(model, top)
    to_server, self._server_in = os.pipe()
    self._server_out, from_server = os.pipe()
    self._write_file = os.fdopen(self._server_in, "wb")
    self._server_stdout = os.fdopen(from_server, "wb")
    self._thread = threading.Thread(
        target=self.server.start_io, args=(os.fdopen(to_server, "rb"), self._server_stdout),
        daemon=True)
    self._thread.start()
    self._inbox = queue.Queue()
    threading.Thread(target=self._read, args=(os.fdopen(self._server_out, "rb"),),
                     daemon=True).start()
    self.responses, self.logs, self._next = {}, [], 0
    self.server_requests = []  # the server's requests to the client (not answered)
    result = self.call("initialize", {"processId": None, "rootUri": root_uri,
                                      "capabilities": capabilities or {},
                                      **({"clientInfo": client_info} if client_info else {})})
    self.capabilities = result["result"]["capabilities"]
    self.notify("initialized", {})

  def _read(self, stream):
    while True:
      header = stream.readline()
      if not header:
        return
      match = re.fullmatch(rb"Content-Length: (\d+)\r\n", header)
      if match:
        while stream.readline() not in (b"\r\n", b""):
          pass
        self._inbox.put(json.loads(stream.read(int(match.group(1)))))

  def send(self, message: dict) -> None:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
    self._write_file.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    self._write_file.flush()

  def notify(self, method, params):
    self.send({"method": method, "params": params})

  def request(self, method, params) -> int:
    self._next += 1
    self.send({"id": self._next, "method": method, "params": params})
    return self._next

  def response(self, request_id) -> dict:
    while request_id not in self.responses:
      message = self._inbox.get(timeout=TIMEOUT)
      if "id" in message and "method" not in message:
        self.responses[message["id"]] = message
      elif message.get("method") == "window/logMessage":
        self.logs.append(message["params"]["message"])
      elif "method" in message and "id" in message:
        self.server_requests.append(message)
    return self.responses.pop(request_id)

  def call(self, method, params) -> dict:
    return self.response(self.request(method, params))

  def complete(self, line, character, uri=URI, method="textDocument/completion"):
    return self.call(method, {"textDocument": {"uri": uri},
                              "position": {"line": line, "character": character},
                              **({"context": {"triggerKind": 1}}
                                 if method.endswith("inlineCompletion") else {})})

  def open(self, text, uri=URI):
    self.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "python", "version": 1, "text": text}})

  def change(self, changes, uri=URI, version=2):
    self.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                           "contentChanges": changes})

  def close(self):
    self._write_file.close()  # end of input: the server's loop ends
    self._thread.join(TIMEOUT)
    self._server_stdout.close()
    self.server.engine.close()
    assert not self._thread.is_alive()


@pytest.fixture
def connect():
  clients = []

  def make(model, **kwargs):
    clients.append(Client(model, **kwargs))
    return clients[-1]

  yield make
  for client in clients:
    client.close()


def _edit(start, end, text):
  return {"range": {"start": {"line": start[0], "character": start[1]},
                    "end": {"line": end[0], "character": end[1]}}, "text": text}


def _labels(reply):
  return [item["label"] for item in reply["result"]["items"]]


# ------------------------------------------------------------------------------------------------
# Neovim.


def _framed_messages(data: bytes) -> list:
  """The JSON-RPC messages of a byte stream that must hold nothing else."""
  messages = []
  while data:
    match = re.match(rb"Content-Length: (\d+)\r\n(?:[A-Za-z-]+: [^\r\n]*\r\n)*\r\n", data)
    assert match, f"not an LSP message on stdout: {data[:200]!r}"
    end = match.end() + int(match.group(1))
    messages.append(json.loads(data[match.end():end]))
    data = data[end:]
  return messages


@pytest.mark.skipif(shutil.which("nvim") is None,
                    reason="Neovim is not installed (nvim not on PATH; .ci/run installs Debian's "
                    "neovim package)")
def test_neovim_gets_the_models_lines_after_real_incremental_edits(completer, tmp_path):
  stdout_copy, report_path = tmp_path / "server_stdout.bin", tmp_path / "report.json"
  server = [sys.executable, "-m", "code_t5.cli", "lsp", *SERVER_FLAGS]
  # sh: the server's stdout goes to Neovim through tee, which keeps a copy to check.
  command = ["sh", "-c", '"$@" | tee "$0"', str(stdout_copy), *server]
  env = dict(os.environ, CODE_T5_LSP_CMD=json.dumps(command),
             CODE_T5_LSP_FILE=str(tmp_path / "sample.py"), CODE_T5_LSP_OUT=str(report_path),
             TF_CPP_MIN_LOG_LEVEL="3")
  for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
    env[name] = str(tmp_path / name.lower())  # lsp.log and any state stay in tmp_path
  result = subprocess.run(["nvim", "--headless", "-u", "NONE", "-i", "NONE",
                           "-c", f"luafile {NVIM_SCRIPT}"], env=env, capture_output=True,
                          text=True, timeout=240, stdin=subprocess.DEVNULL, check=False)
  logs = "\n".join(p.read_text(errors="replace")[-3000:]
                   for p in tmp_path.glob("xdg_*/**/lsp.log"))
  assert report_path.exists(), f"nvim wrote no report: {result.stderr[-2000:]}\n{logs}"
  report = json.loads(report_path.read_text())
  assert "error" not in report, f"{report['error']}\n{logs}"
  assert report["steps"] == ["initialized", "edited", "completed", "stopped"]

  lines, position = report["lines"], report["position"]
  assert lines[-1] == '        print("😀", f.rea'
  assert position == {"line": len(lines) - 1, "character": _utf16(lines[-1])}
  text = "\n".join(lines) + "\n"  # what Neovim's buffer holds ('eol' on)
  cursor = len(text) - 1
  expected = completer.complete_at(text, cursor)
  word = "rea"
  assert expected.completion, "the shipped model proposes nothing here: pick another line"
  response = report["response"]
  assert "err" not in response and "error" not in response, response
  result = response["result"]
  assert result["isIncomplete"] is True
  items = result["items"]
  assert items[0]["label"] == word + expected.completion  # the model's top line, first
  assert [item["label"] for item in items] == [word + c.text for c in expected.candidates
                                               if c.text][:3]
  assert [item["sortText"] for item in items] == sorted(item["sortText"] for item in items)
  for item in items:
    assert item["textEdit"] == {"newText": item["label"], "range": {
        "start": {"line": position["line"], "character": position["character"] - len(word)},
        "end": position}}
  assert report["outside"]["result"]["items"] == []
  assert report["again"] == response  # answered after the bad request, the same
  assert report["server_exit"] == {"code": 0, "signal": 0}
  assert "inlineCompletionProvider" not in report["server_capabilities"]  # 0.7 has none
  # Nothing but JSON-RPC on the server's stdout.
  replies = _framed_messages(stdout_copy.read_bytes())
  lists = [m["result"] for m in replies if isinstance(m.get("result"), dict)
           and "items" in m["result"]]
  assert len(lists) == 3 and lists[0]["items"] == items

  # The server's text after Neovim's own incremental didChange ranges is the buffer's: replay
  # exactly what the client sent to a server with a recording model.
  sent = [m["method"] for m in report["sent"]]
  assert sent[0] == "textDocument/didOpen" and "textDocument/didChange" in sent, sent
  ranges = [change["range"] for m in report["sent"] if m["method"] == "textDocument/didChange"
            for change in m["params"]["contentChanges"]]
  assert len(ranges) > 10  # incremental: a range per edit or burst of typed keys
  recorder = Recorder()
  client = Client(recorder)
  try:
    for message in report["sent"]:
      client.notify(message["method"], message["params"])
    client.complete(position["line"], position["character"], uri=report["sent"][0]["params"][
        "textDocument"]["uri"])
  finally:
    client.close()
  assert recorder.calls == [(text, cursor)]


# ------------------------------------------------------------------------------------------------
# The protocol over pipes.


def test_utf16_positions_and_incremental_edits_give_the_model_the_editors_text(connect):
  recorder = Recorder()
  client = connect(recorder, top=2)
  assert client.capabilities["positionEncoding"] == "utf-16"
  assert client.capabilities["textDocumentSync"]["change"] == 2  # incremental
  client.open('x = "😀"\nprint(x)\n')
  client.change([
      _edit((0, 8), (0, 8), " + 'ab'"),  # after the emoji: UTF-16 column 8 is character 7
      _edit((1, 0), (2, 0), "def f(😀, y):\n    return y.up"),  # across a line break
      _edit((0, 0), (0, 0), "# \x0c page 😀 \u2028 break\n"),  # LSP lines: \x0c, U+2028 in-line
      _edit((1, 15), (1, 15), "!"),  # the end of old line 0: UTF-16 column 15, character 14
  ])
  text = "# \x0c page 😀 \u2028 break\nx = \"😀\" + 'ab'!\ndef f(😀, y):\n    return y.up"
  line = text.splitlines()[-1]  # no \x0c or U+2028 on this line
  reply = client.complete(3, _utf16(line))
  assert recorder.calls == [(text, len(text))]
  assert _labels(reply) == ["upab()", "upab"]  # "" dropped, repeats dropped, top 2
  item = reply["result"]["items"][0]
  assert item["textEdit"]["range"] == {"start": {"line": 3, "character": 13},
                                       "end": {"line": 3, "character": 15}}
  assert item["sortText"] < reply["result"]["items"][1]["sortText"]
  assert (item["kind"], item["insertTextFormat"], item["filterText"]) == (1, 1, "upab()")

  # A cursor after an emoji on its own line, and a word of non-ASCII letters.
  line = "    s = '😀' + émoji"
  client.change([_edit((3, 0), (3, 100), line)], version=3)  # the end clamped to the line's
  reply = client.complete(3, _utf16(line))
  text = text.rsplit("\n", 1)[0] + "\n" + line
  assert recorder.calls[-1] == (text, len(text))
  assert (_utf16(line), len(line)) == (20, 19)
  assert reply["result"]["items"][0]["textEdit"] == {
      "newText": "émojiab()", "range": {"start": {"line": 3, "character": 15},
                                        "end": {"line": 3, "character": 20}}}
  # CRLF and CR line ends count as one break; a full-text change replaces everything.
  client.change([{"text": "a\r\nb\rc = 😀"}], version=4)
  client.complete(2, 6)
  assert recorder.calls[-1] == ("a\r\nb\rc = 😀", len("a\r\nb\rc = 😀"))


@pytest.mark.parametrize("encoding, units", [("utf-8", 4), ("utf-32", 1)])
def test_a_negotiated_position_encoding_is_used(connect, encoding, units):
  """Neovim 0.10+ offers utf-8 first; pygls takes the client's first choice."""
  recorder = Recorder()
  client = connect(recorder, capabilities={"general": {"positionEncodings": [encoding]}})
  assert client.capabilities["positionEncoding"] == encoding
  client.open("s = '😀'\nt = s.up")
  client.change([_edit((0, 5 + units), (0, 5 + units), " + 'é'")])  # right after the emoji
  reply = client.complete(1, 8)
  assert recorder.calls == [("s = '😀 + 'é''\nt = s.up", 22)]
  assert reply["result"]["items"][0]["textEdit"]["range"]["start"] == {"line": 1, "character": 6}


def test_bad_input_is_answered_empty_and_the_server_keeps_answering(connect):
  recorder = Recorder()
  client = connect(recorder)
  client.open("import os\nos.pa")
  empty = {"isIncomplete": True, "items": []}
  assert client.complete(0, 0, uri="file:///not/open.py")["result"] == empty
  assert client.complete(5, 0)["result"] == empty  # past the last line
  client.change([_edit((0, 0), (0, 0), "#")], uri="file:///not/open.py")
  client.notify("textDocument/didChange", {"nonsense": True})
  bad = client.call("textDocument/completion", {"textDocument": {"uri": URI}})
  assert bad["error"]["code"] == -32602  # invalid params (from pygls), not a dead server
  recorder.fail = RuntimeError("the model broke\nbadly")
  assert client.complete(1, 5)["result"] == empty
  recorder.fail = None
  client.complete(1, 4)  # another point: not the cached one
  assert _labels(client.complete(1, 5)) == ["paab()", "paab"]
  assert recorder.calls == [("import os\nos.pa", 15), ("import os\nos.pa", 14),
                            ("import os\nos.pa", 15)]
  client.notify("textDocument/didClose", {"textDocument": {"uri": URI}})
  assert client.complete(1, 5)["result"] == empty  # closed: no longer known
  assert len(recorder.calls) == 3
  logs = "\n".join(client.logs)
  for expected in ("completion in file:///not/open.py, which is not open",
                   "line 5 is outside the document (2 lines)",
                   "didChange for file:///not/open.py, which is not open",
                   "the model failed at offset 15: RuntimeError: the model broke badly",
                   f"completion in {URI}, which is not open"):
    assert expected in logs
  assert all("\n" not in log for log in client.logs)


def test_a_character_past_a_line_s_end_is_its_end_and_a_huge_word_no_point(connect):
  """The LSP: a character past the line's length defaults back to it (it was answered empty); a
  run of 300,000 letters before the cursor was repeated in every item (900 kB of JSON)."""
  recorder = Recorder()
  client = connect(recorder)
  client.open("import os\nos.pa")
  assert _labels(client.complete(1, 50)) == _labels(client.complete(1, 5)) == ["paab()", "paab"]
  assert recorder.calls == [("import os\nos.pa", 15)]  # one point, asked twice
  client.open("x = " + "a" * 300_000, uri="file:///work/long.py")
  assert client.complete(0, 300_004, uri="file:///work/long.py")["result"]["items"] == []
  assert len(recorder.calls) == 1
  assert (f"code-t5: completion at 0:300004 of file:///work/long.py: the word before the cursor "
          f"is over {lsp.MAX_WORD_CHARS} characters long: answered empty") in client.logs


def test_an_answer_is_not_reused_once_the_workspace_changed(completer, connect, tmp_path):
  """The same text and cursor after another file's save (or the index built, or a document
  closed) were answered from the model call before it, which had not read that file
  (helper-37's audit). A closed document's text leaves the index: the file on disk is read again
  (a client opening thousands of files no disk holds kept them all)."""
  (tmp_path / "a.py").write_text("x = 1\n")
  recorder = Recorder()
  # What indexing the workspace reads of the model: its tokenizer, and no --repo of its own.
  recorder.tokenizer, recorder.repository = completer.tokenizer, None
  client = connect(recorder, root_uri=tmp_path.as_uri())
  test_utils.wait_for(lambda: client.server.engine.repository is not None, "the index", 30)
  uri = (tmp_path / "a.py").as_uri()
  client.open("import os\nos.pa", uri=uri)
  client.complete(1, 5, uri=uri)
  client.complete(1, 5, uri=uri)
  assert len(recorder.calls) == 1  # asked twice, nothing changed
  other = (tmp_path / "b.py").as_uri()
  client.notify("textDocument/didSave", {"textDocument": {"uri": other},
                                         "text": "def compute_the_zebra(): pass\n"})
  client.complete(1, 5, uri=uri)
  assert len(recorder.calls) == 2
  index = client.server.engine.repository
  assert index.files == 2
  client.open("def only_in_the_editor(): pass\n", uri=(tmp_path / "c.py").as_uri())
  client.complete(1, 5, uri=uri)  # (a request after a notification: it was handled)
  assert index.files == 3
  client.notify("textDocument/didClose", {"textDocument": {"uri": (tmp_path / "c.py").as_uri()}})
  client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
  client.complete(1, 5, uri=other)
  assert index.files == 2  # c.py gone; a.py as on disk
  assert index._digests["a.py"] == repository._digest("x = 1\n")  # pylint: disable=protected-access


def test_an_open_crlf_document_is_its_files_copy_as_the_disk_gives_it(completer, connect,
                                                                      tmp_path):
  """Added as the editor sent it, an open CRLF file's "\r"s reached the copy cache and similar
  code, which offered them in the project's other files: 5 of 10 best lines there changed while
  it was open (helper-56's audit). Now it is the index's copy as the disk's was: nothing is built
  again."""
  crlf = "def scale(x):\r\n    return x * 2\r\n"
  (tmp_path / "a.py").write_bytes(crlf.encode())
  recorder = Recorder()
  recorder.tokenizer, recorder.repository = completer.tokenizer, None
  client = connect(recorder, root_uri=tmp_path.as_uri())
  test_utils.wait_for(lambda: client.server.engine.repository is not None, "the index", 30)
  index = client.server.engine.repository
  as_read = {"a.py": repository._digest(crlf.replace("\r", ""))}  # pylint: disable=protected-access
  assert index._digests == as_read  # pylint: disable=protected-access
  uri = (tmp_path / "a.py").as_uri()
  client.open(crlf, uri=uri)
  client.complete(1, 4, uri=uri)  # (a request after a notification: it was handled)
  assert index._digests == as_read  # pylint: disable=protected-access


def test_files_changed_on_disk_are_read_again_where_the_client_watches_them(completer, connect,
                                                                           tmp_path):
  """A file deleted on disk stayed in the workspace index until the server restarted, and one
  created there was never read (helper-37's audit): the server asks a client that can watch
  files to watch the workspace's *.py, and reads each one it is told of again, unless the editor
  has it open."""
  (tmp_path / "a.py").write_text("x = 1\n")
  (tmp_path / "b.py").write_text("y = 2\n")
  recorder = Recorder()
  recorder.tokenizer, recorder.repository = completer.tokenizer, None
  client = connect(recorder, root_uri=tmp_path.as_uri(), capabilities={
      "workspace": {"didChangeWatchedFiles": {"dynamicRegistration": True}}})
  test_utils.wait_for(lambda: client.server.engine.repository is not None, "the index", 30)
  index = client.server.engine.repository
  opened = (tmp_path / "a.py").as_uri()
  client.open("import os\nos.pa", uri=opened)
  client.complete(1, 5, uri=opened)  # (a request after the notifications: they were handled)
  (registration,) = [r for r in client.server_requests if r["method"] == "client/registerCapability"]
  (watch,) = registration["params"]["registrations"]
  assert watch["method"] == "workspace/didChangeWatchedFiles"
  assert watch["registerOptions"]["watchers"] == [{"globPattern": "**/*.py"}]
  (tmp_path / "b.py").unlink()
  (tmp_path / "c.py").write_text("z = 3\n")
  (tmp_path / "a.py").unlink()  # open in the editor: its text stays
  client.notify("workspace/didChangeWatchedFiles", {"changes": [
      {"uri": (tmp_path / name).as_uri(), "type": kind}
      for name, kind in (("b.py", 3), ("c.py", 1), ("a.py", 3))]})
  test_utils.wait_for(lambda: "c.py" in index._digests, "c.py read", 30)  # pylint: disable=protected-access
  assert sorted(index._digests) == ["a.py", "c.py"]  # pylint: disable=protected-access
  assert index._digests["a.py"] == repository._digest("import os\nos.pa")  # pylint: disable=protected-access


def _digests(index):
  return dict(index._digests)  # pylint: disable=protected-access


def test_files_changed_on_disk_are_read_again_where_the_client_watches_nothing(completer, connect,
                                                                               tmp_path,
                                                                               monkeypatch):
  """Neovim on Linux watches no files for a server (0.10 and later turn the capability off there;
  0.9 and earlier lack it): the index kept each file as first read until the server restarted,
  so a `git pull` or a branch switch left the old code in every completion. The server looks the
  workspace over itself for such a client, and asks it to watch nothing. The editor's text wins
  for a document it has open, however it spells the URI (Neovim leaves `+` and `@` as they are),
  and a file that became a link leaves the index, as the index leaves links out (helper-40's
  audit). Files are read again one at a time here (READ_AGAIN_SECONDS 0), the rest queued."""
  monkeypatch.setattr(repository, "DISK_POLL_SECONDS", 0.05)
  monkeypatch.setattr(repository, "READ_AGAIN_SECONDS", 0.0)
  root = tmp_path / "my+proj@2"
  (root / "pkg").mkdir(parents=True)
  for name, text in (("a.py", "x = 1\n"), ("b.py", "y = 2\n"), ("e.py", "e = 5\n"),
                     ("pkg/d.py", "w = 4\n")):
    (root / name).write_text(text)
  recorder = Recorder()
  recorder.tokenizer = completer.tokenizer
  client = connect(recorder, root_uri=root.as_uri())
  test_utils.wait_for(lambda: client.server.engine.repository is not None, "the index", 30)
  index = client.server.engine.repository
  opened = f"file://{root}/a.py"  # as Neovim spells it; pathlib's as_uri() escapes + and @
  assert opened != (root / "a.py").as_uri()
  client.open("import os\nos.pa", uri=opened)
  client.complete(1, 5, uri=opened)  # (a request after the notifications: they were handled)
  assert not [r for r in client.server_requests if r["method"] == "client/registerCapability"]
  (root / "b.py").unlink()
  (root / "c.py").write_text("z = 3\n")
  (root / "pkg" / "d.py").write_text("w = 'changed on disk'\n")
  (root / "a.py").write_text("x = 'open in the editor'\n")  # its text stays the editor's
  (root / "e.py").unlink()
  (root / "e.py").symlink_to(root / "c.py")
  expected = {"a.py": repository._digest("import os\nos.pa"),
              "c.py": repository._digest("z = 3\n"),
              "pkg/d.py": repository._digest("w = 'changed on disk'\n")}
  test_utils.wait_for(lambda: _digests(index) == expected, "the disk's changes read", 30)
  time.sleep(0.3)  # several looks more: nothing else changes
  assert _digests(index) == expected


@pytest.mark.parametrize("watches", [False, True])
def test_a_repo_given_at_start_is_the_workspace_whatever_the_client_names(completer, connect,
                                                                           tmp_path, monkeypatch,
                                                                           watches):
  """`lsp --repo DIR` indexed DIR as the server started and never again: a file saved in the
  editor, closed, or changed on disk stayed as first read, and the document's own file was not
  left out of the project it completed from. Now DIR is the workspace: the client's root (here
  another folder) is not indexed, and DIR's files follow the editor and the disk, also where the
  client watches files (its watchers cover its own folder, not DIR) and for a change made before
  the client connected (helper-40's audit)."""
  monkeypatch.setattr(repository, "DISK_POLL_SECONDS", 0.05)
  repo = tmp_path / "repo"
  repo.mkdir()
  (repo / "a.py").write_text("x = 1\n")
  (repo / "b.py").write_text("y = 2\n")
  recorder = Recorder()
  recorder.tokenizer, recorder.repo = completer.tokenizer, repo.resolve()
  recorder.repository = repository.Repository.of_folder(repo, completer.tokenizer)
  index = recorder.repository
  (repo / "a.py").write_text("x = 'changed before the client came'\n")
  elsewhere = tmp_path / "elsewhere"
  elsewhere.mkdir()
  (elsewhere / "e.py").write_text("e = 5\n")
  client = connect(recorder, root_uri=elsewhere.as_uri(), capabilities={
      "workspace": {"didChangeWatchedFiles": {"dynamicRegistration": watches}}})
  saved = (repo / "b.py").as_uri()
  client.notify("textDocument/didSave", {"textDocument": {"uri": saved},
                                         "text": "y = 'saved in the editor'\n"})
  (repo / "c.py").write_text("z = 3\n")
  expected = {"a.py": repository._digest("x = 'changed before the client came'\n"),
              "b.py": repository._digest("y = 'saved in the editor'\n"),
              "c.py": repository._digest("z = 3\n")}
  test_utils.wait_for(lambda: _digests(index) == expected, "the editor's and the disk's", 30)
  assert client.server.engine.path_of((repo / "a.py").as_uri()) == "a.py"


def test_where_the_index_stopped_at_its_limit_only_the_files_it_holds_are_looked_after(
    completer, connect, tmp_path, monkeypatch):
  """A workspace too large to index within its 10 s: a file past the limit that changed on disk
  was read in, and a branch switch read all of them (2,001 files: the next completion waited
  18 s; helper-40's audit)."""
  monkeypatch.setattr(repository, "DISK_POLL_SECONDS", 0.05)
  for name in ("a.py", "z.py"):
    (tmp_path / name).write_text("x = 1\n")
  index = repository.Repository(completer.tokenizer)
  index.add("a.py", "x = 1\n")
  status = (tmp_path / "a.py").stat()
  index.read_as["a.py"] = (status.st_mtime_ns, status.st_size)
  index.cut = True  # z.py was past the limit
  recorder = Recorder()
  recorder.tokenizer, recorder.repo, recorder.repository = completer.tokenizer, tmp_path, index
  connect(recorder, root_uri=tmp_path.as_uri())
  (tmp_path / "z.py").write_text("z = 'changed'\n")
  (tmp_path / "new.py").write_text("n = 'new'\n")
  (tmp_path / "a.py").write_text("x = 'changed'\n")
  test_utils.wait_for(lambda: _digests(index)["a.py"] == repository._digest("x = 'changed'\n"),  # pylint: disable=protected-access
                      "a.py read again", 30)
  time.sleep(0.3)
  assert sorted(_digests(index)) == ["a.py"]


def test_a_folder_too_slow_to_look_over_is_given_up_in_one_log_line(completer, connect, tmp_path,
                                                                     monkeypatch):
  monkeypatch.setattr(repository, "DISK_POLL_SECONDS", 0.01)
  monkeypatch.setattr(repository, "DISK_POLL_MAX_SECONDS", -1.0)  # every look over its time
  (tmp_path / "a.py").write_text("x = 1\n")
  recorder = Recorder()
  recorder.tokenizer = completer.tokenizer
  client = connect(recorder, root_uri=tmp_path.as_uri())
  test_utils.wait_for(lambda: client.server.engine.repository is not None, "the index", 30)

  def given_up():
    client.complete(0, 0, uri=(tmp_path / "b.py").as_uri())  # (the logs sent meanwhile are read)
    return [line for line in client.logs if "for files changed on disk" in line]

  test_utils.wait_for(given_up, "the log line", 30)
  (line,) = given_up()
  assert line.startswith(f"code-t5: looking over {tmp_path.resolve()} for files changed on disk "
                         "took over -1 s 3 times in a row: it is not looked over again")


def test_cancelled_and_stale_requests_are_answered_without_running_the_model(connect):
  gate = threading.Event()
  recorder = Recorder(gate=gate)
  client = connect(recorder)
  for name in ("a", "b", "c"):
    client.open("x = foo.ba\n", uri=f"file:///{name}.py")

  def params(name, character):
    return {"textDocument": {"uri": f"file:///{name}.py"},
            "position": {"line": 0, "character": character}}

  running = client.request("textDocument/completion", params("a", 10))
  assert recorder.started.acquire(timeout=TIMEOUT)  # the model is busy with it
  overtaken = client.request("textDocument/completion", params("a", 9))
  newest = client.request("textDocument/completion", params("a", 8))
  cancelled = client.request("textDocument/completion", params("b", 10))
  edited = client.request("textDocument/completion", params("c", 10))
  client.change([_edit((0, 0), (0, 0), "y = 1\n")], uri="file:///c.py")
  client.notify("$/cancelRequest", {"id": cancelled})
  client.notify("$/cancelRequest", {"id": running})
  # Both cancellations are answered while the model still runs the first request.
  for request_id in (cancelled, running):
    assert client.response(request_id)["error"]["code"] == REQUEST_CANCELLED
  gate.set()
  empty = {"isIncomplete": True, "items": []}
  assert client.response(overtaken)["result"] == empty
  assert client.response(edited)["result"] == empty
  assert _labels(client.response(newest)) == ["ab()", "ab"]  # after "foo.": no word
  # The model ran for the first request and the newest one only.
  assert recorder.calls == [("x = foo.ba\n", 10), ("x = foo.ba\n", 8)]
  assert client.server.engine.model_calls == 2


def test_inline_completion_for_clients_that_support_it(connect):
  plain = connect(Recorder())
  assert "inlineCompletionProvider" not in plain.capabilities
  assert plain.complete(0, 0, method="textDocument/inlineCompletion")["error"]["code"] == -32601
  client = connect(Recorder(), capabilities={"textDocument": {"inlineCompletion": {}}})
  assert "inlineCompletionProvider" in client.capabilities
  client.open("def f(x):\n    return x.")
  reply = client.complete(1, 13, method="textDocument/inlineCompletion")
  assert reply["result"] == {"items": [{"insertText": "ab()"}, {"insertText": "ab"}]}
  assert _labels(client.complete(1, 13)) == ["ab()", "ab"]  # both kinds from one server


def test_a_line_that_closes_the_editors_closers_itself_replaces_them(connect):
  """At `def __eq__(|)` the shipped model writes `self, other):`: the item's range covers the ")"
  the editor put after the cursor (typed before it, the line would read `...other):)`). Ranges
  are in the client's units: the 😀 before the cursor is two UTF-16 code units."""
  lines = (complete.Candidate("self, other):", -1.0, replaces=1), complete.Candidate("x", -2.0))
  client = connect(Recorder(lines), capabilities={"textDocument": {"inlineCompletion": {}}})
  client.open("s = '😀'; def __eq__()\n")
  cursor = _utf16("s = '😀'; def __eq__(")
  items = client.complete(0, cursor)["result"]["items"]
  assert [(item["textEdit"]["newText"], item["textEdit"]["range"]["end"]["character"])
          for item in items] == [("self, other):", cursor + 1), ("x", cursor)]
  assert all(item["textEdit"]["range"]["start"]["character"] == cursor for item in items)
  inline = client.complete(0, cursor, method="textDocument/inlineCompletion")["result"]["items"]
  assert inline == [{"insertText": "self, other):",
                     "range": {"start": {"line": 0, "character": cursor},
                               "end": {"line": 0, "character": cursor + 1}}},
                    {"insertText": "x"}]


def test_neovim_is_not_offered_a_line_that_replaces_the_closers(connect):
  """Neovim's omnifunc inserts newText at the word and leaves the ")" after the cursor: at
  `def __eq__(|)` the item `self, other):` would read `def __eq__(self, other):)` (Neovim 0.7.2)."""
  lines = (complete.Candidate("self, other):", -1.0, replaces=1), complete.Candidate("x", -2.0))
  client = connect(Recorder(lines), client_info={"name": "Neovim", "version": "0.7.2"})
  client.open("def __eq__()\n")
  items = client.complete(0, 11)["result"]["items"]
  assert [(item["textEdit"]["newText"], item["sortText"]) for item in items] == [("x", "0000")]
  other = connect(Recorder(lines), client_info={"name": "Emacs", "version": "28.2"})
  other.open("def __eq__()\n")
  assert _labels(other.complete(0, 11)) == ["self, other):", "x"]


def test_a_neovim_completion_plugin_that_replaces_gets_the_lines_that_replace(connect):
  """nvim-cmp applies the item's whole range (tried: nvim-cmp 0.0.1 on Neovim 0.7.2 turned
  `def __eq__(|)` into `def __eq__(self, other):`); its cmp_nvim_lsp says insertReplaceSupport."""
  lines = (complete.Candidate("self, other):", -1.0, replaces=1), complete.Candidate("x", -2.0))
  plugin = {"textDocument": {"completion": {"completionItem": {"insertReplaceSupport": True,
                                                               "snippetSupport": True}}}}
  client = connect(Recorder(lines), capabilities=plugin,
                   client_info={"name": "Neovim", "version": "0.7.2"})
  client.open("def __eq__()\n")
  items = client.complete(0, 11)["result"]["items"]
  assert [(item["textEdit"]["newText"], item["textEdit"]["range"]["end"]["character"])
          for item in items] == [("self, other):", 12), ("x", 11)]
  plain = {"textDocument": {"completion": {"completionItem": {"snippetSupport": False}}}}
  omnifunc = connect(Recorder(lines), capabilities=plain,
                     client_info={"name": "Neovim", "version": "0.7.2"})
  omnifunc.open("def __eq__()\n")
  assert _labels(omnifunc.complete(0, 11)) == ["x"]


def test_a_neovim_completion_plugin_gets_items_over_its_whole_keyword(connect):
  """nvim-cmp matches what was typed from the start of its keyword (hyphens join words, numbers
  count) against filterText and drops what does not match: at `'utf-|'` items replacing only the
  word after the `-` were all dropped (helper-29, nvim-cmp 0.0.1: no menu at confidence 0.70).
  Neovim's omnifunc keeps the word: it inserts newText after Vim's keyword, which has no `-`."""
  lines = (complete.Candidate("16'", -1.0), complete.Candidate("8'", -2.0))
  plugin = {"textDocument": {"completion": {"completionItem": {"insertReplaceSupport": True}}}}
  neovim = {"name": "Neovim", "version": "0.7.2"}
  client = connect(Recorder(lines), capabilities=plugin, client_info=neovim)
  client.open("def name():\n    return 'utf-\n    x = 0.5\n    y = café\n")
  items = client.complete(1, len("    return 'utf-"))["result"]["items"]
  start = len("    return '")
  assert [(item["textEdit"]["newText"], item["filterText"],
           item["textEdit"]["range"]["start"]["character"]) for item in items] == [
               ("utf-16'", "utf-16'", start), ("utf-8'", "utf-8'", start)]
  numbers = client.complete(2, len("    x = 0.5"))["result"]["items"]
  assert numbers[0]["textEdit"]["newText"] == "0.516'"
  assert numbers[0]["textEdit"]["range"]["start"]["character"] == len("    x = ")
  # A word longer than nvim-cmp's keyword (a letter outside ASCII) stays the word.
  unicode = client.complete(3, len("    y = café"))["result"]["items"]
  assert unicode[0]["textEdit"]["newText"] == "café16'"
  omnifunc = connect(Recorder(lines), client_info=neovim)
  omnifunc.open("def name():\n    return 'utf-\n")
  plain = omnifunc.complete(1, len("    return 'utf-"))["result"]["items"]
  assert [(item["textEdit"]["newText"], item["textEdit"]["range"]["start"]["character"])
          for item in plain] == [("16'", start + 4), ("8'", start + 4)]


def test_the_shipped_model_over_pipes(completer, connect):
  client = connect(completer, top=3)
  text = "import os\n\n\ndef main():\n    path = os.path.jo"
  client.open(text)
  reply = client.complete(4, len("    path = os.path.jo"))
  expected = completer.complete_at(text, len(text))
  assert _labels(reply) == ["jo" + c.text for c in expected.candidates if c.text][:3]


# ------------------------------------------------------------------------------------------------
# Documents: edits as the LSP defines them, at the cost of what they touch.

LSP_BREAK = re.compile(r"\r\n|\r|\n")
UNITS = {"utf-16": ("utf-16-le", 2), "utf-8": ("utf-8", 1), "utf-32": ("utf-32-le", 4)}


def _reference_offset(text: str, line: int, character: int, encoding: str, clamp: bool):
  """The LSP's offset of a position, from its definition: lines end at \\r\\n, \\r or \\n; a
  character counts its code units in `encoding`; a position inside a character is after it."""
  lines = LSP_BREAK.split(text)
  if not 0 <= line < len(lines) or character < 0:
    if not clamp:
      return None
    if line < 0:
      return 0
    if line >= len(lines):
      return len(text)
  start = sum(len(l) + len(b) for l, b in zip(lines[:line], LSP_BREAK.findall(text)))
  codec, width = UNITS[encoding]
  units = 0
  for index, char in enumerate(lines[line]):
    if units >= character:
      return start + index
    units += len(char.encode(codec, "surrogatepass")) // width
  return start + len(lines[line]) if clamp or units >= character else None


def _reference_apply(text: str, changes, encoding: str) -> str:
  """Each change on the text the previous ones left (the range clamped, an inverted one empty)."""
  for where, new_text in changes:
    if where is None:
      text = new_text
      continue
    start = _reference_offset(text, where[0], where[1], encoding, clamp=True)
    end = max(start, _reference_offset(text, where[2], where[3], encoding, clamp=True))
    text = text[:start] + new_text + text[end:]
  return text


# Line breaks of all three kinds (and a \r and a \n that an edit may join), characters of 2, 3
# and 4 UTF-8 bytes and 2 UTF-16 units, a combining mark, a form feed and U+2028 (no LSP break).
EDIT_ALPHABET = ["a", "b", " ", "\n", "\r\n", "\r", "\U0001F600", "\U0001D518", "\u00e9",
                 "\u0301", "\u6f22", "\t", "\x0c", "\u2028"]


def test_a_documents_edits_give_the_text_the_lsp_defines():
  """Batches of changes in one apply (a multi-cursor edit), each range on the text the previous
  change left, positions anywhere (inside a character's code units, past a line's end, past the
  document, negative, inverted ranges), against the LSP's definition; 3,000 sequences."""
  rng = random.Random(11)
  for _ in range(3000):
    encoding = rng.choice(list(UNITS))
    text = test_utils.random_string(rng, EDIT_ALPHABET, 30)
    document, expected = lsp.Document(text), text
    for _ in range(rng.randrange(1, 5)):
      changes = []
      for _ in range(rng.randrange(1, 8)):
        if rng.random() < 0.05:
          changes.append((None, test_utils.random_string(rng, EDIT_ALPHABET, 20)))
          continue
        lines = expected.count("\n") + expected.count("\r") + 2
        where = tuple(rng.randrange(-1, lines) if i % 2 == 0 else rng.randrange(-1, 12)
                      for i in range(4))
        changes.append((where, test_utils.random_string(rng, EDIT_ALPHABET, 6)))
      expected = _reference_apply(expected, changes, encoding)
      document.apply(changes, encoding)
      assert document.text == expected, (text, changes, encoding)
      lines = LSP_BREAK.split(expected)
      assert document.line_count == len(lines)
      for line in range(-1, len(lines) + 1):
        if 0 <= line < len(lines):
          assert document.line(line) == lines[line]
        for character in (-1, 0, 1, 2, 3, 5, 40):
          for clamp in (False, True):
            assert document.offset(line, character, encoding, clamp) == _reference_offset(
                expected, line, character, encoding, clamp), (expected, line, character)


def test_many_changes_to_a_large_document_split_only_the_lines_they_touch(monkeypatch):
  """One didChange of 1,000 changes (1,000 cursors) to a 960 kB document: each change used to
  rebuild the text and find every line break in it again (13 s on the event loop)."""
  split = []
  real_split = lsp._split_lines  # pylint: disable=protected-access
  monkeypatch.setattr(lsp, "_split_lines", lambda text: split.append(len(text)) or
                      real_split(text))
  text = "x = 1  # some code here\n" * 40_000
  document = lsp.Document(text)
  changes = [((i, 0, i, 0), "y") for i in range(1000)]
  # Two lines joined by a \r, which a \n inserted after it makes a \r\n: still two lines.
  changes += [((1000, 1, 1001, 4), "\r"), ((1001, 0, 1001, 0), "\n")]
  document.apply(changes)
  line = "x = 1  # some code here\n"
  expected = ("y" + line) * 1000 + "x\r\n1  # some code here\n" + line * 38_998
  assert document.text == expected
  assert document.line_count == 40_001
  assert (document.line(999), document.line(1000), document.line(1001)) == (
      "yx = 1  # some code here", "x", "1  # some code here")
  assert document.offset(39_999, 3) == _reference_offset(expected, 39_999, 3, "utf-16", False)
  # The document's line breaks were found once (when the first change came), then only in the
  # lines the changes touched.
  assert split[0] == len(text) and sum(split[1:]) < 100 * len(changes)


def test_a_position_inside_a_character_is_after_it(connect):
  """The items replace the word up to the cursor, which such a position puts after the character:
  their range starts and ends in the document (it used to start at -1: a JSON-RPC Internal
  Error with a traceback)."""
  for encoding, text, character, cursor, end in [("utf-16", "\U0001D518\U0001D518", 3, 2, 4),
                                                 ("utf-8", "\u00e9\u00e9", 3, 2, 4),
                                                 ("utf-8", "x = \u6f22", 5, 5, 7)]:
    recorder = Recorder()
    client = connect(recorder, capabilities={"general": {"positionEncodings": [encoding]}})
    client.open(text)
    reply = client.complete(0, character)
    assert recorder.calls == [(text, cursor)]
    word = text[:cursor].rsplit(" ", 1)[-1]
    codec, width = UNITS[encoding]
    start = end - len(word.encode(codec)) // width
    assert [item["textEdit"] for item in reply["result"]["items"]] == [
        {"newText": word + line, "range": {"start": {"line": 0, "character": start},
                                           "end": {"line": 0, "character": end}}}
        for line in ("ab()", "ab")]
    assert start == (4 if text.startswith("x") else 0)


def test_a_position_past_a_one_line_document_counts_its_line_in_the_singular():
  with pytest.raises(ValueError, match=r"^line 3 is outside the document \(1 line\)$"):
    lsp.point_at(lsp.Document("import os"), 3, 0)


def test_the_word_before_the_cursor_after_a_long_run_of_word_characters():
  # A base64 literal on the cursor's line (the word scan was quadratic in the run: 5 s a request
  # at 40,000 characters, the event loop frozen meanwhile).
  line = 'DATA = "' + "A" * 200_000 + '" + os.pa'
  point = lsp.point_at(lsp.Document(f"import os\n{line}\n"), 1, len(line))
  assert (point.word, point.word_units, point.character) == ("pa", 2, len(line))
  # A word that long is completed by no line (every item would repeat it: helper-37's audit).
  with pytest.raises(ValueError, match=f"over {lsp.MAX_WORD_CHARS} characters long"):
    lsp.point_at(lsp.Document(line[:-len('" + os.pa')]), 0, 100_000)
  point = lsp.point_at(lsp.Document(line[:-len('" + os.pa')]), 0, 8 + lsp.MAX_WORD_CHARS)
  assert point.word == "A" * lsp.MAX_WORD_CHARS


def test_a_document_under_a_symlink_loop_is_completed_as_outside_the_workspace(completer,
                                                                            connect, tmp_path):
  # Resolving its path raised RuntimeError (Python 3.11), which the path lookup did not catch:
  # every completion in it was answered empty ("the model failed ... Symlink loop").
  (tmp_path / "lib.py").write_text("def helper(a):\n    return a\n")
  (tmp_path / "loopA").symlink_to(tmp_path / "loopB")
  (tmp_path / "loopB").symlink_to(tmp_path / "loopA")
  client = connect(completer, root_uri=tmp_path.as_uri())
  test_utils.wait_for(lambda: client.server.engine.repository is not None, "the index", 30)
  text = "import os\n\n\ndef main():\n    path = os.path.jo"
  inside, looped = (tmp_path / "main.py").as_uri(), (tmp_path / "loopA" / "main.py").as_uri()
  for uri in (inside, looped):
    client.open(text, uri=uri)
  assert client.server.engine.path_of(inside) == "main.py"
  assert client.server.engine.path_of(looped) == ""
  labels = _labels(client.complete(4, len("    path = os.path.jo"), uri=looped))
  expected = completer.complete_at(text, len(text), repository=client.server.engine.repository)
  assert labels and labels == ["jo" + c.text for c in expected.candidates if c.text]
  assert not [log for log in client.logs if "error" in log or "failed" in log], client.logs


def test_a_lone_surrogate_in_a_document_reads_as_a_replacement_character(completer, connect):
  # JSON's "\ud800" (VS Code sends one for such a buffer): the tokenizer takes no lone surrogate,
  # and every completion in the document was answered empty ("TypeError: not a string").
  document = lsp.Document("# \ud800\nx = '\udfff'")
  assert document.text == "# \ufffd\nx = '\ufffd'"
  document.apply([((1, 8, 1, 8), "b\ud801")], "utf-8")  # 3 UTF-8 bytes, as U+FFFD: after it
  assert document.text == "# \ufffd\nx = '\ufffdb\ufffd'"
  client = connect(completer, top=3)
  text = "# a bad character: \ud800\nimport os\n\n\ndef main():\n    path = os.path.jo"
  client.open(text)
  reply = client.complete(5, len("    path = os.path.jo"))
  clean = text.replace("\ud800", "\ufffd")
  expected = completer.complete_at(clean, len(clean))
  assert _labels(reply) == ["jo" + c.text for c in expected.candidates if c.text][:3]
  assert _labels(reply)
  assert (f"code-t5: {URI} holds a lone surrogate (U+D800 at character 19), "
                             "not Unicode text: the model reads U+FFFD in its place") in client.logs
  assert not [log for log in client.logs if "failed" in log], client.logs


def test_requests_without_params_and_cancels_of_no_request_are_answered_as_json_rpc_says(
    connect):
  client = connect(Recorder())
  client.open("import os\nos.pa")
  # JSON-RPC lets "params" be left out: a method the server does not know is Method not found,
  # with params or without (it was Internal Error without).
  for request_id, params in [("none", None), ("empty", {}), ("$", None)]:
    method = "$/unknownRequest" if request_id == "$" else "workspace/symbolz"
    client.send({"id": request_id, "method": method,
                 **({} if params is None else {"params": params})})
    assert client.response(request_id)["error"]["code"] == -32601, request_id
  client.send({"method": "workspace/unknownNotification"})  # no answer
  # A $/cancelRequest whose id cannot be a request's is dropped quietly (it was logged as an
  # error: "unhashable type: 'dict'").
  for bad_id in ({"a": 1}, [1], None, 1.5, True):
    client.notify("$/cancelRequest", {"id": bad_id})
  client.notify("$/cancelRequest", {})
  assert _labels(client.complete(1, 5)) == ["paab()", "paab"]
  assert not [log for log in client.logs if "cancel" in log or "error" in log], client.logs


def test_module_imports_only_the_standard_library_and_code_t5_at_top_level():
  """pygls, lsprotocol and the model load when the server starts, not at `code-t5 --help`."""
  tree = ast.parse(pathlib.Path(lsp.__file__).read_text())
  names = [alias.name for node in tree.body if isinstance(node, ast.Import)
           for alias in node.names]
  names += [node.module for node in tree.body if isinstance(node, ast.ImportFrom)]
  assert all(name.split(".")[0] in sys.stdlib_module_names or name.startswith("code_t5")
             for name in names), names


def test_a_bad_checkpoint_is_one_line_on_stderr_and_nothing_on_stdout(tmp_path):
  result = subprocess.run([sys.executable, "-m", "code_t5.cli", "lsp", "--checkpoint",
                           str(tmp_path / "missing")], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=120, check=False,
                          env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
  assert result.returncode == 2
  assert result.stdout == ""
  assert result.stderr.splitlines()[-1] == (
      f"code-t5 lsp: --checkpoint {tmp_path / 'missing'} is not a directory")


# ------------------------------------------------------------------------------------------------
# Framing, in process: the rules of lsp.MessageReader.


def _frame(body: bytes, length=None, name=b"Content-Length", eol=b"\r\n") -> bytes:
  """`body` framed as LSP sends it; `length` (bytes) replaces its real Content-Length."""
  length = str(len(body)).encode() if length is None else length
  return name + b": " + length + eol + eol + body


def _body(message: dict) -> bytes:
  return json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")


MAX_MESSAGE_BYTES = 64 << 20  # the server's limit (lsp.MAX_MESSAGE_BYTES)
_GOOD = {"jsonrpc": "2.0", "id": 1, "method": "m"}
_GOOD_BODY = json.dumps(_GOOD).encode()
_DEEP = b'{"jsonrpc": "2.0", "id": 7, "method": "m", "params": ' + b"[" * 50_000 + b"]" * 50_000


@pytest.mark.parametrize("stream, events", [
    (_frame(_GOOD_BODY), ["good"]),
    (_frame(_GOOD_BODY, name=b"content-length", eol=b"\n"), ["good"]),
    (_frame(_GOOD_BODY, name=b"Content-Type: application/vscode-jsonrpc\r\nCONTENT-LENGTH ",
            length=b" %d " % len(_GOOD_BODY)), ["good"]),
    (b"\r\n  \n", []),  # white space between messages is no message
    (_frame(_GOOD_BODY, length=b"10"), [-32700]),  # too small: the rest is skipped
    (_frame(b"{}", length=b"60"), [-32700]),  # too large: the next header is inside
    (_frame(b"{}", length=b"4"), [-32700]),  # too large: the body ends in the next header line
    (_frame(b"{}", length=b"0"), [-32700]),
    (_frame(b"{}", length=b"-5"), [-32700]),
    (_frame(b"{}", length=b"abc"), [-32700]),
    (_frame(b"{}", length=b""), [-32700]),
    (_frame(b"{}", length=b"1000000000000"), [-32700]),
    (_frame(b"{}", length=str(10**30).encode()), [-32700]),
    (_frame(b"{}", length=str(MAX_MESSAGE_BYTES + 1).encode()), [-32700]),
    (b"Content-Length: 3\r\n", [-32700]),  # a second Content-Length before the empty line
    (b"Content-Length: 3\r\nX: Content-Len", [-32700]),  # ... even not at a line's start
    (b"GET / HTTP/1.1\r\nHost: x\r\n\r\nabc", [-32700]),  # bytes before any Content-Length
    (_frame(b"{}", length=b"-5") + b"GET / HTTP/1.1\r\n\r\n", [-32700]),  # after a drop: its rest
    (_frame(b'{"a": "\xff"}'), [-32700]),  # not UTF-8
    (_frame(b"[" * 50_000), [-32700]),  # nested too deeply, and not JSON
    (_frame(_DEEP + b"}"), [(-32600, 7)]),  # nested too deeply: answered with its id
    (_frame(b"{" + _DEEP[1:].replace(b'"id": 7, ', b"") + b', "id": "x"}'), [(-32600, "x")]),
])
def test_message_reader_drops_bad_frames_and_reads_the_next_message(stream, events):
  """Each stream is followed by a well-framed message, which must be read intact."""
  reader = lsp.MessageReader(io.BytesIO(stream + _frame(_GOOD_BODY)))
  got = list(iter(reader.next, None))

  def summary(event):
    if isinstance(event, lsp.Refused):
      return event.code if event.id is None else (event.code, event.id)
    return "good" if event == lsp.Message(_GOOD) else event

  assert [summary(e) for e in got] == events + ["good"]
  assert all("\n" not in e.message for e in got if isinstance(e, lsp.Refused))


# ------------------------------------------------------------------------------------------------
# The real process, written raw bytes on stdin: framing, JSON-RPC's rules, the lifecycle.

PARSE_ERROR, INVALID_REQUEST, SERVER_NOT_INITIALIZED = -32700, -32600, -32002
INVALID_PARAMS = -32602
EMPTY = {"isIncomplete": True, "items": []}
# A probe: a completion in a document that is not open (answered empty, without a model call).
PROBE_PARAMS = {"textDocument": {"uri": "file:///not/open.py"},
                "position": {"line": 0, "character": 0}}
PROCESS_TIMEOUT = 20  # a reply that has not come by then does not come (the server fell silent)


class ServerProcess:
  """`code-t5 lsp SERVER_FLAGS` as a child process written raw bytes; its stdout is read as LSP
  messages, strictly (anything else fails the test), and its stderr goes to a file."""

  def __init__(self, tmp_path, command=(sys.executable, "-m", "code_t5.cli", "lsp", *SERVER_FLAGS)):
    self._stderr = tmp_path / f"server_stderr_{id(self)}.txt"
    with open(self._stderr, "wb") as stderr:
      self.process = subprocess.Popen(
          list(command), stdin=subprocess.PIPE,
          stdout=subprocess.PIPE, stderr=stderr, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    self._inbox = queue.Queue()
    threading.Thread(target=self._read, daemon=True).start()
    self.notifications, self.replies, self._probes = [], [], 0

  def _read(self):
    stdout = self.process.stdout
    try:
      while header := stdout.readline():
        match = re.fullmatch(rb"Content-Length: (\d+)\r\n", header)
        assert match, f"not an LSP header on stdout: {header!r}"
        while (line := stdout.readline()) != b"\r\n":
          assert re.fullmatch(rb"Content-Type: [^\r\n]*\r\n", line), line
        self._inbox.put(json.loads(stdout.read(int(match.group(1)))))
      self._inbox.put(None)
    except Exception as e:  # pylint: disable=broad-except  (failed in the test's thread)
      self._inbox.put(e)

  def stderr(self) -> str:
    return self._stderr.read_text(errors="replace")[-3000:]

  def write(self, data: bytes) -> None:
    self.process.stdin.write(data)
    self.process.stdin.flush()

  def send(self, method, params=None, request_id=None) -> None:
    message = {"method": method, **({} if params is None else {"params": params})}
    self.write(_frame(_body(message if request_id is None else {"id": request_id, **message})))

  def reply(self, timeout=PROCESS_TIMEOUT) -> dict:
    """The next response, also kept in .replies (notifications, such as window/logMessage, are
    kept in .notifications)."""
    while True:
      try:
        message = self._inbox.get(timeout=timeout)
      except queue.Empty:
        raise AssertionError(f"no reply in {timeout} s; stderr: {self.stderr()}") from None
      if isinstance(message, Exception):
        raise message
      assert message is not None, (f"the server ended (code {self.process.wait(TIMEOUT)}): "
                                   f"{self.stderr()}")
      if "method" not in message:
        assert message["jsonrpc"] == "2.0" and "id" in message, message
        assert ("result" in message) != ("error" in message), message
        if "error" in message:
          assert isinstance(message["error"]["code"], int), message
          assert isinstance(message["error"]["message"], str), message
        self.replies.append(message)
        return message
      self.notifications.append(message)

  def replies_until(self, request_id) -> list:
    """The responses up to and with the one to `request_id`."""
    replies = [self.reply()]
    while replies[-1]["id"] != request_id:
      replies.append(self.reply())
    return replies

  def call(self, method, params=None, request_id="call") -> dict:
    self.send(method, params, request_id)
    return self.replies_until(request_id)[-1]

  def after(self, data: bytes) -> list:
    """Writes `data` then a probe; the replies before the probe's (checked to be the normal one)."""
    self._probes += 1
    probe = f"probe-{self._probes}"
    self.write(data)
    self.send("textDocument/completion", PROBE_PARAMS, probe)
    replies = self.replies_until(probe)
    assert replies[-1].get("result") == EMPTY, (data[:200], replies[-1])
    return replies[:-1]

  def initialize(self) -> dict:
    reply = self.call("initialize", {"processId": None, "rootUri": None, "capabilities": {}},
                      "initialize")
    assert "capabilities" in reply["result"], reply
    self.send("initialized", {})
    return reply

  def exit(self) -> int:
    """Sends exit; the exit code (stdin stays open: exit alone must end the process)."""
    self.send("exit")
    try:
      return self.process.wait(PROCESS_TIMEOUT)
    except subprocess.TimeoutExpired:
      raise AssertionError(f"still running {PROCESS_TIMEOUT} s after exit") from None


@pytest.fixture
def spawn(tmp_path):
  processes = []

  def make() -> ServerProcess:
    processes.append(ServerProcess(tmp_path))
    return processes[-1]

  yield make
  for server in processes:
    if server.process.poll() is None:
      server.process.kill()
    server.process.wait(TIMEOUT)
    server.process.stdin.close()
    server.process.stdout.close()


def _errors(replies) -> list:
  return [(r["id"], r["error"]["code"]) if "error" in r else r for r in replies]


def test_process_resynchronises_after_a_wrong_content_length(spawn):
  """A wrong Content-Length loses its message (Parse error, id null), not the connection; other
  spellings of the header are served."""
  server = spawn()
  server.initialize()
  body = _body({"id": "lost", "method": "textDocument/completion", "params": PROBE_PARAMS})
  for name, data in [
      ("too small", _frame(body, length=b"%d" % (len(body) - 7))),
      ("too large: ends in the next header line", _frame(body, length=b"%d" % (len(body) + 5))),
      ("too large: swallows the next message", _frame(body, length=b"%d" % (len(body) + 300))),
      ("negative", _frame(body, length=b"-5")),
      ("not a number", _frame(body, length=b"abc")),
      ("empty", _frame(body, length=b"")),
      ("no Content-Length", _frame(body, name=b"Content-Type", length=b"text/plain")),
      ("not LSP", b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
  ]:
    assert _errors(server.after(data)) == [(None, PARSE_ERROR)], name
  served = {"jsonrpc": "2.0", "id": "lost", "result": EMPTY}
  # A second Content-Length before the empty line starts the message that is served.
  assert _errors(server.after(b"Content-Length: 3\r\n" + _frame(body))) == [
      (None, PARSE_ERROR), served]
  for name, data in [
      ("lower case", _frame(body, name=b"content-length")),
      ("LF only", _frame(body, eol=b"\n")),
      ("odd spacing, Content-Type first", _frame(
          body, name=b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nCONTENT-LENGTH",
          length=b"  %d  " % len(body))),
  ]:
    assert server.after(data) == [served], name
  assert server.call("shutdown")["result"] is None
  assert server.exit() == 0


def test_process_says_which_params_do_not_fit_and_logs_no_error_of_the_clients(spawn):
  """pygls answered "Invalid Params" alone, and wrote an ERROR to stderr for each such message
  (first ~50 lines of traceback, then one line), and for an unknown command: clients show a
  server's stderr as its errors."""
  server = spawn()
  server.initialize()
  server.send("textDocument/didOpen", {"textDocument": {"uri": 3}})
  reply = server.call("textDocument/completion",
                      {"textDocument": 5, "position": {"line": "one"}}, "bad")
  assert _errors([reply]) == [("bad", INVALID_PARAMS)]
  assert reply["error"]["message"] == (
      "Invalid Params: invalid value for type, expected str at $.params.textDocument.uri; "
      "invalid value for type, expected int at $.params.position.line; "
      "required field missing at $.params.position.character")
  reply = server.call("workspace/executeCommand", {"command": "nope", "arguments": []}, "cmd")
  assert _errors([reply]) == [("cmd", INVALID_PARAMS)]
  assert "'nope' is not defined" in reply["error"]["message"]
  assert server.call("shutdown")["result"] is None
  assert server.exit() == 0
  assert server.stderr() == ""


def test_process_refuses_a_content_length_over_the_limit_and_keeps_serving(spawn):
  server = spawn()
  server.initialize()
  body = _body({"id": "big", "method": "textDocument/completion", "params": PROBE_PARAMS})
  for length in (10**12, 10**30, MAX_MESSAGE_BYTES + 1):
    replies = server.after(_frame(body, length=str(length).encode()))
    assert _errors(replies) == [(None, PARSE_ERROR)], length
    assert f"Content-Length {length:,} is over the limit of 67,108,864 bytes" in (
        replies[0]["error"]["message"])
  assert lsp.MAX_MESSAGE_BYTES == MAX_MESSAGE_BYTES
  assert server.call("shutdown")["result"] is None
  assert server.exit() == 0


def test_process_answers_what_is_not_a_valid_request(spawn, completer):
  """Parse error for what is not UTF-8 JSON, Invalid Request (with the id where one can be read)
  for the rest, so no client waits forever; then the model still serves."""
  server = spawn()
  server.initialize()

  def request(request_id, **fields):
    return {"jsonrpc": "2.0", "id": request_id, "method": "textDocument/completion",
            "params": PROBE_PARAMS, **fields}

  deep = b"[" * 50_000 + b"]" * 50_000
  for name, body, expected in [
      ("invalid JSON", b'{"jsonrpc": "2.0", "id": 1, "method": ', [(None, PARSE_ERROR)]),
      ("not UTF-8", b'{"jsonrpc": "2.0", "id": 2, "method": "\xff"}', [(None, PARSE_ERROR)]),
      ("a batch", json.dumps([request(3), request(4), {"jsonrpc": "2.0", "method": "x"}]),
       [(3, INVALID_REQUEST), (4, INVALID_REQUEST)]),
      ("an empty batch", b"[]", [(None, INVALID_REQUEST)]),
      ("not an object", b'"hello"', [(None, INVALID_REQUEST)]),
      ("no jsonrpc", json.dumps({k: v for k, v in request(5).items() if k != "jsonrpc"}),
       [(5, INVALID_REQUEST)]),
      ("jsonrpc 1.0", json.dumps(request(6, jsonrpc="1.0")), [(6, INVALID_REQUEST)]),
      ("no method", json.dumps({"jsonrpc": "2.0", "id": 7}), [(7, INVALID_REQUEST)]),
      ("a method that is not a string", json.dumps(request(8, method=8)),
       [(8, INVALID_REQUEST)]),
      ("an id that is an object", json.dumps(request({"a": 1})), [(None, INVALID_REQUEST)]),
      ("params that are a number", json.dumps(request(9, params=9)), [(9, INVALID_REQUEST)]),
      ("a notification with an id", json.dumps(request(10, method="textDocument/didClose")),
       [(10, INVALID_REQUEST)]),
      ("50,000-deep params", b'{"jsonrpc": "2.0", "id": 11, "method": "textDocument/completion", '
       b'"params": ' + deep + b"}", [(11, INVALID_REQUEST)]),
      ("50,000-deep params, then the id", b'{"jsonrpc": "2.0", "method": "textDocument/'
       b'completion", "params": ' + deep + b', "id": "twelve"}', [("twelve", INVALID_REQUEST)]),
      ("50,000-deep params, not ended", b'{"jsonrpc": "2.0", "params": ' + deep + b', "id": 13',
       [(None, PARSE_ERROR)]),
  ]:
    body = body.encode() if isinstance(body, str) else body
    assert _errors(server.after(_frame(body))) == expected, name
  text = "import os\n\n\ndef main():\n    path = os.path.jo"
  server.send("textDocument/didOpen", {"textDocument": {
      "uri": URI, "languageId": "python", "version": 1, "text": text}})
  reply = server.call("textDocument/completion", {
      "textDocument": {"uri": URI}, "position": {"line": 4, "character": 21}})
  expected = completer.complete_at(text, len(text))
  assert _labels(reply) == ["jo" + c.text for c in expected.candidates if c.text][:3]
  assert server.call("shutdown")["result"] is None
  assert server.exit() == 0


def _initialized_server(process_id=None) -> subprocess.Popen:
  """`code-t5 lsp` as a child, initialized (its reply read), its stdin and stdout pipes open."""
  server = subprocess.Popen([sys.executable, "-m", "code_t5.cli", "lsp", *SERVER_FLAGS],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
  server.stdin.write(_frame(_body({"id": 1, "method": "initialize", "params": {
      "processId": process_id, "rootUri": None, "capabilities": {}}})))
  server.stdin.flush()
  length = int(re.fullmatch(rb"Content-Length: (\d+)\r\n", server.stdout.readline()).group(1))
  while server.stdout.readline() != b"\r\n":
    pass
  assert json.loads(server.stdout.read(length))["id"] == 1
  return server


def test_the_server_stops_when_its_client_is_gone(tmp_path):
  """helper-37's audit: the server ran on after initialize's processId had ended (the LSP asks it
  to exit), and after its output's reader had gone with stdin still open (each failed write
  logged, every request read and never answered)."""
  client = subprocess.Popen(["sleep", "600"])
  server = _initialized_server(client.pid)
  client.kill()  # (after initialize: a pid gone by then is no client's and is not watched)
  client.wait()
  assert server.wait(timeout=lsp.PARENT_POLL_SECONDS + TIMEOUT) == 1
  assert f"the client's process {client.pid} is gone: stopping" in server.stderr.read().decode()
  server.stdin.close()
  server = _initialized_server()
  server.stdout.close()
  for message in ({"method": "initialized", "params": {}},
                  {"method": "textDocument/didOpen", "params": {"textDocument": {
                      "uri": URI, "languageId": "python", "version": 1, "text": "import os\nos.pa"}}},
                  {"id": 2, "method": "textDocument/completion", "params": {
                      "textDocument": {"uri": URI}, "position": {"line": 1, "character": 5}}}):
    server.stdin.write(_frame(_body(message)))
  server.stdin.flush()
  assert server.wait(timeout=TIMEOUT) == 1
  stderr = server.stderr.read().decode()
  assert stderr.strip().splitlines()[-1].endswith("the client closed the server's output: "
                                                  "stopping"), stderr
  assert "Traceback" not in stderr and "Error sending data" not in stderr, stderr
  server.stdin.close()


def test_process_lifecycle_before_initialize_and_after_shutdown(spawn):
  """ServerNotInitialized before initialize (notifications dropped), Invalid Request for a second
  initialize and after shutdown, and exit's code 0 after shutdown."""
  server = spawn()
  server.send("textDocument/didOpen", {"textDocument": {
      "uri": URI, "languageId": "python", "version": 1, "text": "import os\nos.pa"}})
  params = {"textDocument": {"uri": URI}, "position": {"line": 1, "character": 5}}
  for method, request_params in [("textDocument/completion", params), ("shutdown", None)]:
    reply = server.call(method, request_params, request_id=method)
    assert _errors([reply]) == [(method, SERVER_NOT_INITIALIZED)]
  server.initialize()
  again = server.call("initialize", {"processId": None, "rootUri": None, "capabilities": {}},
                      "again")  # once per server, as the LSP says
  assert _errors([again]) == [("again", INVALID_REQUEST)]
  # The didOpen before initialize was dropped: the document is not open.
  assert server.call("textDocument/completion", params)["result"] == EMPTY
  assert any("which is not open" in n["params"]["message"] for n in server.notifications)
  assert server.call("shutdown", request_id="shutdown") == {
      "jsonrpc": "2.0", "id": "shutdown", "result": None}
  server.send("textDocument/didOpen", {"textDocument": {
      "uri": URI, "languageId": "python", "version": 1, "text": "x"}})
  for method, request_params in [("textDocument/completion", params), ("shutdown", None),
                                 ("initialize", {"capabilities": {}})]:
    reply = server.call(method, request_params, request_id=method)
    assert _errors([reply]) == [(method, INVALID_REQUEST)]
  assert server.exit() == 0


def test_process_exit_without_shutdown_ends_with_code_1(spawn):
  server = spawn()
  server.initialize()
  assert server.exit() == 1


def test_process_is_silent_about_a_reply_that_exit_left_nowhere_to_go(spawn):
  # A completion still pending at exit is answered as its task is cancelled, on the output that
  # exit has closed: pygls put "Error sending data (ValueError: write to closed file)" twice on
  # stderr, which clients show as errors.
  text = "import os\n\n\ndef main():\n    path = os.path.jo"
  server = spawn()
  server.initialize()
  server.send("textDocument/didOpen", {"textDocument": {"uri": URI, "languageId": "python",
                                                        "version": 1, "text": text}})
  # In one write: the exit is read while the model still completes.
  server.write(b"".join(_frame(_body(message)) for message in [
      {"id": "pending", "method": "textDocument/completion",
       "params": {"textDocument": {"uri": URI}, "position": {"line": 4, "character": 21}}},
      {"method": "exit"}]))
  assert server.process.wait(PROCESS_TIMEOUT) == 1  # (exit without shutdown)
  assert server.stderr() == ""


# `code-t5 lsp` whose model never answers.
_STUCK_MODEL = """
import sys, threading
from code_t5 import cli
from code_t5.engine import complete
class Stuck(complete.Completer):
  def complete_at(self, *args, **kwargs):
    print("the model call started", file=sys.stderr, flush=True)
    threading.Event().wait()
complete.Completer = Stuck
sys.exit(cli.main(sys.argv[1:]))
"""


def test_a_completion_running_when_the_client_leaves_does_not_keep_the_server(
    tmp_path):
  """The interpreter's exit joined the model's thread: after its editor was killed mid-request
  the server lived on for as long as the request took (helper-17's audit)."""
  server = ServerProcess(tmp_path, [sys.executable, "-c", _STUCK_MODEL, "lsp", *SERVER_FLAGS])
  try:
    server.initialize()
    server.send("textDocument/didOpen", {"textDocument": {
        "uri": URI, "languageId": "python", "version": 1, "text": "import os\nos.pa"}})
    server.send("textDocument/completion", {"textDocument": {"uri": URI},
                                            "position": {"line": 1, "character": 5}}, "stuck")
    test_utils.wait_for(lambda: "the model call started" in server.stderr(), "the model call")
    server.process.stdin.close()  # the editor is gone
    try:
      assert server.process.wait(PROCESS_TIMEOUT) == 0  # the end of its input
    except subprocess.TimeoutExpired:
      raise AssertionError(f"still running {PROCESS_TIMEOUT} s after its input ended") from None
  finally:
    server.process.kill()
    server.process.wait()


# ------------------------------------------------------------------------------------------------
# Fuzz: random bytes, headers and lengths streamed to the real process (as serve_test fuzzes
# `code-t5 serve`).

FUZZ_METHODS = ["textDocument/completion", "textDocument/inlineCompletion", "textDocument/didOpen",
                "textDocument/didChange", "textDocument/didClose", "$/cancelRequest", "initialize",
                "initialized", "$/setTrace", "workspace/symbol", "nonsense", ""]
FUZZ_URIS = [URI, "file:///b.py", "", "not a uri", "file:///%ff"]
FUZZ_TEXTS = ["import os\nos.pa", "def f(x):\n    return x.", "x = foo.ba\n"]
FUZZ_ALPHABET = ["a", " ", "\n", "\r", "\t", "é", "😀", "\ud800", "\udfff", "\x00", '"', "\\", "."]


def _random_string(rng: random.Random, max_length=40) -> str:
  return test_utils.random_string(rng, FUZZ_ALPHABET, max_length)


def _random_json(rng: random.Random, depth=0):
  return test_utils.random_json(rng, FUZZ_ALPHABET, depth)


def _random_position(rng: random.Random) -> dict:
  """Mostly inside FUZZ_TEXTS; else outside, negative, huge or not an integer."""
  return {"line": rng.choice([0, 1, 1, 1, 2, -1, 2**40]), "character": rng.choice(
      [0, 5, 5, 10, 13, 13, 100, -2] + [rng.choice([None, 1.5, "1", 2**70])])}


def _random_params(rng: random.Random, method: str):
  """Mostly the params `method` takes, with wrong or extreme values; sometimes any JSON."""
  if rng.random() < 0.15:
    return _random_json(rng)
  uri = rng.choice(FUZZ_URIS)
  text = rng.choice(FUZZ_TEXTS + [_random_string(rng, 200)])
  if method == "initialize":
    encodings = rng.sample(["utf-8", "utf-16", "utf-32", "ucs-2"], rng.randrange(3))
    return {"processId": rng.choice([None, 1, -1]), "rootUri": None, "capabilities": {
        "general": {"positionEncodings": encodings},
        "textDocument": rng.choice([{}, {"inlineCompletion": {}}])}}
  if method == "textDocument/didOpen":
    return {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}
  if method == "textDocument/didChange":
    start, end = _random_position(rng), _random_position(rng)
    change = rng.choice([{"text": text}, {"range": {"start": start, "end": end}, "text": text}])
    return {"textDocument": {"uri": uri, "version": rng.choice([2, None])},
            "contentChanges": [change] * rng.randrange(3)}
  if method == "$/cancelRequest":
    return {"id": rng.randrange(50)}
  return {"textDocument": {"uri": uri}, "position": _random_position(rng),
          "context": {"triggerKind": rng.choice([1, 2, 99])}}


def _random_message(rng: random.Random, depth=0) -> dict:
  method = rng.choice(FUZZ_METHODS)
  message = {"jsonrpc": rng.choice(["2.0"] * 9 + ["1.0"]), "method": method,
             "params": _random_params(rng, method)}
  if rng.random() < 0.6:
    message["id"] = rng.choice([rng.randrange(50), rng.randrange(50), str(rng.randrange(50)),
                                rng.randrange(-10**30, 10**30), None, 1.5,
                                _random_json(rng, depth + 3)])
  for key in [k for k in message if rng.random() < 0.05]:
    del message[key]
  return message


def _random_frame(rng: random.Random) -> bytes:
  """Mostly a message framed well; else a wrong length, header or line end, mutated or random
  bytes, a batch, deep nesting."""
  choice = rng.randrange(20)
  if choice == 0:
    return bytes(rng.randrange(256) for _ in range(rng.randrange(200)))
  if choice == 1:
    body = rng.choice([b"[" * 50_000, b'{"jsonrpc": "2.0", "id": 1, "params": ' + b"[" * 5000,
                       b"x" * (1 << 20), json.dumps([_random_message(rng)]).encode()])
  else:
    body = json.dumps(_random_message(rng), ensure_ascii=rng.random() < 0.5).encode(
        "utf-8", "surrogatepass")
  length = str(len(body)).encode()
  if rng.random() < 0.3:
    length = rng.choice([str(len(body) + rng.randint(-30, 30)).encode(), b"0", b"-5", b"abc",
                         b"", b"1e3", b"\xff", str(10**12).encode(), str(10**30).encode(),
                         str(MAX_MESSAGE_BYTES + 1).encode()])
  name = rng.choice([b"Content-Length"] * 6 + [b"content-length", b"CONTENT-LENGTH ",
                                                b"Content-Lenght", b"Content-Type"])
  eol = rng.choice([b"\r\n"] * 5 + [b"\n", b"\r", b""])
  headers = [name + b": " + length]
  if rng.random() < 0.2:
    headers.insert(rng.randrange(2), b"Content-Type: application/vscode-jsonrpc; charset=utf-8")
  if rng.random() < 0.05:
    headers.append(bytes(rng.randrange(256) for _ in range(rng.randrange(40))))
  frame = bytearray(eol.join(headers) + eol + eol + body)
  if rng.random() < 0.15:  # flip, drop or insert bytes anywhere
    for _ in range(rng.randrange(1, 4)):
      at = rng.randrange(len(frame) + 1)
      if rng.random() < 0.4:
        frame[at:at + 1] = bytes([rng.randrange(256)])
      elif rng.random() < 0.5:
        del frame[at:at + rng.randrange(1, 20)]
      else:
        frame[at:at] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 20)))
  return bytes(frame)


def test_process_fuzz_never_dies_answers_every_intact_request_and_still_serves(spawn):
  """Random frames, with well-formed requests among them; then a well-formed session ends it."""
  rng = random.Random(2024)
  server = spawn()
  stream, intact = [], []
  for case in range(1000):
    stream.append(_random_frame(rng))
    if rng.random() < 0.2 or case == 100:  # well-formed: answered whatever came before
      intact.append(f"intact-{case}")
      if rng.random() < 0.5:  # an intact document too, so that the model runs
        stream.append(_frame(_body({"method": "textDocument/didOpen", "params": _random_params(
            rng, "textDocument/didOpen")})))
      method = "initialize" if case == 100 else rng.choice(
          ["textDocument/completion", "textDocument/inlineCompletion", "nothing"])
      stream.append(_frame(_body({"id": intact[-1], "method": method,
                                  "params": _random_params(rng, method)})))
  server.write(b"".join(stream))
  assert server.process.poll() is None, server.stderr()
  # The stream's intact initialize (case 100) came first: a second one is refused.
  again = server.call("initialize", {"processId": None, "rootUri": None, "capabilities": {}},
                      "again")
  assert _errors([again]) == [("again", INVALID_REQUEST)]
  answered = lambda: [r["id"] for r in server.replies if r["id"] in intact]
  while len(set(answered())) < len(intact):  # completions may be answered after initialize
    server.reply()
  assert sorted(answered()) == sorted(intact)  # each once
  codes = {r["error"]["code"] for r in server.replies if "error" in r}
  assert {PARSE_ERROR, INVALID_REQUEST, SERVER_NOT_INITIALIZED}.issubset(codes), codes
  assert any(isinstance(r.get("result"), dict) and r["result"].get("items")
             for r in server.replies), "the model never ran"
  assert server.call("shutdown")["result"] is None
  assert server.exit() == 0


def test_a_burst_of_opened_files_prepares_the_index_once(completer, tmp_path):
  # A client opening many files at once: the model thread prepares the repository for the
  # newest request only (the first builds the whole index: 0.4 s in numpy).
  engine = lsp.Engine(completer)
  engine.root = tmp_path
  engine.repository = repository.Repository(completer.tokenizer)
  pieces = engine.repository.pieces
  busy = threading.Event()  # the model thread answers another request meanwhile
  engine._executor.submit(busy.wait, 60)  # pylint: disable=protected-access
  for k in range(30):
    engine.open((tmp_path / f"m{k}.py").as_uri(), f"value_{k} = compute({k})\n")
  busy.set()
  engine._executor.submit(lambda: None).result(timeout=60)  # pylint: disable=protected-access
  engine.close()
  assert pieces.builds == 1  # 30 if every open prepared
  assert engine.repository.files == 30


def test_opening_a_file_as_saved_builds_no_index_again(completer, tmp_path):
  # An editor opens a project's files as they are on disk: the indexes already hold that text,
  # so nothing is built again (each build of numpy's took ~0.4 s of the model thread); a save
  # that changes the text still rebuilds them once.
  engine = lsp.Engine(completer)
  engine.root = tmp_path
  engine.repository = repository.Repository(completer.tokenizer)
  texts = {f"m{k}.py": f"value_{k} = compute({k})\n" for k in range(3)}
  for path, text in texts.items():
    engine.repository.add(path, text)
  pieces = engine.repository.pieces
  engine.repository.prepare("m0.py")
  assert pieces.builds == 1
  for path, text in texts.items():
    engine.open((tmp_path / path).as_uri(), text)
  engine._executor.submit(lambda: None).result(timeout=60)  # pylint: disable=protected-access
  assert pieces.builds == 1
  engine.saved((tmp_path / "m1.py").as_uri(), "value_1 = compute_more(1)\n")
  engine._executor.submit(lambda: None).result(timeout=60)  # pylint: disable=protected-access
  engine.close()
  assert pieces.builds == 2


def test_an_open_document_too_large_for_the_index_on_disk_stays_out_of_it(completer, tmp_path):
  # The workspace leaves out files over repository.MAX_FILE_BYTES; an editor's open or saved
  # copy of one was encoded into the index on the server's event loop (0.7-0.9 s for 3.65 MB,
  # with no cancel read meanwhile: helper-46's audit). A file that grows past the limit leaves
  # the index, as it would on disk.
  engine = lsp.Engine(completer)
  engine.root = tmp_path
  engine.repository = repository.Repository(completer.tokenizer)
  large = "x = 1\n" * (repository.MAX_FILE_BYTES // 6 + 1)
  engine.open((tmp_path / "large.py").as_uri(), large)
  engine.open((tmp_path / "small.py").as_uri(), "y = 2\n")
  assert sorted(engine.repository._digests) == ["small.py"]  # pylint: disable=protected-access
  engine.saved((tmp_path / "small.py").as_uri(),
               "\u00e9 = 2\n" * (repository.MAX_FILE_BYTES // 7 + 1))
  engine._executor.submit(lambda: None).result(timeout=60)  # pylint: disable=protected-access
  engine.close()
  assert engine.repository.files == 0  # (its characters fit, its UTF-8 bytes do not)


def test_the_newest_opened_document_is_encoded_before_its_first_completion(tmp_path):
  # The workspace's pieces may come from disk (saved_pieces), which leaves the tokenizer's memo
  # without the file's parts: the model thread encodes the newest opened document while the user
  # has not asked yet (of a burst of opens only the newest), so its first completion encodes
  # about its cursor's line only.
  texts = [f.text for f in list(flcc.read_files(sources.DEV_ROOT, only_split="train"))[:12]]
  # A completer of its own: its tokenizer's memo is this test's alone (encoding_memo.shared).
  completer = complete.Completer(test_utils.PRETRAINED)
  memo = encoding_memo.shared(completer.tokenizer)
  engine = lsp.Engine(completer)
  busy = threading.Event()
  engine._executor.submit(busy.wait, 60)  # pylint: disable=protected-access
  for k, text in enumerate(texts):
    engine.open((tmp_path / f"m{k}.py").as_uri(), text)
  busy.set()
  engine._executor.submit(lambda: None).result(timeout=60)  # pylint: disable=protected-access
  engine.close()
  newest = texts[-1]
  assert memo.encoded_chars == sum(len(part) for part in set(encoding_memo.parts(newest)))
  before = memo.encoded_chars
  cursor = newest.index("\n", len(newest) // 2) + 1
  completer.complete_at(newest, cursor)
  assert memo.encoded_chars - before < 2000, (memo.encoded_chars - before, len(newest))


def test_the_workspace_folder_gives_completions_only_another_file_knows(completer, connect,
                                                                     tmp_path):
  # pkg/other.py holds the call; pkg/main.py, the open document, does not.
  (tmp_path / "pkg").mkdir()
  (tmp_path / "pkg" / "other.py").write_text(
      "from pkg import utils\n\n\ndef setup(config):\n"
      "    registry = utils.frobnicate_widget_registry(config, strict=True)\n")
  main = "from pkg import utils\n\n\ndef main(config):\n    table = utils.frob"
  (tmp_path / "pkg" / "main.py").write_text(main + "\n")
  uri = (tmp_path / "pkg" / "main.py").as_uri()
  client = connect(completer, root_uri=tmp_path.as_uri())
  client.open(main, uri=uri)
  test_utils.wait_for(lambda: client.server.engine.repository is not None, "the index", 30)
  assert client.server.engine.repository.files == 2
  assert client.server.engine.path_of(uri) == "pkg/main.py"
  labels = _labels(client.complete(4, len("    table = utils.frob"), uri=uri))
  assert labels[0] == "frobnicate_widget_registry(config, strict=True)"
  # A file saved meanwhile is read as saved; the server prepares the index for main.py, where the
  # user completes, before the next request (which then builds nothing).
  pieces = client.server.engine.repository.pieces
  built = pieces.builds
  client.notify("textDocument/didSave", {"textDocument": {"uri": (tmp_path / "pkg" / "new.py")
                                                          .as_uri()},
                                         "text": "value = compute_the_answer(42)\n"})
  test_utils.wait_for(lambda: pieces.builds == built + 1, "the index prepared after the save", 30)
  client.change([{"text": main[:-len("table = utils.frob")] + "value = compute_"}], uri=uri)
  labels = _labels(client.complete(4, len("    value = compute_"), uri=uri))
  assert labels[0] == "compute_the_answer(42)"
  assert pieces.builds == built + 1
