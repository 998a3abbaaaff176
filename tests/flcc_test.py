"""The FLCC reader: layout, path mapping, bad input, filters, splits, dedup and fingerprints."""

import builtins
import collections
import contextlib
import io
import json
import logging
import os
import pathlib
import shutil
import signal

import pytest

from code_t5 import test_utils
from code_t5.data import flcc
from code_t5.data import line_completion

DEV_ROOT = pathlib.Path(__file__).resolve().parent.parent / "dataset-dev"
ALL_TRAIN = flcc.Splits(validation=0, test=0)
CODE = "def f(x):\n    return x + 1\n"


def _read(root, **kwargs):
  stats = flcc.Stats()
  files = list(flcc.read_files(root, stats=stats, **kwargs))
  return files, stats


def _one_repo(tmp_path, files):
  return test_utils.make_flcc_tree(tmp_path / "flcc", {"owner/repo": files})


@contextlib.contextmanager
def _deadline(seconds=10):
  """Fails instead of hanging if the reader blocks (e.g. by opening a FIFO)."""
  def fail(*_):
    raise TimeoutError("the reader blocked")
  previous = signal.signal(signal.SIGALRM, fail)
  signal.alarm(seconds)
  try:
    yield
  finally:
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


# --------------------------------------------------------------------------------------------------
# Layout.


def test_reads_the_real_layout_with_paths_from_paths_json(tmp_path):
  root = test_utils.make_flcc_tree(tmp_path / "flcc", {
      "bob/lib": {"lib/core.py": "import os\n"},
      "alice/tools": {"pkg/util.py": CODE, "main.py": "print('hi')\n"},
  })
  files, stats = _read(root, splits=ALL_TRAIN)
  assert [(f.repo, f.path, f.text, f.split) for f in files] == [
      ("alice/tools", "main.py", "print('hi')\n", "train"),
      ("alice/tools", "pkg/util.py", CODE, "train"),
      ("bob/lib", "lib/core.py", "import os\n", "train"),
  ]
  for f in files:
    assert f.dataset_path.startswith(f"v3/languages/Python/.py/{f.repo}/")
    assert (root / f.dataset_path).read_text() == f.text
  assert stats.to_dict()["kept"] == {"files": 3, "bytes": len(CODE) + 12 + 10}
  assert stats.to_dict()["dropped"] == {}


def test_repositories_repositories_variant_reads_the_same(tmp_path):
  repos = {"alice/tools": {"pkg/util.py": CODE}, "dev/null/u1": {"x.py": "x = 1\n"}}
  plain = test_utils.make_flcc_tree(tmp_path / "plain", repos)
  nested = test_utils.make_flcc_tree(tmp_path / "nested", repos, nested_repositories=True)
  assert (nested / "v3/repositories/repositories/alice/tools").is_dir()
  assert [(f.repo, f.path, f.text) for f in _read(nested)[0]] == [
      (f.repo, f.path, f.text) for f in _read(plain)[0]]
  assert all(r.meta_dir is not None for r in flcc.list_repositories(nested))


def test_root_may_be_v3_or_the_folder_holding_it(tmp_path):
  root = _one_repo(tmp_path, {"a.py": CODE})
  assert _read(root / "v3")[0] == _read(root)[0]
  assert flcc.find_python_root(root / "v3") == flcc.find_python_root(root) == (
      root / "v3/languages/Python/.py")
  assert flcc.fingerprint(root / "v3") == flcc.fingerprint(root)


@pytest.mark.parametrize("make_root", [
    lambda tmp: tmp / "nowhere",
    lambda tmp: (tmp / "file.txt", (tmp / "file.txt").write_text("x"))[0],
    lambda tmp: (tmp / "empty", (tmp / "empty").mkdir())[0],
    lambda tmp: (tmp / "v3", (tmp / "v3/languages/Java/.java").mkdir(parents=True))[0],
], ids=["missing", "a file", "no v3", "no Python folder"])
def test_a_bad_root_is_a_one_line_error_naming_it(tmp_path, make_root):
  root = make_root(tmp_path)
  for call in (flcc.find_python_root, flcc.list_repositories, flcc.read_files, flcc.fingerprint):
    with pytest.raises(flcc.FlccError) as error:
      call(root)
    message = str(error.value)
    assert "\n" not in message and str(root) in message and "v3" in message


def test_a_paths_json_key_may_be_the_path_below_the_init_hash_folder(tmp_path):
  root = _one_repo(tmp_path, {"pkg/mod.py": CODE})
  flat = test_utils.dataset_file(root, "owner/repo", "pkg/mod.py")
  (flat.parent / "sub").mkdir()
  flat.rename(flat.parent / "sub" / flat.name)
  paths_json = next(root.glob("v3/repositories/owner/repo/*/paths.json"))
  paths_json.write_text(json.dumps({f"sub/{flat.name}": "pkg/mod.py"}))
  files, stats = _read(root)
  assert [(f.path, f.text) for f in files] == [("pkg/mod.py", CODE)]
  assert stats.to_dict()["notes"] == {}


