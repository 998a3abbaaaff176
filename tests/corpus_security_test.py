"""code_t5/data/corpus.py (`code-t5 import`) on hostile git checkouts: a checkout's own config (and the
files it includes) names programs for git to run; importing it must run none of them, and must
read the same history whatever the checkout's or the caller's git settings.

Each hostile checkout is built with the real git, and each test also shows that the vector is
live: a plain git command on the same checkout does run the program (the control), so a test
cannot pass because its checkout was harmless.

Then sources whose files are no files (a FIFO blocks whoever opens it, a link to /dev/zero never
ends) and checkouts whose history lies outside them: the import skips what it cannot read, reads
nothing outside the sources, and goes on."""

import contextlib
import hashlib
import os
import pathlib
import pty
import shutil
import subprocess
import threading

import pytest

from code_t5 import cli
from code_t5.data import corpus
from code_t5.data import flcc

ALL = flcc.Splits(validation=0, test=0)
# The checkout's program: records that it ran (outside the checkout, so nothing imports it).
EVIL = '#!/bin/sh\necho "$0 $*" >> "{marker}"\nexit 1\n'


def _git(cwd, *args, env=None, **kwargs):
  """Runs the real git as a user would (no global or system config), fixed dates."""
  env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@e", GIT_COMMITTER_NAME="t",
             GIT_COMMITTER_EMAIL="t@e", GIT_AUTHOR_DATE="1700000000 +0000",
             GIT_COMMITTER_DATE="1700000000 +0000", GIT_CONFIG_GLOBAL=os.devnull,
             GIT_CONFIG_NOSYSTEM="1", **(env or {}))
  kwargs.setdefault("capture_output", True)
  return subprocess.run(["git", *args], cwd=cwd, env=env, check=kwargs.pop("check", True),
                        text=True, **kwargs).stdout


def _config(repo, *pairs):
  for key, value in pairs:
    _git(repo, "config", key, value)


def _commit_all(repo, message):
  _git(repo, "add", ".")
  _git(repo, "commit", "-q", "-m", message)


class Hostile:
  """A checkout of two commits (a.py, then b.py renamed to c.py with an edit) and ./evil.sh."""

  def __init__(self, tmp_path: pathlib.Path):
    self.repo = tmp_path / "src" / "hostile"
    self.marker = tmp_path / "ran"
    self.repo.mkdir(parents=True)
    _git(self.repo, "init", "-q")
    (self.repo / "a.py").write_text("a = 1\n")
    (self.repo / "b.py").write_text("b = 2\nc = 3\nd = 4\n")
    _commit_all(self.repo, "first")
    _git(self.repo, "mv", "b.py", "c.py")
    (self.repo / "c.py").write_text("b = 2\nc = 3\nd = 4\ne = 5\n")
    _commit_all(self.repo, "second")
    evil = self.repo / "evil.sh"
    evil.write_text(EVIL.format(marker=self.marker))
    evil.chmod(0o755)

  def sign_head(self, kind: str):
    """Replaces HEAD by a commit carrying a (bogus) signature of `kind`, e.g. "PGP SIGNATURE":
    git verifies any signature block by running the program configured for its kind."""
    commit = _git(self.repo, "cat-file", "commit", "HEAD")
    headers, message = commit.split("\n\n", 1)
    signature = f"-----BEGIN {kind}-----\n\nAAAA\n-----END {kind}-----"
    signed = f"{headers}\ngpgsig {signature.replace(chr(10), chr(10) + ' ')}\n\n{message}"
    oid = _git(self.repo, "hash-object", "-t", "commit", "-w", "--stdin", input=signed).strip()
    _git(self.repo, "update-ref", "HEAD", oid)

  def drop_object(self, spec: str):
    """Deletes one loose object, as a partial (--filter=blob:none) clone lacks old blobs."""
    oid = _git(self.repo, "rev-parse", spec).strip()
    (self.repo / ".git" / "objects" / oid[:2] / oid[2:]).unlink()

  def ran(self) -> bool:
    return self.marker.exists()


def _import(capsys, *args):
  code = cli.main(["import", *map(str, args)])
  return code, capsys.readouterr().err


def _imported(root):
  return sorted((f.repo, f.path) for f in flcc.read_files(root, splits=ALL))


def _with_a_tty(repo, *args):
  """git with a terminal as its output, the one case where it starts a pager."""
  leader, follower = pty.openpty()
  try:
    _git(repo, *args, stdout=follower, stderr=subprocess.DEVNULL, capture_output=False,
         check=False)
  finally:
    os.close(follower)
    os.close(leader)


