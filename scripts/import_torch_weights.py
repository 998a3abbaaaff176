"""Writes weights trained by scripts/train_torch.py as a Mesh TF model dir.

    python scripts/import_torch_weights.py WEIGHTS.npz --like code_t5/pretrained/MODEL \\
        --step N --model-dir DIR [--force]
    code-t5 pack DIR --out OUT          # the checkpoint, config and NumPy runtime, to ship

WEIGHTS.npz holds Mesh TF variable names -> bfloat16 bits (train_torch.py's output). DIR gets the
checkpoint (the variables in bfloat16, as Mesh TF keeps them, and global_step N) and --like's
operative_config.gin with num_layers set to the weights' layer count: a model dir that
`mesh_transformer_main` evaluates, `code-t5 train --init-from` goes on training and `code-t5 pack`
packs, like one Mesh TF trained.
"""

import argparse
import os
import pathlib
import re
import sys
import warnings

import numpy as np


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("weights", type=pathlib.Path)
  parser.add_argument("--like", type=pathlib.Path, required=True,
                      help="a model dir whose operative_config.gin the weights were trained for")
  parser.add_argument("--step", type=int, required=True, help="the checkpoint's global_step")
  parser.add_argument("--model-dir", type=pathlib.Path, required=True)
  parser.add_argument("--force", action="store_true", help="replace --model-dir if it exists")
  args = parser.parse_args(argv)
  from code_t5 import errors  # pylint: disable=g-import-not-at-top
  from code_t5 import registration  # pylint: disable=g-import-not-at-top
  if not registration.tensorflow_installed():  # it writes a TensorFlow checkpoint
    print(errors.TrainingStackMissing("import_torch_weights.py"), file=sys.stderr)
    return 2
  if args.model_dir.exists() and not args.force:
    print(f"--model-dir {args.model_dir} exists: pass --force to replace it", file=sys.stderr)
    return 2
  try:
    stored = dict(np.load(args.weights))
    config = (args.like / "operative_config.gin").read_text(encoding="utf-8")
  except (OSError, ValueError) as e:
    print(f"cannot read {e.filename if isinstance(e, OSError) else args.weights}: {e}",
          file=sys.stderr)
    return 2
  layers = len({m.group(1) for n in stored if (m := re.match(r"transformer/block_(\d+)/", n))})
  config, count = re.subn(r"(?m)^num_layers = \d+$", f"num_layers = {layers}", config)
  if count != 1:
    print(f"{args.like}/operative_config.gin has no single 'num_layers = N' line: give the "
          "model dir the weights were trained for", file=sys.stderr)
    return 2

  # TensorFlow's start-up messages say nothing about this script.
  os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
  warnings.filterwarnings("ignore", message="pkg_resources is deprecated", category=UserWarning)
  import tensorflow as tf  # pylint: disable=g-import-not-at-top  (slow; after the checks)
  from code_t5 import processes  # pylint: disable=g-import-not-at-top
  names = sorted(stored)
  tensors = [tf.bitcast(tf.constant(stored[n].astype(np.uint16)), tf.bfloat16) for n in names]
  out = args.model_dir
  try:
    # Written beside DIR under a temporary name and renamed, as `code-t5 pack` writes: a killed
    # run leaves no half-written model dir, and the next run removes what it left.
    with processes.folder_written_beside(out, f"the model dir {out}",
                                         "give another --model-dir") as tmp:
      prefix = f"model.ckpt-{args.step}"
      tf.raw_ops.SaveV2(prefix=str(tmp / prefix), tensor_names=names + ["global_step"],
                        shape_and_slices=[""] * (len(names) + 1),
                        tensors=tensors + [tf.constant(args.step, tf.int64)])
      (tmp / "checkpoint").write_text(f'model_checkpoint_path: "{prefix}"\n'
                                      f'all_model_checkpoint_paths: "{prefix}"\n')
      (tmp / "operative_config.gin").write_text(config, encoding="utf-8")
  except errors.UserError as e:
    print(e, file=sys.stderr)
    return 2
  print(f"{args.model_dir}: {layers} layers, step {args.step}, "
        f"{sum(a.size for a in stored.values()):,} parameters")
  return 0


if __name__ == "__main__":
  sys.exit(main())
