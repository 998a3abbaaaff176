"""Source text as Python reads it: no byte-order mark, and "\\r\\n" and a lone "\\r" as "\\n".

Python's tokenizer reads a file so, and the editors count columns so; the model was trained on such
text. Every reader of code hands it on this way: the dataset's reader (code_t5.data.flcc, whose
files the training, the line-completion points and the evaluation's tools all read), the engine's
index of a project (code_t5.engine.repository), and `complete` and `serve` for the code they are
given. Before, a CRLF file kept its "\\r"s past the dataset's reader, so every target of its lines
ended in one the engine never writes (0 % exact however right its lines: helper-56's audit), and a
file of lone "\\r"s was one line of thousands of characters.
"""

BOM = "\ufeff"


def lf_line_ends(text: str) -> str:
  """`text` with "\\r\\n" and a lone "\\r" as "\\n" (read in a CRLF or CR file, the model ended its
  lines in "\\r", and then the editor's buffer got "\\r\\r\\n")."""
  return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def without_bom(text: str) -> str:
  """`text` without a leading byte-order mark: no code and no column (Python and editors drop it;
  the model read it, and line 1's columns were one off an editor's: helper-46's audit)."""
  return text[1:] if text.startswith(BOM) else text


def as_python_reads(text: str) -> str:
  """`text` without a byte-order mark and with "\\n" line ends."""
  return lf_line_ends(without_bom(text))
