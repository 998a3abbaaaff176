"""`code-t5 pack`: a model dir's weights alone, as a small model dir that `complete` loads.

A Mesh TF checkpoint holds the weights (bfloat16) and Adafactor's slots (float32); completing
code needs only the weights. `pack` writes `OUT/model.ckpt-<step>` with every variable of the
checkpoint except the optimizer's slots, Mesh TF's `checkpoint` state file, the model dir's
`operative_config.gin` (the whole training composition, which `eval`/`export` rebuild the model
from; less the run's `init_checkpoint`, a path on the machine that trained it), the same weights
as the NumPy runtime `complete`/`serve`/`lsp` load (`OUT/runtime/step<step>/`,
code_t5/engine/runtime.py), and `pack.json` saying where it came from. Written to a temporary folder
and renamed; an existing OUT is replaced only with --force, and only if it is an earlier pack (it
has pack.json) or empty: never another folder given by mistake, and never the model dir, a folder
inside it or one that holds it."""

import json
import pathlib
import re
import sys
from typing import Optional

from code_t5 import errors
from code_t5 import processes
from code_t5 import stranger_paths
from code_t5.engine import runtime
from code_t5.training import checkpoints
from code_t5.training import launcher
from code_t5.training import operative_config

# Adafactor's (and Mesh TF's other optimizers') slot variables: "<variable>_slot_<name>".
_SLOT = re.compile(r"_slot_[a-z]+$")
# The run's starting point (`utils.run.init_checkpoint`: a path on the machine that trained it,
# e.g. the checkpoint a run continued from) is not part of the pack, whose weights are its own
# checkpoint: Mesh TF would read that path again when the pack is trained further.
_INIT_CHECKPOINT = re.compile(r"^run\.init_checkpoint = (?:\\\n\s*)?'[^'\n]*'$", re.M)
PACK_FILE = "pack.json"


class PackError(errors.UserError):
  """A bad `code-t5 pack` argument; the message is one line."""


def _check_out(model_dir: pathlib.Path, out: pathlib.Path, force: bool) -> None:
  """Refuses an --out whose replacement would lose anything but an earlier pack."""
  if (stranger_paths.same_or_inside(out, model_dir)
      or stranger_paths.same_or_inside(model_dir, out)):
    raise PackError(f"--out {out} is the model dir {model_dir}, inside it or holds it: write the "
                    "pack to a folder of its own")
  # An earlier pack, or a folder still empty.
  processes.check_replaceable(
      out, lambda folder: not any(folder.iterdir()) or (folder / PACK_FILE).is_file(),
      f"an earlier pack (no {PACK_FILE})", force, PackError)


