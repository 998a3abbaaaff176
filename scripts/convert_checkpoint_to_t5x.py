"""Converts a Mesh TF checkpoint to T5X's native format (code_t5/convert/t5x.py): `code-t5 convert`.

  python scripts/convert_checkpoint_to_t5x.py MESH_TF_MODEL_DIR_OR_PREFIX T5X_MODEL_DIR \
      [--step N] [--dtype float32|bfloat16] [--params-only] [--force]
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from code_t5.convert import t5x  # pylint: disable=g-import-not-at-top,wrong-import-position

if __name__ == "__main__":
  sys.exit(t5x.main())
