"""code_t5/cli.py: one set of dataset flags for commands that read a root; `prepare`'s report;
start-up (--help and argument errors import no TensorFlow), registration, quiet by default."""

import glob
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys

import hostile_checkpoints
import pytest

from code_t5 import cli
from code_t5 import test_utils
from code_t5.data import task_names
from code_t5.data import vocab
from code_t5.training import launcher

DATASET_FLAGS = ["--validation-fraction", "0.2", "--test-fraction", "0.1",
                 "--prepared-dir", "/data/prepared"]


@pytest.mark.parametrize("command", ["train", "eval"])
def test_train_and_eval_split_as_prepare_did(command, tmp_path):
  (tmp_path / "v3" / "languages" / "Python" / ".py").mkdir(parents=True)  # an (empty) FLCC root
  args = cli.build_parser().parse_args([command, "--root", str(tmp_path), *DATASET_FLAGS])
  experiment = cli._experiment(args)  # pylint: disable=protected-access
  assert f"--gin_param=code_t5.flcc_dataset.root = '{tmp_path}'" in experiment.train_command(1)
  for binding in ("code_t5.flcc_dataset.validation_fraction = 0.2",
                  "code_t5.flcc_dataset.test_fraction = 0.1",
                  "code_t5.flcc_dataset.prepared_dir = '/data/prepared'"):
    assert f"--gin_param={binding}" in experiment.train_command(1)
    assert f"--gin_param={binding}" in experiment.eval_command()


def test_held_out_roots_reach_train_eval_and_prepare(tmp_path, capsys):
  """--held-out-root keeps another root's held-out files unseen: the commands bind it, and
  `prepare` drops a train file that is a near-copy of one (code_t5.data.near_copies)."""
  backport = "".join(f"def vendored_function_number_{i}(argument_one, argument_two):\n"
                     f"    return vendored_helper_of_the_module(argument_one + {i})\n"
                     for i in range(6))
  held_out = test_utils.make_flcc_tree(tmp_path / "held_out", {
      test_utils.repo_in_split("validation"): {"copied.py": backport},
      test_utils.repo_in_split("train"): {"a.py": "x = 1\n"},
      test_utils.repo_in_split("train", skip=1): {"b.py": "y = 2\n"}})
  root = test_utils.make_flcc_tree(tmp_path / "flcc", {
      test_utils.repo_in_split("train", skip=i): {"m.py": f"value = {i}\n", "copied.py": backport}
      if i == 0 else {"m.py": f"value = {i}\n"} for i in range(10)})
  for command in ("train", "eval"):
    args = cli.build_parser().parse_args([command, "--root", str(root),
                                          "--held-out-root", str(held_out)])
    experiment = cli._experiment(args)  # pylint: disable=protected-access
    binding = f"--gin_param=code_t5.flcc_dataset.held_out_roots = ['{held_out}']"
    assert binding in experiment.train_command(1) and binding in experiment.eval_command()
  assert cli.main(["prepare", "--root", str(root), "--prepared-dir", str(tmp_path / "prepared"),
                   "--held-out-root", str(held_out)]) == 0
  out = capsys.readouterr().out
  assert "held_out_copy 1 " in out
  assert cli.main(["prepare", "--root", str(root), "--held-out-root", str(tmp_path / "nowhere")]) == 2
  err = capsys.readouterr().err
  assert err.count("\n") == 1 and "--held-out-root" in err and "nowhere" in err


def test_without_dataset_flags_dataset_gin_decides(tmp_path):
  args = cli.build_parser().parse_args(["train"])
  command = cli._experiment(args).train_command(1)  # pylint: disable=protected-access
  assert not any("flcc_dataset" in part for part in command)


def test_without_model_train_and_eval_run_the_first_run():
  # pylint: disable=protected-access
  for command in ("train", "eval"):
    experiment = cli._experiment(cli.build_parser().parse_args([command]))
    assert (experiment.model, experiment.size, experiment.run, experiment.vocab) == (
        launcher.FIRST_RUN_MODEL, "tiny", "cpu", "byte")
    assert experiment.model_dir == pathlib.Path("runs/first_run-tiny-cpu")
    assert list(experiment.gin_params) == list(launcher.FIRST_RUN_GIN_PARAMS)
  args = cli.build_parser().parse_args(["train", "--gin-param", "dropout_rate = 0.1"])
  steps = cli._steps(args, cli._experiment(args))
  assert steps == launcher.FIRST_RUN_STEPS
  params = [part for part in cli._experiment(args).train_command(steps)
            if part.startswith("--gin_param=")]
  assert params == [f"--gin_param={p}" for p in launcher.FIRST_RUN_GIN_PARAMS] + [
      "--gin_param=dropout_rate = 0.1", f"--gin_param=utils.run.train_steps = {steps}"]


def test_a_named_model_gets_its_own_files_and_model_dir_only():
  # pylint: disable=protected-access
  args = cli.build_parser().parse_args(["train", "--model", launcher.FIRST_RUN_MODEL])
  experiment = cli._experiment(args)
  assert experiment.model_dir == pathlib.Path(f"runs/{launcher.FIRST_RUN_MODEL}-tiny-cpu")
  assert not experiment.gin_params
  assert cli._steps(args, experiment) == cli.DEFAULT_STEPS
  args = cli.build_parser().parse_args(["train", "--model", "prefix_lm", "--steps", "7"])
  assert cli._steps(args, cli._experiment(args)) == 7


def test_an_explicit_gin_param_still_wins(tmp_path):
  args = cli.build_parser().parse_args(
      ["train", "--validation-fraction", "0.2",
       "--gin-param", "code_t5.flcc_dataset.validation_fraction = 0.3"])
  command = cli._experiment(args).train_command(1)  # pylint: disable=protected-access
  bindings = [p for p in command if "validation_fraction" in p]
  assert bindings[-1].endswith("= 0.3")  # gin keeps the last binding


@pytest.mark.parametrize("argv, flag", [
    (["train", "--validation-fraction", "1.5"], "--validation-fraction"),
    (["eval", "--validation-fraction", "0.6", "--test-fraction", "0.6"], "--test-fraction"),
    (["prepare", "--test-fraction", "-0.1"], "--test-fraction"),
])
def test_bad_fractions_are_one_line_errors(argv, flag, capsys):
  assert cli.main(argv) == 2
  err = capsys.readouterr().err
  assert err.count("\n") == 1 and flag in err


