"""`code-t5 lsp`: the completer as a Language Server (LSP over stdin/stdout) for editors.

    code-t5 lsp --checkpoint code_t5/pretrained/causal_lm-mini-spm_dev-sitepackages [--top 5]

The model is loaded once, before the server answers `initialize`. The server keeps the text of
every open document (didOpen, incremental didChange, didClose) and answers:

- textDocument/completion: a CompletionList (isIncomplete: the lines change as the user types) of
  the model's ranked lines. Each item's textEdit replaces the identifier-ish word typed just before
  the cursor by that word plus the rest of the line, so the editor's own prefix filtering keeps
  working; label = that completed text, sortText keeps the model's rank, plain text (no snippets).
  Where the line closes brackets an editor put after the cursor and goes on past them (`self) ->
  None:` at `def push(|)`), the textEdit's range also covers those closers, which it replaces
  (code_t5.engine.line_filters.Fit). A client that inserts only newText at the word and leaves
  the text after the cursor (Neovim's omnifunc: Vim's complete() cannot remove it) would read
  `self, other):)`: to a client whose initialize names it "Neovim" (clientInfo) such lines are not
  offered, unless its capabilities say insertReplaceSupport, as a completion plugin's do
  (nvim-cmp's, through cmp_nvim_lsp), which applies the whole range.
- textDocument/inlineCompletion (LSP 3.18), only advertised to clients that advertise it: the lines
  as ghost text inserted at the cursor (with a range over the closers such a line replaces).

Positions are in the encoding negotiated at `initialize` (UTF-16 code units unless the client
offers another); lines end at \\n, \\r\\n or \\r as the LSP says (not at the other breaks Python's
str.splitlines knows, such as a form feed); a position inside a character's code units is after
it. A lone surrogate in a document (JSON's "\\ud800", which no tokenizer takes) reads as U+FFFD,
of the same length in every position encoding; opening such a document logs one line.

The model runs on one worker thread, one request at a time, off the event loop. A request that is
cancelled ($/cancelRequest) before its answer is sent is answered RequestCancelled; one that a newer
request of the same kind or an edit of the same document overtook while it waited for the model is
answered an empty list without running the model. Bad input (an unknown document, a line outside it;
a character past a line's end is its end, as the LSP says) and model errors are answered an empty
list plus one line of window/logMessage; the server keeps running. stdout carries nothing but
JSON-RPC: the process's own fd 1 is pointed at stderr before the model (TensorFlow, native
libraries) loads.

Messages are read by MessageReader (its docstring has the rules), not by pygls' reader: header
names in any case, LF-only line ends accepted; a message with a bad Content-Length (-5, abc, over
MAX_MESSAGE_BYTES) or a body that is not UTF-8 JSON is answered Parse error (id null) and dropped,
and reading resumes at the next `Content-Length:` header line, found anywhere (also inside a body
whose length was too large: a JSON text never holds one). A well-framed message is read whatever
came before it. JSON-RPC's rules and the LSP's lifecycle are applied before pygls sees a message:
what is not a request (a batch, no "jsonrpc": "2.0", no method, an id that is neither an integer
nor a string, JSON nested too deeply to load) is answered Invalid Request, with its id when it has
a valid one; params that do not fit the method's type are answered Invalid Params, with what
does not fit where; a request before initialize is answered ServerNotInitialized and one after shutdown
Invalid Request (notifications then are dropped); `exit` ends the process with code 0 after
shutdown, else 1. "params" may be left out (an unknown method is then Method not found, as with
them); a $/cancelRequest whose id is not an integer or a string cancels nothing and is dropped.

pygls and lsprotocol are imported when the server starts, not at `code-t5 --help`.
"""

import asyncio
import dataclasses
import itertools
import json
import logging
import os
import pathlib
import re
import sys
import threading
import time
import urllib.parse
from concurrent import futures
from typing import Dict, List, Optional, Sequence, Tuple

from code_t5 import processes
from code_t5.engine import complete as complete_lib
from code_t5.engine import encoding_memo
from code_t5.engine import names
from code_t5.engine import repository as repository_lib
from code_t5.engine import saved_pieces

NAME = "code-t5"
UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"
# Where a line completion is typically wanted besides identifier characters (on which clients ask
# by themselves); not a space, which would open a completion menu at every word.
TRIGGER_CHARACTERS = [".", "(", "[", "{", ",", "="]

# nvim-cmp's default completion.keyword_pattern (lua/cmp/config/default.lua, the same from 0.0.1 to
# 2025), in Python: a number, or a word whose parts hyphens join, ending at the cursor. nvim-cmp
# matches what was typed from that keyword's start against each item's filterText and drops the
# items that do not match: items that replace only `\w` characters (the line `16` after `'utf-`)
# are all dropped. Searched in the line's last CMP_KEYWORD_WINDOW characters before the cursor.
CMP_KEYWORD = re.compile(r"(?:-?[0-9]+(?:\.[0-9]+)?|[A-Za-z_][0-9A-Za-z_]*(?:-[0-9A-Za-z_]*)*)\Z")
CMP_KEYWORD_WINDOW = 256
# A word before the cursor longer than this (a base64 literal, a minified line) is completed by no
# line: every item would repeat it (a run of 300,000 letters gave 900 kB of JSON an answer).
MAX_WORD_CHARS = 256
# How often the client's process (initialize's processId) is looked for: gone, the server exits.
PARENT_POLL_SECONDS = 2.0
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # in a str, every surrogate is a lone one

logger = logging.getLogger(__name__)


# ------------------------------------------------------------------------------------------------
# Documents and positions (pure Python: no pygls).


def code_units(text: str, encoding: str = UTF16) -> int:
  """Length of `text` in the code units of an LSP position encoding."""
  if encoding == UTF32 or text.isascii():
    return len(text)
  if encoding == UTF8:
    return sum(1 if c < "\x80" else 2 if c < "\u0800" else 3 if c < "\U00010000" else 4
               for c in text)
  return len(text) + sum(c > "\uffff" for c in text)


def column(line: str, units: int, encoding: str = UTF16) -> Optional[int]:
  """The character index in `line` (no line break) of a position `units` code units in; None past
  the end. A position inside a character's code units (half a surrogate pair) is after it."""
  if units < 0:
    return None
  if encoding == UTF32 or (encoding == UTF16 and line.isascii()) or (
      encoding == UTF8 and line.isascii()):
    return units if units <= len(line) else None
  count = 0
  for index, char in enumerate(line):
    if count >= units:
      return index
    count += code_units(char, encoding)
  return len(line) if count >= units else None


def _add_as_the_disk_would(repository, path: str, text: str) -> None:
  """An open document's text becomes the repository's copy of its file, unless the disk's copy
  would be left out for its size (repository.MAX_FILE_BYTES, as the workspace is read): the
  editor's 3.65 MB file stalled the server 0.7-0.9 s at each open and save, encoded on its event
  loop, where no cancel could be read (helper-46's audit)."""
  if (len(text) > repository_lib.MAX_FILE_BYTES or
      len(text.encode("utf-8", "surrogatepass")) > repository_lib.MAX_FILE_BYTES):
    repository.remove(path)
  else:
    repository.add(path, text)


def without_lone_surrogates(text: str) -> str:
  """`text` with each lone surrogate (JSON's "\\ud800" escape: VS Code sends one for such a
  buffer) replaced by U+FFFD. The tokenizer takes no lone surrogate (every completion in the
  document failed: "TypeError: not a string"); U+FFFD has a lone surrogate's length in every
  position encoding (one UTF-16 or UTF-32 unit, three UTF-8 bytes as code_units counts both), so
  the client's positions still point where they did."""
  if text.isascii() or not _LONE_SURROGATE.search(text):
    return text
  return _LONE_SURROGATE.sub("\ufffd", text)