# ----------------------------------------------------------------------------------------------
# Vectors whose program git runs through the importer's own commands (rev-list, log, ls-files,
# config). setup(hostile) configures the checkout; control(hostile) is a plain git command that
# then runs the program.


def _signature(kind, *pairs):
  def setup(h):
    h.sign_head(kind)
    _config(h.repo, ("log.showSignature", "true"), *pairs)
  return setup


def _included(how):
  def setup(h):
    h.sign_head("PGP SIGNATURE")
    (h.repo / "evil.cfg").write_text("[log]\n\tshowSignature = true\n"
                                     "[gpg]\n\tprogram = ./evil.sh\n")
    _config(h.repo, (how, str(h.repo / "evil.cfg")))
  return setup


def _partial_clone(*pairs):
  def setup(h):
    h.drop_object("HEAD~1:b.py")  # rename detection of b.py -> c.py needs it
    _config(h.repo, ("core.repositoryformatversion", "1"), ("extensions.partialClone", "origin"),
            ("remote.origin.promisor", "true"), *pairs)
  return setup


def _log(h):
  _git(h.repo, "log", "--name-status", "HEAD", check=False)


RUN_BY_THE_IMPORT = {
    "log.showSignature+gpg.program": (
        _signature("PGP SIGNATURE", ("gpg.program", "./evil.sh")), _log),
    "log.showSignature+gpg.openpgp.program": (
        _signature("PGP SIGNATURE", ("gpg.openpgp.program", "./evil.sh")), _log),
    "log.showSignature+gpg.x509.program": (
        _signature("SIGNED MESSAGE", ("gpg.x509.program", "./evil.sh")), _log),
    "log.showSignature+gpg.ssh.program": (
        _signature("SSH SIGNATURE", ("gpg.format", "ssh"), ("gpg.ssh.program", "./evil.sh"),
                   ("gpg.ssh.allowedSignersFile", "evil.sh")), _log),
    "include.path": (_included("include.path"), _log),
    "includeIf.gitdir": (_included("includeIf.gitdir:/.path"), _log),
    "core.fsmonitor": (lambda h: _config(h.repo, ("core.fsmonitor", "./evil.sh")),
                       lambda h: _git(h.repo, "ls-files", check=False)),
}
# A partial clone fetches a missing object from its promisor remote, through a program the
# checkout names; the import must fail that repository rather than fetch.
FETCHED_BY_THE_IMPORT = {
    "remote.origin.uploadpack": _partial_clone(
        ("remote.origin.url", "file:///nonexistent"), ("remote.origin.uploadpack", "./evil.sh"),
        ("protocol.file.allow", "always")),
    "core.sshCommand": _partial_clone(
        ("remote.origin.url", "ssh://example.invalid/x"), ("core.sshCommand", "./evil.sh"),
        ("protocol.ssh.allow", "always")),
    "ext::": _partial_clone(
        ("remote.origin.url", "ext::sh -c ./evil.sh"), ("protocol.ext.allow", "always")),
}


@pytest.mark.parametrize("vector", sorted(RUN_BY_THE_IMPORT))
def test_importing_a_hostile_checkout_runs_none_of_its_programs(vector, tmp_path, capsys):
  setup, control = RUN_BY_THE_IMPORT[vector]
  hostile = Hostile(tmp_path)
  setup(hostile)
  code, err = _import(capsys, hostile.repo, "--out", tmp_path / "root")
  assert code == 0, err
  assert not hostile.ran(), hostile.marker.read_text()
  assert _imported(tmp_path / "root") == [("src/hostile", "a.py"), ("src/hostile", "c.py")]
  control(hostile)
  assert hostile.ran()  # the vector is live: plain git runs the checkout's program


@pytest.mark.parametrize("vector", sorted(FETCHED_BY_THE_IMPORT))
def test_a_partial_clone_s_missing_objects_are_never_fetched(vector, tmp_path, capsys):
  hostile = Hostile(tmp_path)
  FETCHED_BY_THE_IMPORT[vector](hostile)
  (tmp_path / "mine" / "proj").mkdir(parents=True)
  (tmp_path / "mine" / "proj" / "ok.py").write_text("ok = 1\n")
  code, err = _import(capsys, hostile.repo, tmp_path / "mine", "--out", tmp_path / "root")
  assert code == 0, err
  assert not hostile.ran(), hostile.marker.read_text()
  assert "hostile (git_failed" in err  # its history cannot be read without the object
  assert "dropped files: git_failed 2" in err  # its files, examined before git log failed
  assert _imported(tmp_path / "root") == [("mine/proj", "ok.py")]  # the other sources are read
  _log(hostile)
  assert hostile.ran()