@pytest.mark.parametrize("argv, error", [
    (["train", "--steps", "0"], "argument --steps: 0 must be 1 or more"),
    (["train", "--steps", "-3"], "argument --steps: -3 must be 1 or more"),
    (["train", "--steps", "x"], "argument --steps: invalid int value: 'x'"),
    (["eval", "--max-files", "0"], "argument --max-files: 0 must be 1 or more"),
])
def test_a_count_below_one_is_refused_while_parsing(argv, error, capsys):
  # `train --steps 0` started TensorFlow, then Mesh TF failed with "Must specify max_steps > 0".
  with pytest.raises(SystemExit) as exit_:
    cli.main(argv)
  assert exit_.value.code == 2
  assert capsys.readouterr().err.splitlines()[-1] == f"code-t5 {argv[0]}: error: {error}"


def test_every_path_flag_refuses_an_empty_path_while_parsing(capsys):
  """pathlib reads "" as "." (an unset shell variable: `--checkpoint "$MODEL"`): the error named
  the current folder, and an empty --out would have written there (helper-40's audit)."""
  path_flags = [(name, action.option_strings[0]) for name, parser in _commands().items()
                for action in parser._actions  # pylint: disable=protected-access
                if action.type is cli._path and action.option_strings]  # pylint: disable=protected-access
  assert ("complete", "--checkpoint") in path_flags and ("vocab", "--out") in path_flags
  assert len(path_flags) >= 25
  for name, flag in path_flags:
    with pytest.raises(SystemExit) as exit_:
      cli.main([name, flag, ""])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"code-t5 {name}: error: argument {flag}: an empty path: give a file or folder")


def test_an_option_a_command_lacks_is_named_in_that_commands_usage(capsys):
  with pytest.raises(SystemExit) as exit_:
    cli.main(["plot", "--model-dir", "m", "--bogus"])
  err = capsys.readouterr().err
  assert exit_.value.code == 2 and err.startswith("usage: code-t5 plot ")
  assert err.strip().endswith("code-t5 plot: error: unrecognized arguments: --bogus")
  with pytest.raises(SystemExit):
    cli.main(["plot", "--verbose", "--model-dir", "m"])
  assert capsys.readouterr().err.strip().endswith(
      "unrecognized arguments: --verbose; --verbose goes before the command: code-t5 --verbose "
      "plot ...")


def test_a_trained_model_dir_gives_the_flags_it_was_trained_with(tiny_run, capsys):
  """What `train` recorded in the model dir (Mesh TF's commands/) names the model, size and
  vocabulary of a later `eval` or `train` there; its other model bindings are named, not applied
  (the model dir may be a stranger's)."""
  # pylint: disable=protected-access
  _, model_dir = tiny_run("prefix_lm")
  for command in ("eval", "train"):
    experiment = cli._experiment(cli.build_parser().parse_args(
        [command, "--model-dir", str(model_dir), "--gin-param", "dropout_rate = 0.1"]))
    assert (experiment.model, experiment.size, experiment.vocab) == ("prefix_lm", "tiny", "byte")
    assert list(experiment.gin_params) == ["dropout_rate = 0.1"]
    # The recorded save interval is named to a training (an eval does not read it); the
    # recorded steps and prepared-shard folder (a run's and the dataset flags') are not.
    assert capsys.readouterr().err == ("" if command == "eval" else (
        f"code-t5: note: {model_dir} was trained with --gin-param \"utils.run.save_checkpoints_steps"
        " = 2\", which this command does not give; add them to run the model as trained\n"))
  cli._experiment(cli.build_parser().parse_args(
      ["train", "--model-dir", str(model_dir), "--gin-param", "utils.run.save_checkpoints_steps=2"]))
  assert not capsys.readouterr().err


def test_an_eval_is_told_only_of_the_recorded_bindings_an_eval_reads(tmp_path, capsys):
  # It was told to add the learning rate and BPE-dropout's sampling, which no eval reads, and
  # left to wonder whether its figures were wrong without them (helper-52's audit).
  model_dir = tmp_path / "run"
  (model_dir / "commands").mkdir(parents=True)
  (model_dir / "commands" / "command").write_text(
      "main.py --model_dir=x --gin_file=dataset.gin --gin_file=models/causal_lm.gin "
      "--gin_file=sizes/tiny.gin --gin_file=runs/cpu.gin --gin_param=PEAK_LEARNING_RATE = 0.01 "
      "--gin_param=code_t5.tokenize_with_subword_sampling.alpha = 0.05 "
      "--gin_param=code_t5.task_name.version = 'v3' --gin_param=utils.run.train_steps = 5")
  (model_dir / "model.ckpt-5.index").write_bytes(b"")
  wanted = {"eval": "--gin-param \"code_t5.task_name.version = 'v3'\"",
            "train": "--gin-param \"PEAK_LEARNING_RATE = 0.01\" --gin-param "
                     "\"code_t5.tokenize_with_subword_sampling.alpha = 0.05\" --gin-param "
                     "\"code_t5.task_name.version = 'v3'\""}
  for command, named in wanted.items():
    cli._experiment(cli.build_parser().parse_args([command, "--model-dir", str(model_dir)]))  # pylint: disable=protected-access
    assert capsys.readouterr().err == (
        f"code-t5: note: {model_dir} was trained with {named}, which this command does not give; "
        "add them to run the model as trained\n")


def test_a_flag_naming_another_model_than_the_model_dirs_is_a_one_line_error(tiny_run, capsys):
  _, model_dir = tiny_run("prefix_lm")
  assert cli.main(["eval", "--model-dir", str(model_dir), "--model", "causal_lm",
                   "--size", "tiny"]) == 2
  err = capsys.readouterr().err
  assert err.count("\n") == 1 and err.startswith(
      f"code-t5 eval: model dir {model_dir} was trained with --model prefix_lm --size tiny "
      f"--vocab byte ({model_dir / 'commands'}")
  assert "not --model causal_lm: leave those flags out" in err


