"""scripts/plot_shown_precision.py: the README's plot of shown lines against their precision."""

import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "plot_shown_precision.py"
RESULTS = REPO / "results" / "engine_dev_repo.json"


def _plot(out, *flags):
  return subprocess.run([sys.executable, str(SCRIPT), str(RESULTS), "--out", str(out), *flags],
                        capture_output=True, text=True, timeout=300, cwd=REPO)


def test_an_existing_file_is_replaced_only_with_force(tmp_path):
  # It made a PNG of a .py given as --out by mistake (helper-54's audit).
  mine = tmp_path / "setup.py"
  mine.write_text("from setuptools import setup\n")
  refused = _plot(mine)
  assert refused.returncode == 2 and refused.stderr.splitlines() == [
      f"plot_shown_precision.py: --out {mine} exists: pass --force to replace it"]
  assert mine.read_text() == "from setuptools import setup\n"
  assert _plot(mine, "--force").returncode == 0
  assert mine.read_bytes().startswith(b"\x89PNG")
  written = _plot(tmp_path / "new" / "plot.png")
  assert written.returncode == 0, written.stderr[-2000:]
  assert (tmp_path / "new" / "plot.png").read_bytes().startswith(b"\x89PNG")
  assert sorted(p.name for p in tmp_path.iterdir()) == ["new", "setup.py"]  # no temporaries
