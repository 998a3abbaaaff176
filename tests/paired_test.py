"""Paired comparisons of two completers at the same points, with intervals over files."""

import pytest

from code_t5.evaluation import baseline
from code_t5.evaluation import paired

# 24 files of 8 points each: the shape of dataset-dev's validation split (192 points).
FILES = [f"file{i}.py" for i in range(24) for _ in range(8)]
TARGETS = [f"x = f({i})" for i in range(len(FILES))]


def _with_exact(indices, wrong="pass"):
  return [t if i in indices else wrong for i, t in enumerate(TARGETS)]


def test_per_point_scores_average_to_the_eval_metrics():
  predictions = ["x = f(0)\nmore", "x = f(", "", "y = f(3)", "x = f(4)"] + ["?"] * 187
  scores = paired.point_scores(TARGETS, predictions)
  reported = baseline._score(TARGETS, predictions)  # pylint: disable=protected-access
  assert scores["exact_match"].mean() == pytest.approx(reported["exact_match"], abs=1e-3)
  assert scores["edit_similarity"].mean() == pytest.approx(reported["edit_similarity"],
                                                           abs=1e-3)
  assert list(scores["exact_match"][:5]) == [100, 0, 0, 0, 100]  # the first line is judged


def test_the_same_predictions_differ_by_nothing():
  predictions = _with_exact(range(0, 192, 7))
  result = paired.compare(TARGETS, predictions, predictions, FILES)
  assert result["exact_match"] == {"difference": 0, "ci95": [0, 0], "only_this": 0,
                                   "only_reference": 0}
  assert result["edit_similarity"] == {"difference": 0, "ci95": [0, 0]}
  assert (result["points"], result["groups"], result["resamples"]) == (192, 24, paired.RESAMPLES)


def test_one_line_more_of_192_is_within_the_noise():
  reference = _with_exact(range(0, 192, 12))  # 16 exact lines, the n-gram's on dataset-dev
  predictions = _with_exact(set(range(0, 192, 12)) - {0, 12, 24} | {5, 50, 99, 150})  # 17
  result = paired.compare(TARGETS, predictions, reference, FILES)
  exact = result["exact_match"]
  assert exact["difference"] == pytest.approx(100 / 192, abs=1e-3)
  assert (exact["only_this"], exact["only_reference"]) == (4, 3)
  low, high = exact["ci95"]
  assert low < 0 < high


def test_a_system_right_in_every_file_is_better_beyond_the_noise():
  reference = _with_exact(range(0, 192, 12))
  gains = set(range(1, 192, 4)) | set(range(2, 96, 8))  # +60 lines, more in the first files
  predictions = _with_exact(set(range(0, 192, 12)) | gains)
  exact = paired.compare(TARGETS, predictions, reference, FILES)["exact_match"]
  low, high = exact["ci95"]
  assert exact["difference"] == 31.25 and 20 < low < 31.25 < high


def test_points_are_resampled_a_file_at_a_time():
  # The same 24 extra exact lines: one in each file, or all 8 points of three files. Gains that
  # hang on three files are less sure than gains in every file, so their interval is wider; a
  # bootstrap of single points would give both the same width.
  reference = _with_exact(set())
  spread = paired.compare(TARGETS, _with_exact(set(range(0, 192, 8))), reference, FILES)
  clustered = paired.compare(TARGETS, _with_exact(set(range(24))), reference, FILES)
  assert spread["exact_match"]["difference"] == clustered["exact_match"]["difference"] == 12.5
  width = {name: high - low for name, (low, high) in
           (("spread", spread["exact_match"]["ci95"]),
            ("clustered", clustered["exact_match"]["ci95"]))}
  assert width["clustered"] > 3 * width["spread"]
  assert spread["exact_match"]["ci95"][0] > 10  # the same line in every file: sure


def test_a_comparison_repeats_exactly():
  reference = _with_exact(range(0, 192, 12))
  predictions = _with_exact(range(0, 192, 9))
  first = paired.compare(TARGETS, predictions, reference, FILES)
  assert paired.compare(TARGETS, predictions, reference, FILES) == first
  assert paired.shown(first, "exact_match").startswith("+")


def test_bad_input_is_refused():
  with pytest.raises(ValueError, match="no points to compare"):
    paired.compare([], [], [], [])
  with pytest.raises(ValueError, match="one of each per point"):
    paired.compare(TARGETS, TARGETS[:-1], TARGETS, FILES)
