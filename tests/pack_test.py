"""code_t5/convert/pack.py (`code-t5 pack`): a trained model dir's weights alone, as a model dir
that `complete` loads and gives the same lines from, on a real tiny Mesh TF run."""

import json
import pathlib
import shutil

import numpy as np
import pytest

from code_t5 import cli
from code_t5 import test_utils
from code_t5.convert import pack
from code_t5.engine import complete
from code_t5.training import operative_config

PREFIX = "import os\nimport sys\n\n\ndef main(argv):\n    "


@pytest.fixture
def trained(tiny_run, tmp_path):
  """A private copy of the tiny shared prefix LM's run (complete writes its runtime into it)."""
  _, model_dir = tiny_run("shared-prefix_lm")
  copy = tmp_path / "trained"
  shutil.copytree(model_dir, copy, ignore=shutil.ignore_patterns("runtime", "export"))
  return copy


def test_pack_keeps_the_weights_drops_the_optimizer_and_completes_alike(trained, tmp_path):
  out = tmp_path / "packed"
  summary = pack.pack(trained, out)
  step = summary["step"]
  source = test_utils.checkpoint_variables(trained / f"model.ckpt-{step}")
  packed = test_utils.checkpoint_variables(out / f"model.ckpt-{step}")
  assert any("_slot_" in name for name in source)  # Adafactor's state was there
  assert set(packed) == {name for name in source if "_slot_" not in name}
  for name, value in packed.items():
    np.testing.assert_array_equal(value, source[name], err_msg=name)
  assert summary["parameters"] > 0 and (out / "runtime" / f"step{step}").is_dir()
  options = complete.EngineOptions(top=3)
  assert (complete.Completer(out, options).complete(PREFIX).candidates
          == complete.Completer(trained, options).complete(PREFIX).candidates)


def test_two_packs_of_one_model_are_the_same_files_and_name_the_model_dir(trained, tmp_path):
  """The runtime named the pack's temporary folder (gone once renamed, another in each pack):
  helper-39's audit found no two packs alike."""
  first, second = pack.pack(trained, tmp_path / "one"), pack.pack(trained, tmp_path / "two")
  assert first == second and first["source"] == str(trained.resolve())
  assert test_utils.tree_listing(tmp_path / "one") == test_utils.tree_listing(tmp_path / "two")
  meta = json.loads((tmp_path / "two" / "runtime" / f"step{first['step']}" / "model.json")
                    .read_text())
  assert meta["source"] == str(trained.resolve())


def test_pack_drops_the_run_s_init_checkpoint_and_keeps_the_rest_of_the_config(trained, tmp_path):
  config = trained / operative_config.FILE_NAME
  text = config.read_text()
  assert "run.init_checkpoint = None" in text
  continued = text.replace("run.init_checkpoint = None",
                           "run.init_checkpoint = \\\n    '/elsewhere/model.ckpt-1800'")
  config.write_text(continued)
  out = tmp_path / "packed"
  pack.pack(trained, out)
  assert (out / operative_config.FILE_NAME).read_text() == text


def test_pack_replaces_an_existing_out_only_with_force_and_only_an_earlier_pack(trained, tmp_path):
  out = tmp_path / "packed"
  out.mkdir()
  (out / "mine.txt").write_text("keep")
  for force in (False, True):  # neither error suggests a --force that would not help
    with pytest.raises(pack.PackError,
                       match=r"not an earlier pack \(no .*\); choose another --out"):
      pack.pack(trained, out, force=force)
  assert (out / "mine.txt").read_text() == "keep"
  (out / "mine.txt").unlink()  # an empty folder loses nothing
  pack.pack(trained, out, force=True)
  with pytest.raises(pack.PackError, match="--force"):
    pack.pack(trained, out)
  (out / "stale.txt").write_text("from the earlier pack")
  summary = pack.pack(trained, out, force=True)  # an earlier pack: replaced
  assert not (out / "stale.txt").exists()
  assert json.loads((out / pack.PACK_FILE).read_text()) == summary
  with pytest.raises(pack.PackError, match="--step"):
    pack.pack(trained, tmp_path / "other", step=999999)


