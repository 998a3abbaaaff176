"""The confidence gate: code_t5/engine/confidence.py, the Completer's use of it, scripts/fit_confidence.py."""

import json
import math
import random
import shutil

import pytest

from code_t5 import test_utils
from code_t5.data import flcc
from code_t5.data import sources
from code_t5.engine import complete
from code_t5.engine import confidence
from code_t5.engine import line_filters
from code_t5.engine import undefined
from code_t5.engine import wanted
from code_t5.engine.decoding import Line




def test_an_alternatives_features_are_its_own_as_if_it_were_the_best():
  lines = [Line("return x", -0.5, 3), Line("return y", -2.0, 4), Line("return z", -1.0, 2)]
  assert confidence.features_of(lines, 0, True) == confidence.features(lines, True)
  # Its margin is over the best-scoring other line: negative below the best.
  assert confidence.features_of(lines, 1, False) == [-2.0, -1.5, math.log1p(4), 0.0]
  assert confidence.features_of(lines, 2, False)[1] == pytest.approx(-0.5)
  assert confidence.features_of(lines[:1], 0, False)[1] == confidence.NO_SECOND_MARGIN


def test_features_are_the_best_lines_score_margin_length_and_the_line_start():
  lines = [Line("return x", -0.5, 3), Line("return y", -2.0, 3)]
  assert confidence.features(lines, True) == [-0.5, 1.5, math.log1p(3), 1.0]
  assert confidence.features(lines[:1], False) == [-0.5, confidence.NO_SECOND_MARGIN,
                                                   math.log1p(3), 0.0]
  assert confidence.features([], False) is None
  assert confidence.features([Line("import numpy as np", -1.7, 5, unlikely=True)], True) is None
  # The margin is over the best-scoring rival, wherever the engine ranked it.
  ranked = [Line("import logging", -2.2, 3), Line("x = 1", -9.7, 3), Line("import numpy", -1.5, 3)]
  assert confidence.features(ranked, True)[1] == pytest.approx(-0.7)
  assert confidence.at_line_start("def f():\n    ") and not confidence.at_line_start("x = f(")


def test_fit_learns_which_points_are_right_and_the_gate_shows_the_share_asked():
  """Points whose best line is exact mostly where the margin is large: the fitted model ranks
  them first, and its gate for 40 % of the points shows 40 % of them."""
  rng = random.Random(0)
  rows, exact = [], []
  for _ in range(600):
    margin = rng.uniform(0, 4)
    rows.append([rng.uniform(-4, 0), margin, math.log1p(rng.randint(1, 20)), rng.random() < 0.5])
    exact.append(margin + rng.gauss(0, 0.7) > 2.5)
  model = confidence.fit(rows, exact)
  assert model["weights"]["margin"] > 1 > abs(model["weights"]["score"])
  probabilities = [confidence.probability(r, model) for r in rows]
  ranked = [e for _, e in sorted(zip(probabilities, exact), reverse=True)]
  assert sum(ranked[:150]) > 0.9 * 150 and sum(ranked[-150:]) < 0.1 * 150
  gate = confidence.threshold_for_share(probabilities, len(rows), 0.4)
  # At least the share asked; a few more where the gate, rounded down to 3 decimals, admits them.
  assert 240 <= sum(p >= gate for p in probabilities) <= 246
  with pytest.raises(ValueError):
    confidence.fit([], [])


def test_a_bad_confidence_in_about_json_is_one_line(tmp_path):
  for bad, said in (({"weights": {}, "bias": 0, "min": 0.1}, "must give a number for each"),
                    ({"weights": dict.fromkeys(confidence.FEATURES, 1.0), "bias": 0, "min": 2},
                     "\"min\" a probability"),
                    ([], "not an object")):
    (tmp_path / complete.ABOUT_FILE).write_text(json.dumps({"confidence": bad}))
    with pytest.raises(complete.CompletionError, match=said) as raised:
      complete.model_about(tmp_path)
    assert "\n" not in str(raised.value) and "mend or remove it" in str(raised.value)


@pytest.fixture(scope="module")
def shipped():
  return complete.Completer(test_utils.PRETRAINED)


