"""Two training set-ups against each other in alternated runs: which trains faster, and by how much.

    python benchmarks/ab_benchmark.py --pairs 4 [--a-gin-param BINDING]... [--b-gin-param ...]
        [--a-env NAME=VALUE]... [--b-env ...] [--a-tree PATH] [--b-tree PATH]
        [-- train_benchmark.py's options]

Runs benchmarks/train_benchmark.py 2 x --pairs times, set-ups A and B in the order A B, B A, A B,
... so that a machine that slows down or speeds up during the session (as these 2-core machines
do, by up to a third in an hour: docs/speed.md) favours neither. A and B differ by gin bindings,
by the trainer's environment (train_benchmark.py's --env), by the source tree put first on
PYTHONPATH (a `git worktree add PATH REV` of another commit, with `ln -s ../gin_configs
PATH/code_t5/gin_configs`), or by several of these. Prints each run's steady token slots/s
and launch -> first step, then for each set-up the mean and the median, B / A of both, and in how
many pairs B trained faster. A single traced step is no forecast of this (docs/speed.md, "Back on
the AMX kind"): a change to the step is kept when it shows here. Prints figures only; asserts
nothing.

    python benchmarks/ab_benchmark.py --pairs 4 \\
        --b-gin-param 'code_t5.loss_per_target_token.fused = False' -- --steps 30
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
DEFAULT_RUN = ["--model", "causal_lm", "--size", "mini", "--vocab", "spm_dev", "--steps", "30"]


def run_once(gin_params, env_settings, tree, run_args, json_path: pathlib.Path) -> dict:
  """One train_benchmark.py run; its figures (the JSON line it appends)."""
  env = dict(os.environ)
  if tree:
    env["PYTHONPATH"] = os.pathsep.join([str(tree)] + ([env["PYTHONPATH"]]
                                                       if env.get("PYTHONPATH") else []))
  command = [sys.executable, str(HERE / "train_benchmark.py"), *run_args, "--json",
             str(json_path)]
  for binding in gin_params:
    command += ["--gin-param", binding]
  for setting in env_settings:
    command += ["--env", setting]
  done = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                        text=True, check=False)
  lines = json_path.read_text().splitlines() if json_path.exists() else []
  json_path.unlink(missing_ok=True)
  if done.returncode or not lines:
    tail = "\n".join(done.stdout.splitlines()[-15:])
    raise SystemExit(f"ab_benchmark: train_benchmark.py failed (exit {done.returncode}):\n{tail}")
  return json.loads(lines[-1])


def order(pairs: int):
  """A B, B A, A B, ...: each set-up first in half of the pairs."""
  for i in range(pairs):
    yield i + 1, ("A", "B") if i % 2 == 0 else ("B", "A")


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--pairs", type=int, default=4)
  parser.add_argument("--a-gin-param", action="append", default=[])
  parser.add_argument("--b-gin-param", action="append", default=[])
  parser.add_argument("--a-env", action="append", default=[], help="NAME=VALUE for A's trainer")
  parser.add_argument("--b-env", action="append", default=[], help="NAME=VALUE for B's trainer")
  parser.add_argument("--a-tree", type=pathlib.Path, help="source tree first on A's PYTHONPATH")
  parser.add_argument("--b-tree", type=pathlib.Path, help="source tree first on B's PYTHONPATH")
  parser.add_argument("run_args", nargs="*",
                      help=f"train_benchmark.py's options (default: {' '.join(DEFAULT_RUN)})")
  args = parser.parse_args(argv)
  if args.pairs < 1:
    parser.error("--pairs: at least 1")
  for flag, tree in (("--a-tree", args.a_tree), ("--b-tree", args.b_tree)):
    if tree and not (tree / "code_t5" / "__init__.py").is_file():
      parser.error(f"{flag} {tree}: no code_t5/__init__.py there; give a checkout of this project")
  for flag, setting in [("--a-env", e) for e in args.a_env] + [("--b-env", e) for e in args.b_env]:
    if "=" not in setting or setting.startswith("="):
      parser.error(f"{flag} {setting!r}: give NAME=VALUE")
  setups = {"A": (args.a_gin_param, args.a_env, args.a_tree),
            "B": (args.b_gin_param, args.b_env, args.b_tree)}
  if setups["A"] == setups["B"]:
    parser.error("A and B are the same set-up: give a --b-gin-param, --b-env or --b-tree (or A's)")
  for name, (params, env_settings, tree) in setups.items():
    print(f"{name}: {tree or 'this tree'}" + "".join(f"; {p}" for p in params + env_settings))
  run_args = args.run_args or DEFAULT_RUN
  rates = {"A": [], "B": []}
  with tempfile.TemporaryDirectory(prefix="ab_benchmark-") as scratch:  # gone if a run fails too
    json_path = pathlib.Path(scratch) / "figures.jsonl"
    for pair, names in order(args.pairs):
      for name in names:
        figures = run_once(*setups[name], run_args, json_path)
        rate = figures.get("token_slots_per_s")
        if rate is None:
          raise SystemExit("ab_benchmark: the run had no steady steps; give it more --steps")
        rates[name].append(rate)
        print(f"pair {pair} {name}: {rate:,.0f} token slots/s, launch -> first step "
              f"{figures['launch_to_first_step_s']:.1f} s", flush=True)
  for name in "AB":
    print(f"{name}: mean {statistics.mean(rates[name]):,.0f}, median "
          f"{statistics.median(rates[name]):,.0f} token slots/s over {len(rates[name])} runs")
  faster = sum(b > a for a, b in zip(rates["A"], rates["B"]))
  print(f"B / A: {statistics.mean(rates['B']) / statistics.mean(rates['A']):.3f}x the mean, "
        f"{statistics.median(rates['B']) / statistics.median(rates['A']):.3f}x the median; "
        f"B faster in {faster} of {args.pairs} pairs")


if __name__ == "__main__":
  main()
