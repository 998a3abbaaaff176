"""Latency and memory of line completion on this CPU: the NumPy engine, where its time goes, and
what it replaced.

    python benchmarks/latency_benchmark.py [--requests 60] [--no-shipped] [--no-small]
                                           [--no-savedmodel] [--clients 8] [--keystrokes 300]
                                           [--moves 120]
    python benchmarks/latency_benchmark.py --concurrency-only [--clients 8] [--workers N]
                                           [--serve-from CHECKOUT]

Models: the shipped one (code_t5/pretrained, decoder-only d256 x 4, 5.2M parameters, 8k pieces)
and a "small" decoder-only (d512 x 6, ~25M parameters; trained one step here, once, into --work:
latency does not depend on what it learnt, but an untrained model rarely ends a line, so its
per-request figures are given for the shipped model's mean line length from its per-step cost).
Requests are real cursors: dataset-dev's validation line-completion points
(code_t5.data.line_completion).

Per model it prints:
- in process (what `serve` pays per request once loaded), p50/p95 over the points: greedy best
  line (beam 1, no healing, no filters), the engine's default best line (beam 5, healing,
  filters, --top 1) and its top 5 (--top 5); the best line also with the repository's indexes
  prepared for the point's file before its request, as `lsp` prepares them when a file is
  opened (the first request in a file builds them otherwise);
- typing (--keystrokes): the default with the repository at every keystroke of the points'
  lines, as an editor asks while the user types, through one Completer: as it runs (each
  request reusing the one before's reading of the context and the file's pieces) and again with
  nothing kept, p50/p95 and their ratio;
- moving (--moves): the same at the start of consecutive lines of dataset-dev's largest
  validation files, as an editor asks while the user moves down a file (the file above and
  below the cursor's line changes at every request);
- where the default's time goes: encoding the context (SentencePiece + left truncation),
  reading it (`Network.start`: one pass over ~255 tokens), the decode steps (per step, and how
  many), and the Python around them (search bookkeeping, filters); again with the network in
  NumPy, which the C decode step (code_t5/engine/native.py) replaced, and the ratio of their ms
  per step;
- the `code-t5 serve` process over stdin: request round-trip p50/p95 and its peak RSS (VmHWM);
- `code-t5 serve --port` under concurrency: one client, then --clients clients at once (each
  sending its next request as soon as its reply arrives, every point once, from its own
  offset), in one command: p50/p95 round trips, requests/s, and p95(N clients) / p95(one), the
  figure issue 34 bounds (at most 4x for 8 clients). --concurrency-only runs only this; with
  --serve-from, the serve of another checkout (e.g. the one-lock server before workers) runs,
  with the same points and clients;
- cold: a whole `code-t5 complete FILE:LINE:COL` process, start to printed line (median of 5,
  after one unmeasured run that writes the package's bytecode, as a user's first run does);
- what the cache gives: greedy with the whole sequence recomputed per token instead of one cached
  step (same points, ratio);
- what it replaced (--no-savedmodel skips): Mesh TF's exported SavedModel (`code-t5 export`,
  greedy, TF session, the previous `complete`/`serve` path) at the same points, and the RSS of a
  process holding it.

Prints figures and ratios; asserts nothing. Run it on an idle machine (load printed).
"""

import argparse
import http.client
import json
import os
import pathlib
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import bench_utils  # pylint: disable=g-import-not-at-top  (benchmarks/; puts the repository on
# sys.path and keeps the libraries' log off the output, so it comes before code_t5)

from code_t5 import test_utils  # pylint: disable=g-import-not-at-top,wrong-import-position
from code_t5.data import flcc  # pylint: disable=g-import-not-at-top,wrong-import-position
from code_t5.data import line_completion  # pylint: disable=g-import-not-at-top,wrong-import-position
from code_t5.data import sources  # pylint: disable=g-import-not-at-top,wrong-import-position
from code_t5.engine import complete  # pylint: disable=g-import-not-at-top,wrong-import-position
from code_t5.engine import decoding  # pylint: disable=g-import-not-at-top,wrong-import-position
from code_t5.engine import native  # pylint: disable=g-import-not-at-top,wrong-import-position
from code_t5.engine import repository  # pylint: disable=g-import-not-at-top,wrong-import-position
from code_t5.training import launcher  # pylint: disable=g-import-not-at-top,wrong-import-position