def test_the_shipped_model_gates_on_its_confidence_and_reports_it(shipped):
  about = shipped.about
  assert confidence.check(about["confidence"]) is None
  assert shipped.min_confidence == about["confidence"]["min"]
  # A line the file settles (the loop's `return` two lines up) and a guess at a new block.
  sure = shipped.complete("def f(items):\n    for x in items:\n        if x:\n            return x\n"
                          "    return None\n\n\ndef g(items):\n    for x in items:\n        if x:\n"
                          "            ret")
  assert sure.completion == "urn x" and sure.confidence >= shipped.min_confidence
  assert sure.reply()["confidence"] == round(sure.confidence, 4)
  guess = "import os\n\n\ndef main():\n    path = os.getcwd()\n    files = os.listdir(path)\n    "
  unsure = shipped.complete(guess)
  assert unsure.confidence < shipped.min_confidence and unsure.candidates == ()
  # A best line the engine itself ranks after the others (here every line repeats an import the
  # file has: dataset-dev's unittest/__init__.py at `from .lo|`, under `from .loader import
  # TestLoader, defaultTestLoader` and `from .suite import BaseTestSuite, TestSuite`): no
  # confidence, nothing shown.
  [init] = [f for f in flcc.read_files(sources.DEV_ROOT) if f.path == "unittest/__init__.py"]
  typed = init.text[:init.text.index("from .loader import makeSuite") + len("from .lo")]
  guessed = shipped.complete(typed)
  assert guessed.confidence is None and guessed.candidates == ()
  # Beside a shown line, no alternative the engine ranks unlikely, however well it scores: after
  # `import os`, `import numpy as np` outscores the best line, `from pathlib import Path`.
  listed = complete.Completer(test_utils.PRETRAINED, complete.EngineOptions(min_confidence=0.0))
  _, ranked = listed.ranked("import os\n")
  guessed = [line for line, _ in ranked if line.text == "import numpy as np"]
  assert guessed and guessed[0].unlikely and guessed[0].score >= listed.min_score
  texts = [c.text for c in listed.complete("import os\n").candidates]
  assert texts[0] == "from pathlib import Path" and "import numpy as np" not in texts
  # --min-score given: the score gate instead (here: every line); the confidence still reported.
  every = complete.Completer(test_utils.PRETRAINED,
                             complete.EngineOptions(min_score=complete.DEFAULT_MIN_SCORE))
  shown = every.complete(guess)
  assert shown.candidates and shown.confidence == pytest.approx(unsure.confidence)
  strict = complete.Completer(test_utils.PRETRAINED, complete.EngineOptions(min_confidence=1.0))
  assert strict.complete(sure_prefix := "x = 1\ny = x\nz = y\nw = ").candidates == ()
  assert strict.complete(sure_prefix).confidence is not None


# A new line in `total`'s loop. `count` is bound only in `first`, and the line above is
# `result += item`.
_LOOP = ("def first(values):\n    count = len(values)\n    return count\n\n\n"
         "def total(items):\n    result = 0\n    for item in items:\n        result += item\n"
         "        ")
_BELOW = "    return result\n"


def _ranking_of(lines, prefix=_LOOP, below=_BELOW):
  """A Ranking of hand-made `lines` (all passing the filters) at the end of `prefix`, judged by
  the engine's own readers of the cursor's line and the file."""
  return complete.Ranking(prefix, [(line, None) for line in lines],
                          line_filters.LineContext.of(prefix, "", below),
                          undefined.UndefinedNames(wanted.Wanted(prefix, below)),
                          confidence.at_line_start(prefix))


