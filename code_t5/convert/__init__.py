"""Model dirs into other formats: `code-t5 convert` (Mesh TF checkpoints into T5X's native
format) and `code-t5 pack` (a trained model dir's weights alone, with the completion runtime, as
the shipped model is).

Imports data/, training/, engine/ and the top-level errors, processes and stranger_paths; never
evaluation/ or the command line (tests/package_test.py).
"""
