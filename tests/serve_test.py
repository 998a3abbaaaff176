"""`code-t5 serve` keeps answering whatever it is sent: fuzzed stdin lines and HTTP requests through
the real transports and a real tiny model (its runtime written once for the module), then `code-t5 serve`
processes fed the inputs that used to kill them, and a model dir copied without commands/.

Concurrent clients (8 at once, through the worker processes) get the replies one client gets,
and a worker that dies costs only its request. Other protocol behaviour (identical replies to
`complete`, one-line errors) is in complete_test.
"""

import contextlib
import io
import json
import os
import pathlib
import random
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from code_t5 import processes
from code_t5 import test_utils
from code_t5.engine import complete
from code_t5.engine import repository
from code_t5.engine import serve

OPTIONS = complete.EngineOptions(max_tokens=8)  # short lines: many requests reach the model
GOOD = {"prefix": "def add(a, b):\n    return ", "id": "good"}
_GOOD_BODY = json.dumps(GOOD).encode()
_GOOD_LENGTH = str(len(_GOOD_BODY))
# The inputs of the issue: a lone surrogate, a raw non-UTF-8 byte, 100k nested arrays.
NASTY_LINES = [b'{"prefix": "\\ud800abc", "id": 1}', b'{"prefix": "\xff"}', b"[" * 100_000,
               b'{"prefix": "x", "id": "\\udfff"}']


@pytest.fixture(scope="module")
def model_dir(tiny_run, tmp_path_factory) -> pathlib.Path:
  _, trained = tiny_run("shared-prefix_lm")
  dest = tmp_path_factory.mktemp("serve") / "model"
  shutil.copytree(trained, dest, ignore=shutil.ignore_patterns("export", "logs", "runtime"))
  return dest


@pytest.fixture(scope="module")
def completer(model_dir) -> complete.Completer:
  return complete.Completer(model_dir, OPTIONS)


FUZZ_ALPHABET = ["a", " ", "\n", "\t", "é", "😀", "\ud800", "\udfff", "\x00", '"', "\\", "▁"]


def _random_string(rng: random.Random, max_length=40) -> str:
  return test_utils.random_string(rng, FUZZ_ALPHABET, max_length)


def _random_json(rng: random.Random, depth=0):
  return test_utils.random_json(rng, FUZZ_ALPHABET, depth,
                               more=(lambda depth: _random_request(rng, depth),))


def _random_request(rng: random.Random, depth=0) -> dict:
  """Mostly request-shaped objects with wrong or extreme values; some reach the model."""
  text = _random_string(rng)
  request = rng.choice([{"prefix": text}, {"text": text}, {"text": text, "cursor": None},
                        {"text": text, "line": None, "col": None}])
  for key in [k for k in ("cursor", "line", "col") if k in request]:
    request[key] = rng.choice([0, 1, 2, -1, 10**40, "1", 1.5, True, None])
  if rng.random() < 0.5:
    request["id"] = _random_json(rng, depth + 4)
  return request


def _random_line(rng: random.Random) -> bytes:
  choice = rng.randrange(4)
  if choice == 0:  # random bytes (may hold newlines: then several requests)
    return bytes(rng.randrange(256) for _ in range(rng.randrange(60)))
  value = _random_json(rng) if choice == 1 else _random_request(rng)
  return json.dumps(value, ensure_ascii=rng.random() < 0.5).encode("utf-8", "surrogatepass")


def _check_reply(data: bytes) -> dict:
  """A reply: valid UTF-8, strict JSON (no NaN), an object with a completion or a one-line error."""
  def no_constants(name):
    raise AssertionError(f"reply holds {name}: {data[:200]!r}")
  reply = json.loads(data.decode("utf-8"), parse_constant=no_constants)
  assert isinstance(reply, dict) and (
      isinstance(reply.get("completion"), str) or reply.get("ok") is True or (
          isinstance(reply.get("error"), str) and "\n" not in reply["error"])), reply
  return reply