# ----------------------------------------------------------------------------------------------
# Vectors git 2.39 does not reach through the importer's commands; pinned all the same (a later
# git may, and the cost is nil). The control is a git command that does reach them.


def test_hooks_never_run(tmp_path, capsys):
  hostile = Hostile(tmp_path)
  hooks = ("applypatch-msg pre-applypatch post-applypatch pre-commit pre-merge-commit "
           "prepare-commit-msg commit-msg post-commit pre-rebase post-checkout post-merge "
           "pre-push pre-receive update proc-receive post-receive post-update "
           "reference-transaction push-to-checkout pre-auto-gc post-rewrite sendemail-validate "
           "fsmonitor-watchman p4-changelist p4-prepare-changelist p4-post-changelist "
           "p4-pre-submit post-index-change").split()
  for folder in (hostile.repo / "hooks", hostile.repo / ".git" / "hooks"):
    folder.mkdir(exist_ok=True)
    for hook in hooks:
      (folder / hook).symlink_to(hostile.repo / "evil.sh")
  _config(hostile.repo, ("core.hooksPath", "hooks"))
  assert _import(capsys, hostile.repo, "--out", tmp_path / "root")[0] == 0
  assert not hostile.ran()
  assert len(_imported(tmp_path / "root")) == 2
  _git(hostile.repo, "commit", "--allow-empty", "-q", "-m", "x", check=False)
  assert hostile.ran()


def test_diff_drivers_never_run(tmp_path, capsys):
  hostile = Hostile(tmp_path)
  (hostile.repo / ".gitattributes").write_text("*.py diff=evil\n")
  _config(hostile.repo, ("diff.evil.textconv", "./evil.sh"), ("diff.evil.command", "./evil.sh"),
          ("diff.external", "./evil.sh"))
  assert _import(capsys, hostile.repo, "--out", tmp_path / "root")[0] == 0
  assert not hostile.ran()
  assert len(_imported(tmp_path / "root")) == 2
  _git(hostile.repo, "log", "-p", "HEAD", check=False)
  assert hostile.ran()


def test_pagers_never_run(tmp_path, capsys):
  hostile = Hostile(tmp_path)
  _config(hostile.repo, ("core.pager", "./evil.sh"),
          *((f"pager.{command}", "./evil.sh") for command in ("log", "rev-list", "ls-files",
                                                              "config")))
  assert _import(capsys, hostile.repo, "--out", tmp_path / "root")[0] == 0
  assert not hostile.ran()
  assert len(_imported(tmp_path / "root")) == 2
  _with_a_tty(hostile.repo, "log", "HEAD")
  assert hostile.ran()


# ----------------------------------------------------------------------------------------------
# What is read: the history, not the checkout's or the caller's view of it.


def _metadata_and_init_hash(root):
  (repo,) = flcc.list_repositories(root)
  return (repo.meta_dir / "METADATA").read_text(), repo.init_hash


def test_the_checkout_s_settings_never_change_what_is_imported(tmp_path, capsys):
  hostile = Hostile(tmp_path)
  assert _import(capsys, hostile.repo, "--out", tmp_path / "plain")[0] == 0
  metadata, init_hash = _metadata_and_init_hash(tmp_path / "plain")
  assert "R" in metadata and "A\ta.py" in metadata  # a rename, and the root commit's files
  (hostile.repo / "order").write_text("c.py\n")
  _config(hostile.repo, ("log.showRoot", "false"), ("diff.renames", "false"),
          ("diff.orderFile", "order"), ("color.ui", "always"), ("core.quotePath", "true"))
  # A replace ref and a graft that make the second commit a root.
  second = _git(hostile.repo, "rev-parse", "HEAD").strip()
  _git(hostile.repo, "replace", "--graft", second)
  (hostile.repo / ".git" / "info" / "grafts").write_text(second + "\n")
  assert _import(capsys, hostile.repo, "--out", tmp_path / "styled")[0] == 0
  assert _metadata_and_init_hash(tmp_path / "styled") == (metadata, init_hash)