def test_a_pack_replaced_with_its_fitted_gate_says_the_gate_is_gone(trained, tmp_path, capsys):
  # The fitted about.json went without a word, and the model then showed every line (helper-52's
  # audit).
  out = tmp_path / "packed"
  assert cli.main(["pack", str(trained), "--out", str(out)]) == 0
  assert "note" not in capsys.readouterr().err
  (out / "about.json").write_text('{"min_score": -1.0}')
  assert cli.main(["pack", str(trained), "--out", str(out), "--force"]) == 0
  err = capsys.readouterr().err
  assert not (out / "about.json").exists()
  assert err.startswith("code-t5 pack: note: the pack replaced held about.json") and \
      err.count("\n") == 1, err


# --------------------------------------------------------------------------------------------------
# --out that --force must never replace: refused before anything is read or written, so a model
# dir as far as those checks look (a config and a checkpoint's index) is enough.


@pytest.fixture
def model_dir(tmp_path):
  """runs/model: what pack's argument checks look at, and files that must survive; it is itself
  a pack (has pack.json), as a pack packed again is."""
  model = tmp_path / "runs" / "model"
  (model / "runtime").mkdir(parents=True)
  (model / operative_config.FILE_NAME).write_text("# the run's config\n")
  (model / "model.ckpt-4.index").write_text("index")
  (model / "runtime" / "weights.npy").write_text("weights")
  (model / pack.PACK_FILE).write_text("{}\n")
  (tmp_path / "runs" / "other-run.txt").write_text("a sibling")
  return model


def _pack_cli(capsys, model, out):
  code = cli.main(["pack", str(model), "--out", str(out), "--force"])
  return code, capsys.readouterr().err


def test_force_never_replaces_a_folder_that_is_not_a_pack(model_dir, tmp_path, capsys):
  out = tmp_path / "thesis"
  out.mkdir()
  (out / "thesis.tex").write_text("precious")
  code, err = _pack_cli(capsys, model_dir, out)
  assert code == 2 and err.count("\n") == 1, err
  assert f"--out {out} exists and is not an earlier pack" in err and "choose another --out" in err
  assert (out / "thesis.tex").read_text() == "precious"
  a_file = tmp_path / "notes.txt"
  a_file.write_text("mine")
  with pytest.raises(pack.PackError, match="not an earlier pack"):
    pack.pack(model_dir, a_file, force=True)
  assert a_file.read_text() == "mine"


@pytest.mark.parametrize("out", ["runs/model", "runs/model/", "runs/model/../model", "runs",
                                 ".", "runs/model/runtime", "runs/model/new", "link",
                                 "link/runtime", "parent-link/model"])
def test_force_never_replaces_the_model_dir_a_folder_inside_it_or_one_holding_it(
    model_dir, tmp_path, capsys, monkeypatch, out):
  monkeypatch.chdir(tmp_path)
  (tmp_path / "link").symlink_to(model_dir, target_is_directory=True)
  (tmp_path / "parent-link").symlink_to(model_dir.parent, target_is_directory=True)
  before = test_utils.tree_listing(tmp_path)
  code, err = _pack_cli(capsys, model_dir, out)
  assert code == 2 and err.count("\n") == 1, err
  assert f"--out {pathlib.Path(out)} is the model dir" in err and "a folder of its own" in err
  assert test_utils.tree_listing(tmp_path) == before
  assert not (tmp_path / "runs" / "model" / "new").exists()


def test_the_model_dir_given_through_a_link_is_never_replaced(model_dir, tmp_path, capsys):
  link = tmp_path / "model-link"
  link.symlink_to(model_dir, target_is_directory=True)
  before = test_utils.tree_listing(tmp_path)
  assert _pack_cli(capsys, link, model_dir)[0] == 2
  assert _pack_cli(capsys, link, model_dir.parent)[0] == 2
  assert test_utils.tree_listing(tmp_path) == before


@pytest.mark.skipif(not pathlib.Path("/proc/self").is_dir(), reason="no /proc")
def test_an_out_where_no_folder_can_be_made_is_a_one_line_error(capsys):
  # /proc exists and is a folder, and takes no new ones: only the mkdir finds out.
  assert cli.main(["pack", str(test_utils.PRETRAINED), "--out", "/proc/pack"]) == 2
  assert capsys.readouterr().err == ("code-t5 pack: cannot write the pack /proc/pack: No such "
                                     "file or directory: give another --out\n")