def test_stdio_fuzz_every_line_gets_a_reply_and_serving_goes_on(completer):
  rng = random.Random(1234)
  lines = [_random_line(rng) for _ in range(3000)] + NASTY_LINES + [b"x" * (2 << 20)]
  stream = b"\n".join(lines) + b"\n" + json.dumps(GOOD).encode() + b"\n"
  requests = [l for l in stream.split(b"\n") if l.strip()]
  out = io.BytesIO()
  assert serve.serve_stdio(completer, io.BytesIO(stream), out, max_request_bytes=1 << 20) == 0
  replies = out.getvalue().split(b"\n")
  assert replies[-1] == b"" and len(replies) - 1 == len(requests)
  replies = [_check_reply(r) for r in replies[:-1]]
  completed = sum("completion" in r for r in replies)
  assert 10 < completed < len(replies) / 2, completed  # the model ran, and most were bad
  assert replies[-1]["id"] == "good" and "completion" in replies[-1]
  by_request = dict(zip(requests, replies))
  assert by_request[NASTY_LINES[0]] == {
      "error": '"prefix" is not valid Unicode: lone surrogate U+D800 at character 0', "id": 1}
  assert by_request[NASTY_LINES[1]] == {
      "error": "request is not UTF-8 text (byte 0xff at offset 12)"}
  assert by_request[NASTY_LINES[2]]["error"].startswith("request is not JSON")
  assert by_request[NASTY_LINES[3]]["id"] == "\udfff"  # escaped as \udfff: still valid UTF-8
  assert by_request[b"x" * (2 << 20)] == {
      "error": "request of 2,097,152 bytes is over 1,048,576 bytes"}


def test_stdio_limits_the_request_not_its_line_ending(completer):
  """A request of exactly the limit is read whatever its line ends in (\\r\\n was counted as a
  byte of the request); one a byte longer is refused, its size counted alike."""
  limit = 200
  request = json.dumps(GOOD).encode()
  request = request[:-1] + b" " * (limit - len(request)) + b"}"  # exactly `limit` bytes
  over = request[:-1] + b" }"
  lines = [request + b"\r\n", request + b"\n", over + b"\r\n", over + b"\n",
           # read in chunks of 1 MiB after the limit's: its \r ends one, its \n starts the next
           over + b" " * (1 << 20) + b"\r\n", request]  # the last line ends the stream
  out = io.BytesIO()
  assert serve.serve_stdio(completer, io.BytesIO(b"".join(lines)), out,
                           max_request_bytes=limit) == 0
  replies = [_check_reply(r) for r in out.getvalue().splitlines()]
  assert len(replies) == len(lines)
  for i in (0, 1, 5):
    assert replies[i]["id"] == "good" and "completion" in replies[i], replies[i]
  assert replies[2] == replies[3] == {"error": "request of 201 bytes is over 200 bytes"}
  assert replies[4] == {"error": f"request of {201 + (1 << 20):,} bytes is over 200 bytes"}


def _http(port: int, request: bytes) -> bytes:
  """One raw request on its own connection; everything the server sends until it closes."""
  with socket.create_connection(("127.0.0.1", port), timeout=120) as sock:
    sock.sendall(request)
    sock.shutdown(socket.SHUT_WR)  # a body shorter than its Content-Length ends here
    chunks = []
    while chunk := sock.recv(65536):
      chunks.append(chunk)
  return b"".join(chunks)


def _parse_http(response: bytes, head=False):
  """(status, reply) of the first response (bytes a client sent after a request's end, such
  as a body a GET does not read, may get responses of their own)."""
  status_line, _, rest = response.partition(b"\r\n")
  headers, _, body = rest.partition(b"\r\n\r\n")
  version, status = status_line.split(b" ")[:2]
  assert version.startswith(b"HTTP/1."), response[:300]
  fields = dict(line.lower().split(b": ", 1) for line in headers.split(b"\r\n"))
  assert fields[b"content-type"] == b"application/json; charset=utf-8", response[:300]
  return int(status), (None if head else _check_reply(body[:int(fields[b"content-length"])]))


def _random_http(rng: random.Random) -> bytes:
  method = rng.choice([b"POST"] * 6 + [b"GET", b"PUT", b"DELETE", b"PATCH", b"HEAD", b"OPTIONS",
                                       b"BREW", b"\xff\xfe", b""])
  path = rng.choice([b"/complete", b"/", b"/health", b"/nope", b"/complete?x=\xff", b"*"])
  version = rng.choice([b" HTTP/1.1", b" HTTP/1.0", b"", b" HTTP/9.9", b" FOO"])
  body = _random_line(rng) if rng.random() < 0.8 else json.dumps(_random_request(rng)).encode()
  length = rng.choice([str(len(body)).encode()] * 6 + [b"-5", b"abc", b"", b"99999999999",
                                                       str(len(body) + 10).encode(), None])
  headers = [b"Host: 127.0.0.1"] + ([b"Content-Length: " + length] if length is not None else [])
  if rng.random() < 0.1:
    headers.append(bytes(rng.randrange(32, 256) for _ in range(rng.randrange(40))))
  if rng.random() < 0.05:
    return bytes(rng.randrange(256) for _ in range(rng.randrange(200)))  # not HTTP at all
  return method + b" " + path + version + b"\r\n" + b"\r\n".join(headers) + b"\r\n\r\n" + body


