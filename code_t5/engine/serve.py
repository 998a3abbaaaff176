"""`code-t5 serve`: one loaded model answering many completion requests (for editors).

Two transports, one protocol. A request is a JSON object:

    {"prefix": "<all the code before the cursor>"}
    {"text": "<the whole file>", "cursor": <character offset, default: the end>}
    {"text": "<the whole file>", "line": <1-based>, "col": <1-based, in characters>}

one of the three (a "prefix" beside "text", or a "cursor" beside "line" and "col", is an error),
plus an optional "id", echoed back, and an optional "top" (1-20, default the server's --top). The
reply is the object `code-t5 complete --json` prints:

    {"completion": "<the best line's rest>", "replaces": 0, "completions": [{"text": "<rest of
     the line>", "score": -0.83, "replaces": 0}, ...], "context_chars": N, "truncated": false,
     "ms": 12.3}

"replaces" is how many characters after the cursor the text takes the place of (the closing
brackets an editor put there, where the line closes them itself: line_filters.Fit), 0 for most.

"completions" are ranked best first (score: log-probability / sqrt(pieces), code_t5.engine.decoding;
a line that completes a half-typed word to a name the file uses may rank above a higher score,
code_t5.engine.names); "completion" is the first one's text, "" when none is shown (for clients of
the one-line protocol). A bad request gets {"error": "<one line>"} (the server keeps running):
any bytes on stdin and any HTTP request get a JSON reply (4xx over HTTP), and the next good
request is answered. An
"id" must be a string, a finite number or null; "prefix" and "text" must be valid Unicode (no
lone surrogates); a request is at most MAX_REQUEST_BYTES.

- stdin/stdout (default): one request per line in, one reply per line out, in order.
- HTTP (--port; 0 picks a free port): POST /complete with the request as the body, GET /health.
  Binds 127.0.0.1 only, stdlib http.server; prints "serving on http://127.0.0.1:PORT" once ready.
  Concurrent requests run at once in --workers processes (below). A request named for another
  host (its Host header) or sent by a web page (an Origin header) other than this machine's
  loopback names is refused, 403: a page in the user's browser could otherwise reach the server
  through DNS rebinding and read completions made of the user's code (helper-43's audit).

Concurrency (HTTP). Every request used to run under one lock in the server's process: under 8
concurrent clients each waited for the 7 others (the issue's filer: 2.9 requests/s, p50 2.6 s).
A request is ~85 ms of Python and NumPy on one core (code_t5.engine.runtime keeps BLAS on one
thread), so it scales with cores only across processes: `WorkerPool` forks --workers copies of
the loaded Completer (the weights are shared copy-on-write; nothing is loaded again) and each
HTTP thread hands its request's bytes to an idle worker over a pipe and waits for its reply. A
worker runs exactly the code the one-client server runs, one request at a time, so every reply
is what one client gets (tests/serve_test.py checks it under 8 concurrent clients): a search's
state lives in its call, and what a worker keeps between requests (the model, the --repo index,
and the last request's reading of its context and its file's pieces, used only where they are
bit for bit what would be computed afresh: tests/decoding_test.py) never changes a reply. The
--repo index follows the files changed on disk: each process that answers requests has a
DiskFollower, whose changes reach its index between requests. Measured with
benchmarks/latency_benchmark.py --clients 8 and what was tried and not kept (threads without the
lock, batching requests' decode steps): see docs/speed.md. stdin/stdout serves one client, in
order, in the process itself.
"""

import http.server
import json
import math
import multiprocessing.connection
import os
import queue
import signal
import sys
import threading
import time
import warnings
from typing import Optional

from code_t5 import errors
from code_t5 import processes
from code_t5 import source_text
from code_t5.engine import complete as complete_lib
from code_t5.engine import native
from code_t5.engine import repository as repository_lib

MAX_REQUEST_BYTES = 16 << 20
# The names a request to the HTTP server may give for its host (any port: an SSH tunnel's port
# differs from the server's), and the only hosts a web page asking it may come from.
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
# Connections accepted before the server takes them (socketserver's default, 5, reset a burst of
# 100 concurrent clients' connections: helper-43's audit).
LISTEN_BACKLOG = 128
INTERNAL_ERROR = "internal error"  # starts the reply to a request that failed inside the server
# Default --workers: one per usable CPU, at most this many (each adds ~22 MB of its own memory
# with the shipped model, after 20 requests; the weights and the --repo index are shared).
MAX_DEFAULT_WORKERS = 8


