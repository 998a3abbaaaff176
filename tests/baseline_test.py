"""`code-t5 baseline`: the model-free line-completion baseline scored at the task's points."""

import json
import os
import shutil

import pytest

from code_t5 import cli
from code_t5 import test_utils
from code_t5.data import flcc
from code_t5.data import line_completion
from code_t5.data import sources
from code_t5.evaluation import baseline
from code_t5.evaluation import ngram as ngram_lib


@pytest.fixture(scope="module")
def dev_results():
  return baseline.evaluate(sources.DEV_ROOT, echo=lambda _: None)


def test_baseline_beats_an_empty_prediction_at_the_task_points(dev_results):
  empty = dev_results["systems"]["empty"]["metrics"]["all"]
  ngram = dev_results["systems"]["ngram"]["metrics"]["all"]
  assert empty["exact_match"] == empty["edit_similarity"] == empty["prefix_match_chars"] == 0
  assert ngram["exact_match"] > 3 and ngram["edit_similarity"] > 15
  assert ngram["prefix_match_chars"] > 1
  files = list(flcc.read_files(sources.DEV_ROOT, only_split="validation"))
  assert dev_results["points"]["count"] == len(list(line_completion.points_of_files(files)))
  assert dev_results["points"]["by_kind"] == {"line_start": 96, "inside": 96}


def test_every_system_is_compared_with_the_ngram_at_the_same_points(dev_results):
  systems = dev_results["systems"]
  assert "vs_ngram" not in systems["ngram"]
  versus = systems["empty"]["vs_ngram"]
  ngram = systems["ngram"]["metrics"]["all"]
  assert versus["points"] == dev_results["points"]["count"] == 192
  assert versus["groups"] == dev_results["points"]["files"] == 24
  for name in ("exact_match", "edit_similarity"):
    # Predicting nothing is worse than the n-gram by exactly its score, beyond the noise.
    assert versus[name]["difference"] == pytest.approx(-ngram[name], abs=0.01)
    low, high = versus[name]["ci95"]
    assert low < versus[name]["difference"] < high < 0
  assert versus["exact_match"]["only_this"] == 0
  assert versus["exact_match"]["only_reference"] == round(ngram["exact_match"] * 192 / 100)


def test_cli_writes_json_and_refuses_to_overwrite(tmp_path, capsys, monkeypatch):
  monkeypatch.setenv("CODE_T5_CACHE", str(tmp_path / "cache"))
  out = tmp_path / "results" / "lc.json"
  assert cli.main(["baseline", "--out", str(out), "--split", "test"]) == 0
  results = json.loads(out.read_text())
  assert results["split"] == "test" and results["points"]["count"] > 0
  printed = capsys.readouterr().out
  assert "ngram" in printed and "EM - n-gram [95 % interval]" in printed
  assert "(cached for next time in " + str(tmp_path / "cache" / "ngram") + ")" in printed
  assert len(list((tmp_path / "cache" / "ngram").glob("dataset-dev-*.npz"))) == 1
  before = out.read_bytes()
  assert cli.main(["baseline", "--out", str(out)]) == 2
  assert "exists: pass --force" in capsys.readouterr().err
  assert out.read_bytes() == before and len(list(out.parent.iterdir())) == 1


@pytest.mark.parametrize("argv,message", [
    (["--root", "{tmp}/missing"], "--root {tmp}/missing does not exist"),
    (["--split", "dev"], "--split dev: give train, validation, test, all, or several joined by "
     "commas (validation,test)"),
    (["--split", "validation,dev"], "--split validation,dev: give train, validation, test, all, "
     "or several joined by commas (validation,test)"),
    # The flags, not flcc.Splits' fields ("Splits.validation must be a fraction in [0, 1]").
    (["--validation-fraction", "2"], "--validation-fraction 2.0 is not a fraction: give a share "
     "between 0 and 1"),
    (["--test-fraction", "0.6", "--validation-fraction", "0.6"], "--validation-fraction 0.6 + "
     "--test-fraction 0.6 hold out more than every repository"),
    (["--model-dir", "{tmp}"], "no line-completion decodes"),
])
def test_cli_bad_input_is_one_line(tmp_path, capsys, argv, message):
  argv = [a.format(tmp=tmp_path) for a in argv]
  assert cli.main(["baseline", "--out", str(tmp_path / "out.json"), *argv]) == 2
  error = capsys.readouterr().err.strip()
  assert "\n" not in error and error.startswith("code-t5 baseline: ")
  assert message.format(tmp=tmp_path) in error
  assert not (tmp_path / "out.json").exists()


