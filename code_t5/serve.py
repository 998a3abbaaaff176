"""`code-t5 serve`: one loaded model answering many completion requests (for editors).

Two transports, one protocol. A request is a JSON object:

    {"prefix": "<all the code before the cursor>"}
    {"text": "<the whole file>", "cursor": <character offset, default: the end>}
    {"text": "<the whole file>", "line": <1-based>, "col": <1-based, in characters>}

plus an optional "id", echoed back. The reply is the object `code-t5 complete --json` prints:

    {"completion": "<rest of the line>", "context_chars": N, "truncated": false, "ms": 12.3}

or {"error": "<one line>"} for a bad request (the server keeps running).

- stdin/stdout (default): one request per line in, one reply per line out, in order.
- HTTP (--port; 0 picks a free port): POST /complete with the request as the body, GET /health.
  Binds 127.0.0.1 only, stdlib http.server; prints "serving on http://127.0.0.1:PORT" once ready.
"""

import http.server
import json
import sys
import threading

from code_t5 import complete as complete_lib
from code_t5 import errors

MAX_REQUEST_BYTES = 16 << 20


def _text_cursor(request: dict):
  """(text, cursor offset) of a request; CompletionError for a malformed one."""
  if "prefix" in request:
    prefix = request["prefix"]
    if not isinstance(prefix, str):
      raise complete_lib.CompletionError('"prefix" must be a string')
    return prefix, len(prefix)
  if "text" not in request:
    raise complete_lib.CompletionError('a request needs "prefix" or "text"')
  text = request["text"]
  if not isinstance(text, str):
    raise complete_lib.CompletionError('"text" must be a string')
  if "line" in request or "col" in request:
    line, col = request.get("line"), request.get("col")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (line, col)):
      raise complete_lib.CompletionError('"line" and "col" must both be integers')
    return text, complete_lib.cursor_offset(text, line, col)
  return text, complete_lib.check_offset(text, request.get("cursor", len(text)))


def handle(completer: complete_lib.Completer, request) -> dict:
  """One request (a decoded JSON value) -> one reply object; never raises for bad input."""
  request_id = request.get("id") if isinstance(request, dict) else None
  try:
    if not isinstance(request, dict):
      raise complete_lib.CompletionError("a request must be a JSON object")
    text, cursor = _text_cursor(request)
    reply = completer.complete(text[:cursor]).reply()
  except errors.UserError as e:
    reply = {"error": str(e)}
  if request_id is not None:
    reply["id"] = request_id
  return reply


def handle_line(completer, line: str) -> dict:
  try:
    request = json.loads(line)
  except ValueError as e:
    return {"error": f"request is not JSON: {e}"}
  return handle(completer, request)


def serve_stdio(completer, stdin=None, stdout=None) -> int:
  stdin = stdin or sys.stdin
  stdout = stdout or sys.stdout
  print("ready: one JSON request per line on stdin", file=sys.stderr, flush=True)
  for line in stdin:
    if not line.strip():
      continue
    stdout.write(json.dumps(handle_line(completer, line), ensure_ascii=False) + "\n")
    stdout.flush()
  return 0


def make_http_server(completer, port: int = 0) -> http.server.ThreadingHTTPServer:
  """An HTTP server on 127.0.0.1:port (0 = a free port); requests run one at a time."""
  lock = threading.Lock()

  class Handler(http.server.BaseHTTPRequestHandler):
    """POST /complete, GET /health."""

    def _send(self, status: int, body: dict):
      data = json.dumps(body, ensure_ascii=False).encode("utf-8")
      self.send_response(status)
      self.send_header("Content-Type", "application/json; charset=utf-8")
      self.send_header("Content-Length", str(len(data)))
      self.end_headers()
      self.wfile.write(data)

    def do_GET(self):  # pylint: disable=invalid-name
      if self.path.rstrip("/") != "/health":
        return self._send(404, {"error": f"no such path {self.path}: POST /complete, GET /health"})
      info = completer.info
      return self._send(200, {"ok": True, "model_dir": str(info.model_dir), "step": info.step,
                              "task": info.task, "export": str(completer.export_dir)})

    def do_POST(self):  # pylint: disable=invalid-name
      if self.path.rstrip("/") not in ("/complete", ""):
        return self._send(404, {"error": f"no such path {self.path}: POST /complete"})
      try:
        length = int(self.headers.get("Content-Length", ""))
      except ValueError:
        return self._send(411, {"error": "Content-Length is required"})
      if length > MAX_REQUEST_BYTES:
        return self._send(413, {"error": f"request of {length} bytes is over "
                                         f"{MAX_REQUEST_BYTES} bytes"})
      body = self.rfile.read(length)
      try:
        line = complete_lib.decode_utf8(body, "request body")
      except errors.UserError as e:
        return self._send(400, {"error": str(e)})
      with lock:
        reply = handle_line(completer, line)
      return self._send(400 if "error" in reply else 200, reply)

    def log_message(self, format, *args):  # pylint: disable=redefined-builtin
      pass  # quiet: stdout/stderr belong to the user

  return http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)


def _serve(args) -> int:
  if args.port is not None and not 0 <= args.port <= 65535:
    raise complete_lib.CompletionError(f"--port {args.port} is not a port number (0-65535)")
  completer = complete_lib.Completer(args.checkpoint, complete_lib.settings_from(args), args.run)
  if args.port is None:
    return serve_stdio(completer)
  try:
    server = make_http_server(completer, args.port)
  except OSError as e:
    raise complete_lib.CompletionError(f"--port {args.port}: {e.strerror}") from None
  host, port = server.server_address[:2]
  print(f"serving on http://{host}:{port}", flush=True)
  try:
    server.serve_forever()
  except KeyboardInterrupt:
    pass
  finally:
    server.server_close()
  return 0


def register_cli(subparsers) -> None:
  serve = subparsers.add_parser(
      "serve", help="load a checkpoint once and answer completion requests: JSON lines on "
      "stdin/stdout, or HTTP on 127.0.0.1 with --port")
  complete_lib.add_decode_flags(serve)
  serve.add_argument("--port", type=int,
                     help="serve HTTP on 127.0.0.1:PORT (0 = a free port) instead of stdin")
  serve.set_defaults(func=_serve)
