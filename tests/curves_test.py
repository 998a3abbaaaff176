"""Tests of code_t5.training.curves: the loss curve of a model dir, read from its table or its
TensorBoard events, and never trusted further than a stranger's model dir deserves."""

import os
import struct

import pytest
import tensorflow.compat.v2 as tf

from code_t5.training import curves


def _events(model_dir, losses):
  writer = tf.summary.create_file_writer(str(model_dir))
  with writer.as_default():
    for step, loss in losses:
      tf.summary.scalar("loss", loss, step=step)
  writer.close()


def test_the_table_is_read_and_a_line_a_killed_run_cut_is_passed_over(tmp_path):
  table = tmp_path / curves.LOSS_TABLE
  table.parent.mkdir()
  table.write_text("1\t3.5\t3.6\n2\t3.25\n2\t3.0\nnot a line\n3\t2.")  # step 2 again: the later
  assert curves.read_loss(tmp_path) == [(1, 3.5), (2, 3.0), (3, 2.0)]


def test_without_a_table_the_events_are_read(tmp_path):
  _events(tmp_path, [(1, 4.0), (2, 3.5)])
  assert curves.read_loss(tmp_path) == [(1, 4.0), (2, 3.5)]


@pytest.mark.parametrize("make", ["fifo", "sparse"])
def test_a_table_that_is_no_file_or_too_large_is_a_one_line_error(tmp_path, make):
  """helper-24's audit: a FIFO hung `code-t5 plot`; a sparse 24 GB table (4 kB on disk) asked
  for 24 GB."""
  table = tmp_path / curves.LOSS_TABLE
  table.parent.mkdir()
  if make == "fifo":
    os.mkfifo(table)
  else:
    with open(table, "wb") as f:
      f.truncate(curves.MAX_TABLE_BYTES + 1)
  with pytest.raises(curves.CurveError, match=rf"^{table} cannot be read \(.+\): remove it"):
    curves.read_loss(tmp_path)


def test_an_event_record_longer_than_its_file_is_a_one_line_error_not_a_crash(tmp_path):
  """A record whose header claims 2**62 bytes crashed TensorFlow's reader (SIGSEGV)."""
  _events(tmp_path, [(1, 4.0)])
  [path] = tmp_path.glob("events.out.tfevents.*")
  with open(path, "ab") as f:
    f.write(struct.pack("<Q", 1 << 62) + bytes(4) + b"x" * 64)
  with pytest.raises(curves.CurveError, match="a record longer than the file"):
    curves.read_loss(tmp_path)