def test_the_caller_s_git_variables_never_redirect_the_import(tmp_path, capsys, monkeypatch):
  hostile = Hostile(tmp_path)
  assert _import(capsys, hostile.repo, "--out", tmp_path / "plain")[0] == 0
  other = Hostile(tmp_path / "elsewhere")
  (other.repo / "a.py").write_text("other = 1\n")
  _commit_all(other.repo, "other")
  # As in a git hook, or a shell that exported them: another repository, other settings.
  monkeypatch.setenv("GIT_DIR", str(other.repo / ".git"))
  monkeypatch.setenv("GIT_WORK_TREE", str(other.repo))
  monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'diff.renames'='false'")
  assert _import(capsys, hostile.repo, "--out", tmp_path / "root")[0] == 0
  assert (_metadata_and_init_hash(tmp_path / "root")
          == _metadata_and_init_hash(tmp_path / "plain"))
  assert len(_imported(tmp_path / "root")) == 2


# ----------------------------------------------------------------------------------------------
# Files that are no files, and history outside the checkout.


@contextlib.contextmanager
def _fifos_released_after(fifos, seconds):
  """Opens each FIFO for writing and closes it (a reader blocked on it then reads an empty file)
  over and over, once `seconds` have passed and until the block ends: an import that would hang
  on one goes on instead, and its test fails rather than hangs."""
  done = threading.Event()

  def release():
    if done.wait(seconds):
      return
    while not done.wait(0.1):
      for fifo in fifos:
        with contextlib.suppress(OSError):  # ENXIO: nobody is reading it
          os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))

  thread = threading.Thread(target=release, daemon=True)
  thread.start()
  try:
    yield
  finally:
    done.set()
    thread.join()


def _has_a_reader(fifo) -> bool:
  """Whether a process (a git left running) has `fifo` open for reading, or waits to."""
  try:
    os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
  except OSError:  # ENXIO
    return False
  return True


def _checkout(repo: pathlib.Path, **files):
  repo.mkdir(parents=True)
  _git(repo, "init", "-q")
  for name, text in (files or {"a.py": "a = 1\n"}).items():
    (repo / name).write_text(text)
  _commit_all(repo, "first")


def _fifo_instead_of(name):
  def setup(git_dir):
    (git_dir / name).unlink(missing_ok=True)
    (git_dir / name).parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(git_dir / name)
    return git_dir / name
  return setup


def _included_fifo(git_dir):
  os.mkfifo(git_dir / "hostile_fifo")
  with open(git_dir / "config", "a") as f:
    f.write("[include]\n\tpath = hostile_fifo\n")
  return git_dir / "hostile_fifo"


def test_files_the_checkout_names_or_holds_beside_its_history_are_never_read(tmp_path, capsys,
                                                                              monkeypatch):
  """git's log read the attributes file and the mailmap a checkout's config names (anywhere:
  /dev/zero ran it out of memory, a FIFO blocked it) and the working tree's .gitattributes and
  .mailmap (a FIFO there blocked the import for the hour of _GIT_HISTORY_SECONDS): helper-48's
  audit. Each here is a FIFO: read, it would block."""
  monkeypatch.setattr(corpus, "_GIT_SECONDS", 3)  # (a wait fails the test, not hangs it)
  monkeypatch.setattr(corpus, "_GIT_HISTORY_SECONDS", 3)
  hostile = Hostile(tmp_path)
  outside = {key: tmp_path / f"named_by_{key}" for key in ("core.attributesFile", "mailmap.file")}
  fifos = [*outside.values(), hostile.repo / ".gitattributes", hostile.repo / ".mailmap"]
  for fifo in fifos:
    os.mkfifo(fifo)
  _config(hostile.repo, *outside.items())
  # The control: a plain git log waits on them.
  with pytest.raises(subprocess.TimeoutExpired):
    _git(hostile.repo, "log", "--name-status", "HEAD", timeout=2)
  with _fifos_released_after(fifos, 20):
    code, err = _import(capsys, hostile.repo, "--out", tmp_path / "root")
  assert code == 0 and "git_failed" not in err and "its git folder" not in err, err
  metadata, _ = _metadata_and_init_hash(tmp_path / "root")
  assert "R" in metadata and "A\ta.py" in metadata  # the history, read as ever
  assert not [fifo for fifo in fifos if _has_a_reader(fifo)]