def test_a_file_missing_from_paths_json_is_kept_under_its_dataset_name(tmp_path):
  root = _one_repo(tmp_path, {"a.py": CODE, "b.py": "b = 2\n"})
  paths_json = next(root.glob("v3/repositories/owner/repo/*/paths.json"))
  mapping = json.loads(paths_json.read_text())
  missing = next(name for name, path in mapping.items() if path == "b.py")
  del mapping[missing]
  paths_json.write_text(json.dumps(mapping))
  files, stats = _read(root, splits=ALL_TRAIN)
  assert [f.path for f in files] == ["a.py", missing]
  assert stats.to_dict()["notes"] == {"path_unmapped": 1}
  assert stats.to_dict()["splits"]["train"]["notes"] == {"path_unmapped": 1}
  assert "path_unmapped: 1" in stats.summary()


def test_a_path_with_a_lone_surrogate_is_unmapped(tmp_path):
  # Such a path encodes to no bytes: prepare and baseline ended in UnicodeEncodeError.
  root = _one_repo(tmp_path, {"a.py": CODE})
  paths_json = next(root.glob("v3/repositories/owner/repo/*/paths.json"))
  name = next(iter(json.loads(paths_json.read_text())))
  paths_json.write_text(json.dumps({name: "x\ud800.py"}))
  files, stats = _read(root, splits=ALL_TRAIN)
  assert [f.path for f in files] == [name]
  assert stats.to_dict()["notes"] == {"path_unmapped": 1}


def test_dev_null_repositories_are_each_their_own_repository(tmp_path):
  root = test_utils.make_flcc_tree(tmp_path / "flcc", {
      "dev/null/11111111-aaaa": {"a.py": "a = 1\n"}, "dev/null/22222222-bbbb": {"b.py": "b = 2\n"}})
  repos = flcc.list_repositories(root)
  assert [(r.repo_id, r.owner, r.name) for r in repos] == [
      ("dev/null/11111111-aaaa", "dev/null", "11111111-aaaa"),
      ("dev/null/22222222-bbbb", "dev/null", "22222222-bbbb")]
  assert {f.repo for f in _read(root)[0]} == {"dev/null/11111111-aaaa", "dev/null/22222222-bbbb"}


def test_init_hash_folders_of_one_repository_are_one_repository(tmp_path):
  root = test_utils.make_flcc_tree(tmp_path / "flcc", {
      "owner/repo@" + "1" * 40: {"a.py": "a = 1\n"}, "owner/repo@master": {"b.py": "b = 2\n"}})
  assert [(r.repo_id, r.init_hash) for r in flcc.list_repositories(root)] == [
      ("owner/repo", "1" * 40), ("owner/repo", "master")]
  for fraction in (0.0, 0.3, 0.5, 1.0):
    files = _read(root, splits=flcc.Splits(validation=fraction, test=0))[0]
    assert [f.path for f in files] == ["a.py", "b.py"]
    assert len({(f.repo, f.split) for f in files}) == 1


# --------------------------------------------------------------------------------------------------
# Bad input: skipped and counted, or a one-line FlccError; nothing outside the root is touched.


@pytest.mark.parametrize("break_metadata", [
    lambda meta: (meta / "paths.json").unlink(),
    shutil.rmtree,
], ids=["no paths.json", "no metadata folder"])
def test_a_repository_without_paths_json_is_skipped_with_a_warning(tmp_path, caplog,
                                                                   break_metadata):
  root = test_utils.make_flcc_tree(tmp_path / "flcc", {
      "owner/repo": {"a.py": CODE, "b.py": "b = 2\n"}, "other/repo": {"c.py": "c = 3\n"}})
  repo = next(r for r in flcc.list_repositories(root) if r.repo_id == "owner/repo")
  break_metadata(repo.meta_dir)
  with caplog.at_level(logging.WARNING):
    files, stats = _read(root)
  assert [f.repo for f in files] == ["other/repo"]
  assert stats.count("no_paths_json") == 2
  assert stats.to_dict()["dropped"]["no_paths_json"]["bytes"] == len(CODE) + 6
  assert any(str(repo.files_dir) in record.getMessage() for record in caplog.records)


@pytest.mark.parametrize("content", ["not json", "[1, 2]", b"\xff\xfe"])
def test_a_paths_json_that_is_not_a_json_object_skips_the_repository(tmp_path, content):
  root = _one_repo(tmp_path, {"a.py": CODE})
  paths_json = next(root.glob("v3/repositories/owner/repo/*/paths.json"))
  paths_json.write_bytes(content.encode() if isinstance(content, str) else content)
  files, stats = _read(root)
  assert files == [] and stats.count("bad_paths_json") == 1


@pytest.mark.parametrize("content", [b"[" * 200_000, b'{"a.py": ' + b"[" * 200_000],
                         ids=["nested lists", "nested in a value"])
