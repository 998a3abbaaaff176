"""code_t5.data.near_copies: the share of a held-out file's long lines a training file holds."""

from code_t5.data import near_copies


def _lines(name: str, count: int) -> list:
  return [f"result_{name}_{i} = compute_the_value_of({name!r}, index={i})" for i in range(count)]


def test_a_file_is_judged_by_its_distinct_long_stripped_lines():
  text = "    " + "\n".join(_lines("a", 2)) + "\n" + _lines("a", 1)[0] + "\nelse:\nreturn None\n"
  assert near_copies.long_lines(text) == frozenset(_lines("a", 2))


def test_shares_and_the_largest_copy():
  held_out = near_copies.HeldOutLines([
      ("repo:big.py", "\n".join(_lines("big", 20))),
      ("repo:other.py", "\n".join(_lines("other", 10))),
      ("repo:tiny.py", "\n".join(_lines("tiny", 3))),  # too few long lines to judge
  ])
  assert len(held_out) == 2 and held_out.sizes == {"repo:big.py": 20, "repo:other.py": 10}
  train = "\n".join(_lines("big", 15) + _lines("other", 4) + _lines("tiny", 3) + _lines("own", 9))
  assert held_out.shares(train) == {"repo:big.py": 0.75, "repo:other.py": 0.4}
  assert held_out.copied(train, 0.5) == ("repo:big.py", 0.75)
  assert held_out.copied(train, 0.8) is None
  assert held_out.copied("\n".join(_lines("own", 30)), 0.1) is None