def test_http_fuzz_every_request_gets_a_json_reply_and_serving_goes_on(completer):
  server = serve.make_http_server(completer, 0)
  thread = threading.Thread(target=server.serve_forever, daemon=True)
  thread.start()
  port = server.server_address[1]
  try:
    rng = random.Random(99)
    statuses = []
    for _ in range(1500):
      request = _random_http(rng)
      response = _http(port, request)
      if not response:
        # Only for a blank first line (the standard library's reading of "no request").
        assert not str(request.split(b"\n", 1)[0], "iso-8859-1").split(), request[:200]
        continue
      status, _ = _parse_http(response, head=request.startswith(b"HEAD "))
      assert status < 500 or status == 505, response[:500]  # 505: HTTP version not supported
      statuses.append(status)
    assert {200, 400, 404, 405, 411, 413}.issubset(statuses), sorted(set(statuses))
    # The requests, one by one, then a good one.
    for request, expected in [
        (b"POST /complete HTTP/1.1\r\nContent-Length: -5\r\n\r\n", 400),
        # A good request's body behind lengths that Python's int() reads ("5_2", "+52"), or
        # behind two lengths (the first would win; a proxy before the server may take the other).
        *[(b"POST /complete HTTP/1.1\r\nContent-Length: " + length.encode() + b"\r\n\r\n"
           + _GOOD_BODY, 400) for length in (f"{_GOOD_LENGTH[0]}_{_GOOD_LENGTH[1:]}",
                                             f"+{_GOOD_LENGTH}",
                                             f"{_GOOD_LENGTH}\r\nContent-Length: 5")],
        # Python's int() refuses more than 4,300 digits (this was an internal error, 500).
        (b"POST /complete HTTP/1.1\r\nContent-Length: " + b"9" * 5000 + b"\r\n\r\n", 413),
        (b"POST /complete HTTP/1.1\r\nContent-Length: " + b"0" * 5000 + _GOOD_LENGTH.encode()
         + b"\r\n\r\n" + _GOOD_BODY, 200),
        # An empty line before the request line is skipped (RFC 9112): no reply came.
        (b"\r\nPOST /complete HTTP/1.1\r\nContent-Length: " + _GOOD_LENGTH.encode()
         + b"\r\n\r\n" + _GOOD_BODY, 200),
        # Transfer-Encoding would override the Content-Length read here (RFC 9112).
        (b"POST /complete HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: "
         + _GOOD_LENGTH.encode() + b"\r\n\r\n" + _GOOD_BODY, 400),
        (b"PUT /complete HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}", 405),
        (b"DELETE /complete HTTP/1.1\r\n\r\n", 405),
        (b"GET /complete HTTP/1.1\r\n\r\n", 405),  # a browser's try: told to POST
        (b"POST /health HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}", 405),  # (404 before)
        (b"POST /complete HTTP/1.1\r\nContent-Length: 100000\r\n\r\n" + b"[" * 100_000, 400),
        (b"POST /complete HTTP/1.1\r\nContent-Length: 21\r\n\r\n" + b'{"prefix": "\\ud800x"}',
         400),
        (b"POST /complete HTTP/1.1\r\nContent-Length: 15\r\n\r\n" + b'{"prefix": "\xff"}', 400),
        # A web page reaching 127.0.0.1 through DNS rebinding names its own host, and a browser
        # sends an Origin (even with a text/plain body, which it sends without asking first):
        # refused before anything is read; an editor's request (or a tunnel's port) is not.
        *[(b"POST /complete HTTP/1.1\r\n" + header + b"\r\nContent-Length: "
           + _GOOD_LENGTH.encode() + b"\r\n\r\n" + _GOOD_BODY, status) for header, status in (
               (b"Host: attacker.example", 403),
               (b"Host: attacker.example:8080", 403),
               (b"Host: 127.0.0.1.attacker.example", 403),
               (b"Host: localhost:1x", 403),
               (b"Host: 127.0.0.1\r\nHost: attacker.example", 403),
               (b"Host: 127.0.0.1\r\nOrigin: http://attacker.example", 403),
               (b"Host: 127.0.0.1\r\nOrigin: null", 403),
               (b"Host: 127.0.0.1\r\nContent-Type: text/plain\r\n"
                b"Origin: https://attacker.example:443", 403),
               (b"Host: localhost:9000", 200),
               (b"Host: [::1]:8080", 200),
               (b"Host: [::1]:", 200),  # (refused while "localhost:" was not)
               (b"Host: localhost:", 200),
               (b"Host: 127.0.0.2", 403),  # (the server binds 127.0.0.1 alone)
               (b"Host: LOCALHOST.", 200),
               (b"Host: 127.0.0.1\r\nOrigin: http://localhost:3000", 200))],
        (b"GET /health HTTP/1.1\r\nHost: attacker.example\r\n\r\n", 403)]:
      status, reply = _parse_http(_http(port, request))
      assert status == expected and ("error" in reply) == (status != 200), (request[:80], status,
                                                                            reply)
    body = json.dumps(GOOD).encode()
    status, reply = _parse_http(_http(port, b"POST /complete HTTP/1.1\r\nContent-Length: "
                                      + str(len(body)).encode() + b"\r\n\r\n" + body))
    assert status == 200 and reply["id"] == "good" and "completion" in reply
    # A health checker's HEAD, and a query string after the path (405 and 404 before).
    response = _http(port, b"HEAD /health HTTP/1.1\r\n\r\n")
    assert _parse_http(response, head=True)[0] == 200 and response.endswith(b"\r\n\r\n")
    status, reply = _parse_http(_http(port, b"GET /health?probe=1 HTTP/1.1\r\n\r\n"))
    assert status == 200 and reply["ok"]
  finally:
    server.shutdown()
    server.server_close()