def _split_lines(text: str) -> List[str]:
  """`text`'s lines, each with its line break (the last one has none; it may be "")."""
  lines, start = [], 0
  for m in _LINE_BREAK.finditer(text):
    lines.append(text[start:m.end()])
    start = m.end()
  lines.append(text[start:])
  return lines


def _content(line: str) -> str:
  """A line of _split_lines without its line break (no line holds \\r or \\n before it)."""
  return line.rstrip("\r\n")


class Document:
  """The text of one open document and its lines, where an edit goes. Lone surrogates read as
  U+FFFD (without_lone_surrogates).

  The lines (each with its line break) are split from the text when first needed and kept: a
  change replaces the lines it touches, and `text` is joined once per apply. Rebuilding the text
  and its line table after each change made a didChange of 1,000 changes (1,000 cursors) to a
  1 MB document take 13 s of the event loop. `text` is a plain str, replaced whole: the index
  thread reads it."""

  def __init__(self, text: str, version: Optional[int] = None):
    self.version = version
    self._set(text)

  def _set(self, text: str) -> None:
    self.text = without_lone_surrogates(text)
    self._lines: Optional[List[str]] = None  # split when first needed
    self._starts: Optional[List[int]] = None  # each line's offset in text, likewise

  def _all_lines(self) -> List[str]:
    if self._lines is None:
      self._lines = _split_lines(self.text)
    return self._lines

  @property
  def line_count(self) -> int:
    return len(self._all_lines())

  def line_start(self, number: int) -> int:
    if self._starts is None:
      self._starts = list(itertools.accumulate(map(len, self._all_lines()), initial=0))
    return self._starts[number]

  def line(self, number: int) -> str:
    """Line `number` without its line break."""
    return _content(self._all_lines()[number])

  def offset(self, line: int, character: int, encoding: str = UTF16,
             clamp: bool = False) -> Optional[int]:
    """The character offset of an LSP position; None if it is outside the document, or with clamp
    the nearest offset inside it (past a line's end is its end, as the LSP says; past the last line
    is the end of the document)."""
    if not clamp and (not 0 <= line < self.line_count or character < 0):
      return None
    line, index = self._position(line, character, encoding)
    if index is None:
      if not clamp:
        return None
      index = len(self.line(line))
    return self.line_start(line) + index

  def _position(self, line: int, character: int, encoding: str) -> Tuple[int, Optional[int]]:
    """(line, character index in it, None past its end) of an LSP position, the line clamped into
    the document: before the first line is its start, past the last line the document's end."""
    lines = self._all_lines()
    if line < 0:
      return 0, 0
    if line >= len(lines):
      return len(lines) - 1, len(lines[-1])  # the last line has no line break
    return line, column(_content(lines[line]), max(character, 0), encoding)

  def apply(self, changes: Sequence[Tuple[Optional[Tuple[int, int, int, int]], str]],
            encoding: str = UTF16) -> None:
    """Applies LSP content changes in order: (range as (start line, start character, end line,
    end character) or None for the whole text, new text). Positions past the text are clamped;
    a range that ends before it starts is empty, at its start."""
    changed = False
    try:
      for where, new_text in changes:
        new_text = without_lone_surrogates(new_text)
        if where is None:
          self._set(new_text)
          changed = False
          continue
        lines = self._all_lines()
        first, start = self._position(where[0], where[1], encoding)
        last, end = self._position(where[2], where[3], encoding)
        start = len(_content(lines[first])) if start is None else start
        end = len(_content(lines[last])) if end is None else end
        if (last, end) < (first, start):
          last, end = first, start
        # The touched lines' new text: it ends with the last one's line break (the next line
        # follows unchanged), or at the document's end.
        piece = lines[first][:start] + new_text + lines[last][end:]
        if first and piece.startswith("\n") and lines[first - 1].endswith("\r"):
          first -= 1  # the \r ending the line before and this \n are one line break now
          piece = lines[first] + piece
        replacement = _split_lines(piece)
        if last + 1 < len(lines):
          replacement.pop()  # the "" after the piece's last line break
        lines[first:last + 1] = replacement
        changed = True
    finally:  # the text is the lines' even if a change failed
      if changed:
        self.text = "".join(self._lines)
        self._starts = None


@dataclasses.dataclass(frozen=True)
class Point:
  """A completion request made concrete: what the model reads and where the items go."""
  text: str
  cursor: int  # character offset in text
  word: str  # the identifier-ish word just before the cursor, or the client's keyword there where
  # that is longer (the items replace it)
  line: int  # the cursor's LSP position (the request's, after a character it fell inside)
  character: int
  word_units: int  # the word's length in the position encoding


def point_at(document: Document, line: int, character: int, encoding: str = UTF16,
             keyword: Optional[re.Pattern] = None) -> Point:
  """The completion point of an LSP position; ValueError (one line) if it is outside the
  document. `keyword`: the client's keyword pattern (ending at the end of what it searches), when
  the items must replace the whole keyword before the cursor (CMP_KEYWORD)."""
  # A character past the line's end is its end, as the LSP says; a line outside the document or a
  # negative character is no position.
  inside = 0 <= line < document.line_count and character >= 0
  cursor = document.offset(line, character, encoding, clamp=inside)
  if cursor is None:
    lines = document.line_count
    where = (f"line {line} is outside the document ({lines} line{'' if lines == 1 else 's'})"
             if not 0 <= line < document.line_count else
             f"character {character} is outside line {line} "
             f"({code_units(document.line(line), encoding)} {encoding} code units)")
    raise ValueError(where)
  start = document.line_start(line)
  word = names.word_before(document.text, cursor, max(start, cursor - MAX_WORD_CHARS - 1))
  if len(word) > MAX_WORD_CHARS:
    raise ValueError(f"the word before the cursor is over {MAX_WORD_CHARS} characters long")
  if keyword is not None:
    found = keyword.search(document.text, max(start, cursor - CMP_KEYWORD_WINDOW), cursor)
    if found is not None and len(found.group()) > len(word):
      word = found.group()
  # A position inside a character's code units is after it (column): the items' range starts and
  # ends where the cursor is, not at the request's units (the word's start was before the line's).
  character = code_units(document.text[start:cursor], encoding)
  return Point(text=document.text, cursor=cursor, word=word, line=line, character=character,
               word_units=code_units(word, encoding))


def _neovim(params) -> bool:
  return bool(params.client_info and params.client_info.name == "Neovim")


def _says_insert_replace(params) -> bool:
  document = params.capabilities.text_document
  completion = document.completion if document is not None else None
  item = completion.completion_item if completion is not None else None
  return bool(item is not None and item.insert_replace_support)


def applies_ranges_past_cursor(params) -> bool:
  """Whether the client of `initialize` `params` applies a completion item's whole textEdit range,
  past the cursor too. Neovim's omnifunc does not (it inserts newText at the word: Vim's
  complete() cannot remove the text after the cursor); a Neovim completion plugin that says
  insertReplaceSupport does (nvim-cmp through cmp_nvim_lsp, tried with nvim-cmp 0.0.1 on Neovim
  0.7.2). Other clients apply ranges as the LSP says (VS Code, Emacs' eglot)."""
  return not _neovim(params) or _says_insert_replace(params)


