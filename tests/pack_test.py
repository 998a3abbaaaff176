"""code_t5/convert/pack.py (`code-t5 pack`): a trained model dir's weights alone, as a model dir
that `complete` loads and gives the same lines from, on a real tiny Mesh TF run."""

import shutil

import numpy as np
import pytest

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


def test_pack_never_replaces_an_existing_out_without_force(trained, tmp_path):
  out = tmp_path / "packed"
  out.mkdir()
  (out / "mine.txt").write_text("keep")
  with pytest.raises(pack.PackError, match="--force"):
    pack.pack(trained, out)
  assert (out / "mine.txt").read_text() == "keep"
  pack.pack(trained, out, force=True)
  assert not (out / "mine.txt").exists() and (out / pack.PACK_FILE).is_file()
  with pytest.raises(pack.PackError, match="--step"):
    pack.pack(trained, tmp_path / "other", step=999999)
