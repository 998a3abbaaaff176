"""`code-t5`: the project's command line (thin: each subcommand calls one module)."""

import argparse
import ast
import collections
import contextlib
import errno
import importlib
import logging
import os
import pathlib
import re
import shlex
import signal
import sys
import threading
import warnings
from typing import Optional

import code_t5_compat
from code_t5 import errors
from code_t5 import registration
from code_t5 import stranger_paths
from code_t5.data import flcc
from code_t5.training import launcher
from code_t5.training import operative_config

# --steps without --model: launcher.FIRST_RUN_STEPS.
DEFAULT_STEPS = 300

# Subcommands that modules add themselves, and the module that does: its
# `register_cli(subparsers)` adds a parser whose `func(args)` returns an exit status and raises
# errors.UserError for bad input. A command's parser is built with its own module alone (the
# others are imported for `code-t5 --help` and unknown commands): a cold `code-t5 complete` then
# imports what completing needs, not the server's, the LSP's and the converters' modules (~70 ms
# of its ~0.35 s here). None of them may import TensorFlow, seqio, t5 or Mesh TF at module level
# (`code-t5 --help` and argument errors answer in well under a second; tests/cli_test.py checks):
# a command imports them, and calls registration.register() if it needs the seqio registry or
# gin's search path, once its arguments are checked.
SUBCOMMANDS = {"import": "code_t5.data.corpus", "complete": "code_t5.engine.complete",
               "export": "code_t5.engine.complete", "serve": "code_t5.engine.serve",
               "cache": "code_t5.training.cache", "vocab": "code_t5.data.vocab",
               "baseline": "code_t5.evaluation.baseline",
               "keystrokes": "code_t5.evaluation.keystrokes", "convert": "code_t5.convert.t5x",
               "pack": "code_t5.convert.pack", "lsp": "code_t5.engine.lsp"}


def _experiment(args) -> launcher.Experiment:
  """The flags' experiment; without --model, the first run (launcher.FIRST_RUN_MODEL and its
  bindings before the --gin-param ones, in runs/first_run-...). A model dir trained before
  gives the model, size and vocabulary its recorded training command names for each flag not
  given, and refuses a flag that names something else: its checkpoints would not load into
  another model's graph. Its other recorded bindings are named, not applied: the model dir may
  be a stranger's, and a binding of theirs (a literal path included) would decide where a
  training or eval writes."""
  model_dir = args.model_dir or _default_model_dir(args.model, args.size or "tiny",
                                                   args.vocab or "byte", args.run)
  recorded = _recorded(model_dir)
  if recorded:
    given = {"--model": args.model, "--size": args.size, "--vocab": args.vocab}
    trained = {"--model": recorded.model, "--size": recorded.size, "--vocab": recorded.vocab}
    other = [f"{flag} {value}" for flag, value in given.items()
             if value is not None and trained[flag] is not None and value != trained[flag]]
    if other:
      was = " ".join(f"{flag} {value}" for flag, value in trained.items() if value is not None)
      raise launcher.LaunchError(
          f"model dir {model_dir} was trained with {was} ({recorded.path}), not "
          f"{', '.join(other)}: leave those flags out to use what it was trained with, or give "
          "another --model-dir")
  # A recorded command that names no models/*.gin (written by hand) tells nothing.
  first_run = args.model is None and (recorded is None or recorded.model is None
                                      or recorded.is_first_run())
  model = launcher.FIRST_RUN_MODEL if first_run else args.model or recorded.model
  gin_params = (list(launcher.FIRST_RUN_GIN_PARAMS) if first_run else []) + args.gin_param
  if recorded:
    _name_missing_params(model_dir, recorded, gin_params, training=args.command == "train")
    _name_other_data(model_dir, recorded, args)
  return launcher.Experiment(model=model, size=args.size or (recorded and recorded.size) or "tiny",
                             run=args.run,
                             vocab=args.vocab or (recorded and recorded.vocab) or "byte",
                             model_dir=model_dir, root=args.root, gin_params=gin_params,
                             validation_fraction=args.validation_fraction,
                             test_fraction=args.test_fraction, prepared_dir=args.prepared_dir,
                             held_out_roots=args.held_out_root,
                             init_from=getattr(args, "init_from", None))


# What only a training reads: its learning rate, optimizer, dropout, BPE-dropout's sampling,
# checkpoint saving and seeds. An eval lacking them runs the model as trained, and a note naming
# them left the user to wonder whether its figures were wrong (helper-52's audit).
_TRAINING_ONLY = re.compile(
    r"^(PEAK_LEARNING_RATE|dropout_rate|[\w./]*(learning_rate|AdafactorOptimizer|"
    r"subword_sampling|save_checkpoints_steps|keep_checkpoint_max|random_seed|"
    r"mesh_train_dataset_fn)[\w.]*)\s*=")