def test_a_folder_swapped_for_a_link_after_it_was_resolved_is_not_followed(tmp_path):
  # Each folder is resolved once (RealPaths), and only a file's own name was opened without
  # following links: a folder swapped for a link to another since led the read out of the
  # source (helper-48's audit).
  top = tmp_path / "src" / "project"
  (top / "pkg").mkdir(parents=True)
  (top / "pkg" / "a.py").write_text("a = 1\n")
  elsewhere = tmp_path / "elsewhere"
  elsewhere.mkdir()
  (elsewhere / "a.py").write_text("secret = 1\n")
  top = os.path.realpath(top)
  real_paths = corpus.RealPaths(top)
  candidate = corpus.Candidate(rel="pkg/a.py", path=os.path.join(top, "pkg", "a.py"))
  assert corpus.examine(candidate, top, real_paths)[0] == "kept"
  shutil.rmtree(os.path.join(top, "pkg"))
  os.symlink(elsewhere, os.path.join(top, "pkg"))
  assert corpus.examine(candidate, top, real_paths) == ("outside_source", 0, b"")


# A FIFO where git reads a file: each blocks one or more of the commands the import runs.
GIT_FIFOS = {
    "include": _included_fifo,
    "HEAD": _fifo_instead_of("HEAD"),
    "commondir": _fifo_instead_of("commondir"),
    "index": _fifo_instead_of("index"),
    "packed-refs": _fifo_instead_of("packed-refs"),
    "alternates": _fifo_instead_of("objects/info/alternates"),
}


def test_a_fifo_in_a_checkout_s_git_folder_is_found_before_git_runs_and_the_import_goes_on(
    tmp_path, capsys, monkeypatch):
  """Each of these blocked git until it was killed after _GIT_SECONDS and the repository was
  skipped; now git never runs on them and the checkout's files are read as a plain folder's."""
  monkeypatch.setattr(corpus, "_GIT_SECONDS", 3)  # (a minute in use: a wait would fail the test)
  _checkout(tmp_path / "src" / "good")
  fifos = []
  for name, setup in GIT_FIFOS.items():
    _checkout(tmp_path / "src" / name, **{"a.py": f"name = {name!r}\n"})  # (no duplicates)
    fifos.append(setup(tmp_path / "src" / name / ".git"))
  with _fifos_released_after(fifos, 20):
    code, err = _import(capsys, tmp_path / "src", "--out", tmp_path / "root")
  assert code == 0, err
  assert "git_failed" not in err, err
  for name in GIT_FIFOS:
    assert f"import: {tmp_path / 'src' / name}: its git folder holds " in err, err
  assert _imported(tmp_path / "root") == sorted(
      [("src/good", "a.py")] + [(f"src/{name}", "a.py") for name in GIT_FIFOS])
  assert not [fifo for fifo in fifos if _has_a_reader(fifo)]  # no git left waiting on one


def _borrow(git_dir, private):
  """`git_dir` borrows the private repository's objects and its branch names the private head:
  git then reads the private history (its METADATA and init-hash were the private repository's)."""
  (git_dir / "objects" / "info" / "alternates").write_text(f"{private / '.git' / 'objects'}\n")
  (git_dir / "refs" / "heads" / "main").write_text(_git(private, "rev-parse", "HEAD"))


def _linked_ref(repo, private):
  ref = repo / ".git" / "refs" / "heads" / "main"
  ref.unlink()
  ref.symlink_to(private / ".git" / "refs" / "heads" / "main")
  (repo / ".git" / "objects" / "info" / "alternates").write_text(f"{private / '.git' / 'objects'}\n")


def _borrowed_objects(repo, private):
  _borrow(repo / ".git", private)


def _included_config(repo, private):
  """The config includes another repository's (its origin then named the imported repository)."""
  with open(repo / ".git" / "config", "a") as f:
    f.write(f"[Include]\n\tpath = {private / '.git' / 'config'}\n")


def _included_on_a_section_s_line(repo, private):
  with open(repo / ".git" / "config", "a") as f:
    f.write(f"[core][include]path = {private / '.git' / 'config'}\n")


def _common_folder_inside(repo, private):
  """A worktree's commondir naming a folder inside the checkout that borrows the objects (the
  check walked the git folder alone: helper-36's review)."""
  shutil.copytree(repo / ".git", repo / ".store")
  _borrow(repo / ".store", private)
  (repo / ".git" / "commondir").write_text("../.store\n")