@pytest.mark.parametrize("argv,message", [
    (["--checkpoint", "{tmp}/nosuch"], "--checkpoint {tmp}/nosuch is not a directory"),
    (["--checkpoint", str(test_utils.PRETRAINED), "--rungs", "beam,bogus"],
     "--rungs: unknown rung 'bogus'"),
    # It scored the empty and n-gram systems alone, ignoring --rungs.
    (["--rungs", "+similar"], "--rungs needs --checkpoint: give the model dir to run the rungs "
     "on, or --checkpoint alone for the shipped model"),
])
def test_engine_flags_are_checked_before_any_work(tmp_path, capsys, argv, message):
  argv = [a.format(tmp=tmp_path) for a in argv]
  assert cli.main(["baseline", "--out", str(tmp_path / "out.json"), *argv]) == 2
  out, err = capsys.readouterr()
  assert out == "" and message.format(tmp=tmp_path) in err  # nothing fitted, nothing scored


class _Fits:
  """Counts NgramModel.fit calls (a cache hit fits nothing)."""

  def __init__(self, monkeypatch):
    self.count = 0
    fit = ngram_lib.NgramModel.fit

    def counted(model, *args, **kwargs):
      self.count += 1
      return fit(model, *args, **kwargs)

    monkeypatch.setattr(ngram_lib.NgramModel, "fit", counted)


def _evaluate(root=sources.DEV_ROOT, **kwargs):
  lines = []
  results = baseline.evaluate(root, echo=lines.append, **kwargs)
  return results, lines


def test_the_cached_ngram_is_the_fresh_fit_and_the_second_call_fits_nothing(
    tmp_path, monkeypatch, dev_results):
  fits = _Fits(monkeypatch)
  cache = tmp_path / "cache"
  first, lines = _evaluate(ngram_cache=cache)
  [saved] = cache.glob("dataset-dev-*.npz")
  assert fits.count == 1 and first == dev_results  # dev_results: no cache at all
  assert lines[0] == (f"n-gram: fitting on the train split of dataset-dev (~290 files) "
                      f"(cached for next time in {cache})")
  assert lines[1].startswith("n-gram: fit on 285 train files (") and lines[1].endswith(
      f"; cached in {saved} ({saved.stat().st_size / 1e6:.0f} MB)")
  second, lines = _evaluate(ngram_cache=cache)
  assert fits.count == 1 and second == dev_results  # the same predictions, scores, everything
  assert lines[0].startswith(f"n-gram: loaded from {saved} (fit on 285 files) in ")
  assert not list(cache.glob("*tmp*"))  # written to a temporary file and renamed


def test_a_changed_root_or_split_misses_the_cache(tmp_path, monkeypatch):
  fits = _Fits(monkeypatch)
  cache = tmp_path / "cache"
  root = tmp_path / "copy" / "dataset-dev"
  shutil.copytree(sources.DEV_ROOT, root)  # the same content (and mtimes) elsewhere: a hit
  _evaluate(ngram_cache=cache)
  _, lines = _evaluate(root, ngram_cache=cache)
  assert fits.count == 1 and lines[0].startswith("n-gram: loaded from ")
  train = next(flcc.read_files(root, only_split="train"))
  with open(root / train.dataset_path, "a", encoding="utf-8") as f:
    f.write("\nchanged = True\n")
  _, lines = _evaluate(root, ngram_cache=cache)
  assert fits.count == 2 and lines[0].startswith("n-gram: fitting ")
  assert len(list(cache.iterdir())) == 2  # beside the unchanged root's
  _, lines = _evaluate(root, ngram_cache=cache)
  assert fits.count == 2 and lines[0].startswith("n-gram: loaded from ")
  _evaluate(root, ngram_cache=cache, validation_fraction=0.1)  # other splits, another n-gram
  assert fits.count == 3 and len(list(cache.iterdir())) == 3