def keyword_of(params) -> Optional[re.Pattern]:
  """The keyword pattern whose whole match before the cursor the client's items must replace:
  CMP_KEYWORD for a Neovim completion plugin (nvim-cmp, as applies_ranges_past_cursor tells it);
  None (the identifier-ish word) for the others. Neovim's omnifunc inserts an item's text after
  Vim's keyword (no `-`), where a wider item would repeat what was typed."""
  return CMP_KEYWORD if _neovim(params) and _says_insert_replace(params) else None


def ranked_lines(candidates, top: Optional[int] = None) -> List[complete_lib.Candidate]:
  """The candidates (complete_lib.Candidate), best first, at most `top`, without repeats of a text
  and what it replaces, and without "" (the line ending at the cursor: an item that inserts
  nothing)."""
  lines, seen = [], set()
  for candidate in candidates:
    if candidate.text and (candidate.text, candidate.replaces) not in seen:
      seen.add((candidate.text, candidate.replaces))
      lines.append(candidate)
  return lines[:top] if top else lines


# ------------------------------------------------------------------------------------------------
# Requests: one model call at a time, stale ones skipped.


class Engine:
  """The completer behind the server: documents, and model calls on one worker thread."""

  def __init__(self, completer, top: Optional[int] = None, log=None):
    self.completer = completer
    # The workspace folder's Python files (code_t5.engine.repository), once indexed; until then,
    # and without a workspace, the completer's own --repo (or none).
    self.root: Optional[pathlib.Path] = None
    self.repository = None
    self.top = top
    self.log = log or (lambda message, error=False: logger.warning("%s", message))
    self.documents: Dict[str, Document] = {}
    self.model_calls = 0  # how many times the model ran (tests read it)
    # Whether the client applies a completion item's whole textEdit range, past the cursor too
    # (applies_ranges_past_cursor, at initialize), and the keyword pattern its items replace
    # (keyword_of).
    self.ranges_past_cursor = True
    self.keyword: Optional[re.Pattern] = None
    self._edits: Dict[str, int] = {}  # per URI: opens, changes and closes so far
    self._requests: Dict[Tuple[str, str], int] = {}  # per (URI, kind): requests so far
    self._executor = futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="code-t5-model")
    self._model_free: Optional[asyncio.Lock] = None
    # ((uri, text, cursor, workspace generation), lines) of the last model call: a completion and
    # an inline completion at one point (clients may ask both) run the model once. The
    # generation counts the workspace's changes (saves, opens, closes, the index built): the same
    # text after another file's save was answered from before it (helper-37's audit).
    self._last: Optional[Tuple[tuple, List[complete_lib.Candidate]]] = None
    self._generation = 0
    # The workspace path of the document last opened or completed in: where the user types next.
    self._active_path = ""
    self._prepares = 0  # Repository.prepare requests so far: only the newest runs
    self._opens = 0  # documents opened so far: only the newest is encoded ahead (_encode_opened)
    # Whether the client watches the workspace's files for the server (initialize); where it
    # does not (Neovim on Linux: 0.10 and later turn the capability off there, 0.9 and earlier
    # lack it), and for a --repo folder (which the client's watchers do not cover), the server
    # follows the folder's *.py on disk itself (_poll_disk) until it closes.
    self.client_watches_files = False
    self._closed = threading.Event()
    self._look: Optional[repository_lib.DiskLook] = None  # (set where it is followed)

  def close(self) -> None:
    self._closed.set()
    self._executor.shutdown(wait=False, cancel_futures=True)

  # Documents. ----------------------------------------------------------------------------------

  def _edited(self, uri: str) -> None:
    self._edits[uri] = self._edits.get(uri, 0) + 1

  def open(self, uri: str, text: str, version: Optional[int] = None) -> None:
    surrogate = None if text.isascii() else _LONE_SURROGATE.search(text)
    if surrogate:
      self.log(f"{uri} holds a lone surrogate (U+{ord(surrogate.group()):04X} at character "
               f"{surrogate.start()}), not Unicode text: the model reads U+FFFD in its place")
    self.documents[uri] = document = Document(text, version)
    text = document.text  # (lone surrogates replaced)
    self._edited(uri)
    self._active_path = self.path_of(uri) or self._active_path
    self.saved(uri)
    self._opens += 1
    try:
      self._executor.submit(self._encode_opened, text, self._opens)
    except RuntimeError:  # the server is closing
      pass

  def _encode_opened(self, text: str, request: int) -> None:
    """On the model thread, unless a newer document was opened since: the document's parts
    encoded into the tokenizer's memo (code_t5.engine.encoding_memo) while the user has not
    asked yet, so that its first completion encodes little more than the cursor's line. The
    repository's copy of the file does not fill the memo when its pieces were read from disk
    (code_t5.engine.saved_pieces); without this the first completion in a 100 kB file encoded
    all of it."""
    if request != self._opens:
      return
    try:
      encoding_memo.shared(self.completer.tokenizer).encode(text)
    except Exception as e:  # pylint: disable=broad-except  (the first completion encodes it)
      self.log(f"encoding the opened document failed ({type(e).__name__}: {e})", error=True)

  def saved(self, uri: str, text: Optional[str] = None) -> None:
    """A document opened or saved: its text becomes the repository's copy of it (what the other
    files' completions read), and the model thread prepares the repository's indexes for the
    active document (Repository.prepare) while the user has not asked yet: after a save the next
    completion would otherwise build them first."""
    path = self.path_of(uri)
    if text is None and uri in self.documents:
      text = self.documents[uri].text
    elif text is not None:
      text = without_lone_surrogates(text)  # as the document's own text
    repository = self.repository
    if repository is not None and path and text is not None:
      _add_as_the_disk_would(repository, path, text)
      self._generation += 1
      self._prepares += 1
      try:
        self._executor.submit(self._prepare, repository, self._active_path or path, self._prepares)
      except RuntimeError:  # the server is closing: nothing to prepare for
        pass

  def _prepare(self, repository, path: str, request: int) -> None:
    """On the model thread: Repository.prepare, unless a newer save or open asked again (a
    client opening fifty files at once queues one, not fifty); an error is logged (completion
    builds it then)."""
    if request != self._prepares:
      return
    try:
      repository.prepare(path)
    except Exception as e:  # pylint: disable=broad-except  (the server outlives it)
      self.log(f"preparing the index for {path} failed ({type(e).__name__}: {e})", error=True)

  # The workspace. ------------------------------------------------------------------------------

  def path_of(self, uri: str) -> str:
    """A document's path relative to the workspace folder ("" outside it, or not a file)."""
    if self.root is None or not uri.startswith("file://"):
      return ""
    path = pathlib.Path(urllib.parse.unquote(urllib.parse.urlparse(uri).path))
    try:
      return path.resolve().relative_to(self.root).as_posix()
    except (ValueError, OSError, RuntimeError):  # RuntimeError: a symlink loop (Python < 3.13)
      return ""

  def index_workspace(self, uri: Optional[str]) -> Optional[threading.Thread]:
    """Indexes the workspace folder's Python files on a thread (within
    repository.INDEX_SECONDS); completions read them once that is done. Where the server was
    given --repo, that folder, indexed as the server started, is the workspace whatever the
    client names: the editor's saves and closes and the files changed on disk go to its index as
    to a workspace's (they did not: a file saved stayed as --repo's index first read it)."""
    if self.completer.repository is not None:
      self.root, self.repository = self.completer.repo, self.completer.repository
      thread = threading.Thread(target=self._poll_disk, args=(self.repository,),
                                name="code-t5-disk", daemon=True)
      thread.start()
      return thread
    if not uri or not uri.startswith("file://"):
      return None
    folder = pathlib.Path(urllib.parse.unquote(urllib.parse.urlparse(uri).path))
    if not folder.is_dir():
      self.log(f"workspace folder {folder} is not a directory: completing from the file alone")
      return None
    self.root = folder.resolve()

    def build():
      start = time.monotonic()
      try:
        built = repository_lib.Repository.of_folder(self.root, self.completer.tokenizer,
                                                    saved_dir=saved_pieces.default_dir())
      except Exception as e:  # pylint: disable=broad-except  (complete from the file alone)
        self.log(f"indexing {self.root} failed ({type(e).__name__}: {e}): completing from the "
                 "file alone", error=True)
        return
      for open_uri, document in list(self.documents.items()):  # the editor's text wins
        path = self.path_of(open_uri)
        if path:
          _add_as_the_disk_would(built, path, document.text)
      self.repository = built
      self._generation += 1
      cut = (f", its limit: the rest of {self.root} is left out" if built.cut else "")
      self.log(f"indexed {built.files} Python files of {self.root} in "
               f"{time.monotonic() - start:.1f} s{cut}")
      if not self.client_watches_files:
        self._poll_disk(built)

    thread = threading.Thread(target=build, name="code-t5-index", daemon=True)
    thread.start()
    return thread

  def change(self, uri: str, changes, version: Optional[int] = None,
             encoding: str = UTF16) -> None:
    self._edited(uri)
    document = self.documents.get(uri)
    if document is None:
      self.log(f"didChange for {uri}, which is not open: ignored")
      return
    document.apply(changes, encoding)
    document.version = version

  def close_document(self, uri: str) -> None:
    self._edited(uri)
    if self.documents.pop(uri, None) is None:
      self.log(f"didClose for {uri}, which is not open: ignored")
      return
    self._revert(uri)

  def files_changed(self, uris: Sequence[str]) -> None:
    """workspace/didChangeWatchedFiles: each file created, changed or deleted on disk, unless the
    editor has it open (its text wins), is read again as the workspace index reads files, on the
    model thread (a branch switched changes hundreds at once). A file deleted on disk stayed in
    the index until the server restarted (helper-37's audit)."""
    self._paths_changed([path for path in map(self.path_of, uris) if path])

  def _paths_changed(self, paths: List[str]) -> None:
    try:
      self._executor.submit(self._read_again, paths)
    except RuntimeError:  # the server is closing
      pass

  def _read_again(self, paths: List[str]) -> None:
    """On the model thread, `paths` (relative to the workspace) for repository.READ_AGAIN_SECONDS;
    the rest go to the back of the queue, after the requests that came meanwhile (a branch
    switch's 2,001 files read at once held the next completion for 18 s: helper-40's audit). A
    path the editor has open is left as its text (compared as paths: the editor may spell a URI
    otherwise, `+` for `%2B`, or through a link)."""
    if self.repository is None:
      return
    opened = {self.path_of(uri) for uri in list(self.documents)}
    paths = [path for path in paths if path.endswith(".py") and path not in opened
             and not any(map(repository_lib.skipped_folder,
                             pathlib.PurePosixPath(path).parts[:-1]))]
    done = repository_lib.read_again_for_a_while(self.repository, self.root, paths, self._look)
    self._generation += 1
    if paths[done:]:
      self._paths_changed(paths[done:])

  def _revert(self, uri: str) -> None:
    """A closed document's copy in the workspace index becomes the file on disk as the index
    reads it, or none: its unsaved text is gone with the editor's buffer, and a client that
    opened 4,000 files no disk holds kept them all, each open costing more (helper-37's audit)."""
    path = self.path_of(uri)
    if self.repository is None or not path:
      return
    repository_lib.read_again(self.repository, self.root, path)
    self._generation += 1

  def _poll_disk(self, index) -> None:
    """Until the server closes: each *.py file changed, created or deleted on disk since `index`
    read it is read again, as a client's watcher would report it (a file stayed as the index
    first read it until the server restarted: a branch switched left the other files' old code
    in every completion)."""
    self._look = repository_lib.DiskLook(self.root, index)
    self._look.follow(self._closed, self._paths_changed, self.log)

  # Completion. ---------------------------------------------------------------------------------

  def point(self, uri: str, line: int, character: int, encoding: str = UTF16,
            kind: str = "completion") -> Optional[Point]:
    """The request's point, or None (logged) for an unknown document or a position outside it."""
    document = self.documents.get(uri)
    if document is None:
      self.log(f"{kind} in {uri}, which is not open (no didOpen): answered empty")
      return None
    try:
      return point_at(document, line, character, encoding, self.keyword)
    except ValueError as e:
      self.log(f"{kind} at {line}:{character} of {uri}: {e}: answered empty")
      return None

  def ticket(self, uri: str, kind: str):
    """Taken when a request arrives: a newer request of the same kind or an edit of the document
    makes it stale."""
    key = (uri, kind)
    self._requests[key] = self._requests.get(key, 0) + 1
    return key, self._requests[key], self._edits.get(uri, 0)

  def stale(self, ticket) -> bool:
    key, request, edits = ticket
    return self._requests.get(key) != request or self._edits.get(key[0], 0) != edits

  def _complete(self, uri: str, text: str, cursor: int
                ) -> Tuple[List[complete_lib.Candidate], Optional[str]]:
    """On the model thread: (lines, None), or ([], one-line error); never raises."""
    try:
      self.model_calls += 1
      path = self.path_of(uri)
      self._active_path = path or self._active_path
      completion = self.completer.complete_at(text, cursor, repository=self.repository,
                                              path=path)
      return ranked_lines(completion.candidates, self.top), None
    except Exception as e:  # pylint: disable=broad-except  (the server outlives any request)
      message = " ".join(str(e).split())
      return [], f"{type(e).__name__}: {message}"[:500]

  async def lines(self, point: Point, ticket) -> Optional[List[complete_lib.Candidate]]:
    """The ranked lines at `point`; None if the request went stale before the model was free.

    The model lock is held until the model call returns, even when the awaiting request is
    cancelled meanwhile (it is answered at once): the next request is checked for staleness only
    when the model is free to run it.
    """
    if self._model_free is None:
      self._model_free = asyncio.Lock()
    await self._model_free.acquire()
    call = None
    try:
      if self.stale(ticket):
        return None
      key = (ticket[0][0], point.text, point.cursor, self._generation)
      if self._last is not None and self._last[0] == key:
        return list(self._last[1])
      call = asyncio.get_running_loop().run_in_executor(self._executor, self._complete,
                                                        ticket[0][0], point.text, point.cursor)
      call.add_done_callback(lambda _: self._model_free.release())
    finally:
      if call is None:
        self._model_free.release()
    lines, error = await asyncio.shield(call)
    if error:
      self.log(f"the model failed at offset {point.cursor}: {error}: answered empty", error=True)
    else:
      self._last = (key, lines)
    return lines


