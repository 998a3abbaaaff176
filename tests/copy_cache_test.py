"""The copy cache: what followed the same pieces before, mixed into the model's probabilities
(code_t5/engine/copy_cache.py)."""

import collections

import numpy as np

from code_t5.engine import copy_cache


def test_the_longest_earlier_match_decides_what_comes_next():
  # 1 2 3 is followed by 4 twice and by 5 once, but 9 1 2 3 only by 5.
  cache = copy_cache.PieceCache([[1, 2, 3, 4, 1, 2, 3, 4], [9, 1, 2, 3, 5]])
  short = cache.lookup([7, 2, 3])
  assert short.match == 2 and dict(zip(short.ids, short.probs)) == {4: 2 / 3, 5: 1 / 3}
  long = cache.lookup([9, 1, 2, 3])
  assert long.match == 4 and list(long.ids) == [5] and long.count == 1


def test_documents_do_not_run_into_each_other_and_unseen_contexts_give_nothing():
  cache = copy_cache.PieceCache([[1, 2], [3, 4]])
  assert cache.lookup([1, 2]) is None  # 2 ends its document: nothing followed it
  assert cache.lookup([2, 3]) is None  # never adjacent
  assert cache.lookup([5, 6]) is None and cache.lookup([1]) is None
  assert copy_cache.PieceCache([]).lookup([1, 2]) is None


def test_the_mixture_is_a_distribution_that_leans_on_longer_matches():
  model = np.log(np.full(10, 0.1, np.float32))
  cache = copy_cache.PieceCache([[1, 2, 3, 4, 5, 6, 7]])
  short, long = cache.lookup([0, 6]), cache.lookup([1, 2, 3, 4, 5, 6])
  assert short is None or short.match < long.match
  mixed = copy_cache.mix(model, long)
  assert np.isclose(np.exp(mixed).sum(), 1.0, atol=1e-5)
  assert mixed.argmax() == 7
  two = copy_cache.mix(model, cache.lookup([9, 2, 3]))
  assert np.exp(mixed[7]) > np.exp(two[4]) > 0.1  # both lean, the longer match more
  assert copy_cache.mix(model, None) is model


def test_the_file_wins_equal_matches_and_the_repository_longer_ones():
  index = _index({"a.py": [1, 2, 3, 8], "b.py": [5, 1, 2, 3, 9]})
  pieces = index.pieces_for("b.py")  # b.py is the cursor's file: left out
  assert pieces.files == 1
  cache = copy_cache.FileCache(pieces, copy_cache.PieceCache([[1, 2, 3, 7, 5, 1, 2, 3, 9]]))
  assert list(cache.lookup([0, 2, 3]).ids) == [7, 9]  # the file's (match 2 both ways)
  cache = copy_cache.FileCache(pieces, copy_cache.PieceCache([[4, 2, 3, 7]]))
  assert list(cache.lookup([1, 2, 3]).ids) == [8]  # the repository's three pieces win


def test_a_model_sure_of_its_next_piece_is_not_overruled_by_a_copy():
  # A twelve-piece match says 7 comes next; a model that learnt the file says 3 with p = 0.99.
  cache = copy_cache.PieceCache([[1, 2, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 7]])
  lookup = cache.lookup([1, 2, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14])
  assert lookup.match == 12 and list(lookup.ids) == [7]
  sure = np.log(np.full(10, 0.01 / 9, np.float32))
  sure[3] = np.log(0.99)
  assert copy_cache.mix(sure, lookup).argmax() == 3
  unsure = np.log(np.full(10, 0.1, np.float32))
  assert copy_cache.mix(unsure, lookup).argmax() == 7