def test_a_damaged_cache_file_is_fitted_again_with_a_one_line_note(tmp_path, monkeypatch,
                                                                   dev_results):
  fits = _Fits(monkeypatch)
  cache = tmp_path / "cache"
  _evaluate(ngram_cache=cache)
  [saved] = cache.iterdir()
  good = saved.read_bytes()
  for damaged in (good[:len(good) // 3], b"", good[:1000] + b"x" * 1000 + good[2000:]):
    saved.write_bytes(damaged)
    results, lines = _evaluate(ngram_cache=cache)
    assert results == dev_results and fits.count == 2
    assert lines[0].startswith(f"n-gram: the cache file {saved} is damaged (")
    assert lines[0].endswith("): fitting again") and "\n" not in lines[0]
    assert lines[2].endswith(f"; cached in {saved} ({len(good) / 1e6:.0f} MB)")
    _, lines = _evaluate(ngram_cache=cache)  # refitted and saved again
    assert lines[0].startswith("n-gram: loaded from ") and fits.count == 2
    fits.count = 1


def test_an_unwritable_cache_is_a_note(tmp_path, dev_results):
  (tmp_path / "file").write_text("")
  results, lines = _evaluate(ngram_cache=tmp_path / "file" / "cache")
  assert results == dev_results
  assert "; not cached: cannot write " + str(tmp_path / "file" / "cache") in lines[1]


def test_several_splits_in_one_call_are_the_single_calls(tmp_path, monkeypatch, dev_results):
  fits = _Fits(monkeypatch)
  cache = tmp_path / "cache"
  both, _ = _evaluate(split="all", ngram_cache=cache)
  assert fits.count == 1 and list(both) == ["root", "train_root", "splits"]
  assert list(both["splits"]) == ["validation", "test"]
  assert both["splits"]["validation"] == dev_results
  test, _ = _evaluate(split="test", ngram_cache=cache)
  assert both["splits"]["test"] == test and test["split"] == "test"
  assert _evaluate(split="test,validation,test", ngram_cache=cache)[0]["splits"] == {
      "test": test, "validation": dev_results}
  assert fits.count == 1


def test_cli_scores_several_splits_into_one_json(tmp_path, capsys):
  out = tmp_path / "both.json"
  argv = ["baseline", "--out", str(out), "--split", "validation,test", "--ngram-cache",
          str(tmp_path / "cache")]
  assert cli.main(argv) == 0
  results = json.loads(out.read_text())
  printed = capsys.readouterr().out
  for split, files in (("validation", 24), ("test", 9)):
    count = results["splits"][split]["points"]["count"]
    assert f"\n{count} points of {files} {split} files\n" in printed
  assert printed.count("EM - n-gram [95 % interval]") == 2
  assert cli.main(argv + ["--force"]) == 0
  assert "n-gram: loaded from " in capsys.readouterr().out
  assert json.loads(out.read_text()) == results
  assert cli.main(argv + ["--force", "--no-ngram-cache"]) == 0
  assert "n-gram: fit on 285 train files" in capsys.readouterr().out


def test_one_file_is_counted_in_the_singular(tmp_path, capsys):
  argv = ["baseline", "--out", str(tmp_path / "one.json"), "--max-files", "1", "--ngram-cache",
          str(tmp_path / "cache")]
  assert cli.main(argv) == 0
  count = json.loads((tmp_path / "one.json").read_text())["points"]["count"]
  printed = capsys.readouterr().out
  assert f"\n{count} points of 1 validation file\n" in printed
  assert "intervals: a paired bootstrap over the 1 file's points " in printed


def test_progress_has_rates_and_etas(monkeypatch, tmp_path):
  monkeypatch.setattr(baseline, "PROGRESS_SECONDS", 0)
  _, lines = _evaluate(split="test", ngram_cache=tmp_path)
  assert any(line.startswith("n-gram: read 1/~290 train files, ") and "files/s, ETA " in line
             for line in lines)
  assert any(line.startswith("n-gram: counted 1/4 orders in ") and ", ETA " in line
             for line in lines)
  assert any(line.startswith("n-gram test: 1/72 points, ") and "/s, ETA " in line
             for line in lines)


def test_a_held_out_root_keeps_its_copies_out_of_the_ngram(tmp_path):
  """`--held-out-root`: the n-gram is counted without the train files that copy a held-out root's
  file (as `code-t5 train --held-out-root` trains), and cached under another key."""
  train = tmp_path / "train"
  shutil.copytree(sources.DEV_ROOT, train)
  held_out = next(flcc.read_files(sources.DEV_ROOT, only_split="validation"))
  beside = next(flcc.read_files(train, only_split="train"))
  (train / beside.dataset_path).with_name("vendored_copy_1.py").write_text(
      held_out.text + "\nvendored = True\n", encoding="utf-8")
  splits = flcc.Splits()
  without = flcc.Filters(held_out_roots=(str(sources.DEV_ROOT),))
  plain = baseline.ngram_model(train, splits, echo=lambda *_: None)
  kept_out = baseline.ngram_model(train, splits, echo=lambda *_: None, filters=without)
  assert kept_out.stats["files"] == plain.stats["files"] - 1
  assert baseline.ngram_cache_key(train, splits) != baseline.ngram_cache_key(
      train, splits, filters=without)
  results, _ = _evaluate(train_root=train, max_files=1, held_out_roots=[sources.DEV_ROOT])
  assert results["held_out_roots"] == ["dataset-dev"]


@pytest.mark.parametrize("name, entry", [(os.fsdecode(b"bad\xffname"), "bad_name"),
                                         ("L" * 240, "L" * 64)], ids=["not utf-8", "long"])
def test_a_root_named_what_no_file_name_may_hold_is_scored(tmp_path, capsys, name, entry):
  # The n-gram's cache file was named after the root: 240 characters were a name too long, and
  # "\udcff" was written in the cache's name, then stopped the output after all the scoring.
  root = test_utils.make_flcc_tree(tmp_path / name, {
      f"owner/repo{i}": {"mod.py": "".join(f"def f{k}(x):\n    return x + {i * k}\n\n\n"
                                           for k in range(10))}
      for i in range(3)})
  out = tmp_path / "out.json"
  assert cli.main(["baseline", "--root", str(root), "--out", str(out), "--ngram-cache",
                   str(tmp_path / "cache")]) == 0, capsys.readouterr().err
  [cached] = (tmp_path / "cache").iterdir()
  assert cached.name.startswith(f"{entry}-")
  shown = os.fsencode(root).decode("utf-8", "backslashreplace")  # bad\\xffname
  assert json.loads(out.read_text())["root"] == shown and shown in capsys.readouterr().out


def test_a_note_says_where_the_points_scored_are_files_the_model_trained_on(tmp_path, capsys):
  # A model trained on dataset-dev with nothing held out was scored on its own training files
  # without a word (helper-52's audit).
  model_dir = tmp_path / "model"
  model_dir.mkdir()
  config = model_dir / "operative_config.gin"
  config.write_text(f"code_t5.flcc_dataset.root = '{sources.DEV_ROOT}'\n"
                    "code_t5.flcc_dataset.validation_fraction = 0.0\n"
                    "code_t5.flcc_dataset.test_fraction = 0.0\n")
  scored = [repo for repo, split in flcc.repository_splits(sources.DEV_ROOT).items()
            if split == "validation"]
  baseline.note_points_trained_on(model_dir, sources.DEV_ROOT, flcc.Splits(), ["validation"],
                                  "baseline")
  assert capsys.readouterr().err == (
      f"code-t5 baseline: note: {model_dir} trained on {len(scored)} of the repositories scored "
      f"here ({sources.DEV_ROOT} split 0 / 0 when it trained, 0.05 / 0.05 here): give "
      "--validation-fraction 0 --test-fraction 0 to score what it did not see\n")
  # Split as it trained, another root, or a config that does not tell: nothing to say.
  for root, splits in ((sources.DEV_ROOT, flcc.Splits(validation=0, test=0)),
                       (tmp_path / "other", flcc.Splits())):
    baseline.note_points_trained_on(model_dir, root, splits, ["validation"], "baseline")
  config.write_text("code_t5.flcc_dataset.root = 5\n")
  baseline.note_points_trained_on(model_dir, sources.DEV_ROOT, flcc.Splits(), ["validation"],
                                  "baseline")
  assert capsys.readouterr().err == ""