def test_a_paths_json_nested_past_the_recursion_limit_skips_only_its_repository(tmp_path,
                                                                              content):
  # json's decoder recurses once per bracket: 200,000 of them raise RecursionError.
  root = test_utils.make_flcc_tree(tmp_path / "flcc", {
      "owner/repo": {"a.py": CODE}, "other/repo": {"b.py": "b = 2\n"}})
  paths_json = next(root.glob("v3/repositories/owner/repo/*/paths.json"))
  paths_json.write_bytes(content)
  files, stats = _read(root, splits=ALL_TRAIN)
  assert [(f.repo, f.path) for f in files] == [("other/repo", "b.py")]
  assert stats.count("bad_paths_json") == 1


def test_a_paths_json_over_the_size_limit_is_not_read(tmp_path):
  # json.loads(read_bytes()) of a 40 GB sparse paths.json was a MemoryError traceback.
  root = test_utils.make_flcc_tree(tmp_path / "flcc", {
      "owner/repo": {"a.py": CODE}, "other/repo": {"b.py": "b = 2\n"}})
  with open(next(root.glob("v3/repositories/owner/repo/*/paths.json")), "r+b") as f:
    f.truncate(40 << 30)
  files, stats = _read(root, splits=ALL_TRAIN)
  assert [(f.repo, f.path) for f in files] == [("other/repo", "b.py")]
  assert stats.count("bad_paths_json") == 1


@pytest.mark.parametrize("content, reason", [
    (b"", "empty"),
    (b"  \n\t\n", "empty"),
    (b"x = 1\0\n", "binary"),
    ("s = 'caf\u00e9'\n".encode("latin-1"), "not_utf8"),
])
def test_files_that_are_not_text_are_dropped_with_their_reason(tmp_path, content, reason):
  root = _one_repo(tmp_path, {"bad.py": content, "good.py": CODE})
  files, stats = _read(root)
  assert [f.path for f in files] == ["good.py"]
  assert stats.count(reason) == 1
  assert stats.to_dict()["dropped"][reason]["bytes"] == len(content)


def test_a_file_name_that_is_not_utf8_is_dropped(tmp_path):
  root = _one_repo(tmp_path, {"good.py": CODE})
  folder = test_utils.dataset_file(root, "owner/repo", "good.py").parent
  with open(os.fsencode(folder) + b"/caf\xe9_1.py", "wb") as f:
    f.write(b"x = 1\n")
  files, stats = _read(root)
  assert [f.path for f in files] == ["good.py"] and stats.count("not_utf8") == 1


@pytest.fixture
def outside(tmp_path):
  """A folder beside the dataset with a file and a repository-like folder."""
  folder = tmp_path / "outside"
  (folder / "repo/hash").mkdir(parents=True)
  (folder / "secret.py").write_text("SECRET = 1\n")
  (folder / "repo/hash/secret_1.py").write_text("SECRET = 2\n")
  return folder


def _spy_on_opens(monkeypatch):
  """Records every path the reader opens or lists."""
  touched = []

  def spy(module, name):
    original = getattr(module, name)

    def wrapper(path, *args, **kwargs):
      if isinstance(path, (str, bytes, os.PathLike)):
        touched.append(os.path.realpath(path))
      return original(path, *args, **kwargs)
    monkeypatch.setattr(module, name, wrapper)

  for module, name in ((os, "open"), (os, "scandir"), (io, "open"), (builtins, "open")):
    spy(module, name)
  return touched


def test_symlinks_out_of_the_root_are_dropped_and_never_opened(tmp_path, outside, monkeypatch):
  root = test_utils.make_flcc_tree(tmp_path / "flcc", {
      "owner/repo": {"good.py": CODE}, "other/repo": {"x.py": "x = 1\n"}})
  folder = test_utils.dataset_file(root, "owner/repo", "good.py").parent
  (folder / "link_1.py").symlink_to(outside / "secret.py")
  (folder / "dir_link").symlink_to(outside)
  (root / "v3/languages/Python/.py/owner/evil").symlink_to(outside / "repo")
  (root / "v3/languages/Python/.py/intruder").symlink_to(outside)
  other_paths = next(root.glob("v3/repositories/other/repo/*/paths.json"))
  other_paths.unlink()
  other_paths.symlink_to(outside / "secret.py")
  touched = _spy_on_opens(monkeypatch)
  files, stats = _read(root)
  monkeypatch.undo()
  assert [f.path for f in files] == ["good.py"]
  # link_1.py, dir_link, owner/evil, intruder/, and other/repo's file (its paths.json escapes).
  assert stats.count("outside_root") == 5
  real_v3 = os.path.realpath(root / "v3")
  assert touched and all(p.startswith(real_v3 + os.sep) for p in touched), touched
  assert "SECRET" not in "".join(f.text for f in files)


def test_symlinks_inside_the_root_are_followed_once(tmp_path):
  root = _one_repo(tmp_path, {"good.py": CODE})
  folder = test_utils.dataset_file(root, "owner/repo", "good.py").parent
  (tmp_path / "flcc/v3/extra").mkdir()
  (tmp_path / "flcc/v3/extra/more_1.py").write_text("more = 1\n")
  (folder / "more_link").symlink_to(tmp_path / "flcc/v3/extra")
  (folder / "loop").symlink_to(folder)
  with _deadline():
    files, stats = _read(root)
  assert [(f.path, f.text) for f in files] == [("good.py", CODE),
                                               ("more_link/more_1.py", "more = 1\n")]
  assert stats.to_dict()["notes"] == {"path_unmapped": 1}