def _name_missing_params(model_dir: pathlib.Path, recorded, gin_params,
                         training: bool = True) -> None:
  """Says which gin params the model dir was trained with that this command lacks (for an eval,
  those an eval reads)."""
  given = {param.replace(" ", "") for param in gin_params}
  missing = [p for p in recorded.model_params() if p.replace(" ", "") not in given
             and (training or not _TRAINING_ONLY.match(p.strip()))]
  # Not one to copy that gin would carry out as code (the model dir may be a stranger's: helper-
  # 20's audit found such a binding suggested here).
  unsafe = [p for p in missing if operative_config.unsafe_statement(p)]
  missing = [p for p in missing if p not in unsafe]
  if missing or unsafe:
    print(f"code-t5: note: {model_dir} was trained with "
          + " ".join(f"--gin-param {_shell_word(errors.printable(p))}" for p in missing)
          + (", which this command does not give; add them to run the model as trained"
             if missing else "")
          + (f"{'; and ' if missing else ''}{len(unsafe)} recorded binding(s) that gin would carry "
             "out as code (not shown: see docs/untrusted.md)" if unsafe else ""),
          file=sys.stderr)


def _shell_word(text: str) -> str:
  """`text` as one shell word to copy: in double quotes where nothing in it means anything
  there (gin's strings are single-quoted: shlex.quote made `'version = '"'"'v3'"'"''` of them:
  helper-52's audit), else shlex.quote's."""
  return f'"{text}"' if not re.search(r'["$`\\!]', text) else shlex.quote(text)


# code_t5.flcc_dataset's bindings -> the flag that gives each (launcher.dataset_gin_params).
_DATASET_FLAGS = {"root": "--root", "validation_fraction": "--validation-fraction",
                  "test_fraction": "--test-fraction", "held_out_roots": "--held-out-root"}


def _name_other_data(model_dir: pathlib.Path, recorded, args) -> None:
  """Says which dataset flags the model dir was trained with that this command gives otherwise
  or not at all: an eval without --root scored dataset-dev, silently, after training on another
  root (helper-19's audit). Named, not applied, as the other recorded bindings."""
  bindings = launcher.dataset_gin_params(args.root, args.validation_fraction, args.test_fraction,
                                         None, args.held_out_root)
  given = {name: value for _, name, value in map(launcher.binding_parts, bindings)}
  other = []
  for name, value in recorded.dataset_params().items():
    if name in _DATASET_FLAGS and given.get(name) != value:
      shown = _literal(value, value)
      values = shown if isinstance(shown, (list, tuple)) else [shown]
      other += [f"{_DATASET_FLAGS[name]} {shlex.quote(errors.printable(str(v)))}" for v in values]
  if other:
    print(f"code-t5: note: {model_dir} was trained with {' '.join(other)}, which this command "
          f"gives otherwise or not at all{'' if args.root else ' (it reads dataset-dev/)'}; add "
          "them to use the data it was trained on", file=sys.stderr)


def _default_model_dir(model: Optional[str], size: str, vocab: str, run: str) -> pathlib.Path:
  vocab_part = "" if vocab == "byte" else f"-{vocab}"
  return pathlib.Path("runs") / f"{model or launcher.FIRST_RUN}-{size}{vocab_part}-{run}"


def _recorded(model_dir: pathlib.Path):
  """What an existing model dir was trained with (launcher.RecordedTraining), or None."""
  if not (model_dir.exists() or model_dir.is_symlink()):
    return None
  if not model_dir.is_dir():
    raise launcher.LaunchError(f"--model-dir {model_dir} is not a folder: give a new path or "
                               "the folder of a run")
  # No checkpoint: nothing trained there to match (a run that failed at its start left its
  # command, which refused the corrected flags: helper-19's audit).
  if launcher.latest_step(model_dir) is None:
    return None
  return launcher.recorded_training(model_dir)


def _count(text: str) -> int:
  """The value of a flag that counts (steps, files): 1 or more, refused while parsing (argparse
  names the flag) rather than once TensorFlow or Mesh TF has started."""
  try:
    value = int(text)
  except ValueError:
    raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
  if value < 1:
    raise argparse.ArgumentTypeError(f"{value} must be 1 or more")
  return value


