"""Evaluation: `code-t5 baseline` (the line-completion ladder: the token n-gram, an empty
prediction, a model's eval decodes and the completion engine's rungs, at the task's points, into
one JSON results file) and the paired bootstrap that compares each system with the n-gram.

Imports data/, training/, engine/ and the top-level errors, cache_dirs, processes and
stranger_paths; never convert/ or the command line (tests/package_test.py).
"""