def test_linked_owner_repo_and_init_hash_folders_are_skipped_not_walked(tmp_path):
  # Links to `.` at these levels made every combination of them a repository: 40 of them at the
  # top were 70,564 repositories, each reading the whole tree.
  root = _one_repo(tmp_path, {"good.py": CODE})
  python_root = root / "v3/languages/Python/.py"
  for name in ("l1", "l2", "l3", "owner/l4", "owner/repo/l5"):
    (python_root / name).symlink_to(".")
  with _deadline():
    files, stats = _read(root)
    fingerprint = flcc.fingerprint(root)
  assert [(f.repo, f.path) for f in files] == [("owner/repo", "good.py")]
  assert stats.count("link") == 5
  assert fingerprint != flcc.fingerprint(_one_repo(tmp_path / "plain", {"good.py": CODE}))


def test_folders_deeper_than_max_depth_below_an_init_hash_folder_are_too_deep(tmp_path):
  # A realpath per folder walked every level above it: a chain of 1,500 folders took minutes.
  root = _one_repo(tmp_path, {"good.py": CODE})
  folder = test_utils.dataset_file(root, "owner/repo", "good.py").parent
  (folder / "pkg").mkdir()
  (folder / "pkg/shallow_1.py").write_text("shallow = 1\n")
  with test_utils.folder_chain(folder / "chain", 1500) as bottom:
    (bottom / "deep_1.py").write_text("deep = 1\n")
    for i in range(200):
      (bottom / f"empty{i}").mkdir()
    with _deadline():
      files, stats = _read(root)
  assert [f.path for f in files] == ["good.py", "pkg/shallow_1.py"]
  assert stats.count("too_deep") == 1


def test_fifos_and_dangling_symlinks_are_unreadable_without_blocking(tmp_path):
  root = _one_repo(tmp_path, {"good.py": CODE})
  folder = test_utils.dataset_file(root, "owner/repo", "good.py").parent
  os.mkfifo(folder / "fifo_1.py")
  (folder / "dangling_1.py").symlink_to(folder / "gone.py")
  with _deadline():
    files, stats = _read(root)
  assert [f.path for f in files] == ["good.py"] and stats.count("unreadable") == 2


def test_a_file_swapped_for_a_link_after_it_was_resolved_is_not_read(tmp_path):
  # The reader resolves a file's links and checks that they stay inside v3/ before reading it: a
  # link put in its place afterwards (to a file of the user's) is refused, whatever it leads to.
  secret = tmp_path / "secret.txt"
  secret.write_text("password = 1\n")
  swapped = tmp_path / "f_1.py"
  swapped.symlink_to(secret)
  assert flcc.read_regular_file(str(swapped), None) == ("unreadable", 0, b"")
  assert flcc.read_regular_file(str(secret), None) == (None, 13, b"password = 1\n")
  assert flcc.read_regular_file(str(secret), 12) == ("too_large", 13, b"")


def test_a_name_cannot_forge_lines_in_the_log(tmp_path, caplog):
  # Paths were logged as they are: a FIFO's name printed "prepared: all good" as a line of its own.
  root = test_utils.make_flcc_tree(tmp_path / "flcc", {
      "owner/repo": {"good.py": CODE}, "other/repo": {"b.py": "b = 2\n"}})
  folder = test_utils.dataset_file(root, "owner/repo", "good.py").parent
  os.mkfifo(folder / "x.py (unreadable)\nprepared: all good")
  (root / "v3/languages/Python/.py/stray\nprepared: all good").write_text(CODE)
  next(root.glob("v3/repositories/other/repo/*/paths.json")).write_text("[]")
  other = root / "v3/repositories/other/repo"
  other.rename(other.with_name("repo\nprepared: all good"))
  (root / "v3/languages/Python/.py/other/repo").rename(
      root / "v3/languages/Python/.py/other/repo\nprepared: all good")
  with caplog.at_level(logging.WARNING, logger=flcc.logger.name), _deadline():
    files, stats = _read(root, splits=ALL_TRAIN)
  assert [f.path for f in files] == ["good.py"]
  assert stats.count("unreadable") == stats.count("misplaced") == 1
  assert stats.count("bad_paths_json") == 1
  messages = [record.getMessage() for record in caplog.records]
  assert len(messages) == 3 and not any("\n" in message for message in messages), messages


def test_files_above_the_init_hash_folders_are_misplaced(tmp_path):
  root = _one_repo(tmp_path, {"good.py": CODE})
  (root / "v3/languages/Python/.py/owner/repo/stray.py").write_text(CODE)
  (root / "v3/languages/Python/.py/README").write_text("hi")
  files, stats = _read(root)
  assert [f.path for f in files] == ["good.py"] and stats.count("misplaced") == 2
  assert stats.to_dict()["splits"][flcc.split_of("owner/repo")]["dropped"] == {
      "misplaced": {"files": 1, "bytes": 0}}