def test_a_model_dir_trained_on_another_root_says_so_when_a_command_reads_another(
    tiny_run, tmp_path, capsys):
  """An eval without --root scored dataset-dev, silently, after training on another root
  (helper-19's audit): the recorded dataset flags are named, as the other recorded bindings."""
  # pylint: disable=protected-access
  _, trained = tiny_run("prefix_lm")
  model_dir = tmp_path / "model"
  shutil.copytree(trained, model_dir)
  root = test_utils.make_flcc_tree(tmp_path / "my code", {test_utils.repo_in_split("train"): {
      "a.py": "x = 1\n"}})
  command = (model_dir / "commands" / "command").read_text()
  (model_dir / "commands" / "command").write_text(
      command + f" --gin_param=code_t5.flcc_dataset.root = {str(root)!r}"
      " --gin_param=code_t5.flcc_dataset.test_fraction = 0.2")
  for flags, named in [([], f"--root '{root}' --test-fraction 0.2"),
                       (["--root", str(root)], "--test-fraction 0.2")]:
    cli._experiment(cli.build_parser().parse_args(["eval", "--model-dir", str(model_dir),
                                                   *flags]))
    err = capsys.readouterr().err
    assert f"code-t5: note: {model_dir} was trained with {named}, which this command gives " \
        "otherwise or not at all" in err, err
  cli._experiment(cli.build_parser().parse_args(
      ["eval", "--model-dir", str(model_dir), "--root", str(root), "--test-fraction", "0.2"]))
  assert "trained with --root" not in capsys.readouterr().err


def test_a_model_dir_without_checkpoints_holds_no_choice_of_model(tiny_run, tmp_path, capsys):
  """A run that failed at its start left its recorded command and no checkpoint: the corrected
  flags were refused as "trained with" another model (helper-19's audit)."""
  # pylint: disable=protected-access
  _, trained = tiny_run("prefix_lm")
  begun = tmp_path / "begun"
  shutil.copytree(trained / "commands", begun / "commands")
  experiment = cli._experiment(cli.build_parser().parse_args(
      ["train", "--model-dir", str(begun), "--model", "causal_lm"]))
  assert experiment.model == "causal_lm" and not capsys.readouterr().err


@pytest.mark.parametrize("flags, says", [
    (["--root", "FILE"], "--root: FLCC root FILE is not a folder; pass the folder that holds v3/"),
    (["--root", "TMP"], "--root: FLCC root TMP has no v3/ folder"),
    (["--held-out-root", "TMP"], "--held-out-root: FLCC root TMP has no v3/ folder"),
    (["--gin-param", "utils.run.batch_size = ("],
     "--gin-param 'utils.run.batch_size = (': gin cannot read it (EOF in multi-line statement)"),
])
def test_a_root_or_binding_the_trainer_would_refuse_is_refused_before_it_starts(
    flags, says, tmp_path, capsys):
  """The trainer refused them in a traceback, after it had begun the model dir (helper-19)."""
  (tmp_path / "notes.py").write_text("x = 1\n")
  flags = [f.replace("FILE", str(tmp_path / "notes.py")).replace("TMP", str(tmp_path))
           for f in flags]
  says = says.replace("FILE", str(tmp_path / "notes.py")).replace("TMP", str(tmp_path))
  model_dir = tmp_path / "model"
  assert cli.main(["train", "--model", "causal_lm", "--model-dir", str(model_dir), *flags]) == 2
  err = capsys.readouterr().err
  assert err.count("\n") == 1 and err.startswith(f"code-t5 train: {says}"), err
  assert not model_dir.exists()


def test_a_model_dir_that_is_a_file_is_a_one_line_error(tmp_path, capsys):
  path = tmp_path / "notes.txt"
  path.write_text("mine\n")
  assert cli.main(["train", "--model-dir", str(path), "--steps", "1"]) == 2
  err = capsys.readouterr().err
  assert err == f"code-t5 train: --model-dir {path} is not a folder: give a new path or the " \
      "folder of a run\n"
  assert path.read_text() == "mine\n"


def _commands():
  return cli.build_parser()._subparsers._group_actions[0].choices  # pylint: disable=protected-access


def test_every_argument_of_every_command_has_a_help_line():
  bare = [f"{name} {'/'.join(action.option_strings) or action.dest}"
          for name, parser in _commands().items()
          for action in parser._actions if not action.help]  # pylint: disable=protected-access
  assert not bare


def test_help_states_the_defaults_and_stays_short():
  commands = _commands()

  def shown(command):  # as printed, the lines joined (argparse wraps at the terminal's width)
    return " ".join(commands[command].format_help().split())

  assert "--dtype {float32,bfloat16} of the params (default float32)" in shown("convert")
  assert "with --checkpoint (bare: the shipped model), the completion engine" in shown("baseline")
  # `import --help` began with some 60 lines of design before its options.
  import_help = commands["import"].format_help()
  description = import_help[:import_help.index("positional arguments:")]
  assert description.count("\n") < 12 and "docs/data.md" in description


def test_eval_without_checkpoints_is_a_one_line_error_that_writes_nothing(tmp_path, capsys):
  model_dir = tmp_path / "nosuch"
  assert cli.main(["eval", "--model-dir", str(model_dir)]) == 2
  err = capsys.readouterr().err
  assert err.count("\n") == 1 and err.startswith(f"code-t5 eval: --model-dir {model_dir} has "
                                                 "no checkpoints (model.ckpt-*.index)")
  assert not model_dir.exists()