def _loopback(host: str) -> bool:
  """Whether a Host header's value (or an Origin's host) names this machine's loopback."""
  host = host.strip().lower()
  if host.startswith("["):  # an IPv6 address: "[::1]", then ":port" or nothing
    address, bracket, rest = host.partition("]")
    name, (colon, port) = address + bracket, (rest[:1], rest[1:])
    if not bracket or (rest and colon != ":"):
      return False
  else:
    name, _, port = host.partition(":")
  # (An empty port, "host:", is the default one: RFC 3986.)
  return name.rstrip(".") in LOOPBACK_NAMES and (not port or (port.isascii() and port.isdigit()))


def foreign_request(headers) -> Optional[str]:
  """Why an HTTP request is refused for where it comes from (403), or None: a Host header that
  names another host (a page reaching 127.0.0.1 through DNS rebinding names its own), two of
  them, or an Origin header (sent by browsers, not by editors) other than a loopback page's.
  A request without a Host (HTTP/1.0 clients) is answered."""
  hosts = headers.get_all("Host") or []
  if len(hosts) > 1:
    return "two Host headers"
  if hosts and not _loopback(hosts[0]):
    return (f"Host {hosts[0][:100]!r} is not this machine: the server answers requests for "
            f"{', '.join(LOOPBACK_NAMES)} only")
  for origin in headers.get_all("Origin") or []:
    scheme, separator, host = origin.strip().partition("://")
    if not (separator and scheme.lower() in ("http", "https") and _loopback(host)):
      return (f"a web page's request (Origin {origin[:100]!r}) is not answered: only pages "
              f"served from {', '.join(LOOPBACK_NAMES)} may ask")
  return None


def _check_unicode(value: str, name: str) -> str:
  """JSON's \\ud800 escapes decode to lone surrogates, which no encoder (nor the model) takes."""
  try:
    value.encode("utf-8")
  except UnicodeEncodeError as e:
    raise complete_lib.CompletionError(
        f'"{name}" is not valid Unicode: lone surrogate U+{ord(value[e.start]):04X} at character '
        f"{e.start}") from None
  return value


def _text_cursor(request: dict):
  """(text, cursor offset) of a request; CompletionError for a malformed one, or one that
  places the cursor twice (answered from one of them, silently: helper-43's audit)."""
  given = [name for name in ("prefix", "text", "cursor", "line", "col") if name in request]
  if "prefix" in request and len(given) > 1:
    others = " or ".join(f'"{name}"' for name in given[1:])
    raise complete_lib.CompletionError(f'"prefix" is the code before the cursor: give it alone, '
                                       f'not with {others}')
  if "cursor" in request and ("line" in request or "col" in request):
    raise complete_lib.CompletionError('give the cursor as "cursor" or as "line" and "col", not '
                                       'both')
  # A byte-order mark is dropped, as `complete` drops it: no code, and no column (the model read
  # it, and line 1's "col" counted it: helper-56's audit).
  if "prefix" in request:
    prefix = request["prefix"]
    if not isinstance(prefix, str):
      raise complete_lib.CompletionError('"prefix" must be a string')
    prefix = source_text.without_bom(_check_unicode(prefix, "prefix"))
    return prefix, len(prefix)
  if "text" not in request:
    raise complete_lib.CompletionError('a request needs "prefix" or "text"')
  text = request["text"]
  if not isinstance(text, str):
    raise complete_lib.CompletionError('"text" must be a string')
  _check_unicode(text, "text")
  if "line" in request or "col" in request:
    line, col = request.get("line"), request.get("col")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (line, col)):
      raise complete_lib.CompletionError('"line" and "col" must both be integers')
    text = source_text.without_bom(text)
    return text, complete_lib.cursor_offset(text, line, col)
  cursor = complete_lib.check_offset(text, request.get("cursor", len(text)))
  if text.startswith(source_text.BOM):  # "cursor" counted the mark
    return text[1:], max(cursor - 1, 0)
  return text, cursor


