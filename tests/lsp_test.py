"""`code-t5 lsp`: a real Neovim editing a buffer and asking for completion (the shipped model), then
the protocol over pipes to an in-process server: UTF-16 positions after an emoji, incremental
edits, bad input answered empty while the server keeps answering, cancelled and stale requests
answered without running the model, inline completion for clients that support it.

The pipe tests mostly use a recording stand-in for the model, so they can say exactly which text
and cursor the model was given, and hold a model call open to make requests stale.
"""

import ast
import io
import json
import os
import pathlib
import queue
import re
import shutil
import subprocess
import sys
import threading

import pytest

from code_t5 import cli
from code_t5 import test_utils
from code_t5.engine import complete
from code_t5.engine import lsp

# The line filters are the engine's business (complete_test); here the server's Completer and the
# test's own are built from the same flags and must agree.
SERVER_FLAGS = ["--checkpoint", str(test_utils.PRETRAINED), "--top", "3"]
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
  """A stand-in model: records each (text, cursor) and answers `lines`; with `gate`, a call waits
  for it (so requests can pile up behind it)."""

  def __init__(self, lines=("ab()", "", "ab", "ab()"), gate=None):
    self.lines, self.gate, self.fail = lines, gate, None
    self.calls = []
    self.started = threading.Semaphore(0)

  def complete_at(self, text, cursor):
    self.calls.append((text, cursor))
    self.started.release()
    if self.gate:
      assert self.gate.wait(TIMEOUT)
    if self.fail:
      raise self.fail
    return complete.Completion(
        candidates=tuple(complete.Candidate(line, -1.0) for line in self.lines),
        context_chars=cursor, truncated=False, ms=0.0)


class Client:
  """A minimal LSP client over two pipes to lsp.make_server(...) running in a thread."""

  def __init__(self, model, capabilities=None, top=None):
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
    result = self.call("initialize", {"processId": None, "rootUri": None,
                                      "capabilities": capabilities or {}})
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
  assert client.complete(1, 6)["result"] == empty  # past the end of the line
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
                   "character 6 is outside line 1 (5 utf-16 code units)",
                   "didChange for file:///not/open.py, which is not open",
                   "the model failed at offset 15: RuntimeError: the model broke badly",
                   f"completion in {URI}, which is not open"):
    assert expected in logs
  assert all("\n" not in log for log in client.logs)


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


def test_the_shipped_model_over_pipes(completer, connect):
  client = connect(completer, top=3)
  text = "import os\n\n\ndef main():\n    path = os.path.jo"
  client.open(text)
  reply = client.complete(4, len("    path = os.path.jo"))
  expected = completer.complete_at(text, len(text))
  assert _labels(reply) == ["jo" + c.text for c in expected.candidates if c.text][:3]


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