def test_a_burst_of_connections_waits_for_the_server_instead_of_being_refused(completer):
  """100 clients connecting at once: with socketserver's listen queue of 5 a burst got
  connection resets (helper-43's audit). The server takes none of them until all are made."""
  server = serve.make_http_server(completer, 0, workers=1)
  port = server.server_address[1]
  clients, thread = [], threading.Thread(target=server.serve_forever, daemon=True)
  try:
    for _ in range(100):
      clients.append(socket.create_connection(("127.0.0.1", port), timeout=3))
    thread.start()
    for client in clients:
      client.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    for client in clients:
      client.settimeout(120)
      response = b""
      while b"\r\n\r\n" not in response and (chunk := client.recv(65536)):
        response += chunk
      assert response.startswith(b"HTTP/1.0 200 "), response[:200]
  finally:
    for client in clients:
      client.close()
    if thread.is_alive():  # (shutdown waits for a serve_forever that never began)
      server.shutdown()
    server.server_close()


def _serve_command(model_dir, *args):
  return [sys.executable, "-m", "code_t5.cli", "serve", "--checkpoint", str(model_dir),
          "--max-tokens", str(OPTIONS.max_tokens), *args]


def test_serve_process_answers_the_inputs_that_used_to_kill_it(model_dir, completer):
  del completer  # its runtime is reused
  stdin = b"\n".join(NASTY_LINES) + b"\n" + json.dumps(GOOD).encode() + b"\n"
  result = subprocess.run(_serve_command(model_dir), input=stdin, capture_output=True)
  assert result.returncode == 0, result.stderr[-3000:]
  replies = [_check_reply(line) for line in result.stdout.splitlines()]
  assert len(replies) == len(NASTY_LINES) + 1
  assert all("error" in r for r in replies[:3])
  assert replies[3]["id"] == "\udfff" and "completion" in replies[3]
  assert replies[-1]["id"] == "good" and "completion" in replies[-1]
  assert b"Traceback" not in result.stderr


def test_a_model_dir_copied_without_commands_is_served_from_its_operative_config(model_dir,
                                                                                tmp_path):
  copy = tmp_path / "copied"
  copy.mkdir()
  for path in model_dir.iterdir():  # checkpoints and operative_config.gin, as a user copies them
    if path.name.startswith(("model.ckpt-", "checkpoint", "operative_config")):
      shutil.copy(path, copy)
  assert not (copy / "commands").exists()
  result = subprocess.run(_serve_command(copy), input=json.dumps(GOOD).encode() + b"\n",
                          capture_output=True)
  assert result.returncode == 0, result.stderr[-3000:]
  assert "completion" in _check_reply(result.stdout)
  assert b"writing the runtime of " + str(copy).encode() in result.stderr