def test_a_training_goes_on_on_the_task_version_it_was_trained_on(tmp_path, capsys):
  """Resumed without the --gin-param that picked its version, a run trained on another
  version's examples after a note (helper-43's audit): refused, and --init-from is the way."""
  model_dir = tmp_path / "run"
  (model_dir / "commands").mkdir(parents=True)
  (model_dir / "commands" / "command").write_text(
      "main.py --model_dir=x --gin_file=dataset.gin --gin_file=models/causal_lm.gin "
      "--gin_file=sizes/tiny.gin --gin_file=runs/cpu.gin "
      "--gin_param=code_t5.task_name.version = 'v3' --gin_param=utils.run.train_steps = 5")
  (model_dir / "model.ckpt-5.index").write_bytes(b"")
  assert cli.main(["train", "--model-dir", str(model_dir), "--steps", "9"]) == 2
  err = capsys.readouterr().err.splitlines()
  assert err[-1] == (f"code-t5 train: --model-dir {model_dir} was trained on task version 'v3', "
                     "and this command would go on on 'v1': add --gin-param \"code_t5.task_name."
                     "version = 'v3'\" to go on as it was trained, or train its weights on 'v1' "
                     f"in a new model dir (--init-from {model_dir} --model-dir NEW)")
  # --init-from into a model dir with checkpoints would resume from them (helper-45's review),
  # and read none of its weights: refused (helper-52's audit).
  assert cli.main(["train", "--model-dir", str(model_dir), "--init-from", str(model_dir),
                   "--steps", "9"]) == 2
  assert capsys.readouterr().err.splitlines()[-1] == (
      f"code-t5 train: --model-dir {model_dir} holds step 5 of a run of its own, which a rerun "
      f"resumes without reading --init-from's weights: give a new --model-dir to start from "
      f"{model_dir / 'model.ckpt-5'}, or leave --init-from out to go on training {model_dir}")
  for given in (["--gin-param", "code_t5.task_name.version = 'v3'"],
                # An eval's scoped binding is not the training's.
                ["--gin-param", "code_t5.task_name.version = 'v3'",
                 "--gin-param", "line_completion/code_t5.task_name.version = 'v1'"],
                ["--init-from", str(model_dir), "--model-dir", str(tmp_path / "new")]):
    args = cli.build_parser().parse_args(["train", "--model-dir", str(model_dir), *given])
    experiment = cli._experiment(args)  # pylint: disable=protected-access
    cli._check_same_task(experiment, cli._recorded(experiment.model_dir))  # pylint: disable=protected-access


def test_init_from_into_a_model_dir_with_checkpoints_is_refused_unless_its_run_began_there(
    tmp_path, capsys):
  """The README's fine-tune without --model-dir went on training the first run's model dir, its
  --init-from read by nobody, and said nothing (helper-52's audit). A rerun of a fine-tune, whose
  run began from that checkpoint, resumes as before."""
  source = tmp_path / "source"
  source.mkdir()
  (source / "model.ckpt-7.index").write_bytes(b"")
  model_dir = tmp_path / "run"
  (model_dir / "commands").mkdir(parents=True)
  command = ("main.py --model_dir=x --gin_file=dataset.gin --gin_file=models/causal_lm.gin "
             "--gin_file=sizes/tiny.gin --gin_file=runs/cpu.gin "
             "--gin_param=utils.run.train_steps = 5")
  (model_dir / "commands" / "command").write_text(command)
  (model_dir / "model.ckpt-5.index").write_bytes(b"")
  args = cli.build_parser().parse_args(["train", "--model-dir", str(model_dir), "--init-from",
                                        str(source)])
  with pytest.raises(launcher.LaunchError, match="holds step 5 of a run of its own"):
    cli._check_init_from(cli._experiment(args), cli._recorded(model_dir))  # pylint: disable=protected-access
  (model_dir / "commands" / "command").write_text(
      f"{command} --gin_param=utils.run.init_checkpoint = '{source / 'model.ckpt-7'}'")
  cli._check_init_from(cli._experiment(args), cli._recorded(model_dir))  # pylint: disable=protected-access


def test_prepare_names_the_held_out_repositories(tmp_path, capsys):
  # The counts alone left a user of a few projects to find out from baseline's examples which
  # one the model would not train on (helper-52's audit).
  repos = {test_utils.repo_in_split("validation"): {"v.py": "v = 1\n"},
           test_utils.repo_in_split("test"): {"t.py": "t = 1\n"},
           **{test_utils.repo_in_split("train", skip=i): {"m.py": f"m = {i}\n"} for i in range(3)}}
  root = test_utils.make_flcc_tree(tmp_path / "flcc", repos)
  assert cli.main(["prepare", "--root", str(root), "--prepared-dir", str(tmp_path / "p")]) == 0
  out = capsys.readouterr().out.splitlines()
  assert out[-3:] == ["held out (never trained on):",
                      f"  validation: {test_utils.repo_in_split('validation')}",
                      f"  test: {test_utils.repo_in_split('test')}"]


def test_a_training_on_a_root_goes_on_only_with_a_root_given(tmp_path, capsys):
  """Resumed without --root, a run trained on the user's root went on on dataset-dev after a note
  (helper-52's audit); another --root is a choice, and goes on."""
  mine, other = (test_utils.make_flcc_tree(tmp_path / name, {"owner/repo": {"a.py": "a = 1\n"}})
                 for name in ("my code", "other"))
  model_dir = tmp_path / "run"
  (model_dir / "commands").mkdir(parents=True)
  (model_dir / "commands" / "command").write_text(
      "main.py --model_dir=x --gin_file=dataset.gin --gin_file=models/causal_lm.gin "
      "--gin_file=sizes/tiny.gin --gin_file=runs/cpu.gin "
      f"--gin_param=code_t5.flcc_dataset.root = '{mine}' "
      "--gin_param=utils.run.train_steps = 5")
  (model_dir / "model.ckpt-5.index").write_bytes(b"")
  assert cli.main(["train", "--model-dir", str(model_dir), "--steps", "9"]) == 2
  assert capsys.readouterr().err.splitlines()[-1] == (
      f"code-t5 train: --model-dir {model_dir} was trained on --root '{mine}', and this "
      f"command gives none (it would go on on dataset-dev/): add --root '{mine}' to go on "
      "with its data, or the --root to go on with")
  for root in (mine, other):
    args = cli.build_parser().parse_args(["train", "--model-dir", str(model_dir), "--root",
                                          str(root)])
    cli._check_a_root_is_given(args, cli._experiment(args), cli._recorded(model_dir))  # pylint: disable=protected-access


@pytest.mark.skipif(bool(glob.glob("/dev/nvidia[0-9]*")) or os.path.exists("/dev/dxg"),
                    reason="this machine has a GPU")
