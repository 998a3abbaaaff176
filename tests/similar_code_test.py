"""The code most like the lines above the cursor (code_t5/engine/similar_code.py)."""

import pathlib

from code_t5.engine import similar_code

HANDLERS = '''def handle(request, kind):
    payload = decode_payload(request.body, kind)
    checked = validate(payload, strict=True)
    return respond(checked)
'''
UNRELATED = "import os\n\n\ndef main():\n    print(os.getcwd())\n"


def _index(**files):
  index = similar_code.WindowIndex()
  for path, text in files.items():
    index.add(path, text)
  return index


def test_the_most_similar_window_of_another_file_comes_with_the_lines_after_it():
  fields = "".join(f"    field_{k} = record.get('field_{k}')\n"
                   for k in range(similar_code.QUERY_LINES))
  other = "def parse(record):\n" + fields + "    return build(field_0, field_1)\n"
  index = _index(**{"api/records.py": other, "api/main.py": UNRELATED})
  prefix = "def parse_again(record):\n" + fields
  snippet = similar_code.find(prefix, index=index, path="api/new.py")
  assert snippet.endswith(fields[fields.index("\n") + 1:] + "    return build(field_0, field_1)\n")
  # Its own saved copy is not read (the editor's text is), nor is a dissimilar file.
  assert similar_code.find(prefix, index=index, path="api/records.py") == ""


def test_a_short_file_is_one_window():
  prefix = ("def handle(request, kind):\n    payload = decode_payload(request.body, kind)\n"
            "    checked = ")
  index = _index(**{"api/handlers.py": HANDLERS, "api/main.py": UNRELATED})
  assert similar_code.find(prefix, index=index, path="api/new.py") == HANDLERS
  # Its own saved copy is not read (the editor's text is), nor is a dissimilar file.
  assert similar_code.find(prefix, index=index, path="api/handlers.py") == ""


def test_the_file_s_lines_below_the_cursor_are_searched_too():
  prefix = "def handle(request, kind):\n    payload = decode_payload(request.body, kind)\n"
  snippet = similar_code.find(prefix, below="\n\n" + HANDLERS)
  assert "    checked = validate(payload, strict=True)\n" in snippet


def test_nothing_similar_enough_gives_nothing():
  prefix = "def handle_beta(request):\n    payload = "
  assert similar_code.MIN_SIMILARITY > 0
  assert similar_code.find(prefix, below=UNRELATED, index=_index(**{"main.py": UNRELATED})) == ""
  assert similar_code.find("", below=HANDLERS) == ""
  assert similar_code.find("    ", index=_index()) == ""


def test_a_removed_or_changed_file_is_no_longer_found():
  prefix = "def handle(request, kind):\n    payload = decode_payload(request.body, kind)\n"
  index = _index(**{"a.py": HANDLERS})
  assert similar_code.find(prefix, index=index)
  index.remove("a.py")
  assert len(index) == 0 and similar_code.find(prefix, index=index) == ""
  index.add("a.py", HANDLERS)
  index.add("a.py", UNRELATED)
  assert similar_code.find(prefix, index=index) == ""


def test_windows_are_compared_by_their_identifiers():
  query = similar_code.query_words("x = 1\n" * 20 + "def f(a, b):\n    return a")
  assert query == {"x", "def", "f", "a", "b", "return"}


def _fresh_below(query, below):
  """What the lines below gave before they were kept between requests: one file's windows, made
  afresh from its first MAX_BELOW_LINES lines."""
  index = similar_code.WindowIndex()
  index.add("<below>", "\n".join(below.split("\n")[:similar_code.MAX_BELOW_LINES]))
  return index.best(query)


def test_the_lines_below_kept_while_moving_find_what_a_fresh_index_finds(monkeypatch):
  # An editor moving down a file (and back up, jumping, editing the line below, near the end,
  # past the cap): every look-up equals a fresh one-file index's, window and snippet.
  monkeypatch.setattr(similar_code, "MAX_BELOW_LINES", 120)
  monkeypatch.setattr(similar_code, "BELOW_MARGIN", 30)
  monkeypatch.setattr(similar_code, "_BELOW_SOURCE", similar_code._BelowSource())
  root = pathlib.Path(__file__).resolve().parents[1] / "dataset-dev"
  text = max((p.read_text() for p in sorted(root.rglob("*.py"))[:40] if p.is_file()), key=len)
  lines = text.split("\n")
  assert len(lines) > 400
  cursors = (list(range(20, 200)) + list(range(150, 120, -1)) + [300, 301, 303, 250]
             + list(range(len(lines) - 14, len(lines))))
  made = 0
  for step, cursor in enumerate(cursors):
    prefix = "\n".join(lines[:cursor + 1])
    below = "\n".join(lines[cursor + 1:])
    query = similar_code.query_words(prefix)
    kept = similar_code._BELOW_SOURCE._kept[:]
    assert similar_code._BELOW_SOURCE.best(query, below) == _fresh_below(query, below), cursor
    made += similar_code._BELOW_SOURCE._kept[:1] != kept[:1]
    if step % 25 == 0:
      edited = below[3:]  # the line below shortened: not the lines below any line kept
      assert similar_code._BELOW_SOURCE.best(query, edited) == _fresh_below(query, edited), cursor
  # Made again at a jump, an edit, moving up and past the margin, not at each line.
  assert made < len(cursors) / 4


def test_saves_merge_only_the_changed_files_and_find_what_a_fresh_index_finds():
  # Files changed, added and removed after the windows were merged (an editor's saves): each
  # look-up finds the window and snippet a fresh index of the files as they are would, without
  # merging all the windows again: not the old text of a changed file, and of two files with the
  # same window the first in path order, whichever was saved.
  window = "".join(f"    shared_{k} = combine(shared_{k + 1})\n" for k in range(10))
  old = "".join(f"    alpha_{k} = forge(alpha_{k + 1})\n" for k in range(10))
  filler = {f"pkg/z{k:02d}.py": "".join(f"    fill_{k}_{j} = other_{j}()\n" for j in range(30))
            for k in range(30)}
  files = {"pkg/a.py": old, "pkg/m.py": window + "    follows = 'm'\n", **filler}
  index = _index(**files)
  index.prepare()
  merged = index._merged  # pylint: disable=protected-access
  alpha = similar_code.query_words(old)
  shared = similar_code.query_words(window)
  assert index.best(alpha, "pkg/new.py")[1].startswith(old)
  for path, text in [("pkg/a.py", "    beta = forge(gamma)\n" * 12),  # alpha's windows gone
                     ("pkg/b.py", window + "    follows = 'b'\n"),  # ties with pkg/m.py, before it
                     ("pkg/z03.py", None),
                     ("pkg/n.py", window + "    follows = 'n'\n")]:  # ties, after it
    if text is None:
      del files[path]
      index.remove(path)
    else:
      files[path] = text
      index.add(path, text)
    fresh = _index(**files)
    for query in (alpha, shared):
      for cursor in ("pkg/new.py", "pkg/b.py", "pkg/m.py", "pkg/z03.py"):
        assert index.best(query, cursor) == fresh.best(query, cursor), (path, cursor)
  assert "alpha_" not in index.best(alpha, "pkg/new.py")[1]  # only "forge" is left of it
  assert index.best(shared, "pkg/new.py")[1].endswith("follows = 'b'\n")
  assert index.best(shared, "pkg/b.py")[1].endswith("follows = 'm'\n")
  assert index._merged is merged  # pylint: disable=protected-access