# ---- concurrency ----------------------------------------------------------------------------------


def _concurrent_requests():
  """(body, malformed) pairs: real cursors in this repository's Python in each request form,
  with malformed requests between them."""
  rng = random.Random(7)
  sources = [pathlib.Path(complete.__file__), pathlib.Path(serve.__file__),
             pathlib.Path(__file__)]
  requests = []
  for k in range(32):
    text = sources[k % len(sources)].read_text(encoding="utf-8")
    cursor = rng.randrange(len(text))
    # As the cursor's line is typed: the rest of it not there yet (with code after the cursor the
    # engine offers only lines that end with that code).
    text = test_utils.as_typed(text, cursor)
    form = k % 4
    if form == 0:
      request = {"text": text, "cursor": cursor}
    elif form == 1:
      request = {"prefix": text[:cursor], "top": 1 + k % 5}
    elif form == 2:
      line = text.count("\n", 0, cursor) + 1
      request = {"text": text, "line": line, "col": cursor - (text.rfind("\n", 0, cursor) + 1) + 1}
    else:
      request = {"text": text[:cursor] + "\n", "top": 3}
    request["id"] = k
    requests.append((json.dumps(request).encode(), False))
  malformed = [b"{", b'{"prefix": 3, "id": "m1"}', b'{"text": "ab", "cursor": 9}', b"[]",
               b'{"prefix": "\\ud800"}', b'{"prefix": "\xff"}', b"[" * 100_000,
               b'{"prefix": "x", "top": 0, "id": "m2"}']
  for i, body in enumerate(malformed):
    requests.insert(4 * i + 1, (body, True))
  return requests


@pytest.fixture(scope="module")
def shipped_completer() -> complete.Completer:
  # Every line shown (no confidence gate): more lines and scores to compare.
  return complete.Completer(test_utils.PRETRAINED,
                            complete.EngineOptions(min_score=complete.DEFAULT_MIN_SCORE))


def _without_ms(reply: dict) -> dict:
  return {k: v for k, v in reply.items() if k != "ms"}


def test_concurrent_clients_get_the_replies_one_client_gets(shipped_completer):
  """8 clients at once, through the HTTP server and its worker processes: each reply is the one
  the request gets alone (same lines, same scores), malformed requests among them get their
  errors, and serving goes on. The shipped model: real lines, scores that differ."""
  requests = _concurrent_requests()
  alone = [_without_ms(serve.handle_line(shipped_completer, body)) for body, _ in requests]
  assert sum("completions" in r and len(r["completions"]) > 1 for r in alone) > 20
  server = serve.make_http_server(shipped_completer, 0, workers=3)
  thread = threading.Thread(target=server.serve_forever, daemon=True)
  thread.start()
  port = server.server_address[1]
  replies = [None] * len(requests)

  def client(first: int):
    for i in range(first, len(requests), 8):
      body = requests[i][0]
      response = _http(port, b"POST /complete HTTP/1.1\r\nContent-Length: "
                       + str(len(body)).encode() + b"\r\n\r\n" + body)
      replies[i] = _parse_http(response)
  try:
    clients = [threading.Thread(target=client, args=(first,)) for first in range(8)]
    for c in clients:
      c.start()
    for c in clients:
      c.join()
    status, health = _parse_http(_http(port, b"GET /health HTTP/1.1\r\n\r\n"))
    assert status == 200 and health["workers"] == 3
    assert health["decode_step"].startswith("C, ")  # the library this checkout built
  finally:
    server.shutdown()
    server.server_close()
  for (body, malformed), expected, (status, reply) in zip(requests, alone, replies):
    assert status == (400 if malformed else 200), (body[:80], status, reply)
    assert _without_ms(reply) == expected, body[:80]
    assert malformed == ("error" in reply)


def test_a_byte_order_mark_is_no_code_and_no_column(shipped_completer):
  # As `complete` drops it: the model read U+FEFF, and line 1's "col" counted it, one off an
  # editor's (helper-56's audit). A "cursor" offset counts it, as it counts the text given.
  code = "import os\nx = os.pa"
  for plain, marked in [({"text": code, "line": 2, "col": 10}, {"line": 2, "col": 10}),
                        ({"text": code, "line": 1, "col": 8}, {"line": 1, "col": 8}),
                        ({"text": code, "cursor": 19}, {"cursor": 20}),
                        ({"text": code, "cursor": 0}, {"cursor": 0}),
                        ({"prefix": code}, {})]:
    key = "prefix" if "prefix" in plain else "text"
    expected = _without_ms(serve.handle(shipped_completer, plain))
    assert "completions" in expected
    assert _without_ms(serve.handle(shipped_completer, {**marked, key: "\ufeff" + code})) == (
        expected), plain