# --------------------------------------------------------------------------------------------------
# Filters.

LONG_LINE = "x = '" + "a" * 1000 + "'\n" + "y = 1\n" * 20
LONG_MEAN = ("z = '" + "b" * 140 + "'\n") * 10
PROTOC = '"""Generated protocol buffer code."""\nfrom google.protobuf import descriptor as _d\n'


@pytest.mark.parametrize("content, reason, keeping", [
    ("s = 1\n" * 200, "too_large", flcc.Filters(max_file_bytes=None)),
    ("s = 1\n" * 200, "too_large", flcc.Filters(max_file_bytes=1200)),
    (LONG_LINE, "long_line", flcc.Filters(max_line_chars=None)),
    (LONG_LINE, "long_line", flcc.Filters(max_line_chars=2000)),
    (LONG_MEAN, "long_mean_line", flcc.Filters(max_mean_line_chars=None)),
    (LONG_MEAN, "long_mean_line", flcc.Filters(max_mean_line_chars=150.0)),
    (PROTOC, "generated", flcc.Filters(drop_generated=False)),
])
def test_each_filter_drops_and_can_be_configured(tmp_path, content, reason, keeping):
  root = _one_repo(tmp_path, {"a.py": content, "good.py": CODE})
  dropping = flcc.Filters(max_file_bytes=1000) if reason == "too_large" else flcc.Filters()
  files, stats = _read(root, filters=dropping)
  assert [f.path for f in files] == ["good.py"] and stats.count(reason) == 1
  files, stats = _read(root, filters=keeping)
  assert [f.path for f in files] == ["a.py", "good.py"] and stats.count(reason) == 0


def test_duplicates_are_dropped_after_the_first_unless_turned_off(tmp_path):
  root = _one_repo(tmp_path, {"a.py": CODE, "b.py": CODE, "c.py": "c = 1\n"})
  files, stats = _read(root)
  assert [f.path for f in files] == ["a.py", "c.py"] and stats.count("duplicate") == 1
  files, _ = _read(root, filters=flcc.Filters(drop_duplicates=False))
  assert [f.path for f in files] == ["a.py", "b.py", "c.py"]


def test_files_are_read_as_python_reads_them_whatever_their_line_ends(tmp_path):
  # Read as they were, a CRLF file's targets each ended in a "\r" the engine never writes (0 %
  # exact however right its lines), and a lone-CR file was one line of thousands of characters
  # (helper-56's audit). The same code is one file whatever its line ends.
  lf = "import os\n\n\ndef f(x):\n    return os.path.join(x, 'a')\n"
  root = _one_repo(tmp_path, {"lf.py": lf,
                              "crlf.py": "\ufeff" + (lf + "y = 2\n").replace("\n", "\r\n"),
                              "cr.py": (lf + "z = 3\n").replace("\n", "\r"),
                              "lf_as_crlf.py": lf.replace("\n", "\r\n")})
  files, stats = _read(root, splits=ALL_TRAIN)
  texts = {f.path: f.text for f in files}
  assert texts == {"lf.py": lf, "crlf.py": lf + "y = 2\n", "cr.py": lf + "z = 3\n"}
  assert stats.count("duplicate") == 1
  for path, text in texts.items():
    targets = {p.target(text) for p in line_completion.select_points(text, "owner/repo", path)}
    assert "return os.path.join(x, 'a')" in targets and all(len(t) < 30 for t in targets)


@pytest.mark.parametrize("head", [
    "# Generated by the protocol buffer compiler.  DO NOT EDIT!\n",
    '"""Generated protocol buffer code."""\n',
    "import sys\nfrom google.protobuf import descriptor as _descriptor\n",
    '"""Client and server classes corresponding to protobuf-defined services."""\nimport grpc\n',
    "# Generated by the gRPC Python protocol compiler plugin. DO NOT EDIT!\n",
    "#\n# Autogenerated by Thrift Compiler (0.9.3)\n",
    "from thrift.Thrift import TType, TMessageType, TException\n",
    "# This file was automatically generated by SWIG (http://www.swig.org).\n",
    "from sys import version_info as _swig_python_version_info\n",
    '"""Keywords.\n\nThis file is automatically generated; please don\'t muck it up!\n"""\n',
    "# @generated by tool\n",
])
def test_generated_code_is_recognised(tmp_path, head):
  root = _one_repo(tmp_path, {"gen.py": head + CODE})
  assert _read(root)[1].count("generated") == 1


@pytest.mark.parametrize("content", [
    '"""Generates random data; do not edit the seed."""\n' + CODE,
    "x = 1\n" * 60 + "# DO NOT EDIT\n",  # past the first 256 characters
    "from google.protobuf import descriptor\n" + CODE,  # hand-written protobuf user
])
def test_ordinary_code_is_not_taken_for_generated(tmp_path, content):
  root = _one_repo(tmp_path, {"a.py": content})
  assert len(_read(root)[0]) == 1