def test_accelerator_runs_without_the_accelerator_are_refused_and_dry_run_prints_them(
    tmp_path, capsys, monkeypatch):
  """`--run gpu` trained on the CPU without a word, and `--run tpu_v3_8` too, its bfloat16 made
  float32 (helper-44's audit); --dry-run prints the command to run where the devices are."""
  monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
  model_dir = tmp_path / "run"
  for run, message in (
      ("gpu", "--run gpu needs 1 NVIDIA GPU, and this machine has none (/dev/nvidia*): "
              "TensorFlow would run it on the CPU; use --run cpu"),
      ("gpu_x4", "--run gpu_x4 needs 4 NVIDIA GPUs, and this machine has none"),
      ("tpu_v3_8", "--run tpu_v3_8: a TPU run is Mesh TF's command run with --tpu=<name> "
                   "--gcp_project=... --tpu_zone=... and a gs:// --model_dir; add --dry-run to "
                   "print the command")):
    for command in ("train", "eval"):
      assert cli.main([command, "--run", run, "--model-dir", str(model_dir)]) == 2
      assert capsys.readouterr().err.startswith(f"code-t5 {command}: {message}")
  assert cli.main(["train", "--run", "tpu_v3_8", "--model", "causal_lm", "--steps", "7",
                   "--model-dir", str(model_dir), "--dry-run"]) == 0
  command = shlex.split(capsys.readouterr().out)
  assert command[1:4] == ["-P", "-m", "t5.models.mesh_transformer_main"]
  assert "--gin_file=runs/tpu_v3_8.gin" in command and "--gin_param=utils.run.train_steps = 7" \
      in command
  assert cli.main(["eval", "--line-completion", "--model-dir", str(model_dir), "--dry-run"]) == 0
  assert "--gin_file=runs/eval_line_completion.gin" in shlex.split(capsys.readouterr().out)
  assert not model_dir.exists()


def test_eval_of_a_root_with_nothing_held_out_is_a_one_line_error(tmp_path, capsys):
  """One project imported alone is all train: its eval printed metrics of 0.000 from no points
  (helper-43's audit). Both splits' shares given or not, the line says why and what to do."""
  root = test_utils.make_flcc_tree(tmp_path / "flcc", {"me/project": {"a.py": "x = 1\n"}})
  model_dir = tmp_path / "run"
  for extra, fix in (([], "a held-out split gets a repository of its own from 3 repositories "
                          "on: import more repositories into the root"),
                     (["--validation-fraction", "0"], "pass --validation-fraction above 0")):
    assert cli.main(["eval", "--root", str(root), "--model-dir", str(model_dir),
                     "--line-completion", *extra]) == 2
    err = capsys.readouterr().err
    assert err == (f"code-t5 eval: --root {root}: its validation split holds no repository (1 in "
                   f"all), so there is nothing to evaluate on: {fix}\n")
  assert not model_dir.exists()


def test_prepare_prints_each_split_and_warns_on_an_empty_one(tmp_path, capsys):
  root = test_utils.make_flcc_tree(tmp_path / "flcc", {
      test_utils.repo_in_split("train", skip=i): {"m.py": f"value = {i}\n" * (i + 1)}
      for i in range(10)})
  prepared = tmp_path / "prepared"
  assert cli.main(["prepare", "--root", str(root), "--prepared-dir", str(prepared)]) == 0
  out, err = capsys.readouterr()
  rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()
          if line.split()[:1] in (["train"], ["validation"], ["test"])}
  # 10 repositories: the hash split alone would hold none out; each held-out split gets one.
  assert {split: (int(r[0]), int(r[1])) for split, r in rows.items()} == {
      "train": (8, 8), "validation": (1, 1), "test": (1, 1)}
  assert str(prepared) in out and "warning" not in err
  assert cli.main(["prepare", "--root", str(root), "--prepared-dir", str(prepared),
                   "--validation-fraction", "0"]) == 0
  out, err = capsys.readouterr()
  assert "validation split" in err and "empty" in err and "pass --validation-fraction > 0" in err
  assert list(prepared.iterdir())  # written where --prepared-dir says
  # Two repositories at the default fractions: more repositories, not a fraction, is the fix
  # (it said "pass --validation-fraction > 0", 0.05 already: helper-19's audit).
  small = test_utils.make_flcc_tree(tmp_path / "small", {
      test_utils.repo_in_split("train", skip=i): {"m.py": f"value = {i}\n"} for i in range(2)})
  assert cli.main(["prepare", "--root", str(small), "--prepared-dir", str(prepared)]) == 0
  _, err = capsys.readouterr()
  assert "a held-out split gets a repository of its own from 3 repositories on (this root has " \
      "2): add repositories" in err and "fraction" not in err, err
  # Four repositories of one file each, the same: each held-out split's repository lost its file
  # as a duplicate ("add repositories" was said to a root of 4: helper-58's audit).
  same = test_utils.make_flcc_tree(tmp_path / "same", {
      test_utils.repo_in_split("train", skip=i): {"m.py": "value = 1\n"} for i in range(4)})
  assert cli.main(["prepare", "--root", str(same), "--prepared-dir", str(prepared)]) == 0
  _, err = capsys.readouterr()
  for split in ("validation", "test"):
    assert (f"the {split} split of {same} is empty; a run on it would have no examples: its 1 "
            "repository lost every file to the reader's filters (duplicate 1)") in err, err


# --- start-up: nothing heavy before a command needs it; registration; quiet by default ----------

# What `code-t5 --help` and argument errors must not import (seconds of start-up between them).
HEAVY = ("tensorflow", "seqio", "t5", "mesh_tensorflow", "jax", "apache_beam")
# The libraries' chatter: TF's C++ log ("2024-01-01 10:00:00.123: E external/...cuda_dnn.cc:..."
# or absl's "W0101 10:00:00.123 ..."), Python logging's default format ("ERROR:root:Path not
# found: ..." from gin, "WARNING:tensorflow:..."), Python warnings (tensorflow_hub's
# "pkg_resources is deprecated"), CUDA/cuDNN/TensorRT notes.
NOISE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [IWEF] |^[IWEF]\d{4} \d\d:\d\d:\d\d|"
                   r"^(?:DEBUG|INFO|WARNING|ERROR):[\w.]+:|[A-Z]\w*Warning: |pkg_resources|"
                   r"(?i:cuda|tensorrt)", re.M)
CONSOLE_SCRIPT = pathlib.Path(sys.executable).parent / "code-t5"

