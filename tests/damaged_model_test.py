"""A damaged packed model given to `complete`, `serve` or `lsp`: one line naming the damaged file.

Each case copies the shipped model (code_t5/pretrained), damages one of its files as a cut
download, a bad disk or a mix-up of two models would, and runs the real command: it must exit
with an error whose stderr is one line naming that file (and saying what to do), not a
traceback (BadZipFile, EOFError, KeyError, sentencepiece's RuntimeError, UnicodeDecodeError).
"""

import json
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

from code_t5 import test_utils
from code_t5.engine import runtime

STEP = test_utils.PRETRAINED_STEP
SOURCE = "def f(x):\n    return "


def _runtime(model: pathlib.Path) -> pathlib.Path:
  return runtime.runtime_dir(model, STEP)


def _params_truncated(model):
  path = _runtime(model) / runtime.PARAMS_FILE
  os.truncate(path, path.stat().st_size // 2)  # a cut download: no zip directory at the end
  return path


def _params_corrupted(model):
  path = _runtime(model) / runtime.PARAMS_FILE
  data = bytearray(path.read_bytes())
  data[len(data) // 2:len(data) // 2 + 100] = b"\xff" * 100  # a bad sector inside one array
  path.write_bytes(bytes(data))
  return path


def _params_header_changed(model):
  # One digit of an array's shape: numpy reads fewer bytes than are stored, so the zip's CRC
  # (checked at the end of a member) is never reached and the array has the wrong shape.
  path = _runtime(model) / runtime.PARAMS_FILE
  data = path.read_bytes()
  at = data.index(b"(256, 256)")
  path.write_bytes(data[:at] + b"(256, 255)" + data[at + 10:])
  return path


def _params_of_another_model(model):
  # A smaller model's weights under the shipped model.json (t0 of another width, the rest absent).
  path = _runtime(model) / runtime.PARAMS_FILE
  np.savez(path, t0=np.zeros((128, 128), np.uint16))
  return path


def _vocab_cut(model):
  path = _runtime(model) / runtime.VOCAB_FILE
  os.truncate(path, path.stat().st_size // 2)
  return path


def _operative_config_0xff(model):
  path = model / "operative_config.gin"
  data = bytearray(path.read_bytes())
  data[100] = 0xff
  path.write_bytes(bytes(data))
  return path


def _model_json_cut(model):
  path = _runtime(model) / runtime.MODEL_FILE
  text = path.read_text(encoding="utf-8")
  path.write_text(text[:len(text) // 2], encoding="utf-8")
  return path


def _model_json_of_a_deeper_model(model):
  # The same family with 6 layers: model.json lists tensors params.npz does not have.
  path = _runtime(model) / runtime.MODEL_FILE
  meta = json.loads(path.read_text(encoding="utf-8"))
  tensors = meta["tensors"]
  layer3 = {k: v for k, v in tensors.items() if any("layers_3/" in p for p in v["paths"])}
  for layer in (4, 5):
    for k, v in layer3.items():
      tensors[f"t{len(tensors)}"] = dict(
          v, paths=[p.replace("layers_3/", f"layers_{layer}/") for p in v["paths"]])
  meta["architecture"]["num_decoder_layers"] = 6
  path.write_text(json.dumps(meta), encoding="utf-8")
  return path


def _model_json_of_a_wider_model(model):
  # Another model's architecture: nothing fails to load, but every product would be wrong.
  path = _runtime(model) / runtime.MODEL_FILE
  meta = json.loads(path.read_text(encoding="utf-8"))
  meta["architecture"].update(d_model=512, d_ff=2048)
  path.write_text(json.dumps(meta), encoding="utf-8")
  return path


def _model_json_of_another_task(model):
  # A runtime written for another model dir (another task and lengths) copied over this one.
  path = _runtime(model) / runtime.MODEL_FILE
  meta = json.loads(path.read_text(encoding="utf-8"))
  meta.update(task="flcc_py_prefix_lm_v1", sequence_length={"inputs": 64, "targets": 64})
  path.write_text(json.dumps(meta), encoding="utf-8")
  return path


# JSON nested past Python's recursion limit (400 kB, under the size caps): json.loads raised
# RecursionError, a traceback (helper-18's audit).
_NESTED_JSON = "[" * 200_000 + "]" * 200_000


def _model_json_nested(model):
  path = _runtime(model) / runtime.MODEL_FILE
  path.write_text(_NESTED_JSON, encoding="utf-8")
  return path


def _vocab_with_a_charsmap(model):
  # A precompiled character map whose trie points past its end: sentencepiece loads it, then
  # crashed the process at the first encoding (SIGSEGV; helper-20's audit).
  from sentencepiece import sentencepiece_model_pb2  # pylint: disable=g-import-not-at-top
  path = _runtime(model) / runtime.VOCAB_FILE
  proto = sentencepiece_model_pb2.ModelProto.FromString(path.read_bytes())
  trie = b"\xff" * 16  # four units of all ones: offsets far past the trie
  proto.normalizer_spec.precompiled_charsmap = len(trie).to_bytes(4, "little") + trie + b"a\0"
  path.write_bytes(proto.SerializeToString())
  return path


def _model_json_of_one_layer_many_times(model):
  # Layer 0's arrays named as 40 layers': the network would copy them 40 times, 30,000 layers'
  # asked for 90 GB from the 10 MB params.npz (helper-20's audit).
  path = _runtime(model) / runtime.MODEL_FILE
  meta = json.loads(path.read_text(encoding="utf-8"))
  meta["architecture"]["num_decoder_layers"] = 40
  for tensor in meta["tensors"].values():
    first = tensor["paths"][0]
    if "layers_0/" in first:
      tensor["paths"] += [first.replace("layers_0/", f"layers_{i}/") for i in range(4, 40)]
  path.write_text(json.dumps(meta), encoding="utf-8")
  return path


def _about_json_nested(model):
  path = model / "about.json"
  path.write_text(_NESTED_JSON, encoding="utf-8")
  return path


def _model_json_of_many_heads(model):
  # 20,000 heads at the longest lengths: a 1.3 MB params.npz asked for a 19.5 GiB relative-bias
  # table (helper-50's audit); the sizes are refused before any array is read.
  path = _runtime(model) / runtime.MODEL_FILE
  meta = json.loads(path.read_text(encoding="utf-8"))
  meta["architecture"]["num_heads"] = 20_000
  meta["sequence_length"] = {"inputs": 65_536, "targets": 65_536}
  path.write_text(json.dumps(meta), encoding="utf-8")
  return path


def _params_with_a_hole(model):
  # An array whose member is a hole of 256 MB: the file stores ~10 MB, and every byte of the
  # array was read into memory (helper-50's audit). Written past zipfile's own writer, which
  # writes every byte (its private counters are set to the member's size).
  import io  # pylint: disable=g-import-not-at-top
  import zipfile  # pylint: disable=g-import-not-at-top
  path = _runtime(model) / runtime.PARAMS_FILE
  meta_path = _runtime(model) / runtime.MODEL_FILE
  meta = json.loads(meta_path.read_text(encoding="utf-8"))
  meta["tensors"]["hole"] = {"name": "hole", "dtype": "float32", "paths": ["hole/kernel"]}
  meta_path.write_text(json.dumps(meta), encoding="utf-8")
  floats = 1 << 26
  header = io.BytesIO()
  np.lib.format.write_array_header_2_0(header, {"descr": "<f4", "fortran_order": False,
                                                "shape": (floats,)})
  with zipfile.ZipFile(path, "a", zipfile.ZIP_STORED, allowZip64=True) as archive:
    with archive.open("hole.npy", "w", force_zip64=True) as member:
      member.write(header.getvalue())
      member._fileobj.seek(4 * floats, 1)  # pylint: disable=protected-access
      member._file_size += 4 * floats  # pylint: disable=protected-access
      member._compress_size += 4 * floats  # pylint: disable=protected-access
  return path


def _about_json_of_a_huge_number(model):
  # An integer past float's range: math.isfinite raised OverflowError, a traceback.
  path = model / "about.json"
  about = json.loads(path.read_text(encoding="utf-8"))
  about["min_score"] = 10 ** 400
  path.write_text(json.dumps(about), encoding="utf-8")
  return path


DAMAGES = {f.__name__[1:]: f for f in (
    _params_truncated, _params_corrupted, _params_header_changed, _params_of_another_model,
    _vocab_cut, _operative_config_0xff, _model_json_cut, _model_json_of_a_deeper_model,
    _model_json_of_a_wider_model, _model_json_of_another_task, _model_json_nested,
    _model_json_of_one_layer_many_times, _about_json_nested, _vocab_with_a_charsmap,
    _model_json_of_many_heads, _params_with_a_hole, _about_json_of_a_huge_number)}


def _damaged_copy(tmp_path, damage):
  model = tmp_path / "model"
  shutil.copytree(test_utils.PRETRAINED, model)
  return model, DAMAGES[damage](model)


def _run(command, model, tmp_path):
  source = tmp_path / "source.py"
  source.write_text(SOURCE, encoding="utf-8")
  args = {"complete": [str(source)], "serve": [], "lsp": []}[command]
  return subprocess.run([sys.executable, "-m", "code_t5.cli", command, "--checkpoint", str(model),
                         *args], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                        timeout=120, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))


def _assert_one_line_naming(result, command, damaged):
  lines = result.stderr.splitlines()
  assert result.returncode != 0 and len(lines) == 1, result.stderr[-3000:]
  assert lines[0].startswith(f"code-t5 {command}: ") and str(damaged) in lines[0], lines[0]
  assert result.stdout == ""


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_complete_with_a_damaged_model_is_one_line_naming_the_file(tmp_path, damage):
  model, damaged = _damaged_copy(tmp_path, damage)
  _assert_one_line_naming(_run("complete", model, tmp_path), "complete", damaged)


@pytest.mark.parametrize("command", ["serve", "lsp"])
@pytest.mark.parametrize("damage", ["params_truncated", "vocab_cut", "operative_config_0xff",
                                    "model_json_of_a_deeper_model"])
def test_serve_and_lsp_start_up_with_a_damaged_model_is_the_same_line(tmp_path, command, damage):
  model, damaged = _damaged_copy(tmp_path, damage)
  _assert_one_line_naming(_run(command, model, tmp_path), command, damaged)


@pytest.mark.parametrize("damage, why", [
    ("model_json_of_many_heads", "GiB to run, more than the 8 GiB"),
    ("params_with_a_hole", "more than the"),
])
def test_a_model_that_would_ask_for_more_memory_than_it_stores_is_refused_before(tmp_path, damage,
                                                                                 why):
  # Refused for what it claims, before the memory is asked for: the hole was read whole (and
  # refused afterwards for its CRC), the heads' table built from an architecture whose
  # arrays fit it.
  model, damaged = _damaged_copy(tmp_path, damage)
  result = _run("complete", model, tmp_path)
  _assert_one_line_naming(result, "complete", damaged)
  assert why in result.stderr, result.stderr


def test_the_undamaged_copy_completes(tmp_path):
  model = tmp_path / "model"
  shutil.copytree(test_utils.PRETRAINED, model)
  result = _run("complete", model, tmp_path)
  assert result.returncode == 0 and result.stderr == "", result.stderr[-3000:]
