"""Line-completion points: where in a file a completion is asked for, and what the answer is.

Pure Python (no TensorFlow), so the seqio task (code_t5/data/line_completion_data.py), the baseline
(code_t5/evaluation/baseline.py) and any other tool judge exactly the same points.

A point is a cursor in a file; its *context* is all the text before the cursor and its *target*
is the rest of the cursor's line, without the "\\n" that ends it. Lines end at "\\n" only: the
dataset's reader (code_t5.data.flcc) gives each file as Python reads it (code_t5.source_text), so
no "\\r" is left in it. Two kinds, as an IDE asks:

- "line_start": the cursor right after the line's indentation (spaces, tabs, form feeds) — the
  user has just pressed Enter and the editor indented; the target is the whole line's code.
- "inside": the cursor strictly inside the line's code, after at least one typed character and
  before its last non-whitespace character — the user has typed part of the line.

Eligible lines: a line qualifies when its code (the text after the indentation) has at least
MIN_LINE_CHARS non-whitespace characters, so blank lines and lines like ")" are skipped, and
every target holds some non-whitespace text. Per file, START_POINTS_PER_FILE lines are drawn for
"line_start" points and, independently, INSIDE_POINTS_PER_FILE lines for "inside" points, each at a
uniformly drawn cursor (fewer when the file has fewer eligible lines). The draws use a
random.Random seeded by a SHA-256 of (POINTS_VERSION, seed, repository, path): the same on every
machine, independent of file order and of the other files. Points come sorted by cursor.

The model sees the context cut from the LEFT: the last `length - 1` tokens (one slot is EOS) of
the tokenized context window, the window being the last MAX_CHARS_PER_TOKEN * length characters
before the cursor (no token spans more than that, so the window always holds enough tokens; only
its first token may be cut).
"""

import dataclasses
import hashlib
import random
from typing import Iterable, Iterator, List, Optional, Sequence, Tuple

# Bumped whenever the points chosen for the same file and seed change.
POINTS_VERSION = 1
DEFAULT_SEED = 20240601
START_POINTS_PER_FILE = 4
INSIDE_POINTS_PER_FILE = 4
MIN_LINE_CHARS = 2
KINDS = ("line_start", "inside")
INDENT_CHARS = " \t\f"
# Longest text one token can stand for: SentencePiece's max_sentencepiece_length (16 characters)
# for code_t5's vocabularies; byte vocabularies need 1.
MAX_CHARS_PER_TOKEN = 16


@dataclasses.dataclass(frozen=True)
class Point:
  """A completion point of one file: text[:cursor] is the context, text[cursor:end] the target."""
  repo: str
  path: str
  line: int  # 1-based line number of the cursor
  cursor: int  # character (code point) offset into the file's text
  end: int  # offset of the "\n" that ends the line (or len(text))
  kind: str  # one of KINDS

  def context(self, text: str) -> str:
    return text[:self.cursor]

  def target(self, text: str) -> str:
    return text[self.cursor:self.end]

  def as_typed(self, text: str) -> str:
    """`text` as an editor holds it while the point's line is typed up to the cursor: the target
    not there yet (to complete it where the file is whole, the target would be text after the
    cursor, and a line can only fit before it)."""
    return text[:self.cursor] + text[self.end:]


@dataclasses.dataclass(frozen=True)
class _Line:
  number: int
  code_start: int  # after the indentation
  last_code: int  # offset of the last non-whitespace character
  end: int


def _eligible_lines(text: str) -> List[_Line]:
  lines = []
  start = 0
  number = 1
  while start <= len(text):
    end = text.find("\n", start)
    if end < 0:
      end = len(text)
    line = text[start:end]
    code = line.lstrip(INDENT_CHARS)
    if sum(not c.isspace() for c in code) >= MIN_LINE_CHARS:
      code_start = end - len(code)
      last_code = code_start + len(code.rstrip()) - 1
      lines.append(_Line(number, code_start, last_code, end))
    if end == len(text):
      break
    start = end + 1
    number += 1
  return lines


def _rng(seed: int, repo: str, path: str) -> random.Random:
  key = f"{POINTS_VERSION}\0{seed}\0{repo}\0{path}".encode("utf-8", "surrogateescape")
  return random.Random(int.from_bytes(hashlib.sha256(key).digest()[:8], "big"))


def select_points(text: str, repo: str, path: str, seed: int = DEFAULT_SEED,
                  start_points: int = START_POINTS_PER_FILE,
                  inside_points: int = INSIDE_POINTS_PER_FILE) -> List[Point]:
  """The completion points of one file (see the module docstring), sorted by cursor."""
  lines = _eligible_lines(text)
  rng = _rng(seed, repo, path)
  points = []
  for line in rng.sample(lines, min(start_points, len(lines))):
    points.append(Point(repo, path, line.number, line.code_start, line.end, "line_start"))
  for line in rng.sample(lines, min(inside_points, len(lines))):
    # At least one typed character before the cursor, at least the last code character after it.
    cursor = rng.randint(line.code_start + 1, line.last_code)
    points.append(Point(repo, path, line.number, cursor, line.end, "inside"))
  return sorted(points, key=lambda p: (p.cursor, p.kind))


def eval_dir_suffix(root_name: str) -> str:
  """What a model's line-completion eval of the root named `root_name` appends to its
  `<split>_eval` folder (Mesh TF's utils.run.eval_dir_suffix), so one model evaluated on several
  roots keeps each root's decodes, and `code-t5 baseline --model-dir` finds the root's."""
  return f"line_completion-{root_name}"


def _file_key(repo: str, path: str) -> bytes:
  return hashlib.sha256(f"{repo}\0{path}".encode("utf-8", "surrogateescape")).digest()


def sample_files(files: Sequence, max_files: Optional[int] = None) -> list:
  """The files (with .repo, .path) to draw points from, in their order: all of them, or the
  `max_files` whose SHA-256 of (repository, path) is smallest — a subset spread over every
  repository of a large split (the first N files would be one or two repositories), the same in
  any file order, and growing N only adds files."""
  if max_files is None or len(files) <= max_files:
    return list(files)
  if max_files < 1:
    raise ValueError(f"max_files must be at least 1, got {max_files}")
  keys = sorted(_file_key(f.repo, f.path) for f in files)
  threshold = keys[max_files - 1]
  return [f for f in files if _file_key(f.repo, f.path) <= threshold]


def points_of_files(files: Iterable, seed: int = DEFAULT_SEED) -> Iterator[Tuple[object, Point]]:
  """(file, point) for files with .repo, .path, .text (e.g. flcc.SourceFile), in file order."""
  for source_file in files:
    for point in select_points(source_file.text, source_file.repo, source_file.path, seed):
      yield source_file, point