# Runs command lines as the `code-t5` console script does (argv[0] "code-t5", so `import code_t5`
# registers nothing), one after the other in one fresh interpreter, and writes for each its exit
# status, output, and which HEAVY packages are imported by then.
_DRIVER = """
import contextlib, io, json, sys
report, heavy, cases = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
sys.argv = ["code-t5"]
from code_t5 import cli
results = []
for argv in cases:
  out, err = io.StringIO(), io.StringIO()
  with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    try:
      code = cli.main(argv)
    except SystemExit as e:
      code = e.code
  results.append({"argv": argv, "code": code, "out": out.getvalue(), "err": err.getvalue(),
                  "heavy": [m for m in heavy if m in sys.modules]})
with open(report, "w") as f:
  json.dump(results, f)
"""


def _env(**changes):
  env = {k: v for k, v in os.environ.items() if k not in ("TF_CPP_MIN_LOG_LEVEL", "PYTHONWARNINGS")}
  return dict(env, **changes)


def _console_script(args, **kwargs) -> subprocess.CompletedProcess:
  """`code-t5 ARGS` in a fresh process, as typed (the installed script, or an equivalent)."""
  command = ([str(CONSOLE_SCRIPT)] if CONSOLE_SCRIPT.exists() else
             [sys.executable, "-c", "import sys; sys.argv[0] = 'code-t5'; "
              "from code_t5.cli import main; sys.exit(main())"])
  return subprocess.run(command + list(args), capture_output=True, text=True,
                        env=kwargs.pop("env", _env()), **kwargs)


def test_help_and_argument_errors_import_nothing_heavy(tmp_path):
  missing = str(tmp_path / "missing")
  source = tmp_path / "m.py"
  source.write_text("import os\n")
  subparsers = cli.build_parser()._subparsers._group_actions[0]  # pylint: disable=protected-access
  commands = sorted(subparsers.choices)
  helps = [["--help"]] + [[command, "--help"] for command in commands]
  argparse_errors = [[], ["nosuch"], ["train", "--steps", "x"], ["train", "--steps", "0"],
                     ["plot"], ["vocab", "--out", "x"],
                     ["convert", "--dtype", "int3", missing, missing], ["complete"]]
  # Each command's own checks of its arguments, before it loads anything: one line, status 2.
  checked = [["train", "--model", "nosuch"], ["eval", "--root", missing],
             ["prepare", "--test-fraction", "-0.1"], ["prepare", "--root", missing],
             ["plot", "--model-dir", missing], ["import", missing, "--out", missing],
             ["complete", "--checkpoint", missing, str(source)],
             ["complete", "--checkpoint", str(test_utils.PRETRAINED), f"{source}:9:1"],
             ["export", "--checkpoint", missing], ["serve", "--checkpoint", missing],
             ["lsp", "--checkpoint", missing],
             ["cache", "--output-cache-dir", missing, "--root", missing],
             ["vocab", "--root", missing, "--out", str(tmp_path / "v.model")],
             ["vocab", "--root", str(tmp_path), "--out", str(tmp_path / "v.model"), "--size", "9"],
             ["baseline", "--root", missing, "--out", str(tmp_path / "b.json")],
             ["keystrokes", "--root", missing, "--out", str(tmp_path / "k.json")],
             ["keystrokes", "--checkpoint", missing, "--out", str(tmp_path / "k.json")],
             ["convert", missing, missing], ["pack", missing, "--out", missing]]
  report = tmp_path / "report.json"
  driver = subprocess.run(
      [sys.executable, "-c", _DRIVER, str(report), json.dumps(HEAVY),
       json.dumps(helps + argparse_errors + checked)],
      capture_output=True, text=True, env=_env(), timeout=120)
  assert driver.returncode == 0, driver.stderr[-3000:]
  results = {tuple(r["argv"]): r for r in json.loads(report.read_text())}
  for argv, r in results.items():
    assert not r["heavy"], f"`code-t5 {' '.join(argv)}` (or one before it) imported {r['heavy']}"
  for argv in map(tuple, helps):
    assert results[argv]["code"] == 0 and "usage: code-t5" in results[argv]["out"], argv
    assert not results[argv]["err"], argv
  for argv in map(tuple, argparse_errors):
    r = results[argv]
    assert r["code"] == 2 and not r["out"], argv
    assert r["err"].startswith("usage: code-t5"), argv  # argparse's usage, then the error line
    assert re.fullmatch(r"code-t5( \S+)?: error: [^\n]+\n", r["err"].splitlines(True)[-1]), r
  for argv in map(tuple, checked):
    r = results[argv]
    assert r["code"] == 2 and not r["out"], r
    assert re.fullmatch(fr"code-t5 {argv[0]}: [^\n]+\n", r["err"]), r  # exactly one line


@pytest.mark.parametrize("command, cli_module", [
    pytest.param([str(CONSOLE_SCRIPT)], "code_t5.cli", id="code-t5", marks=pytest.mark.skipif(
        not CONSOLE_SCRIPT.exists(), reason="code-t5 is not installed in this venv")),
    # -m runs code_t5/cli.py as __main__, after importing the package.
    pytest.param(["-m", "code_t5.cli"], "code_t5", id="python -m code_t5.cli"),
])
def test_the_installed_command_answers_help_without_tensorflow(command, cli_module):
  result = subprocess.run([sys.executable, "-X", "importtime", *command, "--help"],
                          capture_output=True, text=True, env=_env())
  assert result.returncode == 0 and "usage: code-t5" in result.stdout
  imported = {line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines()
              if line.startswith("import time:")}
  assert cli_module in imported and not imported & set(HEAVY)


def test_a_command_imports_only_its_own_module(tmp_path):
  # The full parser has every command, and each command's own parser has it with the same flags.
  def commands(parser):
    return parser._subparsers._group_actions[0].choices  # pylint: disable=protected-access

  every = commands(cli.build_parser())
  assert set(cli.SUBCOMMANDS) | {"train", "eval", "prepare", "plot"} == set(every)
  for command in every:
    own = commands(cli.build_parser(command))
    assert own[command].format_help() == every[command].format_help(), command
  # A cold `code-t5 complete` imports neither the server's, the LSP's nor the converters' modules
  # (-X importtime does not see importlib.import_module: the driver lists sys.modules).
  source = tmp_path / "m.py"
  source.write_text("import os\n")
  driver = ("import json, sys; sys.argv = ['code-t5'] + sys.argv[1:]; from code_t5.cli import main;"
            " status = main(); print(json.dumps(sorted(sys.modules))); sys.exit(status)")
  result = subprocess.run([sys.executable, "-c", driver, "complete", "--checkpoint",
                           str(tmp_path / "missing"), str(source)],
                          capture_output=True, text=True, env=_env())
  assert result.returncode == 2 and "--checkpoint" in result.stderr, result.stderr[-2000:]
  imported = set(json.loads(result.stdout))
  assert "code_t5.engine.complete" in imported
  assert not imported & {"code_t5.engine.serve", "code_t5.engine.lsp", "code_t5.convert.t5x",
                         "code_t5.data.corpus", "code_t5.evaluation.baseline"}