# ------------------------------------------------------------------------------------------------
# Messages: the base protocol's framing and JSON-RPC's rules (pure Python: no pygls).

# JSON-RPC and LSP error codes.
PARSE_ERROR, INVALID_REQUEST, SERVER_NOT_INITIALIZED = -32700, -32600, -32002
# The most problems an Invalid Params answer lists (one per field; a client that sends a wrong
# shape can get one per item of a long list).
MAX_PARAMS_PROBLEMS = 5
# The largest body read: far above any real message (didOpen of a large generated file is a few
# MiB), and low enough that a wrong or hostile Content-Length (10**12) cannot exhaust memory. A
# longer message is refused without reading it into memory.
MAX_MESSAGE_BYTES = 64 << 20
# A header block (Content-Length, Content-Type) is a few dozen bytes; one that does not end within
# this many is not a header.
_MAX_HEADER_BYTES = 8192
# A Content-Length header line anywhere in the stream, not only at a line's start (a body ends
# without a line break: the next header follows its last byte). A JSON text never holds one, which
# is what makes resynchronising safe: inside a string a raw line break is not allowed, outside one
# `Content-Length` is not JSON. Bounded, so a scan of arriving bytes keeps a short tail only.
_HEADER_LINE = re.compile(rb'(?i)content-length[ \t]{0,16}:[^"\n]{0,64}\n')
_HEADER_LINE_MAX = 14 + 16 + 1 + 64 + 1
_CONTENT_LENGTH = re.compile(rb"(?i)content-length[ \t]*:[ \t]*(\d+)[ \t]*\r?")
_BLANK_LINE = re.compile(rb"\n\r?\n")  # the end of a header block: an empty line
# What may come between messages without being reported: white space and header lines other than
# Content-Length (such as a Content-Type sent first).
_BETWEEN = re.compile(rb"(?:[ \t\r\n]|[!#$%&'*+.^_`|~0-9A-Za-z-]++[ \t]*+:[^\n]*+\n)*+")
_CHUNK = 1 << 20