def _add_experiment_flags(parser):
  parser.add_argument("--model", default=None, help=", ".join(launcher.MODELS) + "; default: "
                      "what --model-dir was trained with, else the "
                      f"first run, {launcher.FIRST_RUN_MODEL} with --gin-param "
                      + " and ".join(f'"{p}"' for p in launcher.FIRST_RUN_GIN_PARAMS))
  parser.add_argument("--size", default=None, help=", ".join(launcher.SIZES) + "; default: "
                      "what --model-dir was trained with, else tiny")
  parser.add_argument("--run", default="cpu", help=", ".join(launcher.RUNS) + " (default: cpu)")
  parser.add_argument("--vocab", default=None, help=", ".join(launcher.VOCABS) +
                      " (spm_dev: code_t5/vocabs/flcc_dev_spm.model, via vocabs/spm_dev.gin); "
                      "default: what --model-dir was trained with, else byte")
  parser.add_argument("--model-dir", type=pathlib.Path,
                      help="default: runs/<model>-<size>[-<vocab>]-<run>, without --model "
                      f"runs/{launcher.FIRST_RUN}-<size>[-<vocab>]-<run>")
  launcher.add_dataset_flags(parser)
  parser.add_argument("--gin-param", action="append", default=[],
                      help="extra gin binding, e.g. \"utils.run.batch_size = ('sequences_per_batch', 16)\"")
  parser.add_argument("--dry-run", action="store_true",
                      help="print the mesh_transformer_main command and stop, running and writing "
                      "nothing (for a TPU: run it there with --tpu, --gcp_project, --tpu_zone)")


def _steps(args, experiment: launcher.Experiment) -> int:
  if args.steps is not None:
    return args.steps
  return (launcher.FIRST_RUN_STEPS
          if launcher.is_first_run(experiment.model, experiment.gin_params) else DEFAULT_STEPS)


def _dry_run(command) -> int:
  print(" ".join(shlex.quote(part) for part in command))
  return 0


def _train(args):
  experiment = _experiment(args)
  if args.dry_run:
    return _dry_run(experiment.train_command(_steps(args, experiment)))
  launcher.check_devices(experiment.run)
  # What the model dir was trained with (None: no checkpoints), read once for the three checks.
  recorded = _recorded(experiment.model_dir)
  _check_init_from(experiment, recorded)
  _check_same_task(experiment, recorded)
  _check_a_root_is_given(args, experiment, recorded)
  evaluate = not args.no_eval
  if evaluate:
    nothing_held_out = experiment.no_validation(points=True)
    if nothing_held_out:  # training one's own project alone is fine; its eval would score nothing
      print(f"code-t5 train: note: {nothing_held_out}; training without the eval after it",
            file=sys.stderr)
      evaluate = False
  code = launcher.train_and_eval(experiment, _steps(args, experiment), evaluate=evaluate)
  if code == 0 and evaluate:
    from code_t5.evaluation import examples  # pylint: disable=g-import-not-at-top  (the engine)
    examples.show_after_training(experiment, launcher.TRAIN_EVAL_MAX_FILES)
  return code


_NO_LITERAL = object()  # _literal's `otherwise` where any literal (None too) is an answer


def _literal(text: str, otherwise):
  """The Python literal of a recorded binding's value text, or `otherwise` where it is none (a
  macro, a reference, or anything a stranger's model dir records)."""
  try:
    return ast.literal_eval(text)
  except (ValueError, SyntaxError, MemoryError, RecursionError):
    return otherwise


def _task_version(gin_params) -> Optional[str]:
  """The task version `gin_params` bind last, unscoped (a scope's is another command's, such
  as the line-completion eval's); code_t5.task_name's default where none does; None where the
  last is no literal (a macro, a reference)."""
  from code_t5.data import task_names  # pylint: disable=g-import-not-at-top  (SentencePiece)
  version = task_names.VERSION
  for param in gin_params:
    selector, name, value = launcher.binding_parts(param)
    if (name == "version" and "/" not in param.partition("=")[0]
        and selector in ("code_t5.task_name", "task_name")):
      literal = _literal(value, _NO_LITERAL)
      version = None if literal is _NO_LITERAL else str(literal)
  return version


def _check_init_from(experiment: launcher.Experiment, recorded) -> None:
  """--init-from starts a run. Into a model dir with checkpoints, Mesh TF resumes from them and
  reads none of its weights: `train` went on training the model dir's own run, and said nothing
  (the README's fine-tune without --model-dir went on in the first run's: helper-52's audit).
  Refused, unless that run itself started from the same checkpoint (a rerun then resumes it).
  `recorded`: _recorded's of the model dir."""
  step = launcher.latest_step(experiment.model_dir)
  if experiment.init_from is None or step is None:
    return
  for param in recorded.gin_params if recorded else ():
    selector, name, value = launcher.binding_parts(param)
    started_from = _literal(value, None)
    if (name == "init_checkpoint" and selector in ("utils.run", "run")
        and isinstance(started_from, str)
        and os.path.realpath(started_from) == os.path.realpath(experiment.init_from)):
      return
  raise launcher.LaunchError(
      f"--model-dir {experiment.model_dir} holds step {step} of a run of its own, which a rerun "
      f"resumes without reading --init-from's weights: give a new --model-dir to start from "
      f"{experiment.init_from}, or leave --init-from out to go on training {experiment.model_dir}")