def test_import_code_t5_registers_every_task_mixture_and_the_gin_path():
  # As `python -m t5.models.mesh_transformer_main --module_import=code_t5` does it.
  code = ("import sys; sys.argv[0] = '/venv/t5/models/mesh_transformer_main.py'\n"
          "import importlib; importlib.import_module('code_t5')\n"
          "import gin, seqio\n"
          "from code_t5.data import task_names, vocab\n"
          "names = [task_names.name_of(o, v) for o in task_names.OBJECTIVES\n"
          "         for v in vocab.VOCABULARIES]\n"
          "for name in names:\n"
          "  seqio.get_mixture_or_task(name)\n"
          "gin.parse_config_file('vocabs/spm_dev.gin')\n"
          "print(len(names))\n")
  result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=_env(TF_CPP_MIN_LOG_LEVEL="3"), cwd="/")
  assert result.returncode == 0, result.stderr[-3000:]
  assert int(result.stdout) == len(task_names.OBJECTIVES) * len(vocab.VOCABULARIES)


def test_a_command_that_needs_the_registry_registers_it(tmp_path):
  # `cache` parses gin and looks the tasks up in-process: an unknown task is refused with the
  # list of registered ones, which the `code-t5` process must have registered itself.
  # dataset.gin is found on gin's search path, which the process must have set too.
  result = _console_script(["cache", "--output-cache-dir", str(tmp_path / "cache"),
                            "--tasks", "nosuch_v1", "--gin-file", "dataset.gin"], cwd=tmp_path)
  assert result.returncode == 2, result.stderr[-3000:]
  assert re.fullmatch(r"code-t5 cache: unknown task\(s\) nosuch_v1; registered: .*\n",
                      result.stderr), result.stderr[-3000:]
  assert "flcc_py_prefix_lm_v1" in result.stderr and "flcc_py_cursor_lm_spm_dev_v1" in result.stderr


def test_complete_on_a_checkpoint_without_runtime_registers_and_is_quiet(tmp_path):
  # The first completion from a checkpoint writes its NumPy runtime from the seqio task's
  # vocabulary (TensorFlow, seqio, t5 in-process): found, and nothing but progress on stderr.
  model_dir = tmp_path / "model"
  shutil.copytree(test_utils.PRETRAINED, model_dir, ignore=shutil.ignore_patterns("runtime"))
  source = tmp_path / "m.py"
  source.write_text("import os\nimport sys\n\n\ndef main(argv):\n  ")
  result = _console_script(["complete", "--checkpoint", str(model_dir), str(source), "--json"])
  assert result.returncode == 0, result.stderr[-3000:]
  assert "completion" in json.loads(result.stdout)
  assert "writing the runtime of" in result.stderr  # progress: the registry was used
  assert not NOISE.search(result.stderr), result.stderr[-3000:]


def test_library_chatter_is_hidden_unless_verbose(tmp_path):
  args = ["prepare", "--root", str(test_utils.make_flcc_tree(tmp_path / "flcc", {
      test_utils.repo_in_split("train"): {"m.py": "x = 1\n"}})),
          "--prepared-dir", str(tmp_path / "prepared")]
  quiet = _console_script(args)
  assert quiet.returncode == 0, quiet.stderr[-3000:]
  assert "prepared:" in quiet.stdout and not NOISE.search(quiet.stderr), quiet.stderr[-3000:]
  verbose = _console_script(["--verbose"] + args)
  assert verbose.returncode == 0, verbose.stderr[-3000:]
  assert verbose.stdout == quiet.stdout  # the same report...
  assert NOISE.search(verbose.stderr), verbose.stderr[-3000:]  # ...and what the libraries said


def _claim_a_huge_embedding(name, entry):
  if name == "transformer/embedding":
    del entry.shape.dim[:]
    for size in (1 << 20, 1 << 20):
      entry.shape.dim.add(size=size)


def _model_dir_with(tmp_path, make):
  """A model dir as a run leaves it (a checkpoint and its state file), plus what `make` adds."""
  model_dir = tmp_path / "model"
  (model_dir / "logs").mkdir(parents=True)
  for part in (".index", ".data-00000-of-00001"):  # a real checkpoint: its index is read
    shutil.copyfile(f"{test_utils.PRETRAINED}/model.ckpt-{test_utils.PRETRAINED_STEP}{part}",
                    model_dir / f"model.ckpt-2{part}")
  (model_dir / "checkpoint").write_text('model_checkpoint_path: "model.ckpt-2"\n'
                                        'all_model_checkpoint_paths: "model.ckpt-2"\n')
  users = tmp_path / "users"
  users.mkdir()
  (users / "notes.txt").write_text("mine\n")
  make(model_dir, users)
  return model_dir, users