def test_lines_beside_the_best_pass_its_gate_and_are_not_wrong_where_they_stand(shipped):
  best = Line("print(result)", -0.2, 4)
  close = Line("item.close()", -0.3, 4)  # near the best: its own confidence passes the gate
  far = Line("result = sum(items) + len(items) * 2", -1.8, 12)  # passes the score gate only
  unbound = Line("print(count)", -0.4, 4)  # `count` is `first`'s
  copy = Line("result += item", -0.35, 4)  # the line above again
  kept = [best, close, far, unbound, copy]
  ranking = _ranking_of(kept)
  sure = shipped.confidence_of(confidence.features(kept, ranking.line_start))
  assert sure >= shipped.min_confidence and far.score >= shipped.min_score
  for line in (far, unbound, copy):
    k = kept.index(line)
    own = shipped.confidence_of(confidence.features_of(kept, k, True))
    assert (own < shipped.min_confidence) == (line is far)
  assert shipped.listed(ranking, kept, sure, 5) == [best, close]
  assert shipped.listed(ranking, kept, sure, 1) == [best]
  # Below the gate nothing is listed; behind the score gate, every line that passes it.
  assert shipped.listed(ranking, kept, shipped.min_confidence / 2, 5) == []
  assert shipped.listed(ranking, kept, None, 5, gates=(None, -1.0)) == [best, close, unbound, copy]
  # Through `complete`: the engine's own lines at a cursor, every alternative passing the gate.
  completion = shipped.complete(_LOOP, below=_BELOW)
  texts = [c.text for c in completion.candidates]
  assert "result += item" not in texts[1:] and "print(count)" not in texts[1:]


def test_min_confidence_needs_a_model_that_has_one(tmp_path):
  model = tmp_path / "model"
  shutil.copytree(test_utils.PRETRAINED, model)
  about = json.loads((model / complete.ABOUT_FILE).read_text())
  del about["confidence"]
  (model / complete.ABOUT_FILE).write_text(json.dumps(about))
  with pytest.raises(complete.CompletionError, match="has no confidence model"):
    complete.Completer(model, complete.EngineOptions(min_confidence=0.2))
  with pytest.raises(complete.CompletionError, match="must be a probability"):
    complete.check_options(complete.EngineOptions(min_confidence=1.5))
  with pytest.raises(complete.CompletionError, match="give one of them"):
    complete.check_options(complete.EngineOptions(min_confidence=0.2, min_score=-2.0))
  # Without one, the score gate of its about.json, as before.
  plain = complete.Completer(model)
  assert plain.min_confidence is None and plain.min_score == about["min_score"]
  assert plain.complete("import os\n\n\n").confidence is None


def test_fit_confidence_writes_the_gate_into_about_json(tmp_path, capsys):
  fit_confidence = test_utils.load_script("fit_confidence")
  rng = random.Random(1)
  per_point = []
  for i in range(300):
    margin = rng.uniform(0, 4)
    right = margin + rng.gauss(0, 0.5) > 2
    per_point.append({"target": "x", "predictions": {"engine:+similar": "x" if right else "y"},
                      "confidence_features": {"engine:+similar": None if i % 50 == 0 else
                                              [-1.0, margin, 1.5, 0.0]}})
  results = tmp_path / "results.json"
  results.write_text(json.dumps({"root": "r", "split": "validation", "points": {"count": 300},
                                 "per_point": per_point}))
  about = tmp_path / "about.json"
  about.write_text(json.dumps({"name": "m", "min_score": -2.0}))
  assert fit_confidence.main([str(results), "--about", str(about), "--share", "0.5"]) == 0
  written = json.loads(about.read_text())
  assert written["name"] == "m" and confidence.check(written["confidence"]) is None
  assert written["confidence"]["weights"]["margin"] > 0
  assert "a line at 50.0 % of 300 points" in capsys.readouterr().out
  assert fit_confidence.main([str(results), "--about", str(about)]) == 2  # no --force
  assert "pass --force" in capsys.readouterr().err
  # A share above the points with a line to show (294 of 300 here): every one shown, and said.
  assert fit_confidence.main([str(results), "--about", str(about), "--force",
                              "--share", "0.99"]) == 0
  captured = capsys.readouterr()
  assert captured.err == ("note: --share 0.99 cannot be reached: a line the gate may show was "
                          "kept at 294 of the 300 points (98.0 %; at the others the engine kept "
                          "none, or only lines it ranks unlikely), so the gate shows every one of "
                          "them\n")
  assert "a line at 98.0 % of 300 points" in captured.out
  assert json.loads(about.read_text())["confidence"]["share"] == 0.98
  results.write_text(json.dumps({"root": "r", "split": "validation", "points": {"count": 1},
                                 "per_point": [{"target": "x", "predictions": {}}]}))
  assert fit_confidence.main([str(results), "--about", str(about), "--force"]) == 2
  assert "no confidence features" in capsys.readouterr().err
  assert sorted(p.name for p in tmp_path.iterdir()) == ["about.json", "results.json"]