def _check_a_root_is_given(args, experiment: launcher.Experiment, recorded) -> None:
  """A training that goes on in a model dir trained on a --root names a root: without one it
  went on on dataset-dev after a note (helper-52's audit). Another --root is a choice, and only
  named (_name_other_data). `recorded`: _recorded's of the model dir."""
  root = recorded.dataset_params().get("root") if recorded else None
  if args.root is not None or root is None:
    return
  root = str(_literal(root, root))
  root = shlex.quote(errors.printable(root)[:200])  # (a stranger's model dir may record anything)
  raise launcher.LaunchError(
      f"--model-dir {experiment.model_dir} was trained on --root {root}, and this command gives "
      f"none (it would go on on dataset-dev/): add --root {root} to go on with its data, or the "
      "--root to go on with")


def _check_same_task(experiment: launcher.Experiment, recorded) -> None:
  """A training that goes on in a model dir goes on on the task version it was trained on:
  without the --gin-param that picked it, a resumed run trained on another version's examples
  after one note line (helper-43's audit). --init-from into a new model dir starts a new run on
  any version; into one with checkpoints, the run resumes from them (Mesh TF reads --init-from's
  weights only into a run's first graph), so it is checked too (helper-45's review). A version
  bound otherwise than as a literal (a macro) is not checked: it cannot be told here.
  `recorded`: _recorded's of the model dir (None where it has no checkpoints)."""
  if recorded is None:
    return
  trained, asked = _task_version(recorded.model_params()), _task_version(experiment.gin_params)
  if trained is not None and asked is not None and trained != asked:
    trained = errors.printable(trained)[:40]  # (a stranger's model dir may record anything)
    raise launcher.LaunchError(
        f"--model-dir {experiment.model_dir} was trained on task version {trained!r}, and this "
        f"command would go on on {asked!r}: add --gin-param \"code_t5.task_name.version = "
        f"'{trained}'\" to go on as it was trained, or train its weights on {asked!r} in a new "
        f"model dir (--init-from {experiment.model_dir} --model-dir NEW)")


def _eval(args):
  if args.max_files is not None and not args.line_completion:
    raise launcher.LaunchError("--max-files needs --line-completion: it chooses the files whose "
                               "points the line-completion eval decodes")
  experiment = _experiment(args)
  if args.dry_run:
    return _dry_run(experiment.eval_command(args.line_completion, args.max_files))
  launcher.check_devices(experiment.run)
  launcher.check_model_dir(experiment.model_dir)
  nothing_held_out = experiment.no_validation(points=args.line_completion)
  if nothing_held_out:
    raise launcher.LaunchError(nothing_held_out)
  if launcher.latest_step(experiment.model_dir) is None:  # checked before anything is written
    raise launcher.LaunchError(
        f"--model-dir {experiment.model_dir} has no checkpoints (model.ckpt-*.index): train first "
        "(`code-t5 train` with the same flags) or give the model dir that holds them")
  # Mesh TF writes its eval's decodes, summaries and log into the model dir.
  with errors.writing(f"the eval of {experiment.model_dir}", experiment.model_dir,
                      "copy the model dir where you can write and evaluate the copy"):
    code = launcher.run(experiment.eval_command(args.line_completion, args.max_files),
                        experiment.model_dir / "logs" / "eval.log")
  if code == 0 and args.line_completion:
    _show_decodes(experiment.line_completion_dir(), launcher.latest_step(experiment.model_dir))
  return code


def _show_decodes(eval_dir: pathlib.Path, step: int) -> None:
  """Where the line-completion eval's decodes are and how many points they cover: Mesh TF prints
  the metrics alone, and 0.000 from a model that ends every line at once looks like no points."""
  from code_t5.data import postprocessors  # pylint: disable=g-import-not-at-top
  for path in sorted(eval_dir.glob(f"*_{step}_predictions")):
    points = empty = 0
    try:  # line by line, a regular file of a bounded size: the model dir may be a stranger's
      with stranger_paths.open_regular(path, postprocessors.MAX_DECODES_BYTES) as f:
        for line in f:
          points += 1
          try:
            decode = postprocessors.from_json_line(line.decode("utf-8", "replace"))
          except (ValueError, RecursionError):  # not a decode (200,000 "["s): counted as empty
            decode = None
          empty += not (isinstance(decode, str) and decode.strip())
    except OSError as e:
      print(f"decodes: {path} (not read: {e.strerror})")
      continue
    why = ("; the model ends every line at once: train it longer"
           if points and empty == points else "")
    print(f"decodes: {path} ({points} points, {empty} empty{why})")