@pytest.mark.parametrize("make", [
    lambda: flcc.Filters(max_file_bytes=0),
    lambda: flcc.Filters(max_line_chars=-5),
    lambda: flcc.Filters(max_mean_line_chars="100"),
    lambda: flcc.Splits(validation=1.5),
    lambda: flcc.Splits(validation=-0.1),
    lambda: flcc.Splits(validation=0.6, test=0.5),
    lambda: flcc.Filters(held_out_roots="dataset-dev"),
    lambda: flcc.Filters(held_out_roots=("dataset-dev",), held_out_min_share=0),
])
def test_bad_configuration_is_a_one_line_error_naming_the_field(make):
  with pytest.raises(flcc.FlccError, match=r"^(Filters|Splits)\.\w+[^\n]*$"):
    make()


def test_only_split_must_be_a_split(tmp_path):
  root = _one_repo(tmp_path, {"a.py": CODE})
  with pytest.raises(flcc.FlccError, match="only_split"):
    flcc.read_files(root, only_split="dev")


# --------------------------------------------------------------------------------------------------
# Splits and duplicates across them.


def test_split_of_is_a_fixed_function_of_the_repository_id():
  # Pinned: a change here moves repositories between splits and leaks evaluation data.
  assert flcc.split_of("python/json") == "train"
  assert flcc.split_of("python/unittest") == "validation"
  assert flcc.split_of("python/modules-asyncore") == "test"
  assert flcc.split_of("torvalds/linux") == "train"


def test_split_fractions_hold_and_growing_one_split_only_adds_to_it():
  ids = [f"owner{i}/repo{i}" for i in range(20000)]
  small, large = flcc.Splits(0.05, 0.05), flcc.Splits(0.1, 0.1)
  counts = collections.Counter(flcc.split_of(r, small) for r in ids)
  assert abs(counts["validation"] / len(ids) - 0.05) < 0.01
  assert abs(counts["test"] / len(ids) - 0.05) < 0.01
  for split in ("validation", "test"):
    in_small = {r for r in ids if flcc.split_of(r, small) == split}
    assert in_small <= {r for r in ids if flcc.split_of(r, large) == split}
  only_test_grows = flcc.Splits(0.05, 0.3)
  assert all((flcc.split_of(r, small) == "validation") ==
             (flcc.split_of(r, only_test_grows) == "validation") for r in ids)


def test_a_small_root_still_gets_a_validation_and_a_test_repository(tmp_path):
  # 10 repositories at the default 5 %/5 % that the hash alone puts all in train.
  ids = [test_utils.repo_in_split("train", skip=i) for i in range(10)]
  assert {flcc.split_of(r) for r in ids} == {"train"}
  root = test_utils.make_flcc_tree(tmp_path / "flcc", {r: {"m.py": f"v = {i}\n"}
                                                       for i, r in enumerate(ids)})
  files, stats = _read(root)
  per_split = collections.Counter(f.split for f in files)
  assert per_split == {"train": 8, "validation": 1, "test": 1}
  assert {s: stats.count(split=s) for s in flcc.SPLITS} == per_split
  # The same repositories, whatever order they are listed in.
  assert flcc.assign_splits(reversed(ids)) == flcc.assign_splits(ids)
  assert {r for r, s in flcc.assign_splits(ids).items() if s == "validation"} == {
      f.repo for f in files if f.split == "validation"}


@pytest.mark.parametrize("splits", [flcc.Splits(), flcc.Splits(0.3, 0.01), flcc.Splits(0.01, 0.6),
                                    flcc.Splits(0.5, 0.5)])
def test_every_root_of_three_or_more_repositories_has_both_held_out_splits(splits):
  for n in range(3, 40):
    for start in range(0, 200, 40):
      ids = [f"o{start + i}/r{start + i}" for i in range(n)]
      hashed = {r: flcc.split_of(r, splits) for r in ids}
      assigned = flcc.assign_splits(ids, splits)
      assert {"validation", "test"} <= set(assigned.values()), (n, start)
      moved = {r for r in ids if assigned[r] != hashed[r]}
      assert len(moved) <= 2
      if {"validation", "test"} <= set(hashed.values()):
        assert not moved  # a root whose hash split is complete keeps it exactly


def test_the_fingerprint_changes_only_where_the_split_guarantee_moved_a_repository(
    tmp_path, monkeypatch):
  ids = [test_utils.repo_in_split("train", skip=i) for i in range(10)]
  small = test_utils.make_flcc_tree(tmp_path / "flcc", {r: {"m.py": "v = 1\n"} for r in ids})
  with_guarantee = {root: flcc.fingerprint(root) for root in (small, DEV_ROOT)}
  # The hash split alone, as before the guarantee: prepared shards are keyed by the fingerprint,
  # so the small root must prepare anew and dataset-dev (like every complete root) must not.
  monkeypatch.setattr(flcc, "assign_splits",
                      lambda repo_ids, splits: {r: flcc.split_of(r, splits) for r in repo_ids})
  assert flcc.fingerprint(small) != with_guarantee[small]
  assert flcc.fingerprint(DEV_ROOT) == with_guarantee[DEV_ROOT]