def _lookup_by_hand(documents, history):
  """PieceCache.lookup's answer, place by place in plain Python (the reference)."""
  ids = [i for document in documents if len(document) for i in [*document, -1]]
  matches = {}
  for place in range(1, len(ids) - 1):
    if ids[place - 1:place + 2].count(-1) or ids[place - 1:place + 1] != list(history[-2:]):
      continue
    match = 2
    while (match < min(copy_cache.MAX_MATCH, len(history)) and place - match >= 0
           and ids[place - match] == history[-1 - match]):
      match += 1
    matches[place] = match
  places = sorted(matches)[-copy_cache.MAX_POSITIONS:]
  if not places:
    return None
  longest = max(matches[p] for p in places)
  following = collections.Counter(ids[p + 1] for p in places if matches[p] == longest)
  return longest, dict(following)


def test_lookups_are_the_longest_matches_place_by_place():
  # Few piece kinds, so that matches of every length occur, up to MAX_MATCH.
  rng = np.random.default_rng(0)
  for trial in range(300):
    documents = [list(rng.integers(0, 3, rng.integers(0, 60))) for _ in range(rng.integers(1, 4))]
    cache = copy_cache.PieceCache(documents)
    history = list(rng.integers(0, 3, rng.integers(2, 25)))
    found, want = cache.lookup(history), _lookup_by_hand(documents, history)
    if want is None:
      assert found is None, trial
      continue
    longest, following = want
    assert found.match == longest and found.count == sum(following.values()), trial
    assert dict(zip(found.ids.tolist(), (found.probs * found.count).round().astype(int).tolist())
                ) == following, trial


def _index(files):
  index = copy_cache.RepositoryIndex(tokenizer=None)
  for path, ids in files.items():
    index.add_pieces(path, np.asarray(ids, np.int64))
  return index


def _same_lookups(pieces, documents, rng, where):
  """Look-ups through `pieces` (RepositoryPieces) answer as a PieceCache of `documents` would."""
  alone = copy_cache.PieceCache(documents)
  for trial in range(40):
    history = list(rng.integers(0, 3, rng.integers(2, 20)))
    found = copy_cache.FileCache(pieces, copy_cache.PieceCache([])).lookup(history)
    want = alone.lookup(history)
    assert (found is None) == (want is None), (where, trial)
    if want is not None:
      assert (found.match, found.count, found.ids.tolist(), found.probs.tolist()) == (
          want.match, want.count, want.ids.tolist(), want.probs.tolist()), (where, trial)


def test_a_repository_is_indexed_once_and_each_file_left_out_at_look_up():
  # Every file's completions see the others exactly as an index built without it would, and
  # moving between the files (or to one the repository does not hold) builds nothing more.
  rng = np.random.default_rng(1)
  files = {f"pkg/m{k}.py": list(rng.integers(0, 3, rng.integers(0, 80))) for k in range(6)}
  index = _index(files)
  for path in [*files, "pkg/new.py", "a.py", "z/last.py"]:
    pieces = index.pieces_for(path)
    assert pieces.files == len(files) - (path in files)
    _same_lookups(pieces, [ids for p, ids in sorted(files.items()) if p != path], rng, path)
  assert index.builds == 1


def test_saves_index_only_the_changed_files_and_look_ups_see_the_files_as_they_are_now():
  # Files changed, added and removed after the index was built (an editor's saves): each save
  # indexes the changed files alone, and every look-up answers as a fresh index of the files as
  # they are would, until the changed files outgrow FRESH_SHARE and all is indexed again.
  rng = np.random.default_rng(2)
  files = {f"pkg/m{k}.py": list(rng.integers(0, 3, rng.integers(40, 80))) for k in range(12)}
  index = _index(files)
  index.pieces_for("pkg/m0.py")
  for step, (path, change) in enumerate([("pkg/m3.py", "edit"), ("pkg/m7.py", "remove"),
                                         ("pkg/a_new.py", "edit"), ("pkg/m3.py", "edit")]):
    if change == "remove":
      del files[path]
      index.remove(path)
    else:
      files[path] = list(rng.integers(0, 3, rng.integers(5, 12)))
      index.add_pieces(path, np.asarray(files[path], np.int64))
    for cursor in ["pkg/m3.py", "pkg/m7.py", "pkg/m5.py", "pkg/a_new.py", "pkg/zz.py"]:
      _same_lookups(index.pieces_for(cursor),
                    [ids for p, ids in sorted(files.items()) if p != cursor], rng, (step, cursor))
  assert index.builds == 1 + 4  # the whole once, then the changed files after each change
  files["pkg/m1.py"] = list(rng.integers(0, 3, 200))  # more than FRESH_SHARE of the pieces
  index.add_pieces("pkg/m1.py", np.asarray(files["pkg/m1.py"], np.int64))
  pieces = index.pieces_for("pkg/m2.py")
  assert pieces.fresh is None and index.builds == 6  # all indexed again
  _same_lookups(pieces, [ids for p, ids in sorted(files.items()) if p != "pkg/m2.py"], rng, "all")


