"""`code-t5`: the project's command line (thin: each subcommand calls one module)."""

import argparse
import importlib
import pathlib
import sys

from code_t5 import errors
from code_t5 import launcher

DEFAULT_STEPS = 300

# Modules that add their own subcommands: each has `register_cli(subparsers)`, which adds a parser
# whose `func(args)` returns an exit status and raises errors.UserError for bad input.
SUBCOMMAND_MODULES = ("code_t5.complete", "code_t5.serve", "code_t5.cache", "code_t5.vocab",
                      "code_t5.baseline", "code_t5.t5x")


def _experiment(args) -> launcher.Experiment:
  vocab = "" if args.vocab == "byte" else f"-{args.vocab}"
  model_dir = args.model_dir or pathlib.Path("runs") / f"{args.model}-{args.size}{vocab}-{args.run}"
  return launcher.Experiment(model=args.model, size=args.size, run=args.run, vocab=args.vocab,
                             model_dir=model_dir, root=args.root, gin_params=args.gin_param)


def _add_experiment_flags(parser):
  parser.add_argument("--model", default="shared-prefix_lm", help=", ".join(launcher.MODELS))
  parser.add_argument("--size", default="tiny", help=", ".join(launcher.SIZES))
  parser.add_argument("--run", default="cpu", help=", ".join(launcher.RUNS))
  parser.add_argument("--vocab", default="byte", help=", ".join(launcher.VOCABS) +
                      " (spm_dev: code_t5/vocabs/flcc_dev_spm.model, via vocabs/spm_dev.gin)")
  parser.add_argument("--model-dir", type=pathlib.Path,
                      help="default: runs/<model>-<size>[-<vocab>]-<run>")
  parser.add_argument("--root", type=pathlib.Path,
                      help="FLCC dataset root (holds v3/); default: dataset-dev/")
  parser.add_argument("--gin-param", action="append", default=[],
                      help="extra gin binding, e.g. \"utils.run.batch_size = ('sequences_per_batch', 16)\"")


def _train(args):
  return launcher.train_and_eval(_experiment(args), args.steps, evaluate=not args.no_eval)


def _eval(args):
  experiment = _experiment(args)
  return launcher.run(experiment.eval_command(args.line_completion),
                      experiment.model_dir / "logs" / "eval.log")


def _prepare(args):
  from code_t5 import sources  # pylint: disable=g-import-not-at-top  (imports TensorFlow)
  prepared = sources.prepare(sources.flcc_dataset(
      root=args.root, validation_fraction=args.validation_fraction,
      test_fraction=args.test_fraction))
  print(f"prepared: {prepared.path}")
  print(f"files per split: {dict(prepared.num_files)}")
  print(f"reader: {prepared.stats['reader']}")
  return 0


def _plot(args):
  from code_t5 import curves  # pylint: disable=g-import-not-at-top  (imports TensorFlow)
  out = args.out or args.model_dir / "loss.png"
  if not curves.plot_loss(args.model_dir, out):
    raise launcher.LaunchError(f"--model-dir {args.model_dir} has no training loss events yet")
  print(out)
  return 0


def build_parser():
  parser = argparse.ArgumentParser(prog="code-t5", description=__doc__)
  sub = parser.add_subparsers(dest="command", required=True)

  train = sub.add_parser("train", help="train with mesh_transformer_main (resumes), then eval; "
                         "defaults: tiny shared prefix-LM on dataset-dev on CPU")
  _add_experiment_flags(train)
  train.add_argument("--steps", type=int, default=DEFAULT_STEPS, help="train up to this step")
  train.add_argument("--no-eval", action="store_true")
  train.set_defaults(func=_train)

  evaluate = sub.add_parser("eval", help="decode the validation repositories with the latest "
                            "checkpoint and compute the tasks' metrics")
  _add_experiment_flags(evaluate)
  evaluate.add_argument("--line-completion", action="store_true",
                        help="decode every line-completion point instead (then compare with "
                        "`code-t5 baseline --model-dir`)")
  evaluate.set_defaults(func=_eval)

  prepare = sub.add_parser("prepare", help="read and filter an FLCC root into TFRecord shards "
                           "(done automatically at first use) and print what was kept and dropped")
  prepare.add_argument("--root", type=pathlib.Path, help="default: dataset-dev/")
  prepare.add_argument("--validation-fraction", type=float, default=0.05)
  prepare.add_argument("--test-fraction", type=float, default=0.05)
  prepare.set_defaults(func=_prepare)

  plot = sub.add_parser("plot", help="training loss curve (PNG) from a model dir's events")
  plot.add_argument("--model-dir", type=pathlib.Path, required=True)
  plot.add_argument("--out", type=pathlib.Path)
  plot.set_defaults(func=_plot)

  for module in SUBCOMMAND_MODULES:
    importlib.import_module(module).register_cli(sub)
  return parser


def main(argv=None):
  args = build_parser().parse_args(argv)
  try:
    return args.func(args)
  except errors.UserError as e:
    print(f"code-t5 {args.command}: {e}", file=sys.stderr)
    return 2


if __name__ == "__main__":
  sys.exit(main())