def _request_id(request):
  """The "id" to echo: a string, a finite number or None; CompletionError for anything else."""
  request_id = request.get("id")
  if request_id is None or isinstance(request_id, (bool, int)):
    return request_id
  if isinstance(request_id, float) and math.isfinite(request_id):
    return request_id
  if isinstance(request_id, str):
    return request_id  # even with a lone surrogate: encode_reply escapes it
  raise complete_lib.CompletionError('"id" must be a string, a finite number or null')


def _top(request):
  """The request's "top" (how many lines to return), or None for the server's --top."""
  top = request.get("top")
  if top is None:
    return None
  if isinstance(top, bool) or not isinstance(top, int) or not 1 <= top <= complete_lib.MAX_TOP:
    raise complete_lib.CompletionError(f'"top" must be an integer from 1 to {complete_lib.MAX_TOP}')
  return top


def _path(completer, request) -> str:
  """The request's "path": the file's path in --repo (relative to it, or absolute), so that its
  saved copy there is not read as another file (the request's text is); "" if absent."""
  path = request.get("path", "")
  if not isinstance(path, str):
    raise complete_lib.CompletionError('"path" must be a string (the file\'s path in --repo)')
  if not path:
    return ""
  _check_unicode(path, "path")
  # Relative to --repo: "./pkg/a.py" and "pkg//a.py" are "pkg/a.py" too (they were taken as
  # other files, and the file's own saved copy was offered: helper-17's audit).
  return completer.path_in_repo(path if path.startswith("/") or completer.repo is None
                                else os.path.join(completer.repo, path))


def handle(completer: complete_lib.Completer, request) -> dict:
  """One request (a decoded JSON value) -> one reply object; never raises for bad input."""
  request_id = None
  try:
    if not isinstance(request, dict):
      raise complete_lib.CompletionError("a request must be a JSON object")
    request_id = _request_id(request)
    text, cursor = _text_cursor(request)
    reply = completer.complete_at(text, cursor, _top(request), path=_path(completer, request)).reply()
  except errors.UserError as e:
    reply = {"error": str(e)}
  if request_id is not None:
    reply["id"] = request_id
  return reply


class DiskFollower:
  """Keeps a --repo server's index as the disk has it, in the process where its requests run: a
  thread follows the folder's *.py (repository.DiskLook: every 5 s, at most 1/50 of a core) and
  queues what changed, created or deleted; `apply`, in the thread the requests run in, before each
  request, reads them again for at most repository.READ_AGAIN_SECONDS (the rest before the next
  requests), so that the index is only touched there. The project's files were read once, as the
  server started: a `git pull` or a branch switched left the old code in every reply until it
  restarted."""

  def __init__(self, completer):
    self._completer = completer
    self._pending = {}  # the paths changed, each once, in the order seen
    self._lock = threading.Lock()
    self._closed = threading.Event()
    self._look = None
    if completer.repository is not None:
      self._look = repository_lib.DiskLook(completer.repo, completer.repository)
      threading.Thread(target=self._look.follow, args=(self._closed, self._queue, self._log),
                       name="code-t5-disk", daemon=True).start()

  def _queue(self, paths) -> None:
    with self._lock:
      self._pending.update(dict.fromkeys(paths))

  @staticmethod
  def _log(message: str) -> None:
    print(f"code-t5 serve: {message}", file=sys.stderr, flush=True)

  def apply(self) -> None:
    with self._lock:
      paths, self._pending = list(self._pending), {}
    if not paths:
      return
    done = repository_lib.read_again_for_a_while(self._completer.repository,
                                                 self._completer.repo, paths, self._look)
    with self._lock:  # the rest first, then what was queued meanwhile
      self._pending = {**dict.fromkeys(paths[done:]), **self._pending}

  def close(self) -> None:
    self._closed.set()