CODE_T5 = pathlib.Path(sys.executable).parent / "code-t5"
GREEDY = complete.EngineOptions(top=1, beam_size=1, heal=False, filters=False, cache=False,
                                retrieval=False)
DEFAULT = complete.EngineOptions(top=1)
TOP5 = complete.EngineOptions(top=5)
# The default without the code most like the cursor's read first (code_t5.engine.similar_code).
NO_SIMILAR = complete.EngineOptions(top=1, similar=False)
# The engine without the repository, the file's cache or whole-line retrieval (as it was).
FILE_ONLY = complete.EngineOptions(top=1, cache=False, retrieval=False, below=False)


def _points(count, typed=True):
  """(text, cursor, repo, path) at dataset-dev's validation line-completion points (the first
  `count`); typed: the text as the point's line is typed, its rest (the target) not there yet,
  as in the evaluation (the engine offers only what fits before text after the cursor)."""
  files = flcc.read_files(sources.DEV_ROOT, only_split="validation")
  points = [(test_utils.as_typed(f.text, p.cursor) if typed else f.text, p.cursor, f.repo, f.path)
            for f, p in line_completion.points_of_files(files)]
  return points[:count]


def _repositories(completer):
  """dataset-dev's validation repositories, each as the engine's Repository (what an editor
  with the project open gives it)."""
  repositories = {}
  for f in flcc.read_files(sources.DEV_ROOT, only_split="validation"):
    repositories.setdefault(f.repo, repository.Repository(completer.tokenizer)).add(f.path, f.text)
  return repositories


def _small_model(work: pathlib.Path) -> pathlib.Path:
  """A ~25M-parameter causal LM (sizes/small.gin, 8k pieces) after one training step."""
  model_dir = work / "causal_lm-small-spm_dev"
  if launcher.latest_step(model_dir) is None:
    experiment = launcher.Experiment(
        model="causal_lm", size="small", vocab="spm_dev", model_dir=model_dir,
        gin_params=["utils.run.batch_size = ('sequences_per_batch', 1)"])
    start = time.time()
    if launcher.run(experiment.train_command(1), model_dir / "logs" / "train.log",
                    echo=lambda line: None):
      sys.exit(f"training the small model failed: see {model_dir / 'logs' / 'train.log'}")
    print(f"  trained the small model one step in {time.time() - start:.0f} s")
  return model_dir


def _in_process(model_dir, options, points, with_repository=False, prepared=False):
  """Per request ms and line length; with_repository: each point's repository (its file left
  out) is the engine's, as in an editor with the project open; prepared: its indexes built for
  the point's file before the request (Repository.prepare, untimed), as `lsp` builds them when
  a file is opened or saved. Otherwise the first request in each file builds them."""
  completer = complete.Completer(model_dir, options, echo=lambda line: None)
  repositories = _repositories(completer) if with_repository else {}
  for text, cursor, *_ in points[:2]:  # warm-up (BLAS threads, first allocations)
    completer.complete_at(text, cursor)
  times, lengths = [], []
  for text, cursor, repo, path in points:
    if prepared and repo in repositories:
      repositories[repo].prepare(path)
    result = completer.complete_at(text, cursor, repository=repositories.get(repo), path=path)
    times.append(result.ms)
    lengths.append(len(result.completion))
  return times, lengths


def _typing(model_dir, points, keystrokes: int) -> dict:
  """The default engine with the point's repository at every keystroke of the points' lines
  (the first `keystrokes`, in order, one Completer as in an editor's LSP or serve): ms per
  request as it runs (each request reusing what the one before computed: its reading of the
  context and the file's pieces), and the same requests with nothing kept between them."""
  return _kept_and_afresh(model_dir, [(test_utils.as_typed(text, k), k, repo, path)
                                      for text, cursor, repo, path in points
                                      for k in test_utils.keystrokes(text, cursor)][:keystrokes])


