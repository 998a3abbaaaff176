"""scripts/held_out_copies.py: held-out files that a training root holds near-copies of."""


import pytest

from code_t5 import test_utils



def _module(name: str, count: int) -> str:
  """`count` functions whose lines are all longer than MIN_CHARS and unique to `name`."""
  return "".join(f"def {name}_function_number_{i}(argument_one, argument_two):\n"
                 f"    return {name}_helper_of_the_module(argument_one + {i}, argument_two)\n\n\n"
                 for i in range(count))


@pytest.fixture
def roots(tmp_path):
  backport = _module("vendored", 6)  # 12 long lines
  held_out = test_utils.make_flcc_tree(tmp_path / "held_out", {
      test_utils.repo_in_split("validation"): {"pkg/copied.py": backport,
                                               "pkg/own.py": _module("original", 6)},
      test_utils.repo_in_split("train"): {"a.py": "x = 1\n"},
      test_utils.repo_in_split("train", skip=1): {"b.py": "y = 2\n"}})
  # The train root's copy keeps 9 of the 12 long lines (a backport that changed a few) and adds
  # its own; the held-out file's own lines appear nowhere.
  kept = "\n".join(backport.splitlines()[:17]) + "\n" + _module("backport_extra", 4)
  train = test_utils.make_flcc_tree(tmp_path / "train", {
      test_utils.repo_in_split("train"): {"future/backports/copied.py": kept},
      test_utils.repo_in_split("train", skip=1): {"other.py": _module("unrelated", 3)}})
  return train, held_out


def test_a_held_out_file_with_a_copy_in_the_train_split_is_reported_with_its_points(
    roots, capsys):
  train, held_out = roots
  assert test_utils.load_script("held_out_copies").main(["--train-root", str(train), "--root", str(held_out)]) == 0
  out = capsys.readouterr().out.splitlines()
  reported = [line for line in out if "copied.py" in line]
  assert len(reported) == 1 and not any("own.py" in line for line in out)
  assert reported[0].startswith("validation\t") and "75% of its 12 long lines" in reported[0]
  assert "future/backports/copied.py" in reported[0]
  points = int(reported[0].split("\t")[2].split()[0])
  assert points > 0
  assert f"validation: {points} of " in "\n".join(out)
  assert "test: 0 of " in "\n".join(out)  # (the split of three repositories holds one out)
  # Above the share it holds, nothing is reported.
  assert test_utils.load_script("held_out_copies").main(["--train-root", str(train), "--root", str(held_out),
                         "--min-share", "0.8"]) == 0
  assert "copied.py" not in capsys.readouterr().out


def test_bad_arguments_are_one_line_errors(roots, tmp_path, capsys):
  train, held_out = roots
  assert test_utils.load_script("held_out_copies").main(["--train-root", str(train), "--root", str(held_out),
                         "--min-share", "0"]) == 2
  assert capsys.readouterr().err.strip() == "--min-share 0 must be in (0, 1]"
  assert test_utils.load_script("held_out_copies").main(["--train-root", str(tmp_path / "missing"), "--root",
                         str(held_out)]) == 2
  err = capsys.readouterr().err.strip()
  assert len(err.splitlines()) == 1 and "missing" in err