def _link_to_a_gitdir_file(repo, private):
  """.git a link to a file inside the checkout that names the git folder (the check resolved the
  link to the file and saw no folder: helper-36's review)."""
  (repo / ".git").rename(repo / ".store")
  _borrow(repo / ".store", private)
  (repo / "gitdir.txt").write_text("gitdir: .store\n")
  (repo / ".git").symlink_to("gitdir.txt")


# Where git could still list the index (only the objects are another's), the files it lists are
# imported; elsewhere the checkout is read as a plain folder, its untracked files too.
TRACKED = [("src/repo", "a.py")]
EVERY_FILE = [("src/repo", "a.py"), ("src/repo", "untracked.py")]


@pytest.mark.parametrize("lead_out, imported", [
    (_linked_ref, EVERY_FILE), (_borrowed_objects, TRACKED), (_included_config, EVERY_FILE),
    (_included_on_a_section_s_line, EVERY_FILE), (_common_folder_inside, TRACKED),
    (_link_to_a_gitdir_file, TRACKED)])
def test_a_git_folder_that_would_lead_git_to_another_repository_is_not_read(lead_out, imported,
                                                                             tmp_path, capsys):
  """helper-32's audit and helper-36's review: through a link in .git, alternates or an
  [include], git read another repository of the user's, and its history and names went into the
  imported root."""
  private = tmp_path / "private"
  _checkout(private, **{"private_customer_list.py": "customers = []\n"})
  _git(private, "branch", "-M", "main")
  _git(private, "remote", "add", "origin", "https://example.com/private_owner/private_repo.git")
  repo = tmp_path / "src" / "repo"
  _checkout(repo)
  _git(repo, "branch", "-M", "main")
  (repo / "untracked.py").write_text("u = 1\n")
  lead_out(repo, private)
  code, err = _import(capsys, repo, "--out", tmp_path / "root")
  assert code == 0, err
  assert f"import: {repo}: its git folder holds " in err, err
  assert _imported(tmp_path / "root") == imported
  assert not [p for p in (tmp_path / "root").rglob("*")
              if p.is_file() and b"private" in p.read_bytes()]


def test_what_git_never_reads_here_keeps_a_checkout_s_history(tmp_path, capsys):
  """Hooks linked from the checkout (a team's shared hooks), links among a submodule's hooks and
  an editor's lock link are not read by the commands the import runs: the checkout keeps its
  history (they made it a plain folder, its ignored files imported: helper-36's review)."""
  repo = tmp_path / "src" / "repo"
  _checkout(repo)
  (repo / "githooks").mkdir()
  shutil.rmtree(repo / ".git" / "hooks")
  (repo / ".git" / "hooks").symlink_to("../githooks")
  (repo / ".git" / "modules" / "sub" / "hooks").mkdir(parents=True)
  (repo / ".git" / "modules" / "sub" / "hooks" / "pre-commit").symlink_to("/bin/true")
  (repo / ".git" / ".#COMMIT_EDITMSG").symlink_to("user@host.1234:1700000000")
  (repo / "ignored.py").write_text("secret = 1\n")
  code, err = _import(capsys, repo, "--out", tmp_path / "root")
  assert code == 0, err
  assert "its git folder" not in err, err
  assert _imported(tmp_path / "root") == [("src/repo", "a.py")]
  (imported,) = flcc.list_repositories(tmp_path / "root")
  assert (imported.meta_dir / "METADATA").read_text().startswith("1700000000\n")  # its history


def test_a_git_file_naming_no_folder_is_read_as_a_plain_folder(tmp_path, capsys):
  """A NUL in a .git file's gitdir ended the import with a traceback (helper-36's review)."""
  repo = tmp_path / "src" / "repo"
  repo.mkdir(parents=True)
  (repo / "a.py").write_text("a = 1\n")
  (repo / ".git").write_bytes(b"gitdir: a\0b\n")
  code, err = _import(capsys, repo, "--out", tmp_path / "root")
  assert code == 0, err
  assert _imported(tmp_path / "root") == [("src/repo", "a.py")]


