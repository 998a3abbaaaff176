"""Fits a model's confidence gate from `code-t5 baseline` results and writes it to its about.json.

    python scripts/fit_confidence.py results/engine_sitepackages_repo.json \\
        --about code_t5/pretrained/MODEL/about.json [--share 0.65] [--force]

The results must come from `code-t5 baseline --checkpoint` (per point, the engine's last rung's
line and the confidence features of its lines: code_t5.engine.confidence). The logistic model of
"the best line is exact" is fitted on every point where a line was kept, and the gate ("min") is
the probability at which a line is shown at --share of the points. --about gets "confidence" =
{"weights", "bias", "min", "share", "fitted_on"} (written beside and renamed; refuses to replace
an existing "confidence" without --force). Prints the fit and what the gate shows there.
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
from code_t5 import processes  # pylint: disable=g-import-not-at-top,wrong-import-position
from code_t5.engine import confidence  # pylint: disable=g-import-not-at-top,wrong-import-position


def points_of(results: dict):
  """(features, exact) of every point of `results` where the engine's last rung kept a line the
  gate may show (the features are None where it kept none, or only lines it ranks unlikely)."""
  rows, exact = [], []
  for point in results.get("per_point", []):
    for rung, values in point.get("confidence_features", {}).items():
      if values is not None:
        rows.append(values)
        exact.append(point["predictions"][rung] == point["target"])
  return rows, exact


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("results", type=pathlib.Path)
  parser.add_argument("--about", type=pathlib.Path, required=True)
  parser.add_argument("--share", type=float, default=0.65,
                      help="share of the points the gate shows a line at (default %(default)s)")
  parser.add_argument("--force", action="store_true", help="replace an existing \"confidence\"")
  args = parser.parse_args(argv)
  if not 0 < args.share <= 1:
    print(f"--share {args.share:g} must be in (0, 1]", file=sys.stderr)
    return 2
  try:
    results = json.loads(args.results.read_text(encoding="utf-8"))
    about = json.loads(args.about.read_text(encoding="utf-8")) if args.about.exists() else {}
  except (OSError, ValueError) as e:
    print(f"cannot read {args.results} or {args.about}: {e}", file=sys.stderr)
    return 2
  rows, exact = points_of(results)
  if not rows:
    print(f"{args.results} has no confidence features: run `code-t5 baseline --checkpoint` "
          "with this version", file=sys.stderr)
    return 2
  if "confidence" in about and not args.force:
    print(f"{args.about} has a \"confidence\" already: pass --force to replace it", file=sys.stderr)
    return 2
  points = results["points"]["count"]
  model = confidence.fit(rows, exact)
  probabilities = [confidence.probability(r, model) for r in rows]
  model["min"] = confidence.threshold_for_share(probabilities, points, args.share)
  shown = [e for p, e in zip(probabilities, exact) if p >= model["min"]]
  model["share"] = args.share
  if len(rows) < round(args.share * points):
    # The gate then shows every line it may: said, and the share it reaches kept (a gate of 0.0
    # beside "share": 0.65 read as a fit that went wrong: helper-43's audit).
    model["share"] = round(len(rows) / points, 4)
    print(f"note: --share {args.share:g} cannot be reached: a line the gate may show was kept at "
          f"{len(rows):,} of the {points:,} points ({100 * len(rows) / points:.1f} %; at the "
          "others the engine kept none, or only lines it ranks unlikely), so the gate shows "
          "every one of them", file=sys.stderr)
  model["fitted_on"] = f"{results['root']} ({results['split']}, {points:,} points)"
  about["confidence"] = model
  try:
    processes.write_file_beside(args.about, lambda f: f.write(json.dumps(about, indent=1) + "\n"))
  except OSError as e:
    print(f"cannot write {args.about}: {e.strerror}: give another --about", file=sys.stderr)
    return 2
  print(f"{args.about}: weights {model['weights']}, bias {model['bias']}; gate {model['min']}: "
        f"a line at {100 * len(shown) / points:.1f} % of {points:,} points, "
        f"{100 * sum(shown) / max(1, len(shown)):.1f} % of them exact")
  return 0


if __name__ == "__main__":
  sys.exit(main())