@pytest.mark.parametrize("command", ["train", "eval"])
@pytest.mark.parametrize("make, says", [
    # Runs write their logs, lock, operative config, commands and decodes through links.
    (lambda m, u: (m / "logs" / "train.log").symlink_to(u / "notes.txt"), "train.log is a link"),
    (lambda m, u: (m / "train.lock").symlink_to(u / "notes.txt"), "train.lock is a link"),
    (lambda m, u: (m / "validation_eval_line_completion-dataset-dev").symlink_to(u),
     "validation_eval_line_completion-dataset-dev is a link"),
    # TensorFlow's reader would wait on it for good.
    (lambda m, u: (os.unlink(m / "model.ckpt-2.index"), os.mkfifo(m / "model.ckpt-2.index")),
     "model.ckpt-2.index is not a regular file or folder"),
    # TensorFlow's Saver restores what the state file names, then deletes the oldest.
    (lambda m, u: (m / "checkpoint").write_text(
        'model_checkpoint_path: "../users/notes.txt"\n'), "names '../users/notes.txt'"),
    (lambda m, u: (m / "checkpoint").write_text(
        f'model_checkpoint_path: "model.ckpt-2"\nall_model_checkpoint_paths: "{u}/notes.txt"\n'),
     "not a checkpoint of"),
    # What TensorFlow's text-format reader takes as well: single quotes (helper-18's audit: the
    # Saver deleted the files they named), escapes, adjacent strings, list syntax.
    (lambda m, u: (m / "checkpoint").write_text(
        f"model_checkpoint_path: 'model.ckpt-2'\nall_model_checkpoint_paths: '{u}/notes.txt'\n"),
     "not a checkpoint of"),
    (lambda m, u: (m / "checkpoint").write_text(
        'model_checkpoint_path: "model.ckpt-2"\nall_model_checkpoint_paths: "..\\057users"\n'),
     "names '../users'"),
    (lambda m, u: (m / "checkpoint").write_text(
        'all_model_checkpoint_paths: "model.ckpt-2" "/../users/notes.txt"\n'), "not a checkpoint"),
    (lambda m, u: (m / "checkpoint").write_text(
        f'all_model_checkpoint_paths: ["model.ckpt-2", "{u}/notes.txt"]\n'), "not a checkpoint"),
    (lambda m, u: (m / "checkpoint").write_text('model_checkpoint_path: model.ckpt-2\n'),
     "is not a checkpoint state TensorFlow reads"),
    # TensorFlow's reader allocates what an index claims (helper-20's audit: 2 TiB).
    (lambda m, u: hostile_checkpoints.change_checkpoint_index(
        str(m / "model.ckpt-2"), _claim_a_huge_embedding), "--model-dir: "),
])
def test_a_model_dir_that_would_lead_a_run_elsewhere_is_refused(command, make, says, tmp_path,
                                                                capsys):
  model_dir, users = _model_dir_with(tmp_path, make)
  assert cli.main([command, "--model-dir", str(model_dir), "--model", "causal_lm"]) == 2
  err = capsys.readouterr().err
  assert err.count("\n") == 1 and says in err, err
  assert [p.name for p in users.iterdir()] == ["notes.txt"]
  assert (users / "notes.txt").read_text() == "mine\n"


def test_a_model_dir_as_runs_leave_it_is_not_refused(tmp_path):
  model_dir, _ = _model_dir_with(tmp_path, lambda m, u: None)
  (model_dir / "checkpoint").write_text(
      f'model_checkpoint_path: "{model_dir.resolve()}/model.ckpt-2"\n'
      'all_model_checkpoint_paths: "model.ckpt-2"\nlast_preserved_timestamp: 1796542376.5\n')
  launcher.check_model_dir(model_dir)


def test_a_state_file_tensorflow_wrote_in_a_folder_named_in_another_script_is_not_refused(
    tmp_path):
  """TensorFlow's Saver writes absolute paths, and the text format escapes their non-ASCII bytes
  (\\321\\200...): the check reads them back as TensorFlow does."""
  import tensorflow.compat.v1 as tf  # pylint: disable=g-import-not-at-top
  (tmp_path / "модели").mkdir()
  model_dir, _ = _model_dir_with(tmp_path / "модели", lambda m, u: None)
  tf.train.update_checkpoint_state(
      str(model_dir), str(model_dir / "model.ckpt-2"), [str(model_dir / "model.ckpt-2")],
      all_model_checkpoint_timestamps=[1796542376.5], last_preserved_timestamp=1796542370.0)
  assert "\\" in (model_dir / "checkpoint").read_text()
  launcher.check_model_dir(model_dir)


def test_an_init_from_checkpoint_that_is_a_fifo_is_refused(tmp_path, capsys):
  source = tmp_path / "source"
  source.mkdir()
  os.mkfifo(source / "model.ckpt-7.index")
  (source / "model.ckpt-7.data-00000-of-00001").write_bytes(b"")
  assert cli.main(["train", "--model-dir", str(tmp_path / "new"), "--init-from", str(source),
                   "--steps", "1"]) == 2
  err = capsys.readouterr().err
  assert err.count("\n") == 1 and "--init-from: cannot read" in err and "FIFO" in err, err


def test_a_model_dir_nested_past_the_recursion_limit_is_checked_not_a_traceback(tmp_path, capsys):
  """os.walk recursed once per level: a stranger's chain of folders was a RecursionError."""
  model_dir, _ = _model_dir_with(tmp_path, lambda m, u: None)
  with test_utils.folder_chain(model_dir / "chain", sys.getrecursionlimit() + 500) as bottom:
    os.mkfifo(bottom / "pipe")
    assert cli.main(["eval", "--model-dir", str(model_dir), "--model", "causal_lm"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith("pipe is not a regular file or folder: remove it\n")
    (bottom / "pipe").unlink()


def test_a_gin_param_named_in_a_note_is_one_shell_word_as_written():
  # shlex.quote made `'code_t5.task_name.version = '"'"'v3'"'"''` of gin's single-quoted strings
  # (helper-52's audit); double quotes where nothing in them means anything to the shell.
  for param, shown in [("code_t5.task_name.version = 'v3'", "\"code_t5.task_name.version = 'v3'\""),
                       ('x = "a"', "'x = \"a\"'"), ("y = '$HOME'", "'y = '\"'\"'$HOME'\"'\"''")]:
    assert cli._shell_word(param) == shown  # pylint: disable=protected-access
    assert shlex.split(shown) == [param]


def test_eval_of_a_validation_split_without_points_is_a_one_line_error(tmp_path, capsys):
  # Repositories of one-line files: every metric printed as nan, status 0 (helper-58's audit).
  repos = {test_utils.repo_in_split(split, skip=i): {"a.py": "1\n"}
           for split in ("train", "validation", "test") for i in range(2)}
  root = test_utils.make_flcc_tree(tmp_path / "flcc", repos)
  model_dir = tmp_path / "run"
  assert cli.main(["eval", "--root", str(root), "--model-dir", str(model_dir),
                   "--line-completion"]) == 2
  assert capsys.readouterr().err == (
      f"code-t5 eval: --root {root}: its validation split has no completion points (no file has "
      "a line of 2 characters or more), so there is nothing to evaluate on: import repositories "
      "of more code\n")
  assert not model_dir.exists()