def test_an_index_entry_that_is_no_path_inside_the_checkout_is_counted_not_followed(tmp_path,
                                                                                     capsys):
  """helper-32's audit: an index entry /etc/passwd.py (the index edited by hand) made the import
  loop for good, its memory growing."""
  repo = tmp_path / "src" / "repo"
  _checkout(repo)
  (repo / "xetc").mkdir()
  (repo / "xetc" / "passwd.py").write_text("p = 1\n")
  _commit_all(repo, "second")
  index = (repo / ".git" / "index").read_bytes()[:-20].replace(b"xetc/passwd.py", b"/etc/passwd.py")
  (repo / ".git" / "index").write_bytes(index + hashlib.sha1(index).digest())
  code, err = _import(capsys, repo, "--out", tmp_path / "root")
  assert code == 0, err
  assert _imported(tmp_path / "root") == [("src/repo", "a.py")]
  assert "outside_source 1" in err, err


def _distribution(top, name, **replace):
  """pkg_<name> with its dist-info in the site-packages `top`; replace maps a dist-info file to
  what to put there instead: "fifo", a link's target, or bytes."""
  (top / f"pkg_{name}").mkdir(parents=True)
  (top / f"pkg_{name}" / "__init__.py").write_text(f"{name} = 1\n")
  info = top / f"pkg_{name}-1.0.dist-info"
  info.mkdir()
  (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: pkg_{name}\nVersion: 1.0\n")
  (info / "RECORD").write_text(f"pkg_{name}/__init__.py,,\n")
  for file_name, what in replace.items():
    path = info / file_name
    path.unlink(missing_ok=True)
    if what == "fifo":
      os.mkfifo(path)
    elif isinstance(what, bytes):
      path.write_bytes(what)
    else:
      path.symlink_to(what)


def test_dist_info_files_that_are_no_files_are_never_read(tmp_path, capsys):
  top = tmp_path / "site-packages"
  _distribution(top, "good")
  _distribution(top, "fifo_metadata", METADATA="fifo")
  _distribution(top, "fifo_record", RECORD="fifo")
  _distribution(top, "zero_metadata", METADATA="/dev/zero")  # endless
  _distribution(top, "zero_record", RECORD="/dev/zero")
  _distribution(top, "outside_record", RECORD=tmp_path / "elsewhere" / "RECORD")
  (tmp_path / "elsewhere").mkdir()
  (tmp_path / "elsewhere" / "RECORD").write_text("pkg_outside_record/__init__.py,,\n")
  # direct_url.json that cannot be read is as if missing: the distribution is not editable.
  _distribution(top, "fifo_direct_url", **{"direct_url.json": "fifo"})
  _distribution(top, "zero_direct_url", **{"direct_url.json": "/dev/zero"})
  _distribution(top, "nested_direct_url",  # past the recursion limit: an import's traceback
                **{"direct_url.json": b"[" * 200_000 + b"]" * 200_000})
  fifos = [p for p in top.glob("*/*") if p.is_fifo()]
  with _fifos_released_after(fifos, 20):
    code, err = _import(capsys, top, "--out", tmp_path / "root")
  assert code == 0, err
  assert _imported(tmp_path / "root") == [
      ("pypi/pkg-fifo-direct-url", "pkg_fifo_direct_url/__init__.py"),
      ("pypi/pkg-good", "pkg_good/__init__.py"),
      ("pypi/pkg-nested-direct-url", "pkg_nested_direct_url/__init__.py"),
      ("pypi/pkg-zero-direct-url", "pkg_zero_direct_url/__init__.py")]
  for name, why in [("fifo_metadata", "METADATA: missing, unreadable or not a regular file"),
                    ("fifo_record", "RECORD: missing, unreadable or not a regular file"),
                    ("zero_metadata", "METADATA: a link out of the source"),
                    ("zero_record", "RECORD: a link out of the source"),
                    ("outside_record", "RECORD: a link out of the source")]:
    assert f"pkg_{name}-1.0.dist-info (not_a_repository: no readable METADATA and RECORD ({why}))" \
        in err, err
  assert not [fifo for fifo in fifos if _has_a_reader(fifo)]


def test_a_dist_info_file_over_the_size_limit_is_never_read(tmp_path, capsys):
  top = tmp_path / "site-packages"
  _distribution(top, "good")
  _distribution(top, "huge")
  with open(top / "pkg_huge-1.0.dist-info" / "RECORD", "r+b") as f:
    f.truncate(corpus.MAX_FILE_BYTES + 1)  # (sparse: no disk)
  code, err = _import(capsys, top, "--out", tmp_path / "root")
  assert code == 0, err
  assert _imported(tmp_path / "root") == [("pypi/pkg-good", "pkg_good/__init__.py")]
  assert "pkg_huge-1.0.dist-info (not_a_repository: no readable METADATA and RECORD (RECORD: " \
      f"over {corpus.MAX_FILE_BYTES:,} bytes))" in err


def test_a_name_with_a_nul_in_a_record_is_counted_not_a_traceback(tmp_path, capsys):
  """helper-32's audit: `ValueError: embedded null byte` ended the whole import."""
  top = tmp_path / "site-packages"
  _distribution(top, "nul", RECORD=b"pkg_nul/__init__.py,,\npkg_nul/a\0b.py,,\n")
  code, err = _import(capsys, top, "--out", tmp_path / "root")
  assert code == 0, err
  assert _imported(tmp_path / "root") == [("pypi/pkg-nul", "pkg_nul/__init__.py")]
  assert "unreadable 1" in err, err


def _private_checkout(repo):
  _checkout(repo, **{"a.py": "a = 1\n", "private_customer_list.py": "customers = []\n"})


def _gitdir_file(tmp_path):
  """A folder of repositories; its repo's .git is a file naming a checkout's .git elsewhere."""
  _private_checkout(tmp_path / "private")
  (tmp_path / "src" / "repo").mkdir(parents=True)
  (tmp_path / "src" / "repo" / ".git").write_text(f"gitdir: {tmp_path / 'private' / '.git'}\n")
  return tmp_path / "src"


def _git_link(tmp_path):
  """A checkout given as SRC whose .git is a link to a checkout's .git elsewhere."""
  _private_checkout(tmp_path / "private")
  (tmp_path / "src" / "repo").mkdir(parents=True)
  (tmp_path / "src" / "repo" / ".git").symlink_to(tmp_path / "private" / ".git")
  return tmp_path / "src" / "repo"


def _empty_git_folder(tmp_path):
  """A folder of repositories inside a checkout; its repo's .git is an empty folder, from which
  git goes on looking in the folders above, up to that checkout."""
  _private_checkout(tmp_path / "private")
  (tmp_path / "private" / "src" / "repo" / ".git").mkdir(parents=True)
  return tmp_path / "private" / "src"


@pytest.mark.parametrize("build", [_gitdir_file, _git_link, _empty_git_folder])
def test_a_checkout_whose_git_folder_is_outside_it_is_read_without_that_history(build, tmp_path,
                                                                               capsys):
  src = build(tmp_path)
  repo = src / "repo" if src.name == "src" else src
  (repo / "a.py").write_text("x = 1\n")
  code, err = _import(capsys, src, "--out", tmp_path / "root")
  assert code == 0, err
  assert f"import: {repo}: its git folder " in err and "is outside it" in err
  assert _imported(tmp_path / "root") == [("src/repo", "a.py")]  # as a plain folder
  (imported,) = flcc.list_repositories(tmp_path / "root")
  assert (imported.meta_dir / "METADATA").read_text() == "1600000000\n\nA\ta.py\n"
  assert not [p for p in (tmp_path / "root").rglob("*")
              if p.is_file() and b"private" in p.read_bytes()]


@contextlib.contextmanager
def _chain_past_the_path_limit(top: pathlib.Path, depth: int):
  """`depth` nested folders `d/...` below `top`, made and removed through folder descriptors (a
  path through them is longer than the system takes), a file deep.py at the bottom."""
  fds = [os.open(top, os.O_RDONLY)]
  try:
    for _ in range(depth):
      os.mkdir("d", dir_fd=fds[-1])
      fds.append(os.open("d", os.O_RDONLY, dir_fd=fds[-1]))
    with os.fdopen(os.open("deep.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fds[-1]), "w") as f:
      f.write("deep = 1\n")
    yield
  finally:
    os.unlink("deep.py", dir_fd=fds[-1])
    for parent in reversed(fds[:-1]):
      os.rmdir("d", dir_fd=parent)
    for fd in fds:
      os.close(fd)


def test_folders_past_the_path_limit_are_counted_not_lost(tmp_path, capsys):
  """helper-25's audit: a chain of ~3,000 folders lost the ~1,000 files below the system's path
  limit without counting them."""
  repo = tmp_path / "src" / "mine"
  repo.mkdir(parents=True)
  (repo / "top.py").write_text("top = 1\n")
  with _chain_past_the_path_limit(repo, 2100):  # 2 bytes a level: past 4,096
    code, err = _import(capsys, tmp_path / "src", "--out", tmp_path / "root")
  assert code == 0, err
  assert _imported(tmp_path / "root") == [("src/mine", "top.py")]
  assert "too_deep 1" in err, err