def _prepare(args):
  flcc.check_fractions(args.validation_fraction, args.test_fraction)
  launcher.check_root(args.root)
  launcher.check_held_out_roots(args.held_out_root)
  from code_t5.data import sources  # pylint: disable=g-import-not-at-top  (imports TensorFlow)
  given = {"root": args.root, "validation_fraction": args.validation_fraction,
           "test_fraction": args.test_fraction, "prepared_dir": args.prepared_dir,
           "held_out_roots": args.held_out_root or None}
  spec = sources.flcc_dataset(**{k: v for k, v in given.items() if v is not None})
  prepared = sources.prepare(spec)
  stats = prepared.stats
  seconds = stats["seconds"]
  read_mb = (stats["reader"]["kept"]["bytes"] +
             sum(v["bytes"] for v in stats["reader"]["dropped"].values())) / 1e6
  print(f"prepared: {prepared.path}")
  # A rate over a fraction of a second (a small root) says nothing.
  rate = f", {read_mb / seconds:.1f} MB/s of code read" if seconds >= 1 else ""
  print(f"  (written in {seconds:.1f} s{rate})")
  split_of = flcc.repository_splits(spec.root, spec.splits)
  repos = collections.Counter(split_of.values())
  print(f"{'split':<12}{'repositories':>14}{'files':>10}{'MB':>10}")
  for split in sources.SPLITS:
    kept = stats["reader"]["splits"][split]["kept"]
    print(f"{split:<12}{repos[split]:>14}{kept['files']:>10}{kept['bytes'] / 1e6:>10.2f}")
    if not kept["files"]:
      # (It said "pass --validation-fraction > 0" where it was 0.05 already: helper-19's audit.)
      fraction = getattr(spec.splits, split, None)
      # Its repositories' files all dropped: "add repositories" was said to a root of 4, its
      # split holding one (helper-58's audit).
      dropped = stats["reader"]["splits"][split].get("dropped") or {}
      fix = (f"its {repos[split]} repositor{'y' if repos[split] == 1 else 'ies'} lost every file "
             f"to the reader's filters (" + ", ".join(f"{reason} {count['files']}" for reason, count
                                                       in sorted(dropped.items())) + ")"
             if repos[split] else
             "add repositories to the root" if split == "train" else
             f"pass --{split}-fraction > 0" if not fraction else
             f"a held-out split gets a repository of its own from {flcc.MIN_REPOS_FOR_HELD_OUT} "
             f"repositories on (this root has {sum(repos.values())}): add repositories")
      print(f"code-t5 prepare: warning: the {split} split of {spec.root} is empty; a run on it "
            f"would have no examples: {fix}", file=sys.stderr)
  print(_reader_summary(stats["reader"]))
  # Which of a few projects the model will not train on (helper-52's audit: the counts alone
  # left it to be found in baseline's examples).
  held_out = {split: sorted(repo for repo, its in split_of.items() if its == split)
              for split in ("validation", "test")}
  if any(held_out.values()):
    print("held out (never trained on):")
  for split, repositories in held_out.items():
    if repositories:
      shown = ", ".join(errors.printable(repo) for repo in repositories[:_HELD_OUT_SHOWN])
      more = (f" and {len(repositories) - _HELD_OUT_SHOWN:,} more"
              if len(repositories) > _HELD_OUT_SHOWN else "")
      print(f"  {split}: {shown}{more}")
  return 0


_HELD_OUT_SHOWN = 10  # repositories named per held-out split by `prepare`


def _reader_summary(reader: dict) -> str:
  dropped = reader["dropped"]
  if not dropped:
    return "dropped: nothing"
  return "dropped: " + ", ".join(
      f"{reason} {v['files']} ({v['bytes'] / 1e6:.2f} MB)"
      for reason, v in sorted(dropped.items(), key=lambda item: -item[1]["files"]))


def _plot(args):
  if not args.model_dir.is_dir():
    raise launcher.LaunchError(f"--model-dir {args.model_dir} is not a directory")
  from code_t5 import processes  # pylint: disable=g-import-not-at-top
  from code_t5.training import curves  # pylint: disable=g-import-not-at-top  (imports TensorFlow)
  out = args.out or args.model_dir / "loss.png"
  # An earlier curve is drawn again; any other file only with --force (it took a .py for a PNG).
  processes.check_output_file(out, args.force or _is_png(out), f"the loss curve {out}",
                              launcher.LaunchError)
  with errors.writing(f"the loss curve {out}", out.parent, "give another --out"):
    if not curves.plot_loss(args.model_dir, out):
      raise launcher.LaunchError(f"--model-dir {args.model_dir} has no training loss events yet")
  print(out)
  return 0


