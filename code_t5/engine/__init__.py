"""The completion engine: a model dir's NumPy runtime (no TensorFlow once written), the beam
search over lines, the vocabularies' TensorFlow-free tokenizers, the filters and name ranking of
candidate lines, and the commands that serve completions (`code-t5 export`, `complete`, `serve`,
`lsp`).

Imports data/, training/ and the top-level errors, cache_dirs, processes, registration and
stranger_paths; never evaluation/, convert/ or the command line (tests/package_test.py).
"""