def test_a_cursor_between_a_lines_cr_and_lf_is_a_one_line_error(shipped_completer):
  # A line inserted there split the break: "def f(a):\r    return a\n" (helper-56's audit).
  text = "def f(a):\r\n    return a\r\n"
  assert serve.handle(shipped_completer, {"text": text, "cursor": 10})["error"] == (
      "cursor 10 is between the \\r and \\n of a line break: give 9, the end of the line")
  assert "completions" in serve.handle(shipped_completer, {"text": text, "cursor": 9})


_WIDGETS = ("from tables import build_frobnication_table\n\n\n"
            "def frobnicate_the_widgets(count, colour):\n"
            "    FROBNICATION_TABLE = build_frobnication_table(count, colour, scale=3)\n"
            "    return FROBNICATION_TABLE\n")
_WIDGETS_LINE = "nication_table(count, colour, scale=3)"
# A request whose best line is _WIDGETS_LINE where the project holds _WIDGETS, and not otherwise.
_WIDGETS_BODY = json.dumps({"prefix": "from tables import build_frobnication_table\n\n"
                                      "count, colour = 1, 2\nFROBNICATION_TABLE = build_frob"}
                           ).encode()


def _repo_completer(tmp_path, monkeypatch) -> complete.Completer:
  """The shipped model with --repo a folder of one file, looked over every 0.05 s."""
  monkeypatch.setattr(repository, "DISK_POLL_SECONDS", 0.05)
  repo = tmp_path / "repo"
  repo.mkdir()
  (repo / "main.py").write_text("import os\n")
  return complete.Completer(test_utils.PRETRAINED, complete.EngineOptions(), repo=repo)


def _post(port: int, body: bytes):
  """(status, reply) of POST /complete."""
  return _parse_http(_http(port, b"POST /complete HTTP/1.1\r\nContent-Length: "
                           + str(len(body)).encode() + b"\r\n\r\n" + body))


def _until(ask, offered: bool) -> None:
  deadline = time.monotonic() + 30
  while (ask()["completion"] == _WIDGETS_LINE) != offered:
    assert time.monotonic() < deadline, f"the line was never {'' if offered else 'no longer '}offered"
    time.sleep(0.05)


@pytest.mark.parametrize("workers", [0, 1, 2])  # 0: as stdin's, in this process
def test_a_repo_server_follows_the_files_changed_on_disk(tmp_path, monkeypatch, workers):
  """`serve --repo` read the project once: a file created (a `git pull`, a branch switched) was
  never offered until the server restarted. Each process that answers requests now follows the
  folder on disk and reads what changed between requests: here the whole line of a file created
  after the server started, which nothing else in the project holds."""
  completer = _repo_completer(tmp_path, monkeypatch)
  if workers:
    server = serve.make_http_server(completer, 0, workers=workers)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def ask():
      return _post(server.server_address[1], _WIDGETS_BODY)[1]
  else:
    follower = serve.DiskFollower(completer)

    def ask():
      return serve.handle_line(completer, _WIDGETS_BODY, follower)
  try:
    assert ask()["completion"] != _WIDGETS_LINE
    (completer.repo / "widgets.py").write_text(_WIDGETS)
    _until(ask, offered=True)  # (each worker in turn: all of them follow)
    time.sleep(0.3)  # several looks of every worker
    for _ in range(2 * max(workers, 1)):
      assert ask()["completion"] == _WIDGETS_LINE
    if workers:  # /health counts the files of the index that answers (a worker's, where forked)
      health = _parse_http(_http(server.server_address[1], b"GET /health HTTP/1.1\r\n\r\n"))
      assert health[1]["repo_files"] == 2
    (completer.repo / "widgets.py").unlink()
    _until(ask, offered=False)
  finally:
    if workers:
      server.shutdown()
      server.server_close()
    else:
      follower.close()


