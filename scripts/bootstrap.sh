#!/usr/bin/env bash
# Creates the project's virtual environment and installs the pinned legacy stack plus code_t5.
# Idempotent: a stamp holding the hash of requirements/stack.txt, setup.py and the C sources it
# builds (code_t5/engine/*.c, *.h) skips all work when nothing changed, so `make train-dev` and
# `make test` can call it every time.
#   CODE_T5_VENV  where the venv goes (default: .venv in the repository)
#   PYTHON        interpreter to build it from (default: python3.11, else python3)
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${CODE_T5_VENV:-.venv}
PYTHON=${PYTHON:-$(command -v python3.11 || command -v python3 || true)}
# Python 3.11 only: TensorFlow 2.15, the last with the estimator API Mesh TF's trainer needs, has no
# wheels for 3.12+, and pyflakes 4.1 (the engine's check of names) none for 3.10. Said before any
# install, not minutes into one.
if [ -z "$PYTHON" ] || ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
  echo "bootstrap: needs Python 3.11 (${PYTHON:-no python3 on PATH} is not: TensorFlow 2.15 has no wheels for newer); install one (Debian/Ubuntu: apt install python3.11 python3.11-venv; or pyenv install 3.11; or uv python install 3.11) and run again with PYTHON=/path/to/python3.11 (for completions alone, pip install . in a venv of a newer Python: README)" >&2
  exit 2
fi

# Byte-compiles the checkout (the editable install leaves it to Python), each call, in about a
# second when nothing changed: where PYTHONDONTWRITEBYTECODE is set (containers, CI runners, this
# project's machines) Python would otherwise compile every module of code_t5 again at each start,
# and a cold `code-t5 complete` took 0.31 s instead of 0.25 s on the faster 2-core machine.
compile_checkout() {
  "$VENV/bin/python" -m compileall -q code_t5 code_t5_compat.py >/dev/null
}

want=$(cat requirements/stack.txt setup.py code_t5/engine/*.c code_t5/engine/*.h | sha256sum | cut -c1-16)
stamp="$VENV/.code_t5_installed"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  compile_checkout
  exit 0
fi

start=$(date +%s)
echo "bootstrap: creating $VENV and installing the pinned stack (about 2 minutes cold)" >&2
"$PYTHON" -m venv "$VENV"
pip=("$VENV/bin/pip" install --quiet --disable-pip-version-check)
"${pip[@]}" --upgrade "pip==25.3" "setuptools==80.9.0" wheel
# torch first, pinned to the CPU build: left to the resolver, transformers' or t5's `torch`
# requirement would pull a CUDA build of several GB. Try pip's configured indexes and local wheels,
# then PyTorch's CPU index.
"${pip[@]}" "torch==2.13.0+cpu" 2>/dev/null \
  || "${pip[@]}" "torch==2.13.0+cpu" --extra-index-url https://download.pytorch.org/whl/cpu
"${pip[@]}" -r requirements/stack.txt
# Without their dependencies: mesh-tensorflow[transformer] would install `tensorflow-datasets`, which
# overwrites tfds-nightly's `tensorflow_datasets/` package. Their real dependencies are in stack.txt.
"${pip[@]}" --no-deps "t5==0.9.4" "mesh-tensorflow==0.1.21"
# Editable, so that the checkout is what runs; installs code_t5_compat.pth (the mesh-tf shim).
"${pip[@]}" --no-deps --no-build-isolation -e .
"$VENV/bin/pip" check >&2
compile_checkout
echo "$want" > "$stamp"
echo "bootstrap: done in $(( $(date +%s) - start )) s; venv size $(du -sh "$VENV" | cut -f1)" >&2