@dataclasses.dataclass(frozen=True)
class Message:
  """A message's body, parsed: any JSON value (whether it is a valid JSON-RPC message is the
  protocol's business)."""
  value: object


@dataclasses.dataclass(frozen=True)
class Refused:
  """Bytes that are no message the server can read: answered `code` with `id` (None: null)."""
  code: int
  message: str
  id: object = None


def _json_names(problem: str) -> str:
  """A cattrs problem ("... @ $.params.text_document.uri") with the path in the LSP's JSON
  names (textDocument), as the client wrote them."""
  text, at, path = problem.rpartition(" @ ")
  if not at:
    return problem
  return f"{text} at {re.sub(r'_([a-z])', lambda m: m.group(1).upper(), path)}"


def _is_id(value) -> bool:
  return isinstance(value, (int, str)) and not isinstance(value, bool)


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*+"|[\[\]{}]', re.DOTALL)
_COLON = re.compile(r"\s*:\s*")


def readable_id(text: str):
  """The "id" of an object that json cannot load (nested too deeply): the value of a top-level
  "id" member if it is an integer or a string; else None. Scans tokens without recursion."""
  depth = 0
  for match in _JSON_TOKEN.finditer(text):
    token = match.group()
    if token in ("{", "["):
      depth += 1
    elif token in ("}", "]"):
      depth -= 1
    elif depth == 1 and token == '"id"':
      colon = _COLON.match(text, match.end())
      if colon:
        try:
          value, _ = json.JSONDecoder().raw_decode(text, colon.end())
        except (ValueError, RecursionError):
          return None
        return value if _is_id(value) else None
  return None


class MessageReader:
  """LSP messages from a binary stream, read robustly: any bytes give Messages and Refused, never
  an exception, and a message that is framed well is read whatever came before it.

  The rules:
  - A header block is lines ending in \\r\\n or \\n up to an empty line; header names are
    case-insensitive, and headers other than Content-Length are ignored. The block starts at a
    `Content-Length:` header line found anywhere (not only at a line's start). Bytes before it
    that are neither white space nor header lines are Refused once (Parse error), unless they follow
    a refused message: then they are its rest.
  - A Content-Length that is not a decimal number (-5, abc, empty) or is over `max_bytes` refuses
    the message (Parse error) without reading its body; reading resumes at the next
    `Content-Length:` header line.
  - A second `Content-Length:` header line before the block's end starts a new message there: the
    first one is refused.
  - The body is the Content-Length bytes after the empty line. If a `Content-Length:` header line
    starts inside it (a JSON text never holds one), the length was too large: the message is
    refused and the next one starts at that header, as soon as it arrives (a client waiting for an
    answer before it sends more is not left waiting for bytes that will not come). A body that is
    not UTF-8 JSON text is refused (Parse error) and the next message is looked for from the body's
    first byte: a too small Content-Length leaves the rest of the body to be skipped, a too large
    one has its following header found.
  - A body that is JSON nested too deeply to load is Refused as an Invalid Request with its
    top-level "id" when that can be read (see readable_id), so the client is not left waiting.
  So a well-framed message is read whatever bytes came before it (its header line is found: as a
  header inside a body, a second header in a block, or after skipped bytes).

  Reads with os.read when the stream has a file descriptor (a thread blocked reading then holds no
  lock of the stream's, so the process can exit meanwhile); the stream must not have been read.
  """

  def __init__(self, stream, max_bytes: int = MAX_MESSAGE_BYTES):
    try:
      fd = stream.fileno()
      self._read = lambda size: os.read(fd, size)
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both of the last two
      self._read = getattr(stream, "read1", stream.read)
    self.max_bytes = max_bytes
    self._buffer = bytearray()
    self._eof = False
    self._events = self._read_events()

  def next(self):
    """The next Message or Refused; None at the end of the stream."""
    return next(self._events, None)

  def _fill(self) -> bool:
    """Reads more bytes into the buffer; False at the end of the stream."""
    if not self._eof:
      chunk = self._read(_CHUNK)
      if chunk:
        self._buffer += chunk
        return True
      self._eof = True
    return False

  def _skip_to_header(self) -> Tuple[bool, bool]:
    """Drops bytes up to the next Content-Length header line, which then starts the buffer.
    Returns (found, whether anything but white space and other header lines was dropped)."""
    buffer, junk = self._buffer, False
    while True:
      match = _HEADER_LINE.search(buffer)
      # Without a match, keep a tail that may start a header line still arriving.
      cut = match.start() if match else max(0, len(buffer) - _HEADER_LINE_MAX)
      if cut:
        junk = junk or not _BETWEEN.fullmatch(buffer, 0, cut)
        del buffer[:cut]
      if match:
        return True, junk
      if not self._fill():
        junk = junk or not _BETWEEN.fullmatch(buffer)
        buffer.clear()
        return False, junk

  def _read_events(self):
    buffer = self._buffer
    refused = False  # the last event refused a message: bytes up to the next header are its rest
    while True:
      found, junk = self._skip_to_header()
      if junk and not refused:
        refused = True
        yield Refused(PARSE_ERROR, "bytes outside any message (no Content-Length header before "
                      "them): dropped")
      if not found:
        return
      # The header block: up to an empty line, unless a second Content-Length comes first.
      while True:
        end = _BLANK_LINE.search(buffer)
        second = _HEADER_LINE.search(buffer, 1, end.end() if end else len(buffer))
        if second or end or len(buffer) > _MAX_HEADER_BYTES or not self._fill():
          break
      if second:
        del buffer[:second.start()]
        refused = True
        yield Refused(PARSE_ERROR, "a second Content-Length header before the end of the "
                      "headers: the message before it dropped")
        continue
      if end is None:
        if self._eof:
          return
        del buffer[:1]
        refused = True
        yield Refused(PARSE_ERROR, f"headers not ended by an empty line within "
                      f"{_MAX_HEADER_BYTES} bytes: dropped")
        continue
      line = bytes(buffer[:buffer.index(b"\n")])  # the Content-Length line: at most ~100 bytes
      length = _CONTENT_LENGTH.fullmatch(line)
      start = end.end()
      if length is None or int(length.group(1)) > self.max_bytes:
        del buffer[:start]
        refused = True
        if length is None:
          shown = line.split(b":", 1)[1].strip()[:40].decode("ascii", "replace")
          yield Refused(PARSE_ERROR, f"Content-Length {shown!r} is not a number of bytes: the "
                        "message dropped")
        else:
          yield Refused(PARSE_ERROR, f"Content-Length {int(length.group(1)):,} is over the limit "
                        f"of {self.max_bytes:,} bytes: the message dropped unread")
        continue
      # The body; a header line starting inside it means its length was too large.
      stop = start + int(length.group(1))
      scan, inside = start, None
      while True:
        header = _HEADER_LINE.search(buffer, scan)
        if header and header.start() < stop:
          inside = header.start()
          break
        if len(buffer) >= stop:
          break
        scan = max(start, len(buffer) - _HEADER_LINE_MAX)
        if not self._fill():
          return
      if inside is not None:
        del buffer[:inside]
        refused = True
        yield Refused(PARSE_ERROR, f"a Content-Length header {inside - start} bytes into a body "
                      f"of {stop - start}: the length was wrong, the message dropped")
        continue
      body = bytes(buffer[start:stop])
      try:
        text = body.decode("utf-8")
        value = json.loads(text)
      except RecursionError:
        # Deep but possibly valid JSON: framed well if it ends as a JSON-RPC message or batch
        # does (else it is some of the next message's bytes, which are then looked for).
        if body.rstrip()[-1:] in (b"}", b"]"):
          del buffer[:stop]
          refused = True
          yield Refused(INVALID_REQUEST, "the message is nested too deeply to read",
                        readable_id(text))
          continue
        problem = "JSON nested too deeply"
      except UnicodeDecodeError as e:
        problem = f"not UTF-8 (byte 0x{body[e.start]:02x} at offset {e.start})"
      except ValueError as e:
        problem = f"not JSON ({e})"
      else:
        del buffer[:stop]
        refused = False
        yield Message(value)
        continue
      del buffer[:start]  # the next message is looked for from the body's first byte
      refused = True
      yield Refused(PARSE_ERROR, f"the body of {stop - start} bytes is {problem}: dropped")


