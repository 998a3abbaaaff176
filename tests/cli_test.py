"""code_t5/cli.py: one set of dataset flags for commands that read a root; `prepare`'s report."""

import pytest

from code_t5 import cli
from code_t5 import test_utils

DATASET_FLAGS = ["--validation-fraction", "0.2", "--test-fraction", "0.1",
                 "--prepared-dir", "/data/prepared"]


@pytest.mark.parametrize("command", ["train", "eval"])
def test_train_and_eval_split_as_prepare_did(command, tmp_path):
  args = cli.build_parser().parse_args([command, "--root", str(tmp_path), *DATASET_FLAGS])
  experiment = cli._experiment(args)  # pylint: disable=protected-access
  assert f"--gin_param=code_t5.flcc_dataset.root = '{tmp_path}'" in experiment.train_command(1)
  for binding in ("code_t5.flcc_dataset.validation_fraction = 0.2",
                  "code_t5.flcc_dataset.test_fraction = 0.1",
                  "code_t5.flcc_dataset.prepared_dir = '/data/prepared'"):
    assert f"--gin_param={binding}" in experiment.train_command(1)
    assert f"--gin_param={binding}" in experiment.eval_command()


def test_without_dataset_flags_dataset_gin_decides(tmp_path):
  args = cli.build_parser().parse_args(["train"])
  command = cli._experiment(args).train_command(1)  # pylint: disable=protected-access
  assert not any("flcc_dataset" in part for part in command)


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
  assert "validation split" in err and "empty" in err and "--validation-fraction" in err
  assert list(prepared.iterdir())  # written where --prepared-dir says