def handle_line(completer, line, follower: Optional[DiskFollower] = None) -> dict:
  """One request as text or bytes (UTF-8) -> one reply object; never raises, whatever it gets.
  `follower`: the files changed on disk are read again into the --repo index first."""
  try:
    if follower is not None:
      follower.apply()
    if isinstance(line, bytes):
      line = complete_lib.decode_utf8(line, "request")
    try:
      request = json.loads(line)
    except ValueError as e:
      return {"error": f"request is not JSON: {e}"}
    except RecursionError:
      return {"error": "request is not JSON that can be read: nested too deeply"}
    return handle(completer, request)
  except errors.UserError as e:
    return {"error": str(e)}
  except Exception as e:  # pylint: disable=broad-except  (the server outlives any one request)
    print(f"serve: internal error on a request: {type(e).__name__}: {e}", file=sys.stderr)
    return {"error": f"{INTERNAL_ERROR}: {type(e).__name__} (the server keeps running)"}


def encode_reply(reply: dict) -> bytes:
  """A reply as one line of UTF-8 JSON (strict: no NaN); \\u escapes if it holds a surrogate."""
  try:
    return json.dumps(reply, ensure_ascii=False, allow_nan=False).encode("utf-8")
  except UnicodeEncodeError:
    return json.dumps(reply, allow_nan=False).encode("ascii")


def _line_end(tail: bytes) -> int:
  """The length of the line ending (\\n or \\r\\n) that `tail`, a line's last bytes, ends in."""
  return 2 if tail.endswith(b"\r\n") else 1 if tail.endswith(b"\n") else 0


def _read_line(stdin, limit: int):
  """The next line of a binary stream (None at the end); a line whose request (the line without
  its \\n or \\r\\n) is over `limit` bytes is skipped to its newline and returned as the
  request's size (an int), so a huge request cannot fill the memory."""
  line = stdin.readline(limit + 2)  # a request of `limit` bytes and \r\n
  if not line:
    return None
  if len(line) - _line_end(line) <= limit:
    return line
  size, tail = len(line), line[-2:]
  while line and not line.endswith(b"\n"):
    line = stdin.readline(1 << 20)
    size += len(line)
    tail = (tail + line)[-2:]  # \r\n may be split between two reads
  return size - _line_end(tail)


def serve_stdio(completer, stdin=None, stdout=None, max_request_bytes=None) -> int:
  """One reply line per non-blank request line until the end of stdin (binary streams); 1 where
  the reader of stdout went away first."""
  for name, given in (("stdin", stdin), ("stdout", stdout)):
    if given is None and getattr(sys, name) is None:  # the process started with it closed
      raise complete_lib.CompletionError(f"{name} is closed: serve reads requests on stdin and "
                                         "answers on stdout (or give --port)")
  stdin = stdin or sys.stdin.buffer
  stdout = stdout or sys.stdout.buffer
  limit = max_request_bytes or MAX_REQUEST_BYTES
  follower = DiskFollower(completer)
  print("ready: one JSON request per line on stdin", file=sys.stderr, flush=True)
  try:
    while (line := _read_line(stdin, limit)) is not None:
      if isinstance(line, int):
        reply = {"error": f"request of {line:,} bytes is over {limit:,} bytes"}
      elif not line.strip():
        continue
      else:
        reply = handle_line(completer, line, follower)
      try:
        stdout.write(encode_reply(reply) + b"\n")
        stdout.flush()
      except BrokenPipeError:  # e.g. `| head`: a traceback until now (helper-17's audit)
        print("code-t5 serve: the reader of stdout went away: stopping", file=sys.stderr)
        try:  # Python's own flush of stdout at exit would fail again, with a message of its own
          os.dup2(os.open(os.devnull, os.O_WRONLY), stdout.fileno())
        except (OSError, ValueError):  # a stream with no file under it
          pass
        return 1
  finally:
    follower.close()
  return 0


def check_workers(workers: Optional[int]) -> None:
  """--workers must be 1 or more (None: default_workers())."""
  if workers is not None and workers < 1:
    raise complete_lib.CompletionError(f"--workers {workers} must be 1 or more")


def default_workers() -> int:
  """One worker process per CPU this process may run on, at most MAX_DEFAULT_WORKERS."""
  try:
    cpus = len(os.sched_getaffinity(0))
  except AttributeError:  # not Linux
    cpus = os.cpu_count() or 1
  return max(1, min(cpus, MAX_DEFAULT_WORKERS))