def request_problem(data) -> Optional[str]:
  """Why a JSON value is not a JSON-RPC 2.0 request or notification; None if it is one."""
  if not isinstance(data, dict):
    return f"a message is a JSON object, not {type(data).__name__}"
  if data.get("jsonrpc") != "2.0":
    return 'no "jsonrpc": "2.0"'
  if not isinstance(data.get("method"), str):
    return '"method" is missing or not a string'
  if "id" in data and not _is_id(data["id"]):
    return '"id" is not an integer or a string'
  if data.get("params") is not None and not isinstance(data["params"], (dict, list)):
    return '"params" is not an object or an array'
  return None



# ------------------------------------------------------------------------------------------------
# The Language Server (pygls).


def _range(change) -> Optional[Tuple[int, int, int, int]]:
  where = getattr(change, "range", None)
  if where is None:
    return None
  return where.start.line, where.start.character, where.end.line, where.end.character


def make_server(completer, top: Optional[int] = None, banner: Optional[str] = None,
                verbose: bool = False):
  """A pygls LanguageServer completing with `completer` (anything with complete_at(text, cursor)
  returning candidates best first); start it with `.start_io(stdin, stdout)` (binary streams).
  `banner` is logged to the client (window/logMessage) once it is initialized. Unless `verbose`,
  what is sent after exit closed the output is dropped without a word (Writer)."""
  # pylint: disable=g-import-not-at-top  (pygls loads only when a server is made)
  import attrs
  import cattrs
  from lsprotocol import types
  from pygls.exceptions import FeatureRequestError
  from pygls.exceptions import JsonRpcException
  from pygls.exceptions import JsonRpcInvalidParams
  from pygls.io_ import StdoutWriter
  from pygls.lsp.server import LanguageServer
  from pygls.protocol import LanguageServerProtocol
  from pygls.protocol.language_server import lsp_method

  def is_notification(method: str) -> bool:
    entry = types.METHOD_TO_TYPES.get(method)
    return entry is not None and attrs.has(entry[0]) and "id" not in attrs.fields_dict(entry[0])

  class Protocol(LanguageServerProtocol):
    """pygls' protocol with our own document store (pygls' workspace splits lines wherever Python's
    str.splitlines does: form feeds, \\x1c-\\x1e, U+2028..., which the LSP does not), and with
    JSON-RPC's rules and the LSP's lifecycle applied to what MessageReader reads (pygls drops
    what it cannot structure without an answer, and serves requests before initialize)."""

    initialized = False  # initialize was answered

    def receive(self, event) -> None:
      """Serves one Message, or answers what cannot be served with a JSON-RPC error: a Refused,
      an invalid request (Invalid Request, with its id when it has a valid one), a request before
      initialize (ServerNotInitialized) or after shutdown (Invalid Request). Notifications before
      initialize or after shutdown are dropped, except exit; responses are never answered."""
      if isinstance(event, Refused):
        self.send_error(event.id, event.code, event.message)
        return
      data = event.value
      if isinstance(data, list):
        ids = [item["id"] for item in data if isinstance(item, dict) and _is_id(item.get("id"))]
        for request_id in ids or [None]:  # each request in it, so no client waits for one
          self.send_error(request_id, INVALID_REQUEST, "a batch (JSON array): LSP has none")
        return
      if isinstance(data, dict) and "method" not in data and ("result" in data or "error" in data):
        if data.get("jsonrpc") == "2.0":  # a response to one of our requests
          self._dispatch(data)
        return
      request_id = data.get("id") if isinstance(data, dict) and _is_id(data.get("id")) else None
      problem = request_problem(data)
      if problem:
        self.send_error(request_id, INVALID_REQUEST, problem)
        return
      method, is_request = data["method"], "id" in data
      if is_request and is_notification(method):
        # pygls would structure it as the notification and never answer.
        self.send_error(request_id, INVALID_REQUEST, f"{method} is a notification: no id")
      elif method == types.EXIT:
        self._dispatch(data)  # pygls exits: code 0 after shutdown, else 1
      elif self._shutdown:
        if is_request:
          self.send_error(request_id, INVALID_REQUEST,
                          "the server is shut down: only exit is accepted")
      elif not self.initialized and method != types.INITIALIZE:
        if is_request:
          self.send_error(request_id, SERVER_NOT_INITIALIZED,
                          "the server is not initialized: initialize comes first")
      elif self.initialized and method == types.INITIALIZE:
        # "may only be sent once" (the LSP): a second one re-read the workspace (helper-17).
        if is_request:
          self.send_error(request_id, INVALID_REQUEST, "initialize was answered already: it "
                          "comes once per server")
      elif method == types.CANCEL_REQUEST and not (
          isinstance(data.get("params"), dict) and _is_id(data["params"].get("id"))):
        # No request has such an id (pygls failed on it: "unhashable type: 'dict'").
        logger.info("dropped a $/cancelRequest whose id is not an integer or a string")
      else:
        self._dispatch(data)

    def _dispatch(self, data) -> None:
      try:
        message = self.structure_message(data)
      except JsonRpcException:
        return  # logged; a request was answered (structure_message)
      self.handle_message(message)

    def send_error(self, request_id, code: int, message: str) -> None:
      """A JSON-RPC error response; `request_id` None is sent as null (pygls would leave it out)."""
      logger.info("answered %s to id %r: %s", code, request_id, message)
      self._send_data({"jsonrpc": "2.0", "id": request_id,
                       "error": {"code": code, "message": message}})

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams):
      result = yield from super().lsp_initialize(params)
      self.initialized = True
      # The project the editor has open: its first workspace folder, else its root.
      folders = params.workspace_folders or []
      self._server.engine.index_workspace(folders[0].uri if folders else params.root_uri)
      return result

    def structure_message(self, data):
      if ("method" in data and "params" not in data
          and self.get_message_type(data["method"]) is None):
        # JSON-RPC lets a message leave "params" out; pygls' types for a method it does not know
        # require it (an unknown request was answered Internal Error, not Method not found).
        data = {**data, "params": None}
      message_type = self.get_message_type(data.get("method"))
      try:
        if message_type is not None:
          return self._structure_params(data, message_type)
        return super().structure_message(data)
      except JsonRpcException as error:
        if "id" in data and "method" in data:
          # pygls drops a request whose params do not parse: answer it, or the client waits.
          self._send_response(data["id"], error=error.to_response_error())
        raise

    def _structure_params(self, data, message_type):
      """A request or notification of a method pygls knows, structured; params that do not fit
      its type are a JsonRpcInvalidParams that says where and why, in the LSP's field names
      (pygls answered "Invalid Params" alone and logged "Unable to deserialize message" as an
      ERROR on stderr, which clients show in their logs as the server's fault)."""
      try:
        return self._converter.structure(data, message_type)
      except cattrs.ClassValidationError as error:
        problems = [_json_names(problem) for problem in cattrs.transform_error(error)]
        detail = "; ".join(problems[:MAX_PARAMS_PROBLEMS])
        if len(problems) > MAX_PARAMS_PROBLEMS:
          detail += f"; {len(problems) - MAX_PARAMS_PROBLEMS} more"
        logger.info("invalid params of %s: %s", data.get("method"), detail)
        raise JsonRpcInvalidParams(f"Invalid Params: {detail}") from None

    def _encoding(self) -> str:
      encoding = self._workspace.position_encoding if self._workspace else UTF16
      return str(getattr(encoding, "value", encoding) or UTF16)

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams):
      document = params.text_document
      self._server.engine.open(document.uri, document.text, document.version)
      yield from ()

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
      self._server.engine.change(
          params.text_document.uri, [(_range(c), c.text) for c in params.content_changes],
          params.text_document.version, self._encoding())
      yield from ()

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams):
      self._server.engine.close_document(params.text_document.uri)
      yield from ()

  class Writer(StdoutWriter):
    """pygls' writer of the output. Exit closes it at once, and a request still pending then
    (a client need not wait for its reply) is answered as its task is cancelled: that reply has
    nowhere to go, yet pygls logged each such write as an ERROR on stderr ("Error sending data
    (ValueError: write to closed file)"), then once more for its report of it to the client.
    Those writes are dropped, unless --verbose."""

    def __init__(self, output):
      super().__init__(output)
      self._output = output

    def write(self, data: bytes) -> None:
      if self._output.closed and not verbose:
        return
      try:
        super().write(data)
      except BrokenPipeError:
        # pygls catches a failed write and logs it, and the server went on reading requests it
        # could never answer (helper-37's audit): nothing more can reach the client.
        _stop_now("the client closed the server's output: stopping")

  class Server(LanguageServer):
    """Logs go to the client as window/logMessage (one line each), never as pop-ups. Messages are
    read by MessageReader, not by pygls' reader loop (which loses the framing for good after one
    wrong Content-Length, dies on a huge one, and makes exit's code 0 whatever it is)."""

    _reporting = False
    watch_files = False  # the client registers file watchers for the server (initialize)

    def log(self, message: str, error: bool = False) -> None:
      logger.info("%s", message)
      try:
        self.window_log_message(types.LogMessageParams(
            type=types.MessageType.Error if error else types.MessageType.Info,
            message=f"{NAME}: {message}"))
      except Exception:  # pylint: disable=broad-except  (no transport yet, or it is gone)
        pass

    def report_server_error(self, error, source):
      if source == FeatureRequestError or self._reporting:  # the response says it; or a failed
        return  # write of this very report (after exit the output is closed) would come back here
      self._reporting = True
      try:
        self.log(f"error: {' '.join(str(error).split())[:500]}", error=True)
      finally:
        self._reporting = False

    def start_io(self, stdin=None, stdout=None) -> int:
      """Serves stdin/stdout (binary streams) until exit or the end of stdin; returns the exit
      code: after exit 0 if shutdown came first, else 1 (as the LSP says); 0 at the end of
      stdin."""
      self._stop_event = threading.Event()
      self.protocol.set_writer(Writer(stdout or sys.stdout.buffer))
      try:
        return asyncio.run(self._serve(MessageReader(stdin or sys.stdin.buffer)))
      except BrokenPipeError:
        logger.error("the client closed the server's output: stopping")
        return 1
      finally:
        self.shutdown()

    async def _serve(self, reader: MessageReader) -> int:
      loop = asyncio.get_running_loop()
      events = asyncio.Queue(maxsize=1)  # the reader is at most a message ahead
      # A daemon thread: one blocked reading stdin must not keep the process from exiting.
      threading.Thread(target=_feed, args=(reader, loop, events), name="code-t5-lsp-reader",
                       daemon=True).start()
      while (event := await events.get()) is not None:
        try:
          self.protocol.receive(event)
        except SystemExit as e:  # pygls' exit handler
          return e.code if isinstance(e.code, int) else 1
        except BrokenPipeError:
          raise
        except Exception as e:  # pylint: disable=broad-except  (the server outlives any message)
          logger.exception("unable to handle a message")
          self.report_server_error(e, JsonRpcException)
      return 0

  server = Server(NAME, "1", protocol_cls=Protocol,
                  text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
  engine = server.engine = Engine(completer, top, server.log)

  def encoding() -> str:
    return server.protocol._encoding()  # pylint: disable=protected-access

  def replaced_units(point: Point, line: complete_lib.Candidate) -> int:
    """The code units, in the negotiated encoding, of the text after the cursor `line` replaces."""
    return code_units(point.text[point.cursor:point.cursor + line.replaces], encoding())

  async def point_and_lines(params, kind: str):
    uri = params.text_document.uri
    ticket = engine.ticket(uri, kind)
    point = engine.point(uri, params.position.line, params.position.character, encoding(), kind)
    if point is None:
      return None, []
    return point, await engine.lines(point, ticket) or []

  @server.feature(types.TEXT_DOCUMENT_COMPLETION,
                  types.CompletionOptions(trigger_characters=TRIGGER_CHARACTERS))
  async def completion(params: types.CompletionParams) -> types.CompletionList:
    items = []
    try:
      point, lines = await point_and_lines(params, "completion")
      if point is not None:
        start = types.Position(point.line, point.character - point.word_units)
        lines = [line for line in lines if engine.ranges_past_cursor or not line.replaces]
        for rank, line in enumerate(lines):
          end = types.Position(point.line, point.character + replaced_units(point, line))
          completed = point.word + line.text
          items.append(types.CompletionItem(
              label=completed, kind=types.CompletionItemKind.Text, detail=f"{NAME} #{rank + 1}",
              sort_text=f"{rank:04d}", filter_text=completed,
              insert_text_format=types.InsertTextFormat.PlainText,
              text_edit=types.TextEdit(range=types.Range(start, end), new_text=completed)))
    except Exception as e:  # pylint: disable=broad-except  (answer empty, keep serving)
      server.log(f"completion failed: {type(e).__name__}: {e}", error=True)
      items = []
    return types.CompletionList(is_incomplete=True, items=items)

  async def inline_completion(params: types.InlineCompletionParams
                              ) -> types.InlineCompletionList:
    try:
      point, lines = await point_and_lines(params, "inlineCompletion")
    except Exception as e:  # pylint: disable=broad-except  (answer empty, keep serving)
      server.log(f"inlineCompletion failed: {type(e).__name__}: {e}", error=True)
      point, lines = None, []
    items = []
    for line in lines:
      where = None
      if line.replaces:  # the closers it replaces, after the cursor
        where = types.Range(types.Position(point.line, point.character),
                            types.Position(point.line, point.character
                                           + replaced_units(point, line)))
      items.append(types.InlineCompletionItem(insert_text=line.text, range=where))
    return types.InlineCompletionList(items=items)

  @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=True))
  def did_save(params: types.DidSaveTextDocumentParams) -> None:
    engine.saved(params.text_document.uri, params.text)

  @server.feature(types.INITIALIZE)
  def initialize(params: types.InitializeParams) -> None:
    # Capabilities are computed from the registered features after this handler: advertise
    # inline completion only to clients that say they support it.
    engine.ranges_past_cursor = applies_ranges_past_cursor(params)
    engine.keyword = keyword_of(params)
    _exit_when_gone(params.process_id)
    workspace = params.capabilities.workspace
    watched = workspace is not None and workspace.did_change_watched_files
    server.watch_files = bool(watched and watched.dynamic_registration)
    engine.client_watches_files = server.watch_files
    document = params.capabilities.text_document
    wanted = document is not None and document.inline_completion is not None
    if wanted and types.TEXT_DOCUMENT_INLINE_COMPLETION not in server.protocol.fm.features:
      server.feature(types.TEXT_DOCUMENT_INLINE_COMPLETION,
                     types.InlineCompletionOptions())(inline_completion)

  @server.feature(types.INITIALIZED)
  def initialized(params) -> None:
    del params
    if banner:
      server.log(banner)
    if server.watch_files:  # the client watches the workspace's *.py for us
      server.client_register_capability(types.RegistrationParams(registrations=[
          types.Registration(id=f"{NAME}-watched-files",
                             method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                             register_options=types.DidChangeWatchedFilesRegistrationOptions(
                                 watchers=[types.FileSystemWatcher(glob_pattern="**/*.py")]))]))

  @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
  def watched_files_changed(params: types.DidChangeWatchedFilesParams) -> None:
    engine.files_changed([change.uri for change in params.changes])

  @server.feature(types.SHUTDOWN)
  def shutdown(params) -> None:
    del params
    engine.close()

  return server


