"""Training: the launcher of `code-t5 train` and `eval` (Mesh TF's main, run as a child), what
Mesh TF is configured with through gin (the loss, attention, embedding lookup and training
options), seqio's cache job, and what a model dir says about itself (its operative_config.gin,
its checkpoints, its loss curve).

Imports data/ and the top-level errors, processes, registration and stranger_paths; never engine/,
evaluation/, convert/ or the command line (tests/package_test.py).
"""