# What the server asks a worker for /health: the files of its --repo index, which follows the disk
# (the server's own index, read at start, does not where workers answer).
REPO_FILES = None


def _repo_files(completer) -> int:
  return completer.repository.files if completer.repository else 0


def _worker_main(completer, connection) -> None:
  """A worker's life: a request (bytes or text) in, its reply object out, until the server
  closes the pipe."""
  signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the server, which closes the pipe
  follower = DiskFollower(completer)  # (its thread: started after the fork, in this process)
  while True:
    try:
      body = connection.recv()
    except (EOFError, OSError):
      return
    if body is REPO_FILES:  # (a request's body is bytes)
      follower.apply()
      connection.send(_repo_files(completer))
      continue
    connection.send(handle_line(completer, body, follower))


class _Worker:
  """One forked copy of the server's Completer and the pipe to it."""

  def __init__(self, completer, siblings=()):
    """Forks the worker; `siblings`: the workers forked before it, whose pipes it closes (a
    worker holding another's pipe open would keep it from reading EOF when the server ends)."""
    ours, theirs = multiprocessing.connection.Pipe()
    for stream in (sys.stdout, sys.stderr):  # nothing buffered is written twice
      stream.flush()
    with warnings.catch_warnings():
      # JAX (imported by some callers of this module, not by `code-t5 serve`) warns at every
      # fork; the worker runs only the NumPy engine.
      warnings.simplefilter("ignore", RuntimeWarning)
      try:
        pid = processes.fork_dying_with_parent()
      except OSError as e:  # out of memory or processes
        ours.close()
        theirs.close()
        raise complete_lib.CompletionError(
            f"--workers: cannot start a worker process ({e.strerror}): use fewer") from None
    if pid == 0:  # the worker
      code = 0
      try:
        ours.close()
        for sibling in siblings:
          sibling.connection.close()
        _worker_main(completer, theirs)
      except BaseException:  # pylint: disable=broad-except
        code = 1
      finally:
        os._exit(code)  # no atexit handlers, no flushing the server's buffers
    theirs.close()
    self.pid = pid
    self.connection = ours

  def ask(self, body) -> dict:
    self.connection.send(body)
    return self.connection.recv()

  def close(self) -> None:
    self.connection.close()  # the worker reads EOF and exits

  def wait(self, timeout: float) -> None:
    """Reaps the worker (closed first); SIGKILL if it has not exited within `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
      try:
        pid, _ = os.waitpid(self.pid, os.WNOHANG)
      except ChildProcessError:
        return
      if pid:
        return
      if time.monotonic() > deadline:
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        return
      time.sleep(0.01)


class WorkerPool:
  """`workers` forked copies of a loaded Completer answering requests at once, one each.

  `handle_line` (thread-safe) takes an idle worker, or waits for one. A worker that dies (killed,
  out of memory) costs its request an internal error and is not replaced (forking a process
  whose other threads may hold locks is unsafe); once none is left, requests run in this process
  one at a time, as with workers=1.
  """

  def __init__(self, completer, workers: int):
    self.completer = completer
    self.workers = workers
    self._idle = queue.Queue()
    self._alive = workers
    self._count_lock = threading.Lock()
    self._own_lock = threading.Lock()  # requests run here: one at a time
    self._closed = False
    self._all = []
    # What /health says of the --repo index while every worker is on a request: the count last
    # read (a health check waited for a request of seconds to end: helper-46's audit).
    self._repo_files = _repo_files(completer)
    # The disk's changes to the --repo index: followed here where requests run here, else by
    # each worker for itself.
    self._follower = None
    if workers > 1 and hasattr(os, "fork"):
      try:
        for _ in range(workers):
          self._all.append(_Worker(completer, self._all))
      except BaseException:
        self.close()
        raise
      for worker in self._all:
        self._idle.put(worker)
    else:
      self._alive = 0
      self._follower = DiskFollower(completer)

  def handle_line(self, body) -> dict:
    if not self._alive:
      with self._own_lock:
        if self._follower is None:  # every worker died: requests are answered here from now on
          self._follower = DiskFollower(self.completer)
        return handle_line(self.completer, body, self._follower)
    worker = self._idle.get()
    if worker is None:  # the last worker died while this request waited
      self._idle.put(None)
      return self.handle_line(body)
    try:
      reply = worker.ask(body)
    except (EOFError, OSError) as e:
      with self._count_lock:
        self._alive -= 1
        last = not self._alive
      print(f"serve: worker process {worker.pid} ended ({type(e).__name__}); "
            f"{self._alive} left", file=sys.stderr)
      worker.close()
      worker.wait(1.0)  # reaped now: it stayed a zombie until the server ended (helper-33)
      if last:
        self._idle.put(None)  # wakes the requests waiting for a worker
      return {"error": f"{INTERNAL_ERROR}: the worker process ended (the server keeps running)"}
    self._idle.put(worker)
    return reply

  def repo_files(self) -> int:
    """The files of the --repo index that answers requests, as the disk has them now (/health);
    without waiting: while every worker (or this process) is on a request, as last read."""
    if not self._alive:
      if not self._own_lock.acquire(blocking=False):
        return self._repo_files
      try:
        if self._follower is not None:
          self._follower.apply()
        self._repo_files = _repo_files(self.completer)
      finally:
        self._own_lock.release()
      return self._repo_files
    try:
      worker = self._idle.get_nowait()
    except queue.Empty:
      return self._repo_files
    if worker is None:  # the last worker died meanwhile
      self._idle.put(None)
      return self.repo_files()
    try:
      self._repo_files = worker.ask(REPO_FILES)
    except (EOFError, OSError):  # it died (the next request it is given says so): as last read
      pass
    finally:
      self._idle.put(worker)
    return self._repo_files

  def close(self) -> None:
    """Ends the workers (each finishes the request it is on, if any, first)."""
    if self._closed:
      return
    self._closed = True
    if self._follower is not None:
      self._follower.close()
    for worker in self._all:
      worker.close()
    for worker in self._all:
      worker.wait(timeout=10)


# How long a server that is stopping (Ctrl-C) waits for the requests it is answering.
STOP_SECONDS = 10.0


class _Server(http.server.ThreadingHTTPServer):
  daemon_threads = True  # a stalled client must not keep the process alive at exit
  request_queue_size = LISTEN_BACKLOG
  pool = None  # the WorkerPool, ended with the server

  def __init__(self, *args, **kwargs):
    self._requests = 0  # requests being answered (their threads)
    self._requests_changed = threading.Condition()
    super().__init__(*args, **kwargs)

  def process_request_thread(self, request, client_address):
    with self._requests_changed:
      self._requests += 1
    try:
      super().process_request_thread(request, client_address)
    finally:
      with self._requests_changed:
        self._requests -= 1
        self._requests_changed.notify_all()

  def server_close(self):
    """Takes no more connections, lets the requests being answered finish (at most
    STOP_SECONDS), then ends the workers. Closing a worker's pipe while a request waited on it
    answered that request HTTP 500, "internal error ... TypeError" (helper-38's audit)."""
    super().server_close()
    with self._requests_changed:
      self._requests_changed.wait_for(lambda: not self._requests, timeout=STOP_SECONDS)
    if self.pool is not None:
      self.pool.close()

  def handle_error(self, request, client_address):
    # A connection that broke mid-reply: one line, not the standard library's traceback.
    error = sys.exc_info()[1]
    print(f"serve: connection from {client_address[0]} dropped: {type(error).__name__}: {error}",
          file=sys.stderr)


def make_http_server(completer, port: int = 0,
                     workers: Optional[int] = None) -> http.server.ThreadingHTTPServer:
  """An HTTP server on 127.0.0.1:port (0 = a free port); `workers` requests run at once, each
  in a forked copy of `completer` (default: default_workers(); 1: in this process, one at a
  time). server_close() ends the workers."""
  check_workers(workers)
  workers = default_workers() if workers is None else workers
  # The workers first: forked after the socket is bound, they would hold the port open too.
  pool = WorkerPool(completer, workers)
  try:
    server = _Server(("127.0.0.1", port), _handler(completer))
  except BaseException:
    pool.close()
    raise
  server.pool = pool
  return server


def _handler(completer):
  """The request handler class of make_http_server (its pool is the server's)."""

  class Handler(http.server.BaseHTTPRequestHandler):
    """POST /complete, GET /health; any other request, however malformed, gets a JSON error."""
    # Seconds a client may stall mid-request before its connection is closed (frees the thread).
    timeout = 60

    def _send(self, status: int, body: dict, headers=()):
      data = encode_reply(body)
      if self.request_version == "HTTP/0.9":  # garbage request lines parse as 0.9: no status line
        self.request_version = "HTTP/1.0"
      self.send_response(status)
      self.send_header("Content-Type", "application/json; charset=utf-8")
      self.send_header("Content-Length", str(len(data)))
      for name, value in headers:
        self.send_header(name, value)
      self.end_headers()
      if self.command != "HEAD":
        self.wfile.write(data)

    def send_error(self, code, message=None, explain=None):
      """The standard library's own errors (bad request line or headers, a method without a
      do_<METHOD>: 501) as JSON; an unknown method is 405."""
      del explain
      headers = ()
      if code == 501:
        code, headers = 405, (("Allow", "GET, HEAD, POST"),)
        message = f"method {self.command} is not allowed: POST /complete, GET /health"
      self.close_connection = True
      self._send(code, {"error": message or self.responses.get(code, ("HTTP error",))[0]},
                 headers)

    def parse_request(self):
      # RFC 9112 (2.2): an empty line before the request line is skipped; the standard library
      # closed the connection without a reply (helper-17's audit).
      if self.raw_requestline in (b"\r\n", b"\n"):
        self.raw_requestline = self.rfile.readline(65537)
      return super().parse_request()

    def _guarded(self, method):
      try:
        refused = foreign_request(self.headers)
        if refused is not None:
          self.close_connection = True  # (a body is not read)
          self._send(403, {"error": refused})
          return
        method()
      except ConnectionError as e:  # the client hung up: nothing to answer, nothing went wrong
        self.close_connection = True
        print(f"serve: connection from {self.client_address[0]} dropped: {type(e).__name__}: "
              f"{e}", file=sys.stderr)
      except Exception as e:  # pylint: disable=broad-except  (the server outlives any request)
        print(f"serve: internal error on {self.command} {self.path[:200]}: "
              f"{type(e).__name__}: {e}", file=sys.stderr)
        self.close_connection = True
        try:
          self._send(500, {"error": f"internal error: {type(e).__name__} (the server keeps "
                                    "running)"})
        except Exception:  # pylint: disable=broad-except  (the connection itself is gone)
          pass

    def do_GET(self):  # pylint: disable=invalid-name
      self._guarded(self._get)

    def do_POST(self):  # pylint: disable=invalid-name
      self._guarded(self._post)

    def do_HEAD(self):  # pylint: disable=invalid-name  (a health checker's; _send sends no body)
      self._guarded(self._get)

    def _route(self) -> str:
      """The request's path without its query or a trailing slash (`/health?probe=1`: /health;
      not urlsplit, which reads `//x/complete` as the host x)."""
      return self.path.partition("?")[0].rstrip("/")

    def _get(self):
      if self._route() in ("/complete", ""):
        self.close_connection = True
        return self._send(405, {"error": f"GET {self.path} is not allowed: POST the request "
                                         "to /complete (GET /health for the server's state)"},
                          (("Allow", "POST"),))
      if self._route() != "/health":
        return self._send(404, {"error": f"no such path {self.path}: POST /complete, GET /health"})
      info = completer.info
      return self._send(200, {"ok": True, "model": completer.description,
                              "model_dir": str(info.model_dir), "step": info.step,
                              "task": info.task, "runtime": str(completer.runtime_dir),
                              # -inf (show every line) is not JSON: null
                              "min_score": (completer.min_score
                                            if math.isfinite(completer.min_score) else None),
                              # the gate in use when set (else min_score's)
                              "min_confidence": completer.min_confidence,
                              "repo": str(completer.repo) if completer.repo else None,
                              "repo_files": self.server.pool.repo_files(),
                              "workers": self.server.pool.workers,
                              # C where the package's library was built, else NumPy and why
                              "decode_step": native.describe()})

    def _post(self):
      # The body is not read on an error below: close, so its bytes are not taken for a request.
      keep_alive, self.close_connection = not self.close_connection, True
      if self._route() == "/health":
        return self._send(405, {"error": f"POST {self.path} is not allowed: GET /health for the "
                                         "server's state (POST /complete for a completion)"},
                          (("Allow", "GET, HEAD"),))
      if self._route() not in ("/complete", ""):
        return self._send(404, {"error": f"no such path {self.path}: POST /complete"})
      if self.headers.get("Transfer-Encoding") is not None:
        # RFC 9112 (6.3): it would override a Content-Length, which is what is read here.
        return self._send(400, {"error": "Transfer-Encoding is not read: send the body with a "
                                         "Content-Length alone"})
      values = self.headers.get_all("Content-Length") or []
      if not values:
        return self._send(411, {"error": "Content-Length is required (chunked bodies are not "
                                         "read)"})
      # Digits only, once (RFC 9110): Python's int() also reads "3_1", "+31" and " 31", and of
      # two headers the first would win where a proxy before this server may read the other.
      value = values[0].strip()
      if len(values) > 1 or not (value.isascii() and value.isdigit()):
        return self._send(400, {"error": f"Content-Length {', '.join(values)[:100]!r} is not one "
                                         "number of bytes"})
      # (int() refuses more than 4,300 digits: a length that long is over the limit anyway.)
      digits = value.lstrip("0") or "0"
      length = int(digits) if len(digits) <= 20 else MAX_REQUEST_BYTES + 1
      if length > MAX_REQUEST_BYTES:
        size = f"{length:,}" if len(digits) <= 20 else f"a {len(digits):,}-digit number of"
        return self._send(413, {"error": f"request of {size} bytes is over "
                                         f"{MAX_REQUEST_BYTES:,} bytes"})
      try:
        body = self.rfile.read(length)
      except OSError:  # the client stalled past `timeout` or went away
        return self._send(408, {"error": f"the {length}-byte body did not arrive"})
      if len(body) < length:
        return self._send(400, {"error": f"the body ended after {len(body)} of {length} bytes"})
      self.close_connection = not keep_alive
      reply = self.server.pool.handle_line(body)
      status = 200 if "error" not in reply else 500 if reply["error"].startswith(
          INTERNAL_ERROR) else 400
      return self._send(status, reply)

    def log_message(self, format, *args):  # pylint: disable=redefined-builtin
      pass  # quiet: stdout/stderr belong to the user

  return Handler


def _serve(args) -> int:
  if args.port is not None and not 0 <= args.port <= 65535:
    raise complete_lib.CompletionError(f"--port {args.port} is not a port number (0-65535)")
  check_workers(args.workers)  # before the model loads
  if args.workers is not None and args.port is None:
    raise complete_lib.CompletionError("--workers needs --port: requests on stdin are answered "
                                       "one at a time")
  completer = complete_lib.Completer(args.checkpoint, complete_lib.options_from(args),
                                     repo=args.repo)
  if args.port is None:
    return serve_stdio(completer)
  try:
    server = make_http_server(completer, args.port, args.workers)
  except OSError as e:
    raise complete_lib.CompletionError(f"--port {args.port}: {e.strerror}") from None
  host, port = server.server_address[:2]
  print(f"serving on http://{host}:{port}", flush=True)
  try:
    server.serve_forever()
  finally:  # (Ctrl-C: status 130, as the other servers end)
    server.server_close()
  return 0


def register_cli(subparsers) -> None:
  serve = subparsers.add_parser(
      "serve", help="load a checkpoint once and answer completion requests: JSON lines on "
      "stdin/stdout, or HTTP on 127.0.0.1 with --port")
  complete_lib.add_engine_flags(serve)
  serve.add_argument("--port", type=int,
                     help="serve HTTP on 127.0.0.1:PORT (0 = a free port) instead of stdin")
  serve.add_argument("--workers", type=int, default=None,
                     help="with --port: requests answered at once, each by a forked copy of the "
                     f"loaded model (default: the CPUs, at most {MAX_DEFAULT_WORKERS}; 1: one at a "
                     "time, in the server's process)")
  serve.set_defaults(func=_serve)