def _is_png(path: pathlib.Path) -> bool:
  try:
    with stranger_paths.open_regular(path, None, follow_link=False) as f:
      return f.read(8) == b"\x89PNG\r\n\x1a\n"
  except OSError:
    return False


def build_parser(command: Optional[str] = None):
  """The command line's parser: with `command` one of SUBCOMMANDS, only its module's subcommands
  beside the built-in ones (train, eval, prepare, plot); with a built-in command, those alone;
  else all of them."""
  parser = argparse.ArgumentParser(prog="code-t5", description=__doc__)
  parser.add_argument("--verbose", action="store_true",
                      help="also show what the libraries print (TensorFlow's C++ log: CUDA, cuDNN, "
                      "TensorRT; TensorFlow and absl warnings; Python warnings such as "
                      "pkg_resources'), hidden by default; give it before the command")
  sub = parser.add_subparsers(dest="command", required=True)

  train = sub.add_parser("train", help="train with mesh_transformer_main (resumes), then the "
                         "line-completion eval, and show a few held-out points; default: the "
                         "first run, a tiny causal LM on dataset-dev on CPU (`make train-dev`)")
  _add_experiment_flags(train)
  train.add_argument("--steps", type=_count, default=None,
                     help=f"train up to this step (default: {launcher.FIRST_RUN_STEPS} for the "
                     f"first run, without --model; {DEFAULT_STEPS} with it)")
  train.add_argument("--no-eval", action="store_true",
                     help="train only: no line-completion eval and no held-out points after")
  train.add_argument("--init-from", type=pathlib.Path, metavar="CHECKPOINT",
                     help="start a new run from these weights: a model dir (its newest "
                     "checkpoint), a packed model or a checkpoint prefix; the steps, the "
                     "learning-rate schedule and the optimizer state start afresh")
  train.set_defaults(func=_train)

  evaluate = sub.add_parser("eval", help="decode the validation repositories with the latest "
                            "checkpoint and compute the tasks' metrics")
  _add_experiment_flags(evaluate)
  evaluate.add_argument("--line-completion", action="store_true",
                        help="decode every line-completion point instead (then compare with "
                        "`code-t5 baseline --model-dir`)")
  evaluate.add_argument("--max-files", type=_count, default=None,
                        help="with --line-completion: the points of this many files of the split "
                        "(spread over its repositories; give `code-t5 baseline` the same)")
  evaluate.set_defaults(func=_eval)

  prepare = sub.add_parser("prepare", help="read and filter an FLCC root into TFRecord shards "
                           "(done automatically at first use) and print what was kept and dropped")
  launcher.add_dataset_flags(prepare)
  prepare.set_defaults(func=_prepare)

  plot = sub.add_parser("plot", help="training loss curve (PNG) from a model dir's events")
  plot.add_argument("--model-dir", type=pathlib.Path, required=True,
                    help="the model dir whose training events to plot")
  plot.add_argument("--out", type=pathlib.Path,
                    help="the PNG to write (default: <model-dir>/loss.png); an earlier PNG there "
                    "is replaced")
  plot.add_argument("--force", action="store_true",
                    help="replace an --out that is not a PNG")
  plot.set_defaults(func=_plot)

  if command in SUBCOMMANDS:
    modules = [SUBCOMMANDS[command]]
  else:  # a built-in command needs none; --help and an unknown command, all
    modules = [] if command in sub.choices else dict.fromkeys(SUBCOMMANDS.values())
  for module in modules:
    importlib.import_module(module).register_cli(sub)
  for command_parser in sub.choices.values():
    for action in command_parser._actions:  # pylint: disable=protected-access
      if action.type is pathlib.Path:
        action.type = _path
  parser.commands = sub.choices  # each command's own parser, for its usage in errors
  return parser


def _path(text: str) -> pathlib.Path:
  """A path flag's value (every `type=pathlib.Path` flag of every command gets this type):
  pathlib reads "" as ".", so `--checkpoint ""` (an unset shell variable) named the current
  folder in its error, and `--out ""` would have written there."""
  if not text:
    raise argparse.ArgumentTypeError("an empty path: give a file or folder")
  return pathlib.Path(text)


_STDIN_CURSOR = re.compile(r"-:.*")  # (and -:2 or -:x, for their one-line error)


