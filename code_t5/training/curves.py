"""Training curves: the loss Mesh TF reports, as a table and a PNG.

Mesh TF's estimator writes the loss into TensorBoard events only every 100 steps (RunConfig's
default save_summary_steps, which its gin does not expose), but prints it at every step; the
launcher keeps those prints in <model_dir>/logs/train_loss.tsv, and curves prefer that table.
"""

import pathlib
import struct
from typing import Dict, List, Tuple

from tensorflow.core.util import event_pb2
import tensorflow.compat.v2 as tf

from code_t5 import errors
from code_t5 import processes
from code_t5 import stranger_paths

# A model dir may be a stranger's (`code-t5 plot`, `train --model-dir`): its files are read only
# as regular files of a bounded size (a FIFO hung, a sparse 24 GB table asked for 24 GB), and an
# event file's records must lie inside it before TensorFlow reads them (a record claiming 2**62
# bytes crashed the process: helper-24's audit). A table line is ~30 bytes: 10M steps fit.
MAX_TABLE_BYTES = 512 << 20
MAX_EVENTS_BYTES = 1 << 30


class CurveError(errors.UserError):
  """A model dir's curve cannot be read; the message is one line and names the file."""


def _records_inside(path: pathlib.Path) -> None:
  """CurveError unless the TFRecord file `path` (a regular file, MAX_EVENTS_BYTES at most) is a
  run of records, each a length, its CRC, that many bytes and their CRC, ending at its end."""
  try:
    with stranger_paths.open_regular(path, MAX_EVENTS_BYTES) as f:
      size, at = f.seek(0, 2), 0
      while at < size:
        f.seek(at)
        header = f.read(8)
        if len(header) < 8:
          raise ValueError("a cut record")
        at += 12 + struct.unpack("<Q", header)[0] + 4
        if at > size:
          raise ValueError("a record longer than the file")
  except (OSError, ValueError) as e:
    raise CurveError(f"{path} cannot be read ({getattr(e, 'strerror', None) or e}): remove it, or "
                     "give a model dir written by a training") from None


def read_scalars(model_dir: pathlib.Path, tag: str = "loss") -> List[Tuple[int, float]]:
  """(step, value) of a scalar in model_dir's own event files (not eval/), sorted by step.

  Several runs (resumed training) each write a file; a later value for the same step wins.
  """
  values: Dict[int, float] = {}
  for path in sorted(model_dir.glob("events.out.tfevents.*"), key=lambda p: p.stat().st_mtime):
    _records_inside(path)
    for record in tf.data.TFRecordDataset(str(path)):
      event = event_pb2.Event.FromString(record.numpy())
      for value in event.summary.value:
        if value.tag == tag:
          values[event.step] = (value.simple_value if value.HasField("simple_value")
                                else float(tf.make_ndarray(value.tensor)))
  return sorted(values.items())


LOSS_TABLE = pathlib.Path("logs") / "train_loss.tsv"


def read_loss(model_dir: pathlib.Path) -> List[Tuple[int, float]]:
  """(step, loss) per step from the launcher's table, else from the TensorBoard events."""
  table = model_dir / LOSS_TABLE
  if not table.exists():
    return read_scalars(model_dir)
  try:
    text = stranger_paths.read_regular(table, MAX_TABLE_BYTES).decode("utf-8", "replace")
  except OSError as e:
    raise CurveError(f"{table} cannot be read ({e.strerror}): remove it (the curve is then read "
                     "from the TensorBoard events)") from None
  values = {}
  for line in text.splitlines():
    try:
      step, loss = line.split("\t")[:2]  # a third column is the loss per byte
      values[int(step)] = float(loss)
    except ValueError:  # a line a killed run cut, or not the launcher's
      continue
  return sorted(values.items())


def plot_loss(model_dir: pathlib.Path, out_png: pathlib.Path, tokens_per_step: int = 0,
              tag: str = "") -> int:
  """Writes a loss curve (against tokens when tokens_per_step is given); returns #points.

  With `tag`, the curve is that scalar from the TensorBoard events instead of the per-step table.
  """
  import matplotlib  # pylint: disable=g-import-not-at-top
  matplotlib.use("Agg")
  from matplotlib import pyplot as plt  # pylint: disable=g-import-not-at-top

  points = read_scalars(model_dir, tag) if tag else read_loss(model_dir)
  if not points:
    return 0
  steps, losses = zip(*points)
  xs = [s * tokens_per_step for s in steps] if tokens_per_step else steps
  window = max(1, len(points) // 20)
  smooth = [sum(losses[max(0, i - window + 1):i + 1]) / len(losses[max(0, i - window + 1):i + 1])
            for i in range(len(losses))]
  fig, ax = plt.subplots(figsize=(6, 3.5), dpi=120)
  gaps = [b - a for a, b in zip(steps, steps[1:])]
  interval = max(set(gaps), key=gaps.count) if gaps else 1  # events: step 1, then every N
  # A few points (a short run's events) get markers: one point alone drew no line at all.
  marker = "o" if len(points) < 20 else None
  ax.plot(xs, losses, alpha=0.3, marker=marker,
          label="each step" if interval == 1 else f"every {interval} steps")
  ax.plot(xs, smooth, label=f"mean of {window}")
  ax.legend()
  ax.set_xlabel("tokens (incl. padding)" if tokens_per_step else "step")
  ax.set_ylabel("training loss (per token)")
  ax.set_title(model_dir.name)
  ax.grid(alpha=0.3)
  fig.tight_layout()
  processes.write_file_beside(out_png, lambda f: fig.savefig(f, format="png"), binary=True,
                              make_parents=True)
  plt.close(fig)
  return len(points)