def test_a_context_too_common_to_keep_every_place_is_completed_from_the_cursors_folder(
    monkeypatch):
  # `1 2` occurs in every file, followed by 3 in a/, 4 in b/ and 5 in c/. With room for four
  # places, the nearest four are kept: the folder's own files on both sides of the cursor's.
  monkeypatch.setattr(copy_cache, "MAX_POSITIONS", 4)
  files = {f"{folder}/f{k}.py": [1, 2, following]
           for folder, following in (("a", 3), ("b", 4), ("c", 5)) for k in range(6)}
  index = _index(files)

  def completed_in(path):
    pieces = index.pieces_for(path)
    found = copy_cache.FileCache(pieces, copy_cache.PieceCache([])).lookup([0, 1, 2])
    return dict(zip(found.ids.tolist(), (found.probs * found.count).round().astype(int).tolist()))

  assert completed_in("b/f2.py") == {4: 4}
  assert completed_in("a/f0.py") == {3: 4}  # nothing before it: four after
  assert completed_in("c/f5.py") == {5: 4}  # nothing after it: four before
  assert completed_in("b/f3.py") == {4: 4}
  assert completed_in("b/f9.py") == {4: 2, 5: 2}  # a new file at b/'s end: its neighbours
  assert index.builds == 1


def test_a_repository_larger_than_the_cache_keeps_the_files_nearest_the_cursors():
  files = {"a/x.py": [1, 2, 3] * 4, "b/y.py": [1, 2, 4] * 4, "b/z.py": [7, 8]}
  index = _index(files)
  index.max_pieces = 13
  pieces = index.pieces_for("b/z.py")
  assert pieces.truncated and pieces.files == 1
  found = copy_cache.FileCache(pieces, copy_cache.PieceCache([])).lookup([1, 2])
  assert found.ids.tolist() == [4]  # b/y.py, beside the cursor's file, not a/x.py


def test_a_repository_larger_than_the_cache_is_indexed_once_per_folder():
  # Moving between the files of one folder builds nothing; each file's own pieces are left out.
  files = {"a/x.py": [1, 2, 3] * 4, "b/y.py": [1, 2, 4] * 4, "b/z.py": [1, 2, 5] * 2}
  index = _index(files)
  index.max_pieces = 20  # b's 18 pieces fit, a/x.py's 12 more do not
  lookup = lambda path: copy_cache.FileCache(index.pieces_for(path),
                                             copy_cache.PieceCache([])).lookup([1, 2])
  assert lookup("b/z.py").ids.tolist() == [4] and lookup("b/y.py").ids.tolist() == [5]
  assert index.builds == 1
  pieces = index.pieces_for("b/new.py")  # a file the index does not hold, in the same folder
  assert (pieces.files, pieces.pieces, pieces.truncated) == (2, 18, True) and index.builds == 1
  # Another folder: its own file first, then what fits of the others (b/z.py, not b/y.py).
  assert lookup("a/x.py").ids.tolist() == [5] and index.builds == 2
  index.add_pieces("a/x.py", np.array([1, 2, 6] * 4))  # a change builds again
  assert lookup("a/w.py").ids.tolist() == [5, 6] and index.builds == 3
