"""How soon `code-t5 lsp` answers its first completion after an editor starts it.

    python benchmarks/lsp_start_benchmark.py [--runs 5] [--workspace DIR] [--file PATH --line N]

Each run starts `code-t5 lsp` (the installed console script, the shipped model) as an editor
does, over pipes: initialize with --workspace as the workspace folder (default: this repository,
whose *.py files the server indexes beside the model's start), initialized, didOpen of --file,
then a completion at the start of --line's code, and times the start -> that reply, and the
start -> the initialize reply. Issue 31's bound for the first answer is 3 s. Prints the median and
the worst of --runs runs (after one warm-up run that puts the files in the page cache) with the
machine's kind and load; it asserts nothing.
"""

import argparse
import json
import pathlib
import re
import statistics
import subprocess
import sys
import time

import bench_utils

CONSOLE_SCRIPT = pathlib.Path(sys.executable).parent / "code-t5"


def _send(process, message: dict) -> None:
  body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
  process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
  process.stdin.flush()


def _reply(process, request_id) -> dict:
  """The response to `request_id` (notifications and other responses skipped)."""
  while True:
    header = process.stdout.readline()
    if not header:
      raise SystemExit(f"the server ended before answering {request_id!r}")
    length = int(re.fullmatch(rb"Content-Length: (\d+)\r\n", header).group(1))
    while process.stdout.readline() != b"\r\n":
      pass
    message = json.loads(process.stdout.read(length))
    if message.get("id") == request_id:
      return message


def one_run(workspace: pathlib.Path, path: pathlib.Path, line: int):
  """(seconds to the initialize reply, seconds to the first completion reply, its best label)."""
  text = path.read_text(encoding="utf-8")
  code_line = text.split("\n")[line - 1]
  character = len(code_line) - len(code_line.lstrip())
  start = time.perf_counter()
  process = subprocess.Popen([sys.executable, str(CONSOLE_SCRIPT), "lsp"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
  try:
    _send(process, {"id": 1, "method": "initialize", "params": {
        "processId": None, "rootUri": workspace.as_uri(), "capabilities": {},
        "workspaceFolders": [{"uri": workspace.as_uri(), "name": workspace.name}]}})
    _reply(process, 1)
    initialized = time.perf_counter() - start
    _send(process, {"method": "initialized", "params": {}})
    uri = path.resolve().as_uri()
    _send(process, {"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "python", "version": 1, "text": text}}})
    _send(process, {"id": 2, "method": "textDocument/completion", "params": {
        "textDocument": {"uri": uri}, "position": {"line": line - 1, "character": character}}})
    reply = _reply(process, 2)
    answered = time.perf_counter() - start
    result = reply.get("result") or {}
    items = result.get("items", result) if isinstance(result, dict) else result
    label = items[0]["label"] if items else ""
    _send(process, {"id": 3, "method": "shutdown"})
    _reply(process, 3)
    _send(process, {"method": "exit"})
    process.wait(20)
    return initialized, answered, label
  finally:
    if process.poll() is None:
      process.kill()
      process.wait()


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--runs", type=int, default=5)
  parser.add_argument("--workspace", type=pathlib.Path, default=bench_utils.REPO)
  parser.add_argument("--file", type=pathlib.Path,
                      default=bench_utils.REPO / "code_t5" / "engine" / "serve.py")
  parser.add_argument("--line", type=int, default=105, help="1-based; the cursor goes to the start "
                      "of its code")
  args = parser.parse_args(argv)
  print(f"machine: {bench_utils.cpu_kind()}; load before {bench_utils.load_average()}")
  one_run(args.workspace, args.file, args.line)  # warm-up: files into the page cache
  runs = [one_run(args.workspace, args.file, args.line) for _ in range(args.runs)]
  for name, index in (("start -> initialize reply", 0), ("start -> first completion", 1)):
    values = [r[index] for r in runs]
    print(f"{name:28} median {statistics.median(values):.2f} s, worst {max(values):.2f} s "
          f"({args.runs} runs)")
  print(f"first completion at {args.file.name}:{args.line}: {runs[-1][2]!r} (\"\": nothing shown)")
  print(f"load after {bench_utils.load_average()}")
  return 0


if __name__ == "__main__":
  sys.exit(main())
