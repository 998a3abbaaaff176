# The two commands of the README. Each one first runs scripts/bootstrap.sh, which creates .venv
# and installs the pinned stack the first time (about 2 minutes) and does nothing afterwards.
VENV ?= .venv
export CODE_T5_VENV := $(VENV)

.PHONY: bootstrap train-dev test

bootstrap:
	@scripts/bootstrap.sh

# The first run: a tiny causal LM on dataset-dev on CPU (code_t5/training/launcher.py FIRST_RUN_*),
# 3,000 steps (resumes), then the line-completion eval and a few held-out points beside the
# shipped model's lines; a few minutes.
train-dev: bootstrap
	$(VENV)/bin/code-t5 train

# The suite in TEST_WORKERS processes (pytest-xdist; 0: in this one). --dist loadfile keeps each
# test file on one worker, so a file's trained fixtures are built once.
TEST_WORKERS ?= 2
test: bootstrap
	$(VENV)/bin/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile tests