@pytest.mark.parametrize("workers", [1, 2])
def test_health_answers_while_every_worker_is_on_a_request(tmp_path, monkeypatch, workers):
  """GET /health asked an idle worker for its index's files, and so waited for a request to end
  (4 s behind two of 12 MB: helper-46's audit). Here the requests wait on a file that only
  appears after /health has answered: a /health that waited would never answer."""
  completer = _repo_completer(tmp_path, monkeypatch)
  gate = tmp_path / "go"
  answer = serve.handle_line

  def held(*args, **kwargs):  # (forked workers run it too: the gate is a file, not an Event)
    while not gate.exists():
      time.sleep(0.01)
    return answer(*args, **kwargs)

  monkeypatch.setattr(serve, "handle_line", held)
  server = serve.make_http_server(completer, 0, workers=workers)
  threading.Thread(target=server.serve_forever, daemon=True).start()
  port = server.server_address[1]
  replies = []
  posts = [threading.Thread(target=lambda: replies.append(_post(port, _WIDGETS_BODY)))
           for _ in range(workers)]
  try:
    for post in posts:
      post.start()
    busy = ((lambda: server.pool._own_lock.locked()) if workers == 1  # pylint: disable=protected-access
            else lambda: server.pool._idle.empty())  # pylint: disable=protected-access
    deadline = time.monotonic() + 60
    while not busy() and time.monotonic() < deadline:
      time.sleep(0.01)
    assert busy()
    status, health = _parse_http(_http(port, b"GET /health HTTP/1.1\r\n\r\n"))
    assert status == 200 and health["repo_files"] == 1 and not replies
  finally:
    gate.touch()
    for post in posts:
      post.join(60)
    server.shutdown()
    server.server_close()
  assert [status for status, _ in replies] == [200] * workers


def test_a_repo_server_whose_workers_all_died_still_follows_the_disk(tmp_path, monkeypatch):
  """Once every worker had died, requests were answered in the server's process from the index
  as it was at start, for good (helper-41's audit)."""
  completer = _repo_completer(tmp_path, monkeypatch)
  server = serve.make_http_server(completer, 0, workers=2)
  threading.Thread(target=server.serve_forever, daemon=True).start()
  port = server.server_address[1]
  try:
    for worker in server.pool._all:  # pylint: disable=protected-access
      os.kill(worker.pid, signal.SIGKILL)
    assert [_post(port, _WIDGETS_BODY)[0] for _ in range(2)] == [500, 500]  # each dead worker's
    assert _post(port, _WIDGETS_BODY)[1]["completion"] != _WIDGETS_LINE  # now in the server's
    (completer.repo / "widgets.py").write_text(_WIDGETS)
    _until(lambda: _post(port, _WIDGETS_BODY)[1], offered=True)
  finally:
    server.shutdown()
    server.server_close()


def test_a_dead_worker_costs_its_request_only(completer):
  """Killed workers (out of memory, a signal): the requests they held get an internal error, the
  next ones are answered in the server's own process, as one client gets them."""
  good = json.dumps(GOOD).encode()
  expected = _without_ms(serve.handle_line(completer, good))
  pool = serve.WorkerPool(completer, 2)
  try:
    assert _without_ms(pool.handle_line(good)) == expected
    for worker in pool._all:  # pylint: disable=protected-access
      os.kill(worker.pid, signal.SIGKILL)
    replies = [pool.handle_line(good) for _ in range(4)]
    for worker in pool._all:  # pylint: disable=protected-access
      assert not os.path.exists(f"/proc/{worker.pid}")  # reaped, not a zombie until the end
  finally:
    pool.close()
  assert [r.get("error", "").startswith(serve.INTERNAL_ERROR) for r in replies] == [
      True, True, False, False]
  assert [_without_ms(r) for r in replies[2:]] == [expected, expected]


def test_a_reader_that_goes_away_stops_serve_with_one_line(tmp_path):
  """`code-t5 serve < requests | head -1`: a BrokenPipeError traceback until now (helper-17's
  audit); and a process started with stdout closed, an AttributeError."""
  requests = tmp_path / "requests.jsonl"
  requests.write_text((json.dumps(GOOD) + "\n") * 2000)
  command = [sys.executable, "-m", "code_t5.cli", "serve", "--checkpoint",
             str(test_utils.PRETRAINED)]
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
  with open(requests, "rb") as stdin:
    server = subprocess.Popen(command, stdin=stdin, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=env)
  assert "completion" in json.loads(server.stdout.readline())  # one reply; the reader leaves
  server.stdout.close()
  assert server.wait(120) == 1
  assert server.stderr.read().decode().splitlines() == [
      "ready: one JSON request per line on stdin",
      "code-t5 serve: the reader of stdout went away: stopping"]
  closed = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, env=env, timeout=120,
                          preexec_fn=lambda: os.close(1))
  assert closed.returncode == 2 and closed.stderr == (
      "code-t5 serve: stdout is closed: serve reads requests on stdin and answers on stdout (or "
      "give --port)\n")


