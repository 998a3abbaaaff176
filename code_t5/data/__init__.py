"""Data: FLCC roots (reading, importing, preparing them into TFRecord shards), the vocabularies,
the seqio tasks and mixtures with their pre- and postprocessors and metrics, and the
line-completion points every evaluation shares.

Imports only the top-level errors, cache_dirs, processes and stranger_paths (and, lazily, itself):
everything else in code_t5 may import it (tests/package_test.py).
"""