def test_the_split_guarantee_leaves_large_roots_and_dataset_dev_alone():
  ids = [f"owner{i}/repo{i}" for i in range(2000)]
  assert flcc.assign_splits(ids) == {r: flcc.split_of(r) for r in ids}
  dev = [r.repo_id for r in flcc.list_repositories(DEV_ROOT)]
  assert flcc.assign_splits(dev) == {r: flcc.split_of(r) for r in dev}


def test_a_held_out_split_of_fraction_zero_or_a_tiny_root_stays_as_hashed():
  ids = [test_utils.repo_in_split("train", skip=i) for i in range(10)]
  assert set(flcc.assign_splits(ids, ALL_TRAIN).values()) == {"train"}
  assert set(flcc.assign_splits(ids, flcc.Splits(0.05, 0)).values()) == {"train", "validation"}
  assert set(flcc.assign_splits(ids[:2]).values()) == {"train"}


SPLITS = flcc.Splits(validation=0.2, test=0.2)


@pytest.fixture
def many_repos(tmp_path):
  """30 repositories, and one file in a train and a test repository (the test one first by name)."""
  repos = {f"owner{i}/repo{i}": {"mod.py": f"value = {i}\n", "pkg/x.py": f"x = {i}\n"}
           for i in range(30)}
  repos[test_utils.repo_in_split("test", SPLITS, prefix="a/test")] = {"copied.py": CODE}
  repos[test_utils.repo_in_split("train", SPLITS, prefix="z/train")] = {"original.py": CODE}
  return test_utils.make_flcc_tree(tmp_path / "flcc", repos)



def test_files_come_split_by_split_and_no_repository_is_in_two(many_repos):
  files, _ = _read(many_repos, splits=SPLITS)
  order = [flcc.SPLITS.index(f.split) for f in files]
  assert order == sorted(order) and set(order) == {0, 1, 2}
  splits_of_repo = collections.defaultdict(set)
  for f in files:
    splits_of_repo[f.repo].add(f.split)
  assert all(len(splits) == 1 for splits in splits_of_repo.values())
  assert files == _read(many_repos, splits=SPLITS)[0]


def test_a_file_in_train_and_test_is_kept_in_train_only(many_repos):
  files, stats = _read(many_repos, splits=SPLITS)
  copies = [(f.split, f.path) for f in files if f.text == CODE]
  assert copies == [("train", "original.py")]
  assert stats.count("duplicate", split="test") == 1


@pytest.mark.parametrize("split", flcc.SPLITS)
def test_only_split_yields_and_counts_what_a_full_read_has_for_that_split(many_repos, split):
  full, full_stats = _read(many_repos, splits=SPLITS)
  files, stats = _read(many_repos, splits=SPLITS, only_split=split)
  assert files and files == [f for f in full if f.split == split]
  assert stats.to_dict()["splits"][split] == full_stats.to_dict()["splits"][split]
  assert stats.to_dict()["kept"] == full_stats.to_dict()["splits"][split]["kept"]


def test_stats_are_json_and_summarised(many_repos):
  _, stats = _read(many_repos, splits=SPLITS)
  as_dict = json.loads(json.dumps(stats.to_dict()))
  assert set(as_dict["splits"]) == set(flcc.SPLITS)
  assert as_dict["kept"]["files"] == sum(s["kept"]["files"] for s in as_dict["splits"].values())
  summary = stats.summary()
  assert summary.startswith(f"kept {stats.count()} files") and "duplicate 1" in summary


# --------------------------------------------------------------------------------------------------
# Fingerprint.