def _exit_when_gone(pid: Optional[int]) -> None:
  """Watches the client's process (initialize's processId) on a daemon thread and exits when it is
  gone, as the LSP asks: a client that died without closing the server's stdin (a crash of an
  editor whose pipes another process holds) left it running. A pid not seen alive now (another
  pid namespace: a container's client) is not watched."""
  if not isinstance(pid, int) or pid <= 1 or pid == os.getpid() or not processes.pid_alive(pid):
    return

  def watch():
    while processes.pid_alive(pid):
      time.sleep(PARENT_POLL_SECONDS)
    _stop_now(f"the client's process {pid} is gone: stopping")

  threading.Thread(target=watch, name="code-t5-client-watch", daemon=True).start()


def _stop_now(why: str) -> None:
  """Ends the process with status 1 from any thread, `why` logged (on stderr): the client is gone,
  so nothing the server still holds (a request on the model's thread) can reach it."""
  logger.error("%s", why)
  logging.shutdown()
  os._exit(1)  # pylint: disable=protected-access


def _feed(reader: MessageReader, loop, events) -> None:
  """On the reader thread: puts the reader's events on the loop's queue, then None at the end."""
  while True:
    try:
      event = reader.next()
    except Exception:  # pylint: disable=broad-except  (reading stdin failed: as its end)
      logger.exception("reading the client's messages failed")
      event = None
    try:
      asyncio.run_coroutine_threadsafe(events.put(event), loop).result()
    except (RuntimeError, futures.CancelledError):  # the loop has stopped (exit)
      return
    if event is None:
      return


