"""Whole lines from the file and its repository as candidates (code_t5/engine/line_retrieval.py)."""

import pathlib
import random

from code_t5.engine import line_retrieval

OTHER = ("import os\n\ndef load(path):\n    config = read_config(path, strict=True)\n"
         "    return config\n")


def _index(**files):
  index = line_retrieval.LineIndex()
  for path, text in files.items():
    index.add(path, text)
  return index


def test_inside_a_line_the_lines_that_start_with_what_is_typed_are_proposed():
  index = _index(**{"lib/other.py": OTHER})
  prefix = "def main(path):\n    config = read_"
  assert line_retrieval.candidates(prefix, index, "lib/main.py") == ["config(path, strict=True)"]
  assert line_retrieval.candidates(prefix) == []  # the file alone does not hold it


def test_at_a_line_start_the_lines_that_followed_the_same_line_are_proposed():
  index = _index(**{"lib/other.py": OTHER})
  prefix = "def main(path):\n    config = read_config(path, strict=True)\n    "
  assert line_retrieval.candidates(prefix, index, "lib/main.py") == ["return config"]


def test_the_cursor_s_own_file_in_the_index_is_left_out_and_the_file_counts_more():
  index = _index(**{"a.py": "x = f(1)\n", "b.py": "x = f(2)\nx = f(2)\n"})
  # In b.py itself, its indexed copy is not read: the editor's text (the prefix) is.
  assert line_retrieval.candidates("x = f(3)\ny = 0\nx = f", index, "b.py") == ["(3)", "(1)"]
  assert line_retrieval.candidates("x = f", index, "c.py") == ["(2)", "(1)"]


def test_lines_below_the_cursor_count_as_the_file_s():
  prefix = "def main(path):\n    result = comp"
  below = "    return result\n\nresult = compute(1, 2)\n"
  assert line_retrieval.candidates(prefix, below=below) == ["ute(1, 2)"]


def test_the_line_right_above_is_not_proposed_again():
  """It is the file's, so it came with the bonus, and calls may repeat: `echo(f"...")` was
  shown again below itself (helper-22's audit)."""
  prefix = 'echo(f"a {x}")\ny = 1\necho(f"b {y}")\n\necho(f"'
  assert line_retrieval.candidates(prefix) == ['a {x}")']
  assert line_retrieval.candidates("f()\nf()\ng()\nf()\n") == ["g()"]  # f() followed f() too
  # Nor one of the run right above that starts as the cursor's line does.
  run = 'echo(f"a {x}")\necho(f"b {y}")\necho(f"c {z}")\n\necho(f"'
  assert line_retrieval.candidates(run) == []
  assert line_retrieval.candidates('echo(f"q {w}")\ny = 1\n' + run) == ['q {w}")']


def test_nothing_to_propose_gives_nothing():
  assert line_retrieval.candidates("") == []
  assert line_retrieval.candidates("    ") == []
  assert line_retrieval.candidates("x = 1\ny", _index()) == []


def test_an_index_kept_up_to_date_answers_as_one_built_afresh():
  """Files added, saved again with other text and removed, in an order that sorts the lines
  anew several times: every look-up equals that of an index built from the final files."""
  from code_t5.data import flcc  # pylint: disable=g-import-not-at-top
  dataset_dev = pathlib.Path(__file__).resolve().parent.parent / "dataset-dev"
  files = list(flcc.read_files(dataset_dev, only_split="train"))[:60]
  rng = random.Random(0)
  kept = line_retrieval.LineIndex()
  final = {}
  for step in range(150):
    f = rng.choice(files)
    if f.path in final and rng.random() < 0.3:
      kept.remove(f.path)
      del final[f.path]
    else:  # a new file, or a save of one: another file's text under its path
      text = rng.choice(files).text if f.path in final else f.text
      kept.add(f.path, text)
      final[f.path] = text
    if step % 25 == 24:
      fresh = _index(**final)
      for g in rng.sample(files, 5):
        lines = [l.strip() for l in g.text.split("\n") if l.strip()]
        for line in rng.sample(lines, min(5, len(lines))):
          head = line[:rng.randint(1, max(1, len(line) - 1))]
          assert sorted(kept.starting_with(head, g.path)) == sorted(fresh.starting_with(head, g.path))
          assert sorted(kept.followers(line, g.path)) == sorted(fresh.followers(line, g.path))
  assert len(kept) == len(final)