def test_fingerprint_changes_with_the_data_and_the_config(tmp_path):
  root = _one_repo(tmp_path, {"a.py": CODE, "b.py": "b = 2\n"})
  base = flcc.fingerprint(root)
  assert flcc.fingerprint(root) == base
  list(flcc.read_files(root))
  assert flcc.fingerprint(root) == base

  changed = test_utils.dataset_file(root, "owner/repo", "a.py")
  stat = changed.stat()
  changed.write_text(CODE.replace("+ 1", "+ 2"))  # same size: only the mtime tells
  os.utime(changed, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
  edited = flcc.fingerprint(root)
  assert edited != base
  (changed.parent / "new_1.py").write_text("n = 1\n")
  added = flcc.fingerprint(root)
  assert added not in (base, edited)
  paths_json = next(root.glob("v3/repositories/owner/repo/*/paths.json"))
  paths_json.write_text(paths_json.read_text().replace('"a.py"', '"src/a.py"'))
  remapped = flcc.fingerprint(root)
  assert remapped not in (base, edited, added)
  assert flcc.fingerprint(root, filters=flcc.Filters(drop_duplicates=False)) != remapped
  assert flcc.fingerprint(root, splits=flcc.Splits(validation=0.1)) != remapped


def test_fingerprint_does_not_depend_on_where_the_tree_is(tmp_path):
  root = _one_repo(tmp_path, {"a.py": CODE})
  before = flcc.fingerprint(root)
  moved = tmp_path / "elsewhere"
  shutil.copytree(root, moved, copy_function=shutil.copy2)
  assert flcc.fingerprint(moved) == before


# --------------------------------------------------------------------------------------------------
# dataset-dev.


def test_dev_dataset_texts_are_the_files_on_disk_byte_for_byte():
  files, stats = _read(DEV_ROOT)
  assert len(files) > 300 and stats.count("duplicate") == 0
  for f in files:
    assert (DEV_ROOT / f.dataset_path).read_bytes() == f.text.encode("utf-8"), f.dataset_path
    assert f.path.endswith(".py") and not f.path.startswith("v3/")
  assert stats.to_dict()["notes"] == {}


def test_dev_dataset_has_the_layout_cases_and_evaluation_repositories():
  repos = flcc.list_repositories(DEV_ROOT)
  ids = {r.repo_id for r in repos}
  assert 50 <= len(ids) <= 80
  assert any(r.startswith("dev/null/") for r in ids)
  assert any(n > 1 for n in collections.Counter(r.repo_id for r in repos).values())
  assert all(r.meta_dir is not None and len(r.init_hash) == 40 for r in repos)
  for splits in (flcc.Splits(), flcc.Splits(validation=0.1, test=0.1)):
    files = list(flcc.read_files(DEV_ROOT, splits=splits))
    for split in ("validation", "test"):
      assert len({f.repo for f in files if f.split == split}) >= 2, (splits, split)


def _module(name: str, count: int) -> str:
  """`count` functions whose lines are all long (code_t5.data.near_copies) and unique to `name`."""
  return "".join(f"def {name}_function_number_{i}(argument_one, argument_two):\n"
                 f"    return {name}_helper_of_the_module(argument_one + {i}, argument_two)\n\n"
                 for i in range(count))


def test_train_files_holding_most_of_a_held_out_roots_file_are_dropped(tmp_path, caplog):
  """A backport in the train split of one root (three quarters of a held-out file's long lines)
  is dropped when that file's root is held out; a file sharing less, the held-out root's own
  files and the root's own held-out splits are kept."""
  backport = _module("vendored", 6)  # 12 long lines
  held_out = test_utils.make_flcc_tree(tmp_path / "held_out", {
      test_utils.repo_in_split("validation"): {"copied.py": backport},
      test_utils.repo_in_split("train"): {"a.py": "x = 1\n"},
      test_utils.repo_in_split("train", skip=1): {"b.py": "y = 2\n"}})
  lines = backport.splitlines()
  root = test_utils.make_flcc_tree(tmp_path / "root", {
      test_utils.repo_in_split("train"): {
          "backports/copied.py": "\n".join(lines[:13]) + "\n",  # 9 of the 12 long lines
          "borrows.py": "\n".join(lines[:6]) + "\n" + _module("own", 4)},  # 4 of 12
      test_utils.repo_in_split("validation"): {"copied_too.py": backport},
      test_utils.repo_in_split("train", skip=1): {"other.py": CODE}})
  filters = flcc.Filters(held_out_roots=(str(held_out),))
  stats = flcc.Stats()
  with caplog.at_level(logging.INFO, logger=flcc.logger.name):
    kept = {f.path: f.split for f in flcc.read_files(root, filters, stats=stats)}
  assert set(kept) == {"borrows.py", "other.py", "copied_too.py"}
  assert kept["borrows.py"] == "train" and kept["copied_too.py"] == "validation"
  assert stats.to_dict()["dropped"]["held_out_copy"]["files"] == 1
  assert "75% of held-out" in caplog.text and "copied.py" in caplog.text
  assert "backports/copied.py" in {f.path for f in flcc.read_files(root)}  # off by default
  # At a lower share the second file goes too; a held-out split read alone is what a full read
  # yields for it.
  lower = flcc.Filters(held_out_roots=(str(held_out),), held_out_min_share=0.3)
  assert {f.path for f in flcc.read_files(root, lower)} == {"other.py", "copied_too.py"}
  assert [f.path for f in flcc.read_files(root, filters, only_split="validation")] == [
      "copied_too.py"]


def test_held_out_roots_count_in_the_fingerprint_by_their_files(tmp_path):
  root = _one_repo(tmp_path / "root", {"a.py": CODE})
  held_out = _one_repo(tmp_path / "held_out", {"b.py": CODE})
  filters = flcc.Filters(held_out_roots=(str(held_out),))
  base = flcc.fingerprint(root)
  with_held_out = flcc.fingerprint(root, filters)
  assert with_held_out != base
  moved = tmp_path / "moved"
  shutil.copytree(held_out, moved)
  assert flcc.fingerprint(root, flcc.Filters(held_out_roots=(str(moved),))) == with_held_out
  (test_utils.dataset_file(held_out, "owner/repo", "b.py").parent / "c_1.py").write_text("c = 1\n")
  assert flcc.fingerprint(root, filters) not in (base, with_held_out)


def test_a_missing_held_out_root_is_a_one_line_error_naming_it(tmp_path):
  root = _one_repo(tmp_path, {"a.py": CODE})
  with pytest.raises(flcc.FlccError, match=r"^Filters\.held_out_roots: .*nowhere[^\n]*$"):
    flcc.read_files(root, flcc.Filters(held_out_roots=(str(tmp_path / "nowhere"),)))