def _parse(argv):
  """The parsed `argv`. An option that the command does not take is reported in the command's
  own usage (argparse would report it in the top-level one), with a hint for --verbose, which
  goes before the command."""
  # The command is the first word that is not an option (the only option before it is
  # --verbose, which takes no value).
  command = next((a for a in argv if not a.startswith("-")), None)
  parser = build_parser(command)
  # `complete -:LINE:COL` (stdin with a cursor) starts with "-", so argparse would take it for
  # an option; after "--" it is read as the positional it is.
  stdin_cursors = [a for a in argv if _STDIN_CURSOR.fullmatch(a)]
  if command == "complete" and stdin_cursors and "--" not in argv:
    argv = [a for a in argv if a not in stdin_cursors] + ["--", *stdin_cursors]
  args, unknown = parser.parse_known_args(argv)
  if unknown:
    hint = ("; --verbose goes before the command: code-t5 --verbose "
            f"{args.command} ..." if "--verbose" in unknown else "")
    parser.commands[args.command].error(f"unrecognized arguments: {' '.join(unknown)}{hint}")
  return args


# Python loggers silenced (CRITICAL only) unless --verbose: the root logger -- what libraries log
# through it (gin's "Path not found" while it searches its path, Beam's "apitools not found") and
# every library logger that inherits its level -- and absl's and TensorFlow's, which may have a
# level of their own (TF deprecations, seqio's and Mesh TF's notes).
_LIBRARY_LOGGERS = ("", "absl", "tensorflow")
# The project's own loggers stay at WARNING (code_t5.data.flcc's files skipped): the user's
# business.
_OWN_LOGGER = "code_t5"


@contextlib.contextmanager
def library_output(verbose: bool = False):
  """While active and not `verbose`: the libraries' chatter stays off the terminal.

  That is TensorFlow's C++ log (CUDA/cuDNN/cuFFT/cuBLAS factories, TensorRT, CPU features,
  oneDNN; TF_CPP_MIN_LOG_LEVEL set by the user wins), what libraries log through Python's logging
  (_LIBRARY_LOGGERS), and Python warnings (e.g. tensorflow_hub's "pkg_resources is deprecated";
  -W or PYTHONWARNINGS win). The command's own output -- progress, results, one-line errors and
  its warnings (printed, or logged by code_t5's loggers) -- is untouched, and so are exceptions.
  Process state is restored on exit, so `main` can be called in-process. Mesh TF subprocesses get
  TF_CPP_MIN_LOG_LEVEL=3 from launcher.run either way (their log goes to a file).
  """
  if verbose:
    yield
    return
  levels = {logging.getLogger(name): logging.CRITICAL for name in _LIBRARY_LOGGERS}
  own = logging.getLogger(_OWN_LOGGER)
  if own.level == logging.NOTSET:
    levels[own] = logging.WARNING  # what it inherits from the root logger by default
  saved_levels = {logger: logger.level for logger in levels}
  saved_env = os.environ.get("TF_CPP_MIN_LOG_LEVEL")
  os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # read when TensorFlow is first loaded
  try:
    for logger, level in levels.items():
      logger.setLevel(level)
    with warnings.catch_warnings():
      if not sys.warnoptions:
        warnings.simplefilter("ignore")
      yield
  finally:
    for logger, level in saved_levels.items():
      logger.setLevel(level)
    if saved_env is None:
      os.environ.pop("TF_CPP_MIN_LOG_LEVEL", None)


# The exit status of a command stopped by Ctrl-C (SIGINT): 128 + 2, as a shell reports it.
_INTERRUPTED = 130
# The exit status of a command stopped by SIGTERM: 128 + 15.
_TERMINATED = 143
# The commands that write an output through a temporary path: SIGTERM (`timeout`, a CI job
# cancelled, systemd) stops them as Ctrl-C does, so their temporary goes with them (it stayed
# until a later run wrote into the same folder: helper-33's audit). `train` forwards SIGTERM to
# its trainer (launcher.run); `serve` and `lsp` hold nothing half-written.
_STOPPED_BY_SIGTERM = ("import", "prepare", "pack", "convert", "vocab", "baseline", "keystrokes",
                       "cache", "plot")


class _Terminated(KeyboardInterrupt):
  """SIGTERM, raised as Ctrl-C is, so that the same clean-ups run."""


# The signals this command was sent (SIGINT, SIGTERM), in order. A library may swallow the
# exception one raised: JAX's docstring parsing runs hundreds of times under a bare `except:` as
# TensorFlow imports it, and pybind11 turns one raised in a module's init into an ImportError
# that a caller catches. A Ctrl-C during TensorFlow's import was lost that way (`pack`, `plot`,
# `convert`: 5 in 25, 2 in 14 and 3 in 10, each run to its end, status 0), or left JAX half
# imported and ended in an AttributeError's traceback (3 in 25: helper-38's audit). What was
# received is read once TensorFlow's import ends, and at the command's end.
_received = []