def _moving(model_dir, moves: int) -> dict:
  """As `_typing`, at the start of consecutive lines (after their indentation) from the middle
  of dataset-dev's three largest validation files, `moves` in all: an editor moving down a file,
  where the file above and below the cursor's line changes at every request."""
  files = sorted(flcc.read_files(sources.DEV_ROOT, only_split="validation"),
                 key=lambda f: -len(f.text))[:3]
  requests = []
  for f in files:
    starts = [k + 1 for k, c in enumerate(f.text) if c == "\n"]
    middle = len(starts) // 2
    for start in starts[middle:middle + moves // len(files)]:
      indent = len(f.text[start:]) - len(f.text[start:].lstrip(" "))
      requests.append((test_utils.as_typed(f.text, start + indent), start + indent, f.repo,
                       f.path))
  result = _kept_and_afresh(model_dir, requests)
  result["file_kb"] = [len(f.text) / 1000 for f in files]
  return result


def _kept_and_afresh(model_dir, requests) -> dict:
  """ms per request (p50, p95) of the default engine with the repository through one Completer,
  as it runs and with nothing kept between requests (Completer.forget_requests)."""
  completer = complete.Completer(model_dir, DEFAULT, echo=lambda line: None)
  repositories = _repositories(completer)
  for text, cursor, *_ in requests[:2]:  # warm-up
    completer.complete_at(text, cursor)
  times = {"kept": [], "afresh": []}
  for kept in (True, False):
    for text, cursor, repo, path in requests:
      if not kept:
        completer.forget_requests()
      result = completer.complete_at(text, cursor, repository=repositories.get(repo), path=path)
      times["kept" if kept else "afresh"].append(result.ms)
  return {"requests": len(requests), "kept": bench_utils.p50_p95(times["kept"]),
          "afresh": bench_utils.p50_p95(times["afresh"])}


class _CountingNetwork:
  """Wraps a Network to time `start` and `step` separately and count the steps."""

  def __init__(self, network):
    self._network = network
    self.start_s = self.step_s = 0.0
    self.steps = 0

  def __getattr__(self, name):
    return getattr(self._network, name)

  def start(self, ids, reuse=None):
    t = time.perf_counter()
    result = self._network.start(ids, reuse)
    self.start_s += time.perf_counter() - t
    return result

  def step(self, beams, tokens):
    t = time.perf_counter()
    result = self._network.step(beams, tokens)
    self.step_s += time.perf_counter() - t
    self.steps += 1
    return result


def _breakdown(model_dir, points, with_native=True) -> dict:
  """Where the default engine's time goes, summed over the points, in ms per request.

  with_native=False: the network in NumPy, as before code_t5/engine/native.py (what it
  replaced)."""
  if not with_native:
    built, native.available = native.available, False
    try:
      return _breakdown(model_dir, points)
    finally:
      native.available = built
  completer = complete.Completer(model_dir, DEFAULT, echo=lambda line: None)
  counting = _CountingNetwork(completer.network)
  # The Completer reads the context itself (Network.start) and hands the state to the search.
  completer.network = counting
  completer._search = decoding.LineSearch(counting)  # pylint: disable=protected-access
  context_s = total_s = 0.0
  for text, cursor, *_ in points:
    t = time.perf_counter()
    completer.tokenizer.encode(completer.context(text[:cursor]))
    context_s += time.perf_counter() - t
    t = time.perf_counter()
    completer.complete_at(text, cursor)
    total_s += time.perf_counter() - t
  n = len(points)
  per = lambda seconds: 1000 * seconds / n
  return {"context_ms": per(context_s), "start_ms": per(counting.start_s),
          "steps": counting.steps / n, "step_ms": 1000 * counting.step_s / max(counting.steps, 1),
          "decode_ms": per(counting.step_s), "total_ms": per(total_s),
          "other_ms": per(total_s - context_s - counting.start_s - counting.step_s)}


def _uncached_greedy(model_dir, points) -> list:
  """Greedy lines with no key/value cache: every token costs a full pass over the context and
  the tokens generated so far. Same lines as the cached greedy (its token counts), same work per
  token as an uncached decoder (one `Network.start` over a sequence of that length)."""
  completer = complete.Completer(model_dir, GREEDY, echo=lambda line: None)
  network = completer.network
  times = []
  for text, cursor, *_ in points:
    _, ranked = completer.ranked(text[:cursor])
    tokens = ranked[0][0].tokens if ranked else completer.max_tokens
    t = time.perf_counter()
    ids = completer.tokenizer.encode(completer.context(text[:cursor]))
    for k in range(tokens):
      network.start(ids + [3] * k)  # the length of [context, EOS, k generated tokens]
    times.append(1000 * (time.perf_counter() - t))
  return times


def _serve(model_dir, points) -> dict:
  """`code-t5 serve` over stdin/stdout: round trips and the process's peak RSS."""
  process = subprocess.Popen([str(CODE_T5), "serve", "--checkpoint", str(model_dir)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL)
  times = []
  try:
    for i, (text, cursor, *_) in enumerate(points):
      request = json.dumps({"text": text, "cursor": cursor}) + "\n"
      t = time.perf_counter()
      process.stdin.write(request.encode("utf-8"))
      process.stdin.flush()
      reply = json.loads(process.stdout.readline())
      if i:  # the first includes the model's load
        times.append(1000 * (time.perf_counter() - t))
      assert "error" not in reply, reply
    status = pathlib.Path(f"/proc/{process.pid}/status").read_text()
    rss_mb = int(next(l for l in status.splitlines() if l.startswith("VmHWM")).split()[1]) / 1024
  finally:
    process.stdin.close()
    process.wait(timeout=30)
  p50, p95 = bench_utils.p50_p95(times)
  return {"p50_ms": p50, "p95_ms": p95, "rss_mb": rss_mb}


def _post(port: int, body: bytes) -> dict:
  """One POST /complete on its own connection (as an editor's plugin sends it)."""
  connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
  try:
    connection.request("POST", "/complete", body, {"Content-Type": "application/json"})
    return json.loads(connection.getresponse().read())
  finally:
    connection.close()


def _concurrency(model_dir, points, clients: int, workers=None, serve_from=None) -> dict:
  """`code-t5 serve --port 0` (of `serve_from`, a checkout, or this one) under one client, then
  under `clients` at once: round trips, requests/s. Every client sends every point once, from
  its own offset, its next request as soon as its reply arrives."""
  root = pathlib.Path(serve_from or bench_utils.REPO).resolve()
  command = [sys.executable, "-m", "code_t5.cli", "serve", "--checkpoint", str(model_dir),
             "--port", "0"] + ([] if workers is None else ["--workers", str(workers)])
  env = dict(os.environ, PYTHONPATH=str(root))
  process = subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True)
  try:
    line = process.stdout.readline()
    if not line.startswith("serving on "):
      sys.exit(f"{' '.join(command)} did not start: {line!r}")
    port = int(line.rsplit(":", 1)[1])
    bodies = [json.dumps({"text": text, "cursor": cursor}).encode("utf-8")
              for text, cursor, *_ in points]
    for body in bodies[:2]:  # warm-up (every worker's first allocations)
      _post(port, body)

    def timed(body):
      t = time.perf_counter()
      reply = _post(port, body)
      assert "error" not in reply, reply
      return 1000 * (time.perf_counter() - t)

    start = time.perf_counter()
    single = [timed(body) for body in bodies]
    single_s = time.perf_counter() - start
    times = [[] for _ in range(clients)]

    def client(k):
      offset = k * len(bodies) // clients
      times[k] = [timed(body) for body in bodies[offset:] + bodies[:offset]]
    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    start = time.perf_counter()
    for thread in threads:
      thread.start()
    for thread in threads:
      thread.join()
    many_s = time.perf_counter() - start
    many = [t for client_times in times for t in client_times]
  finally:
    process.terminate()
    process.wait(timeout=60)
  return {"clients": clients, "workers": workers, "from": str(root),
          "single": bench_utils.p50_p95(single), "single_rps": len(single) / single_s,
          "many": bench_utils.p50_p95(many), "many_rps": len(many) / many_s}


def _report_concurrency(rows):
  print("\n`code-t5 serve --port` under concurrency, round trips in ms (p50 / p95):")
  print(f"{'model':<10}{'serve of':<22}{'workers':>8}{'1 client':>14}{'req/s':>8}"
        f"{'clients':>8}{'N clients':>16}{'req/s':>8}{'p95 N / p95 1':>15}")
  for r in rows:
    for c in r["concurrency"]:
      pair = lambda key, c=c: f"{c[key][0]:.0f} / {c[key][1]:.0f}"
      here = pathlib.Path(c["from"]) == bench_utils.REPO.resolve()
      where = "this checkout" if here else c["from"]
      workers = "default" if c["workers"] is None else str(c["workers"])
      print(f"{r['name']:<10}{where[-21:]:<22}{workers:>8}{pair('single'):>14}"
            f"{c['single_rps']:>8.1f}{c['clients']:>8}{pair('many'):>16}{c['many_rps']:>8.1f}"
            f"{c['many'][1] / c['single'][1]:>14.2f}x")


def _cold(model_dir, runs=5) -> float:
  with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
    f.write("import os\nimport sys\n\n\ndef main(argv):\n    path = os.pa")
  # Without PYTHONDONTWRITEBYTECODE (set in some shells and CI images): a user's first run writes
  # the bytecode of modules changed since the install, and with it set every run compiled them
  # again (~40 ms on the slower kind after an edit to four modules).
  env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
  seconds = []
  for run in range(runs + 1):
    t = time.perf_counter()
    result = subprocess.run([str(CODE_T5), "complete", "--checkpoint", str(model_dir), f.name],
                            capture_output=True, text=True, check=False, env=env)
    if run:  # the first run writes bytecode and warms the page cache
      seconds.append(time.perf_counter() - t)
    if result.returncode:
      sys.exit(f"code-t5 complete failed: {result.stderr[-2000:]}")
  pathlib.Path(f.name).unlink()
  return statistics.median(seconds)


def _savedmodel(model_dir, points, work: pathlib.Path) -> dict:
  """The previous path: Mesh TF's greedy SavedModel export in a TF1 session (in a subprocess,
  so its RSS is its own). Exported into a copy under `work`: the shipped model is part of the
  package, which a benchmark does not write to."""
  copy = work / "savedmodel" / pathlib.Path(model_dir).name
  if not copy.exists():
    shutil.copytree(model_dir, copy, ignore=shutil.ignore_patterns("runtime"))
  model_dir = copy
  code = f"""
import json, resource, sys, time
sys.path.insert(0, {str(bench_utils.REPO)!r})
import tensorflow as tf, tensorflow_text
from code_t5.engine import complete
settings = complete.DecodeSettings(max_length=complete.DEFAULT_MAX_LENGTH)
path = complete.export({str(model_dir)!r}, settings, echo=lambda line: None)
info = complete.model_info({str(model_dir)!r})
vocabulary = complete.task_vocabulary(info)
graph = tf.Graph(); session = tf.compat.v1.Session(graph=graph)
with graph.as_default():
  meta = tf.compat.v1.saved_model.loader.load(session, ["serve"], str(path))
signature = meta.signature_def["serving_default"]
feed, fetch = signature.inputs["inputs"].name, signature.outputs["outputs"].name
points = json.load(sys.stdin)
times = []
for i, (text, cursor, *_) in enumerate(points):
  context = complete.left_truncate(text[:cursor], vocabulary, info.max_context_tokens)
  t = time.perf_counter()
  session.run(fetch, {{feed: [context.encode()]}})
  if i >= 2:
    times.append(1000 * (time.perf_counter() - t))
print(json.dumps({{"times": times,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""
  result = subprocess.run([sys.executable, "-c", code], input=json.dumps(points),
                          capture_output=True, text=True, check=False)
  if result.returncode:
    return {"error": result.stderr.strip().splitlines()[-1]}
  found = json.loads(result.stdout.strip().splitlines()[-1])
  p50, p95 = bench_utils.p50_p95(found["times"])
  return {"p50_ms": p50, "p95_ms": p95, "rss_mb": found["rss_mb"]}


def measure(name, model_dir, points, args) -> dict:
  """Every figure of one model; a line per stage as it ends (the whole takes minutes)."""
  print(f"{name}: {model_dir}")
  figures = {"name": name}
  if args.concurrency_only:
    figures["concurrency"] = []
    for checkout in args.serve_from or [None]:
      start = time.perf_counter()
      figures["concurrency"].append(_concurrency(model_dir, points, args.clients, args.workers,
                                                 checkout))
      print(f"  serve of {checkout or 'this checkout'}, 1 then {args.clients} clients: "
            f"{time.perf_counter() - start:.1f} s", flush=True)
    return figures
  stages = 14 + args.savedmodel + native.available
  seconds = {}

  def timed(label, function, *arguments):
    start = time.perf_counter()
    result = function(*arguments)
    seconds[label] = time.perf_counter() - start
    print(f"  [{len(seconds)}/{stages}] {label}: {seconds[label]:.1f} s", flush=True)
    return result

  timed("load", complete.Completer, model_dir, DEFAULT, lambda line: None)
  figures["load_s"] = seconds["load"]
  for label, options, with_repository, prepared in (
      ("greedy", GREEDY, False, False), ("file_only", FILE_ONLY, False, False),
      ("best", DEFAULT, True, False), ("best_prepared", DEFAULT, True, True),
      ("top5", TOP5, True, False), ("no_similar", NO_SIMILAR, True, False)):
    times, lengths = timed(f"{label}, {len(points)} requests", _in_process, model_dir, options,
                           points, with_repository, prepared)
    figures[label] = bench_utils.p50_p95(times)
    figures[f"{label}_chars"] = statistics.mean(lengths)
  # The whole lines of the points, typed key by key.
  figures["typing"] = timed(f"typing, {args.keystrokes} keystrokes x 2", _typing, model_dir,
                            _points(len(points), typed=False), args.keystrokes)
  figures["moving"] = timed(f"moving, {args.moves} lines x 2", _moving, model_dir, args.moves)
  figures["breakdown"] = timed("breakdown", _breakdown, model_dir, points)
  if native.available:
    figures["breakdown_numpy"] = timed("breakdown, the network in NumPy", _breakdown, model_dir,
                                       points, False)
  figures["uncached"] = bench_utils.p50_p95(timed("no cache", _uncached_greedy, model_dir, points))
  figures["serve"] = timed("serve", _serve, model_dir, points)
  figures["concurrency"] = [timed(f"serve, 1 then {args.clients} clients", _concurrency,
                                  model_dir, points, args.clients, args.workers,
                                  (args.serve_from or [None])[0])]
  figures["cold_s"] = timed("cold complete x6", _cold, model_dir)
  if args.savedmodel:
    figures["savedmodel"] = timed("SavedModel (exports first)", _savedmodel, model_dir, points,
                                  args.work)
  return figures


def _report(rows):
  print("\nin process, ms (p50 / p95):")
  print("(best, top-5: the engine's default with the point's repository; file only: without the "
        "repository, copy cache and retrieval)")
  print(f"{'model':<10}{'load s':>8}{'greedy':>14}{'file only':>14}{'best':>14}"
        f"{'best/file only':>15}{'top-5':>14}{'top-5/best':>12}"
        f"{'no cache':>14}{'no cache/greedy':>17}")
  for r in rows:
    pair = lambda key: f"{r[key][0]:.0f} / {r[key][1]:.0f}"
    print(f"{r['name']:<10}{r['load_s']:>8.2f}{pair('greedy'):>14}{pair('file_only'):>14}"
          f"{pair('best'):>14}{r['best'][0] / r['file_only'][0]:>14.2f}x"
          f"{pair('top5'):>14}{r['top5'][0] / r['best'][0]:>11.2f}x{pair('uncached'):>14}"
          f"{r['uncached'][0] / r['greedy'][0]:>16.1f}x")
  for r in rows:
    print(f"{r['name']}: best with the repository's indexes prepared for each point's file before "
          f"its request (as `lsp` prepares them when a file is opened or saved) "
          f"{r['best_prepared'][0]:.0f} / {r['best_prepared'][1]:.0f} ms")
    print(f"{r['name']}: the default without the similar code read first (--no-similar) "
          f"{r['no_similar'][0]:.0f} / {r['no_similar'][1]:.0f} ms; best / that: "
          f"{r['best'][0] / r['no_similar'][0]:.2f}x at p50, "
          f"{r['best'][1] / r['no_similar'][1]:.2f}x at p95")
  for key, what, unit in (
      ("typing", "at every keystroke of the points' lines", "keystrokes"),
      ("moving", "at the start of consecutive lines of dataset-dev's largest validation files",
       "lines")):
    print(f"\n{key}: the default best line {what}, one Completer, ms (p50 / p95):")
    print(f"{'model':<10}{unit:>11}{'as it runs':>14}{'nothing kept':>14}{'ratio p50':>11}"
          f"{'ratio p95':>11}")
    for r in rows:
      t = r[key]
      print(f"{r['name']:<10}{t['requests']:>11}{t['kept'][0]:>8.0f} / {t['kept'][1]:<4.0f}"
            f"{t['afresh'][0]:>8.0f} / {t['afresh'][1]:<4.0f}"
            f"{t['kept'][0] / t['afresh'][0]:>10.2f}x{t['kept'][1] / t['afresh'][1]:>10.2f}x"
            + (f"  files of {', '.join(f'{kb:.0f}' for kb in t['file_kb'])} kB"
               if "file_kb" in t else ""))
  print("\nwhere the default best line's time goes, ms per request (means):")
  print(f"{'model':<10}{'context':>9}{'start':>9}{'steps':>8}{'ms/step':>9}{'decode':>9}"
        f"{'other':>9}{'total':>9}")
  for r in rows:
    for key, name in (("breakdown", r["name"]), ("breakdown_numpy", "  NumPy")):
      if key in r:
        b = r[key]
        print(f"{name:<10}{b['context_ms']:>9.1f}{b['start_ms']:>9.1f}{b['steps']:>8.1f}"
              f"{b['step_ms']:>9.2f}{b['decode_ms']:>9.1f}{b['other_ms']:>9.1f}"
              f"{b['total_ms']:>9.1f}")
  print(f"(the network: {native.describe()}"
        + ("; \"NumPy\": the same requests with the network in NumPy, which it replaced, ms "
           "per step " + ", ".join(
               f"{r['name']} {r['breakdown']['step_ms'] / r['breakdown_numpy']['step_ms']:.2f}x"
               for r in rows if "breakdown_numpy" in r) if native.available else "") + ")")
  print("\nprocesses:")
  print(f"{'model':<10}{'serve p50/p95 ms':>18}{'serve RSS MB':>14}{'cold complete s':>17}"
        f"{'SavedModel p50/p95 ms':>23}{'SavedModel RSS MB':>19}{'SavedModel/best':>17}")
  for r in rows:
    s, saved = r["serve"], r.get("savedmodel") or {}
    saved_ms = (f"{saved['p50_ms']:.0f} / {saved['p95_ms']:.0f}" if "p50_ms" in saved
                else saved.get("error", "skipped")[:22])
    ratio = f"{saved['p50_ms'] / r['best'][0]:.1f}x" if "p50_ms" in saved else "-"
    rss = f"{saved['rss_mb']:.0f}" if "rss_mb" in saved else "-"
    print(f"{r['name']:<10}{s['p50_ms']:>8.0f} / {s['p95_ms']:<7.0f}{s['rss_mb']:>14.0f}"
          f"{r['cold_s']:>17.2f}{saved_ms:>23}{rss:>19}{ratio:>17}")


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--work", type=pathlib.Path,
                      default=pathlib.Path(tempfile.gettempdir()) / "code_t5_latency")
  parser.add_argument("--requests", type=int, default=60)
  parser.add_argument("--moves", type=int, default=120,
                      help="line starts of the moving figure (an editor moving down a file)")
  parser.add_argument("--keystrokes", type=int, default=300,
                      help="requests of the typing figure (default 300)")
  parser.add_argument("--no-shipped", dest="shipped", action="store_false")
  parser.add_argument("--no-small", dest="small", action="store_false")
  parser.add_argument("--no-savedmodel", dest="savedmodel", action="store_false")
  parser.add_argument("--clients", type=int, default=8,
                      help="concurrent clients of the serve concurrency figure (default 8)")
  parser.add_argument("--workers", type=int, default=None,
                      help="serve's --workers for the concurrency figure (default: serve's own)")
  parser.add_argument("--serve-from", type=pathlib.Path, action="append", metavar="CHECKOUT",
                      help="the concurrency figure's serve runs from this checkout of the "
                      "project (default: this one), e.g. another branch's worktree; repeated "
                      "with --concurrency-only: one figure each, in turn")
  parser.add_argument("--concurrency-only", action="store_true",
                      help="only the serve concurrency figure (shipped model unless --no-shipped)")
  args = parser.parse_args(argv)
  if args.clients < 1:
    parser.error(f"--clients must be at least 1, got {args.clients}")
  if args.concurrency_only:
    args.small = args.small and not args.shipped
  print(f"{bench_utils.cpu_kind()}; load average before: {bench_utils.load_average()}")
  print(f"the network's decode steps: {native.describe()}; reading the context: "
        f"{bench_utils.numpy_blas()}")
  points = _points(args.requests)
  models = [("shipped", test_utils.PRETRAINED)] if args.shipped else []
  if args.small:
    models.append(("small", _small_model(args.work)))
  rows = [measure(name, model_dir, points, args) for name, model_dir in models]
  print(f"load average after: {bench_utils.load_average()}")
  print(f"{len(points)} requests at dataset-dev's validation line-completion points; this "
        f"process's peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
  if not args.concurrency_only:
    _report(rows)
  _report_concurrency(rows)


if __name__ == "__main__":
  main()
