"""Draws how often the engine's shown lines are right against how often it shows one.

    python scripts/plot_shown_precision.py results/engine_sitepackages_repo.json \
        results/engine_dev_repo.json --out docs/shown_vs_precision.png

For each results file of `code-t5 baseline --checkpoint` (its "per_point" records) and each of
two rungs (the engine without the repository, the engine's default), it sorts the points by the
best line's score and plots, for every threshold (--min-score), the share of points where a line
is shown against the share of shown lines that are exactly right. A dot marks --min-score GATE.
--earlier gives, per results file, the same points scored with an earlier model, drawn dashed
under --earlier-label (e.g. the model before more training). --confidence ABOUT_JSON also sorts the
default rung's points by that model's confidence (code_t5.engine.confidence, from the records'
confidence features) and marks its gate: the gate `complete`, `serve` and `lsp` use by default.
"""

import argparse
import json
import os
import pathlib
import sys
import warnings

# `import code_t5` imports TensorFlow; its start-up messages say nothing about this script.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
warnings.filterwarnings("ignore", message="pkg_resources is deprecated", category=UserWarning)
from code_t5 import errors  # pylint: disable=g-import-not-at-top,wrong-import-position
from code_t5 import processes  # pylint: disable=g-import-not-at-top,wrong-import-position
from code_t5.engine import confidence  # pylint: disable=g-import-not-at-top,wrong-import-position

WITHOUT_REPOSITORY = "engine:beam+heal+filters+names"
# The engine's default rung, newest first: results written before a rung was added lack it.
DEFAULT_RUNGS = ("engine:+similar", "engine:+below")


def rungs_of(records):
  """[(rung, label)]: the engine without the repository, and the file's default rung."""
  default = next(rung for rung in DEFAULT_RUNGS if rung in records[0]["scores"])
  return [(WITHOUT_REPOSITORY, "without the repository"), (default, "the engine's default")]


def _cumulative(ranked, points):
  """(shown %, precision %) of `points` when the first 1, 2, ... of `ranked` ((key, correct) pairs,
  best first) are shown."""
  shown, right, xs, ys = 0, 0, [], []
  for _, correct in ranked:
    shown += 1
    right += correct
    xs.append(100 * shown / points)
    ys.append(100 * right / shown)
  return xs, ys


def curve(records, rung):
  """(shown %, precision %) at every threshold, and the points sorted by score."""
  scored = sorted(((r["scores"][rung], r["predictions"][rung] == r["target"])
                   for r in records if r["scores"].get(rung) is not None), reverse=True)
  return (*_cumulative(scored, len(records)), scored)


def by_confidence(records, rung, model):
  """(shown %, precision %) at every confidence gate, and (shown %, precision %) at the model's."""
  sure = sorted(((confidence.probability(r["confidence_features"][rung], model),
                  r["predictions"][rung] == r["target"]) for r in records
                 if (r.get("confidence_features") or {}).get(rung) is not None), reverse=True)
  xs, ys = _cumulative(sure, len(records))
  above = sum(probability >= model["min"] for probability, _ in sure)
  return xs, ys, (xs[above - 1], ys[above - 1]) if above else None


def at_gate(records, rung, gate):
  scored = [(r["scores"][rung], r["predictions"][rung] == r["target"]) for r in records
            if r["scores"].get(rung) is not None and r["scores"][rung] >= gate]
  return 100 * len(scored) / len(records), 100 * sum(c for _, c in scored) / max(1, len(scored))


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("results", nargs="+", type=pathlib.Path)
  parser.add_argument("--out", type=pathlib.Path, required=True)
  parser.add_argument("--force", action="store_true", help="replace an existing --out")
  parser.add_argument("--gate", type=float, default=None, help="the default --min-score to mark")
  parser.add_argument("--earlier", nargs="*", type=pathlib.Path, default=[],
                      help="per results file, one of an earlier model at the same points")
  parser.add_argument("--earlier-label", default="earlier model")
  parser.add_argument("--label", default="", help="the results' model, in the legend")
  parser.add_argument("--confidence", type=pathlib.Path, default=None, metavar="ABOUT_JSON",
                      help="also the default rung by this model's confidence, its gate marked")
  args = parser.parse_args(argv)
  if args.earlier and len(args.earlier) != len(args.results):
    parser.error(f"--earlier: {len(args.earlier)} files for {len(args.results)} results files")
  # Not over a file of the user's (it made a PNG of a .py given by mistake: helper-54's audit).
  try:
    processes.check_output_file(args.out, args.force, f"the plot {args.out}", errors.UserError)
  except errors.UserError as e:
    print(f"plot_shown_precision.py: {e}", file=sys.stderr)
    return 2
  try:  # after the arguments: --help and their errors answer without it
    import matplotlib  # pylint: disable=g-import-not-at-top
  except ModuleNotFoundError:  # the engine-only install (a Python newer than 3.11) has none
    parser.error("needs matplotlib (in the project's 3.11 venv; elsewhere `pip install matplotlib`)")
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top
  fig, axes = plt.subplots(1, len(args.results), figsize=(6 * len(args.results), 4.5),
                           squeeze=False)
  for i, (ax, path) in enumerate(zip(axes[0], args.results)):
    results = json.loads(path.read_text(encoding="utf-8"))
    records = results["per_point"]
    if args.earlier:
      earlier = json.loads(args.earlier[i].read_text(encoding="utf-8"))["per_point"]
      if [r["target"] for r in earlier] != [r["target"] for r in records]:
        parser.error(f"--earlier {args.earlier[i]}: not the points of {path}")
      for (rung, label), color in zip(rungs_of(earlier), ("tab:gray", "tab:blue")):
        xs, ys, _ = curve(earlier, rung)
        ax.plot(xs, ys, color=color, linestyle="--", alpha=0.6,
                label=f"{args.earlier_label}, {label}")
    for (rung, label), color in zip(rungs_of(records), ("tab:gray", "tab:blue")):
      xs, ys, _ = curve(records, rung)
      ax.plot(xs, ys, color=color, label=f"{args.label}, {label}" if args.label else label)
      if args.gate is not None and rung != WITHOUT_REPOSITORY:
        x, y = at_gate(records, rung, args.gate)
        ax.plot([x], [y], "o", color=color)
        ax.annotate(f"--min-score {args.gate:g}:\n{x:.0f} % shown, {y:.0f} % right", (x, y),
                    textcoords="offset points", xytext=(6, -30), fontsize="small")
    if args.confidence is not None:
      model = json.loads(args.confidence.read_text(encoding="utf-8"))["confidence"]
      rung = rungs_of(records)[1][0]
      xs, ys, gate = by_confidence(records, rung, model)
      ax.plot(xs, ys, color="tab:green", label="the engine's default, by its confidence")
      if gate is not None:
        ax.plot([gate[0]], [gate[1]], "o", color="tab:green")
        ax.annotate(f"confidence {model['min']:g}:\n{gate[0]:.0f} % shown, {gate[1]:.0f} % right",
                    gate, textcoords="offset points", xytext=(6, 10), fontsize="small")
    ax.set_title(f"{pathlib.Path(results['root']).name} {results['split']} ({len(records)} points)")
    ax.set_xlabel("points where a line is shown (%)")
    ax.set_ylabel("shown lines exactly right (%)")
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 100)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper right", fontsize="small")  # the curves fall from upper left
  fig.tight_layout()
  processes.write_file_beside(args.out, lambda f: fig.savefig(f, format="png", dpi=110),
                              binary=True, make_parents=True)
  print(f"wrote {args.out}")
  return 0


if __name__ == "__main__":
  sys.exit(main())