def _on_signal(signum, frame):
  del frame
  _received.append(signum)
  if signum == signal.SIGTERM:
    # A second SIGTERM (`kill` sent twice, a supervisor repeating itself) would interrupt the
    # clean-ups the first one started: a temporary root left, or a traceback. main() restores
    # the handler.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise _Terminated()
  raise KeyboardInterrupt


def _stop_if_signalled(unused_module=None) -> None:
  """Raises what the first signal received raised, if a library swallowed it."""
  if _received:
    raise _Terminated() if _received[0] == signal.SIGTERM else KeyboardInterrupt


def _stopped_status(error: Optional[BaseException]) -> int:
  """The exit status of a command a signal stopped: 143 for SIGTERM, 130 for Ctrl-C."""
  terminated = isinstance(error, _Terminated) or (_received and _received[0] == signal.SIGTERM)
  if not terminated and sys.stderr is not None and sys.stderr.isatty():
    print(file=sys.stderr)  # past the terminal's "^C"
  return _TERMINATED if terminated else _INTERRUPTED


# The commands built on the training stack (TensorFlow 2.15 and what is built on it): where it is
# not installed (a Python newer than 3.11) they say so before they begin, not in a traceback after
# a first folder was written. The others run on the completion engine alone, and say the same if a
# part of theirs needs the stack (engine.complete: a model dir whose runtime is not written).
_TRAINING_STACK_COMMANDS = ("train", "eval", "prepare", "cache", "export", "pack", "convert",
                            "plot")


def _needs_training_stack(error: ModuleNotFoundError) -> bool:
  return ((error.name or "").partition(".")[0] in errors.TRAINING_STACK_MODULES
          and not registration.tensorflow_installed())


# Why a write to stdout fails: a full disk (> /dev/full), a closed pipe, a closed descriptor.
_OUTPUT_ERRNOS = (errno.ENOSPC, errno.EPIPE, errno.EBADF)


def main(argv=None):
  argv = sys.argv[1:] if argv is None else list(argv)
  previous = {}  # the handlers before this command's (restored: main runs in tests too)
  del _received[:]
  try:
    args = _parse(argv)
    if threading.current_thread() is threading.main_thread():
      handled = (signal.SIGINT, signal.SIGTERM) if args.command in _STOPPED_BY_SIGTERM else (
          signal.SIGINT,)
      for signum in handled:
        if signal.getsignal(signum) not in (signal.SIG_IGN, None):  # (ignored: nohup, `&`)
          previous[signum] = signal.signal(signum, _on_signal)
      code_t5_compat.after_import("tensorflow", _stop_if_signalled)
    with library_output(args.verbose):
      try:
        if args.command in _TRAINING_STACK_COMMANDS and not registration.tensorflow_installed():
          raise errors.TrainingStackMissing("this command")
        try:
          code = args.func(args)
        except ModuleNotFoundError as e:
          if not _needs_training_stack(e):
            raise
          raise errors.TrainingStackMissing(f"what was asked ({e.name})") from None
        _stop_if_signalled()
        if sys.stdout is not None:
          sys.stdout.flush()  # (a full disk says so here, not in the interpreter's exit)
        # A child killed by a signal (launcher.run: -signal): 128 + signal, as a shell says it;
        # sys.exit(-2) was 254 (helper-19's audit).
        return 128 - code if isinstance(code, int) and code < 0 else code
      except errors.UserError as e:
        print(f"code-t5 {args.command}: {e}", file=sys.stderr)
        return 2
      except OSError as e:
        # A write to stdout (no file name: the files a command writes are errors.writing's).
        if e.filename is not None or e.errno not in _OUTPUT_ERRNOS:
          raise
        # What is still buffered goes nowhere at exit, not into a second error.
        with contextlib.suppress(OSError):
          devnull = os.open(os.devnull, os.O_WRONLY)
          os.dup2(devnull, 1)
          os.close(devnull)
        if e.errno != errno.EPIPE:  # (a reader that stopped reading, `| head`, knows why)
          print(f"code-t5 {args.command}: cannot write its output: {e.strerror}",
                file=sys.stderr)
        return 1
  except KeyboardInterrupt as e:
    # Ctrl-C is how a user ends `serve`, `lsp` or a long import: no traceback. What a command
    # writes goes to a temporary path first, and child processes die with this one.
    return _stopped_status(e)
  except Exception:  # pylint: disable=broad-except  (a library's, after it swallowed a signal)
    if _received:
      return _stopped_status(None)
    raise
  finally:
    for signum, handler in previous.items():  # (None: not set from Python, as SIG_DFL is)
      signal.signal(signum, signal.SIG_DFL if handler is None else handler)


if __name__ == "__main__":
  sys.exit(main())