def _private_stdout():
  """A binary stream on the process's stdout for the server alone; fd 1 (what TensorFlow, native
  libraries and child processes write) and sys.stdout now go to stderr."""
  sys.stdout.flush()
  protocol_fd = os.dup(1)
  os.dup2(2, 1)
  sys.stdout = sys.stderr
  return os.fdopen(protocol_fd, "wb")


class _OneLine(logging.Formatter):
  """A log record in one line: its message's first line, and an exception as its type and first
  line, not a traceback (pygls wrote ~50 lines of traceback into the message for each message it
  could not read; clients show a server's stderr line by line in their logs). `code-t5 --verbose
  lsp` keeps them."""

  def format(self, record: logging.LogRecord) -> str:
    message = record.getMessage()
    if not record.exc_info and "\n" not in message:
      return super().format(record)
    short = logging.makeLogRecord({**record.__dict__, "msg": message.split("\n", 1)[0],
                                   "args": None, "exc_info": None, "exc_text": None})
    if not record.exc_info:
      return super().format(short)
    error = record.exc_info[1]
    reason = (str(error).strip().splitlines() or [""])[0]
    return f"{super().format(short)} ({type(error).__name__}: {reason})"


def _not_answered_errors(record: logging.LogRecord) -> bool:
  """Whether a pygls log record is kept on stderr: not the ERROR it logs for each error a
  handler answered on purpose (an unknown workspace/executeCommand: "Invalid Params: Command
  name ... is not defined"), which the response tells the client; an error the server did not
  mean (Internal Error) stays."""
  # pylint: disable=g-import-not-at-top  (pygls is imported once a server is made)
  from pygls.exceptions import JsonRpcException
  from pygls.exceptions import JsonRpcInternalError
  error = record.exc_info[1] if record.exc_info else None
  return not (isinstance(error, JsonRpcException) and not isinstance(error, JsonRpcInternalError))


def _lsp(args) -> int:
  if sys.stdin is None or sys.stdout is None:  # (Python's streams of a closed fd 0 or 1)
    raise complete_lib.CompletionError("stdin or stdout is closed: an editor starts `code-t5 lsp` "
                                       "with a pipe on each")
  stdout = _private_stdout()
  handler = logging.StreamHandler(sys.stderr)
  form = f"{NAME} lsp: %(levelname)s %(name)s: %(message)s"
  handler.setFormatter(logging.Formatter(form) if args.verbose else _OneLine(form))
  logging.basicConfig(level=logging.WARNING, handlers=[handler])
  # pygls warns on routine traffic (a cancel for a request already answered, a notification it
  # has no handler for), and clients log a server's stderr as errors.
  logging.getLogger("pygls").setLevel(logging.ERROR)
  logging.getLogger("pygls.protocol.json_rpc").addFilter(_not_answered_errors)
  completer = complete_lib.Completer(args.checkpoint, complete_lib.options_from(args),
                                     repo=args.repo)
  # Not on stderr: clients log a server's stderr as errors (Neovim does).
  banner = f"{completer.description} loaded; up to {args.top} lines"
  server = make_server(completer, args.top, banner, args.verbose)
  try:
    code = server.start_io(sys.stdin.buffer, stdout)
  finally:
    server.engine.close()
  # The interpreter's exit joins the model's thread: a completion or the workspace's indexing still
  # running when the client went away (it was killed) kept the server alive for as long (helper-
  # 17's audit). Nothing that thread would write is wanted now.
  logging.shutdown()
  for stream in (stdout, sys.stderr):
    try:
      stream.flush()
    except (OSError, ValueError):  # the client closed it
      pass
  os._exit(code)


def register_cli(subparsers) -> None:
  lsp = subparsers.add_parser(
      "lsp", help="a Language Server on stdin/stdout for editors: completion items (and LSP 3.18 "
      "inline completions) of the --top ranked lines at the cursor")
  complete_lib.add_engine_flags(lsp)
  lsp.set_defaults(func=_lsp)