def _state(pid: int) -> str:
  """A process's state letter in /proc (R running, S sleeping, T stopped, Z zombie)."""
  with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
    return f.read().rsplit(")", 1)[-1].split()[0]


def test_busy_workers_die_with_a_killed_server():
  """A worker exits when it reads its pipe's end, which one busy with a request (here: stopped)
  never does: it went on for minutes after its server was SIGKILLed (helper-17's audit)."""
  server = subprocess.Popen(
      [sys.executable, "-m", "code_t5.cli", "serve", "--checkpoint", str(test_utils.PRETRAINED),
       "--port", "0", "--workers", "2"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
      stdin=subprocess.DEVNULL, text=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
  try:
    assert server.stdout.readline().startswith("serving on http://127.0.0.1:")
    children = pathlib.Path(f"/proc/{server.pid}/task/{server.pid}/children")
    workers = [int(pid) for pid in children.read_text().split()]
    assert len(workers) == 2
    # Stopped only once waiting for requests: one stopped before it asked for the signal (just
    # forked, on a loaded machine) would never get it.
    test_utils.wait_for(lambda: all(_state(pid) == "S" for pid in workers),
                        "the workers to wait for requests")
    for worker in workers:
      os.kill(worker, signal.SIGSTOP)
  finally:
    server.kill()
    server.wait()
  try:
    test_utils.wait_for(lambda: not any(map(processes.pid_alive, workers)),
                        "the workers to die with their server", seconds=120)
  finally:
    for worker in workers:
      try:
        os.kill(worker, signal.SIGKILL)
      except ProcessLookupError:
        pass


def test_ctrl_c_lets_the_request_being_answered_finish_and_ends_as_ctrl_c_does():
  """helper-38's audit: the request in flight when the server got Ctrl-C was answered HTTP 500
  ("internal error ... TypeError": its worker's pipe closed under it), and the server ended with
  status 0 where the stdio server and the LSP end with 130."""
  server = subprocess.Popen(
      [sys.executable, "-m", "code_t5.cli", "serve", "--checkpoint", str(test_utils.PRETRAINED),
       "--port", "0", "--workers", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
      stdin=subprocess.DEVNULL, text=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"),
      preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
  workers = []
  try:
    port = int(server.stdout.readline().strip().rsplit(":", 1)[1])
    children = pathlib.Path(f"/proc/{server.pid}/task/{server.pid}/children")
    workers = [int(pid) for pid in children.read_text().split()]
    test_utils.wait_for(lambda: all(_state(pid) == "S" for pid in workers),
                        "the workers to wait for requests")
    for worker in workers:  # so that the request is still being answered at the Ctrl-C
      os.kill(worker, signal.SIGSTOP)
    body = json.dumps({"prefix": "import os\n\n\ndef main():\n    path = os.path."}).encode()
    replies = []
    asking = threading.Thread(target=lambda: replies.append(_http(port, (
        b"POST /complete HTTP/1.0\r\nContent-Length: %d\r\n\r\n" % len(body)) + body)))
    asking.start()
    time.sleep(1)  # (the request is read and handed to a stopped worker)
    server.send_signal(signal.SIGINT)
    time.sleep(0.5)
    for worker in workers:
      os.kill(worker, signal.SIGCONT)
    asking.join(60)
    _, err = server.communicate(timeout=60)
  finally:
    for worker in workers:
      with contextlib.suppress(ProcessLookupError):
        os.kill(worker, signal.SIGCONT)
    if server.poll() is None:
      server.kill()
      server.wait()
  status, reply = _parse_http(replies[0])
  assert status == 200 and reply["completion"], reply
  assert server.returncode == 130, err[-3000:]
  assert "internal error" not in err and "Traceback" not in err, err[-3000:]


def test_workers_without_a_port_is_a_one_line_error(capsys):
  from code_t5 import cli  # pylint: disable=g-import-not-at-top
  assert cli.main(["serve", "--checkpoint", str(test_utils.PRETRAINED), "--workers", "2"]) == 2
  assert capsys.readouterr().err == ("code-t5 serve: --workers needs --port: requests on stdin "
                                     "are answered one at a time\n")