def pack(model_dir: pathlib.Path, out: pathlib.Path, step: Optional[int] = None,
         force: bool = False) -> dict:
  """Writes the weights of `model_dir`'s checkpoint `step` (default: the newest) to `out`."""
  model_dir, out = pathlib.Path(model_dir), pathlib.Path(out)
  config = model_dir / operative_config.FILE_NAME
  if not model_dir.is_dir():
    raise PackError(f"{model_dir} is not a directory: give the model dir that "
                    "mesh_transformer_main trained")
  # Copied into the pack (as the checkpoint is, below): not through a link to a file of the user's.
  stranger_paths.not_a_link(config)
  if not config.is_file():
    raise PackError(f"{model_dir} has no {operative_config.FILE_NAME}: give a model dir that "
                    "mesh_transformer_main trained")
  step = launcher.latest_step(model_dir) if step is None else step
  prefix = model_dir / f"model.ckpt-{step}"
  if step is None or not pathlib.Path(f"{prefix}.index").exists():
    raise PackError(f"{model_dir} has no checkpoint{'' if step is None else f' {step}'}: "
                    "train it first, or give --step of a checkpoint it has")
  _check_out(model_dir, out, force)
  import tensorflow as tf  # pylint: disable=g-import-not-at-top  (slow; after argument checks)
  reader = checkpoints.open_checkpoint(prefix, PackError, follow_links=False)
  names = sorted(n for n in reader.get_variable_to_shape_map() if not _SLOT.search(n))
  tensors = [checkpoints.read_tensor(reader, n, prefix, PackError) for n in names]
  # Read before writing: a failure below is one of the pack's writes.
  config_text = _INIT_CHECKPOINT.sub("run.init_checkpoint = None",
                                     operative_config.read_text(config))
  with processes.folder_written_beside(out, f"the pack {out}", "give another --out",
                                      replace=force) as tmp:
    tf.raw_ops.SaveV2(prefix=str(tmp / prefix.name), tensor_names=names,
                      shape_and_slices=[""] * len(names), tensors=tensors)
    (tmp / "checkpoint").write_text(f'model_checkpoint_path: "{prefix.name}"\n'
                                    f'all_model_checkpoint_paths: "{prefix.name}"\n')
    (tmp / operative_config.FILE_NAME).write_text(config_text, encoding="utf-8")
    # The NumPy runtime `complete`/`serve`/`lsp` load (code_t5/engine/runtime.py): shipped with the
    # weights, so that completing needs no TensorFlow at all.
    # (No import cycle: complete does not import pack.)
    from code_t5.engine import complete  # pylint: disable=g-import-not-at-top
    complete.load_network(complete.model_info(tmp))
    source = str(model_dir.resolve())
    # The runtime names the folder it was read from, here the temporary (a path gone once it is
    # renamed, and another in each pack of the same weights): the model dir they came from.
    runtime_meta = runtime.runtime_dir(tmp, step) / runtime.MODEL_FILE
    runtime_meta.write_text(json.dumps({**json.loads(runtime_meta.read_text(encoding="utf-8")),
                                        "source": source}, indent=1) + "\n", encoding="utf-8")
    summary = {
        "source": source, "step": step, "variables": len(names),
        "parameters": int(sum(t.size for t in tensors if t.ndim)),
        "bytes": sum(p.stat().st_size for p in tmp.iterdir()
                     if p.name.startswith("model.ckpt")),
        "runtime_bytes": sum(p.stat().st_size for p in (tmp / runtime.RUNTIME_DIR).rglob("*")
                             if p.is_file()),
    }
    (tmp / PACK_FILE).write_text(json.dumps(summary, indent=1) + "\n")
  return summary


def _cli(args) -> int:
  # A pack replaced loses what was fitted to its weights: said, as the model then shows every
  # line (helper-52's audit: its confidence gate went without a word).
  gated = args.force and (args.out / "about.json").is_file()
  summary = pack(args.model_dir, args.out, args.step, args.force)
  print(f"{args.out}: step {summary['step']}, {summary['variables']} variables, "
        f"{summary['parameters']:,} parameters, {summary['bytes'] / 1e6:.1f} MB "
        f"(weights only; no optimizer state) + {summary['runtime_bytes'] / 1e6:.1f} MB runtime")
  if gated:
    print("code-t5 pack: note: the pack replaced held about.json, the confidence gate fitted to "
          "its weights, which these weights do not keep (every best line is shown until one is "
          "fitted again: `code-t5 baseline` and scripts/fit_confidence.py, as the README's "
          "\"Train on your code\")", file=sys.stderr)
  return 0


def register_cli(subparsers) -> None:
  parser = subparsers.add_parser(
      "pack", help="copy a model dir's weights (no optimizer state) and operative config into a "
      "small model dir that `code-t5 complete --checkpoint` loads")
  parser.add_argument("model_dir", type=pathlib.Path,
                      help="the model dir mesh_transformer_main trained (checkpoints + "
                      "operative_config.gin)")
  parser.add_argument("--out", type=pathlib.Path, required=True,
                      help="the folder to write the pack to (not inside the model dir)")
  parser.add_argument("--step", type=int, help="checkpoint step (default: the newest)")
  parser.add_argument("--force", action="store_true",
                      help="replace --out if it is an earlier pack (has pack.json)")
  parser.set_defaults(func=_cli)
