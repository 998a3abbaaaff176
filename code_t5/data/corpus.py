"""`code-t5 import`: your own Python code as an FLCC-layout root that every command reads.

    code-t5 import SRC... --out ROOT [--force] [--report FILE]

Each SRC is one of

  a git checkout (has .git): one repository. <owner>/<repo> from the `origin` remote's URL (its last
      two path parts), else the names of the checkout's parent folder and the checkout; the
      init-hash is the root commit (the oldest, if there are several), as in FLCC. The files are
      the *.py files git tracks (`git ls-files`), read from the working tree; METADATA is
      `git log --pretty=%ct --name-status --diff-filter=ACDMR HEAD`.
  an installed environment's site-packages (holds *.dist-info folders): each distribution is one
      repository pypi/<normalised name>, its files the *.py files its dist-info/RECORD lists, its
      init-hash the sha1 of "<name>==<version>". Editable installs (dist-info/direct_url.json says
      "editable", e.g. this project's own) are skipped: their code is not in site-packages.
  a plain folder of repositories: each sub-folder is one repository <SRC name>/<sub-folder name>
      (or, if it has .git, a git checkout as above), its files every *.py file below it except in
      hidden folders and __pycache__; the init-hash is the sha1 of "<owner>/<repo>".
  a plain project folder (a *.py file, pyproject.toml or setup.cfg at its top, and no git
      checkout among its sub-folders): one repository, named as a checkout without origin, its
      files as a plain folder's sub-folder's. (Read as a folder of repositories, a project's
      sub-packages became repositories in different splits, and its own files were dropped:
      helper-43's audit.)

The root is exactly the layout code_t5/data/flcc.py reads and dataset-dev/ uses:

  ROOT/v3/languages/Python/.py/<owner>/<repo>/<init-hash>/<stem>_<unix_time_ns>.py
  ROOT/v3/repositories/<owner>/<repo>/<init-hash>/{files.json, paths.json, METADATA}

normalised as FLCC's "normalized" variant, with the same code as scripts/make_dev_dataset.py:
comments stripped with `tokenize`, comment-only lines dropped, docstrings and every other byte
kept.

Bad input never stops an import: a file is dropped and counted under one reason

  outside_source  a symlink that resolves outside its source (or a RECORD path that leads out)
  unreadable      not a regular file, or an OS error on reading (a folder that cannot be listed:
                  once, for all its files)
  too_deep        a folder nested past the system's path limit (once, for all its files)
  too_large       over MAX_FILE_BYTES (the reader's own filters apply later, at `prepare`)
  not_utf8        content or file name not UTF-8
  binary          contains NUL bytes
  untokenizable   Python's tokenizer rejects it, so its comments cannot be stripped
  empty           nothing but whitespace once comments are stripped
  not_in_a_record a *.py file in site-packages that no dist-info/RECORD lists
  git_failed      its checkout's history cannot be read (e.g. a partial clone lacks an object,
                  which the import never fetches, or git is stopped after running too long,
                  as on a FIFO in the folders above an empty .git), so its repository is
                  skipped

and a folder that yields no repository (not_a_repository, no_python_files, editable_install,
git_failed, no_commits, duplicate_repository) is counted as a skipped repository. Nothing outside
the sources is read: symlinks are resolved and checked before they are opened (so are a
dist-info's METADATA, RECORD and direct_url.json, read only as regular files of at most
MAX_FILE_BYTES), and a checkout whose git folder lies outside it (a .git file or link naming
another folder, as worktrees and submodules have) is read as a plain folder, named as a
checkout without origin, with a line that says so: git is asked where that folder is, and
nothing of its history is read. So is a checkout whose own git folders hold what git would
follow out of them or block on (a link, a FIFO or device, an [include] in a config), found
before git runs (one whose objects alone are borrowed, through alternates, keeps the files its
index lists, without history); and an index entry that is no relative path inside the checkout
is counted as outside_source. Nor is anything run or read that a checkout names: its git config
cannot make git start a program, fetch, read a file outside the checkout, or change the history
that is read (the list is _GIT_CONFIG in code_t5/data/corpus.py), and the history is read from
the git folder alone, without the working tree's .gitattributes or .mailmap.

The output depends only on the sources' contents, never on the clock or on directory order
(sorted everywhere; plain folders and site-packages use a fixed fake commit time), so importing the
same sources twice gives byte-identical roots. It is written to a temporary folder beside ROOT and
renamed into place at the end; an existing ROOT is replaced only with --force, and only if it is
an earlier root (v3/ alone), never a symbolic link or a folder that holds a SRC; an existing
--report FILE is replaced only with --force too. Both are checked before anything is read. The
temporary's name (`.ROOT.tmp-<host>-<pid>-<random>`, processes.temporary_name) tells a later
import into the same folder that its writer was killed: it is removed then.
"""

import collections
import csv
import dataclasses
import errno
import email.parser
import hashlib
import io
import json
import os
import pathlib
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import tokenize
from typing import Callable, List, NamedTuple, Optional, Sequence, Tuple

from code_t5 import errors
from code_t5 import processes
from code_t5 import stranger_paths
from code_t5.data import flcc

# Commit time of repositories that have no git history (plain folders, distributions): fixed, so
# flattened names and METADATA do not depend on when or where the import ran.
COMMIT_TIME = 1_600_000_000  # 2020-09-13
# Read no bigger file: a 10 MB+ .py is generated data, and tokenizing it costs minutes.
MAX_FILE_BYTES = 10_000_000
SITE_PACKAGES_OWNER = "pypi"
# FLCC names a flattened file `<unix_time><ext>` when `<old_name>_<unix_time_ns><ext>` is too long.
_MAX_STEM_BYTES = 200
_PROGRESS_SECONDS = 5.0

# How git is run on a checkout, which may be someone else's: the one place to extend.
#
# A checkout's .git/config (and every file it pulls in with include.path or includeIf) can name
# programs for git to run, and nothing switches a repository's own config off (GIT_CONFIG_GLOBAL
# and GIT_CONFIG_NOSYSTEM cover only the user's and the system's). Config given with -c is read
# last and wins over all of those files, so each option below that can start a program on the
# commands this module runs (rev-list, log, ls-files, config) is pinned to a harmless value, and
# so is each one that changes what those commands print. Aliases cannot matter: git runs its
# builtin commands, which no alias can shadow. safe.directory is left alone, so git's own check
# still refuses a checkout that another user owns (skipped as git_failed).
_NO_PROGRAM = os.devnull  # not executable: starting it fails, whatever PATH holds
_GIT_CONFIG = (
    # Programs.
    ("core.fsmonitor", "false"),  # ls-files reads the index, which starts an fsmonitor hook
    ("core.hooksPath", os.devnull),  # no hooks (git 2.39 runs none here; a later git might)
    ("log.showSignature", "false"),  # log verifies a signed commit by running the gpg program
    ("gpg.program", _NO_PROGRAM),  # ... named by these, one per kind of signature:
    ("gpg.openpgp.program", _NO_PROGRAM),  # PGP
    ("gpg.x509.program", _NO_PROGRAM),  # X.509 (gpgsm)
    ("gpg.ssh.program", _NO_PROGRAM),  # SSH (ssh-keygen)
    # A partial clone fetches an object it lacks (a blob that log's rename detection reads) from
    # its promisor remote, through remote.<name>.uploadpack, core.sshCommand or an ext:: command
    # of the checkout's. Every transport is refused instead (protocol.<name>.allow beats
    # protocol.allow, so each is named), and such a repository is skipped as git_failed.
    ("protocol.allow", "never"),
    *((f"protocol.{name}.allow", "never")
      for name in ("file", "git", "ssh", "http", "https", "ftp", "ftps", "ext", "fd")),
    ("core.sshCommand", _NO_PROGRAM),  # and, should a transport start all the same, no program
    ("credential.helper", ""),  # (an empty value clears the checkout's list)
    ("core.askPass", ""),
    ("core.pager", "cat"),  # "cat" is no pager; git starts none without a terminal anyway
    # Files outside the checkout, which git would read (/dev/zero into memory) or block on (a
    # FIFO) before the history (helper-48's audit): log reads the attributes file for a rename
    # with changed content, and the mailmap for any log (log.mailmap is true since git 2.29).
    ("core.attributesFile", os.devnull),
    ("core.excludesFile", os.devnull),
    ("log.mailmap", "false"),
    ("mailmap.file", os.devnull),
    ("mailmap.blob", ""),
    # What is printed: METADATA and the init-hash depend on the history alone.
    # Non-ASCII names as git stores them, not as octal escapes; a name with a control character
    # or a double quote stays C-quoted, as in FLCC's own METADATA (git log's output; paths.json
    # holds every name as it is).
    ("core.quotePath", "false"),
    ("log.showRoot", "true"),  # the root commit's files are listed (git's default)
    ("diff.renames", "true"),  # a rename is R, not D and A, nor copies C (git's default)
    ("diff.orderFile", os.devnull),  # files in git's order
    ("diff.relative", "false"),  # every name from the top, whatever folder git runs in
    # git's default: the files a commit adds and deletes that rename detection pairs (its work
    # grows with their product; a checkout's own limit of millions would take hours and memory).
    ("diff.renameLimit", "1000"),
)
# Not set, as no -c can name them all and these commands reach none: diff.<driver>.textconv and
# .command (per path, from .gitattributes; log prints no patch, and _GIT_LOG says --no-textconv
# --no-ext-diff), filter.<driver>.* (only converting to or from the working tree, which
# rev-list, log, ls-files and config never do), merge drivers, editors, pager.<command> (--no-pager
# below), core.alternateRefsCommand and uploadpack.packObjectsHook (fetch, receive-pack and
# upload-pack, which a denied transport never reaches).
_GIT = ("git", "--no-pager",
        *(arg for key, value in _GIT_CONFIG for arg in ("-c", f"{key}={value}")))
# log's own switches for the same: no signatures, diff programs, text conversion, notes or colour.
_GIT_LOG = ("log", "--no-show-signature", "--no-ext-diff", "--no-textconv", "--no-notes",
            "--no-color")
# The environment: the caller's without any GIT_* variable (GIT_DIR, GIT_WORK_TREE and
# GIT_INDEX_FILE, set inside a git hook, would point git at another repository; GIT_CONFIG_* add
# config; GIT_EXTERNAL_DIFF, GIT_SSH_COMMAND, GIT_PAGER, GIT_ASKPASS name programs), plus these.
_GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",  # no system config,
    "GIT_CONFIG_GLOBAL": os.devnull,  # nor the user's (git >= 2.32): same output for anyone
    "GIT_NO_REPLACE_OBJECTS": "1",  # replace refs rewrite the history read (the init-hash),
    "GIT_GRAFT_FILE": os.devnull,  # and so does .git/info/grafts
    "GIT_NO_LAZY_FETCH": "1",  # a partial clone fetches nothing (git >= 2.44; protocol.* above)
    "GIT_TERMINAL_PROMPT": "0",  # never wait for a password
}
# How long one git command may run before it is killed and its repository skipped (git_failed).
# git blocks for good on a FIFO where it reads a file (an [include] path, HEAD, commondir, the
# index, packed-refs, objects/info/alternates), and nothing else would end the wait. The commands
# that read a handful of files whatever the history's length (rev-parse, log -1, ls-files,
# config: milliseconds, a second for an index of a million files) run first and reach every one
# of those files, so such a checkout costs _GIT_SECONDS; only the two that walk the whole history
# (rev-list, log --name-status: minutes for the largest public histories) get the hour.
_GIT_SECONDS = 60
_GIT_HISTORY_SECONDS = 3600
# A git command that failed (a non-zero status, or killed after its time): its repository is
# skipped.
_GIT_FAILED = (subprocess.CalledProcessError, subprocess.TimeoutExpired)


class CorpusError(errors.UserError):
  """A problem with the command line or the output folder; the message is one line."""


# --------------------------------------------------------------------------------------------------
# Normalisation (shared with scripts/make_dev_dataset.py).


def strip_comments(text: str) -> str:
  """The code without comments (comment-only lines dropped, all other characters kept).

  Raises tokenize.TokenError or SyntaxError if Python's tokenizer rejects the text.
  """
  # Split as the tokenizer's readline would (on "\n" only), so token rows index these lines.
  lines = io.StringIO(text, newline="").readlines()
  comments = [token for token in tokenize.generate_tokens(iter(lines).__next__)
              if token.type == tokenize.COMMENT]
  for token in reversed(comments):  # a comment runs to the end of its line, one per line at most
    row, col = token.start
    line = lines[row - 1]
    code, ending = line[:col].rstrip(" \t\f"), line[token.end[1]:]
    lines[row - 1] = code + ending if code else ""
  return "".join(lines)


def normalize(source: bytes) -> bytes:
  """The source without comments; unchanged if it is not UTF-8 or does not tokenize (FLCC kept
  such files as they were)."""
  try:
    return strip_comments(source.decode("utf-8")).encode("utf-8")
  except (UnicodeDecodeError, tokenize.TokenError, SyntaxError):
    return source


# --------------------------------------------------------------------------------------------------
# Writing the layout (shared with scripts/make_dev_dataset.py).


def flat_name(path: str, time_ns: int) -> str:
  """FLCC's flattened name of a file: `<stem>_<time_ns>.py`, or `<time_ns>.py` for long stems."""
  stem = pathlib.PurePosixPath(path).stem
  if len(stem.encode("utf-8", "surrogateescape")) > _MAX_STEM_BYTES:
    return f"{time_ns}.py"
  return f"{stem}_{time_ns}.py"


def write_init_hash(v3: pathlib.Path, repo_id: str, init_hash: str,
                    files: Sequence[Tuple[str, bytes]], metadata: str, commit_time: int) -> int:
  """Writes one <repo>/<init-hash> folder pair: the files (path in the repository, normalised
  content) flattened, and files.json, paths.json, METADATA. Returns the bytes of files written."""
  parts = repo_id.split("/")
  files_dir = v3.joinpath(*flcc.PYTHON_DIR, *parts, init_hash)
  meta_dir = v3.joinpath("repositories", *parts, init_hash)
  files_dir.mkdir(parents=True)
  meta_dir.mkdir(parents=True)
  # Flattening time: the commit time in ns plus the file's index, unique within the folder.
  time_ns = commit_time * 10**9 + int(init_hash[:6], 16) * 1000  # init-hashes are hex digests
  names = {}
  num_bytes = 0
  for index, (path, data) in enumerate(files):
    name = flat_name(path, time_ns + index)
    (files_dir / name).write_bytes(data)
    names[name] = path
    num_bytes += len(data)
  (meta_dir / "paths.json").write_text(json.dumps(names, indent=2, sort_keys=True) + "\n",
                                       encoding="utf-8")
  (meta_dir / "files.json").write_text(json.dumps({"Python/.py": len(names)}) + "\n",
                                       encoding="utf-8")
  # git log names files as bytes: a non-UTF-8 name (surrogate-escaped) is written back unchanged.
  (meta_dir / "METADATA").write_bytes(metadata.encode("utf-8", "surrogateescape"))
  return num_bytes


# git's C-style escapes (quote.c), for the names git log quotes with core.quotePath off: those
# holding a control character, DEL, a double quote or a backslash.
_GIT_ESCAPES = {"\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\v": "\\v",
                "\f": "\\f", "\r": "\\r", '"': '\\"', "\\": "\\\\"}
_GIT_QUOTED = re.compile(r'[\x00-\x1f\x7f"\\]')


def _git_quoted(path: str) -> str:
  """`path` as git log --name-status prints it (core.quotePath off)."""
  if not _GIT_QUOTED.search(path):
    return path
  return '"' + _GIT_QUOTED.sub(lambda m: _GIT_ESCAPES.get(m.group(), f"\\{ord(m.group()):03o}"),
                               path) + '"'


def added_metadata(paths: Sequence[str], commit_time: int = COMMIT_TIME) -> str:
  """METADATA of a repository without history: one commit at commit_time that adds every path,
  each named as git names it (a name holding a newline wrote lines of another commit: helper-48's
  audit)."""
  return f"{commit_time}\n\n" + "".join(f"A\t{_git_quoted(path)}\n" for path in paths)


# --------------------------------------------------------------------------------------------------
# Finding repositories in the sources.


@dataclasses.dataclass(frozen=True)
class Candidate:
  rel: str  # path inside the repository (posix)
  path: str  # absolute path of the file as listed


@dataclasses.dataclass(frozen=True)
class RepoSource:
  """One repository to import: where its files are and what to call it."""
  owner: str
  name: str
  init_hash: str
  top: str  # resolved folder that no file may resolve outside of
  files: Tuple[Candidate, ...]
  # METADATA text from the paths of the files kept; computed only if the repository is written.
  metadata: Callable[[Sequence[str]], str]
  commit_time: int
  where: str  # the source folder, for messages

  @property
  def repo_id(self) -> str:
    return f"{self.owner}/{self.name}"


# Drop reasons of files whose bytes are counted but never read (their size is what they hold).
_NOT_READ = ("outside_source", "unreadable", "too_deep", "too_large", "not_in_a_record")


class Report:
  """Counts of kept and dropped files (and bytes read) by reason, and skipped repositories."""

  def __init__(self):
    self.files = collections.Counter()  # outcome -> files
    self.bytes = collections.Counter()  # outcome -> bytes read from the sources
    self.written_bytes = 0  # bytes of kept files after normalisation
    self.repositories = 0
    self.skipped_repositories = collections.Counter()

  def add(self, outcome: str, num_bytes: int = 0):
    self.files[outcome] += 1
    self.bytes[outcome] += num_bytes

  def drop_kept(self, reason: str, files: int, num_bytes: int):
    """Counts `files` already counted as kept as dropped for `reason`: their repository fails."""
    self.files["kept"] -= files
    self.bytes["kept"] -= num_bytes
    self.files[reason] += files
    self.bytes[reason] += num_bytes

  def skip_repository(self, reason: str, where, detail: str = ""):
    self.skipped_repositories[reason] += 1
    print(f"import: skipping {where} ({reason}{': ' + detail if detail else ''})", file=sys.stderr)

  def bytes_read(self) -> int:
    """The bytes of the files read (a 20 MB file dropped as too_large counted as 20 MB read:
    helper-43's audit)."""
    return sum(n for outcome, n in self.bytes.items() if outcome not in _NOT_READ)

  def note(self, where, detail: str):
    """Says on stderr how a source is read other than the module doc's way, and why."""
    print(f"import: {where}: {detail}", file=sys.stderr)

  def to_dict(self) -> dict:
    return {
        "repositories": self.repositories,
        "files": self.files["kept"],
        "mb_kept": round(self.written_bytes / 1e6, 3),
        "mb_read_kept": round(self.bytes["kept"] / 1e6, 3),
        "dropped": {reason: {"files": n, "mb": round(self.bytes[reason] / 1e6, 3)}
                    for reason, n in sorted(self.files.items()) if reason != "kept"},
        "skipped_repositories": dict(sorted(self.skipped_repositories.items())),
    }


_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _safe_name(name: str) -> str:
  """A name usable as one path component of the layout (owner, repo)."""
  name = _NAME_UNSAFE.sub("-", name).strip("-")
  return name if name and name not in (".", "..") else "unnamed"


def _sha1(text: str) -> str:
  return hashlib.sha1(text.encode("utf-8", "surrogateescape")).hexdigest()


def _git(folder: str, *args: str, seconds: Optional[float] = None, bare: bool = False) -> bytes:
  """The output of one git command on the checkout `folder`, run as _GIT_CONFIG says; `bare`:
  on the git folder `folder` alone, as on a bare repository, so that git reads nothing of the
  working tree (its .gitattributes and .mailmap, which log reads: a FIFO there blocked an import
  for the hour of _GIT_HISTORY_SECONDS; helper-48's audit).

  Raises CalledProcessError if git fails, TimeoutExpired if it runs over `seconds` (default
  _GIT_SECONDS; then it has been killed and waited for: subprocess.run does both).
  """
  env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
  env.update(_GIT_ENV)
  where = ("--git-dir", folder, "--bare") if bare else ("-C", folder)
  # No stdin: an include.path of /dev/stdin, or a prompt, never reads the importer's terminal.
  # git dies with the import, a kill -9 included (a git stalled on a read went on for the hour of
  # _GIT_HISTORY_SECONDS after its import was killed: helper-54's audit).
  return subprocess.run([*_GIT, *where, *args], env=env, stdin=subprocess.DEVNULL,
                        cwd=folder if bare else None, check=True, capture_output=True,
                        timeout=_GIT_SECONDS if seconds is None else seconds,
                        preexec_fn=processes.dying_with_this_process()).stdout


def _git_error(e: Exception) -> str:
  """The last line git wrote to stderr, else the exception's message."""
  if isinstance(e, subprocess.TimeoutExpired):
    return (f"git was stopped after running {e.timeout:g} s: is a file it reads a FIFO, or its "
            "disk stalled?")
  lines = (getattr(e, "stderr", None) or b"").decode("utf-8", "replace").strip().splitlines()
  return lines[-1] if lines else str(e)


def _owner_and_name_from_url(url: str) -> Optional[Tuple[str, str]]:
  """("owner", "repo") from https://host/owner/repo(.git), git@host:owner/repo.git or a path."""
  parts = [p for p in re.split(r"[/:\\]", url.strip().rstrip("/")) if p]
  if len(parts) < 2:
    return None
  name = parts[-1].removesuffix(".git")
  return (_safe_name(parts[-2]), _safe_name(name)) if name else None


def _git_dirs(top: str) -> Tuple[str, str]:
  """The git folder of the checkout `top` and its common one (the same but for a worktree), as
  real paths: outside `top` where a .git file or link names another folder, a commondir leads
  out, or git went on looking in the folders above an invalid .git."""
  def real(option: str) -> str:
    # One command each, its one line ending: a path holding a newline is several lines
    # (helper-53's review). The common folder may be relative to `top`.
    line = _git(top, "rev-parse", option).removesuffix(b"\n")
    return os.path.realpath(os.path.join(top, os.fsdecode(line)))

  return real("--absolute-git-dir"), real("--git-common-dir")


# What in a checkout's git folder git would follow out of it, reading whatever it leads to (the
# user's other repositories, /dev/zero into memory) or blocking on it: found before git runs.
# An [include] anywhere in a config (git reads "[core][include]path=..." on one line, and skips a
# byte-order mark): a config that merely mentions one in a value is read as a plain folder too.
_GIT_INCLUDE = re.compile(rb"\[\s*include", re.IGNORECASE)
_GIT_ALTERNATES = ("objects/info/alternates", "objects/info/http-alternates")
# What git never reads on the commands run here, and a checkout often holds as links: hooks
# (hooksPath is /dev/null; core.hooksPath's own folders, a submodule's hooks) and an editor's
# lock files (Emacs' .#COMMIT_EDITMSG).
_GIT_UNREAD = re.compile(r"^(hooks|\.#.*)$")


class _GitFolder(NamedTuple):
  """What _git_folder_problem found: `problem` (or None) and whether git may still list the
  index (`listable`: only alternates, which the index does not read)."""
  problem: Optional[str]
  listable: bool = False


def _git_dir_of(top: str) -> Optional[str]:
  """The real path of the git folder that `top`'s .git is or names (a .git file's, or a link to
  one's, "gitdir: PATH", relative to that file), or None where .git names none."""
  dot_git = os.path.realpath(os.path.join(top, ".git"))
  if os.path.isdir(dot_git):
    return dot_git
  reason, _, data = flcc.read_regular_file(dot_git, 4096)
  if reason is not None or not data.startswith(b"gitdir:"):
    return None
  named = os.fsdecode(data[len(b"gitdir:"):].strip())
  return os.path.realpath(os.path.join(os.path.dirname(dot_git), named))


def _git_folder_problem(top: str) -> _GitFolder:
  """What in the git folders of the checkout `top` that lie inside it (the one its .git is or
  names, and the common one a worktree's commondir names) would lead git out of `top` or block
  it: a link (hooks and editor locks aside: git reads neither here), a FIFO or device, a
  borrowed object store (alternates), or an [include] in a config. Read with lstat and as
  regular files only: nothing here blocks. Folders outside `top` are _git_dirs'."""
  try:
    git_dir = _git_dir_of(top)
    if git_dir is None or not errors.within(git_dir, top):
      return _GitFolder(None)
    folders = [git_dir]
    reason, _, data = flcc.read_regular_file(os.path.join(git_dir, "commondir"), 4096)
    if reason is None:
      common = os.path.realpath(os.path.join(git_dir, os.fsdecode(data.strip())))
      if not errors.within(common, top):
        return _GitFolder(None)
      folders.append(common)
  except ValueError:  # a NUL in a name .git or commondir gives
    return _GitFolder("a .git or commondir file that names no folder")
  borrowed = None
  for folder in dict.fromkeys(folders):
    for entry, _ in stranger_paths.walk(folder, lambda e, depth: not _GIT_UNREAD.match(e.name)):
      if _GIT_UNREAD.match(entry.name):
        continue
      try:
        mode = entry.stat(follow_symlinks=False).st_mode
      except FileNotFoundError:  # gone since it was listed (a lock file of a running git)
        continue
      except OSError as e:
        return _GitFolder(f"an entry it cannot look at ({entry.path}: {e.strerror})")
      if stat.S_ISLNK(mode):
        return _GitFolder(f"a link ({entry.path})")
      if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return _GitFolder(f"a FIFO or device ({entry.path})")
    for name in ("config", "config.worktree"):
      path = os.path.join(folder, name)
      if not os.path.lexists(path):
        continue
      reason, _, data = flcc.read_regular_file(path, MAX_FILE_BYTES)
      if reason is not None:
        return _GitFolder(f"a {name} it cannot check ({reason})")
      if _GIT_INCLUDE.search(data):
        return _GitFolder(f"an [include] of other files in its {name}")
    for name in _GIT_ALTERNATES:
      if os.path.lexists(os.path.join(folder, name)):
        borrowed = borrowed or f"{name}, which borrows objects from other folders"
  return _GitFolder(borrowed, listable=borrowed is not None)


def _origin_url(top: str) -> str:
  try:
    return _git(top, "config", "--get", "remote.origin.url").decode("utf-8", "replace")
  except subprocess.CalledProcessError:  # no origin (status 1); a timeout is the caller's
    return ""


def _git_repository(folder: pathlib.Path, plain_owner: str,
                    report: Report) -> Optional[RepoSource]:
  """The repository of the checkout `folder`, or None (skipped, said on stderr). A checkout whose
  git folder lies outside it is read as a plain folder (owner `plain_owner`): its history is
  not part of the source."""
  top = os.path.realpath(folder)
  found = _git_folder_problem(top)
  if found.listable:  # (`git clone --shared` or --reference): the objects are another's
    report.note(folder, f"its git folder holds {found.problem}, so its history is not read: the "
                "files its index lists are imported, as of no commit")
    return _indexed_repository(folder, top, plain_owner, report)
  if found.problem is not None:
    report.note(folder, f"its git folder holds {found.problem}, which git would read past the "
                "checkout or wait on for good, so its history is not read: imported as a plain "
                "folder (every *.py below it)")
    return _plain_repository(folder, plain_owner, report)
  try:
    git_dir, common_dir = _git_dirs(top)
    outside = next((d for d in (git_dir, common_dir) if not errors.within(d, top)), None)
    if outside is not None:
      report.note(folder, f"its git folder {outside} is outside it, so its history is not read: "
                  "imported as a plain folder (every *.py below it)")
      return _plain_repository(folder, plain_owner, report)
    # The commands of _GIT_SECONDS first: they reach every file a FIFO could block git on
    # (_git_folder_problem found none in the checkout's own git folder; these bound the wait
    # where git finds one elsewhere, as in a folder above an empty .git).
    commit_time = int(_git(git_dir, *_GIT_LOG, "-1", "--pretty=%ct", "HEAD", bare=True).strip())
    listed = _git(top, "ls-files", "-z", "--cached").split(b"\0")
    url = _origin_url(top)
    roots = _git(git_dir, "rev-list", "--max-parents=0", "--reverse", "HEAD",
                 seconds=_GIT_HISTORY_SECONDS, bare=True).split()
  except (*_GIT_FAILED, ValueError, OSError) as e:
    _skip_for_git(folder, e, report)
    return None
  owner_name = _owner_and_name_from_url(url) or (_safe_name(folder.resolve().parent.name),
                                                  _safe_name(folder.resolve().name))
  files = _listed_files(listed, top, report)

  def metadata(unused_kept):  # git's own history lists every file, as FLCC's METADATA does
    return _git(git_dir, *_GIT_LOG, "--pretty=%ct", "--name-status", "--diff-filter=ACDMR",
                "HEAD", seconds=_GIT_HISTORY_SECONDS, bare=True).decode("utf-8", "surrogateescape")

  return RepoSource(owner=owner_name[0], name=owner_name[1], init_hash=roots[0].decode(), top=top,
                    files=files, metadata=metadata, commit_time=commit_time,
                    where=str(folder))


def _skip_for_git(folder: pathlib.Path, error: Exception, report: Report) -> None:
  """Counts the checkout `folder` skipped, for a git command that failed with `error` (a
  checkout without commits: no_commits; else git_failed, or git that cannot run: OSError)."""
  if isinstance(error, OSError):
    report.skip_repository("git_failed", folder, f"cannot run git: {error.strerror}")
    return
  # (git's last line of an empty checkout's error is its usage, which said nothing: helper-33)
  stderr = (getattr(error, "stderr", None) or b"").decode("utf-8", "replace")
  if "unknown revision" in stderr or "does not have any commits" in stderr:
    report.skip_repository("no_commits", folder, "commit its files first")
  else:
    report.skip_repository("git_failed", folder, _git_error(error))


def _listed_files(listed: Sequence[bytes], top: str, report: Report) -> Tuple[Candidate, ...]:
  """The *.py files of `git ls-files -z`'s entries, sorted; an entry that is no relative path
  inside the checkout (an index edited by hand: /etc/passwd.py) is counted outside_source."""
  files = []
  for raw in listed:
    if raw.endswith(b".py"):
      rel = os.fsdecode(raw)
      if os.path.isabs(rel) or os.path.normpath(rel) != rel:
        report.add("outside_source")
        continue
      files.append(Candidate(rel=rel, path=os.path.join(top, rel)))
  return tuple(sorted(files, key=lambda c: c.rel))


def _indexed_repository(folder: pathlib.Path, top: str, plain_owner: str,
                        report: Report) -> Optional[RepoSource]:
  """The files the checkout's index lists, named by its origin, without history (as a plain
  folder's): for a checkout whose objects git would read from other folders. ls-files and config
  read the index and the config, which _git_folder_problem checked, not the objects."""
  try:
    listed = _git(top, "ls-files", "-z", "--cached").split(b"\0")
    url = _origin_url(top)
  except (*_GIT_FAILED, OSError) as e:
    _skip_for_git(folder, e, report)
    return None
  owner, name = _owner_and_name_from_url(url) or (plain_owner, _safe_name(folder.name))
  return RepoSource(owner=owner, name=name, init_hash=_sha1(f"{owner}/{name}"), top=top,
                    files=_listed_files(listed, top, report), metadata=added_metadata,
                    commit_time=COMMIT_TIME, where=str(folder))


def _walk_python_files(top: str, report: Report) -> List[Candidate]:
  """Every *.py below `top` outside hidden folders and __pycache__; symlinked folders that lead
  outside `top` are counted, the others are not followed (their target is walked anyway).
  Folders that cannot be listed are passed over, as os.walk does (stranger_paths.walk, not
  os.walk: Python 3.11's recurses once per level, and a source's folders may nest deeper than the
  interpreter's recursion limit)."""
  def ignored(entry: os.DirEntry) -> bool:
    return entry.name.startswith(".") or entry.name == "__pycache__"

  def unlisted(folder: str, error: OSError) -> None:
    # A folder nested past the system's path limit (~2,000 levels) lost its files uncounted
    # (helper-25's audit): its files are not read, and it is counted once.
    report.add("too_deep" if error.errno == errno.ENAMETOOLONG else "unreadable")

  files = []
  for entry, _ in stranger_paths.walk(top, lambda entry, depth: not ignored(entry),
                                      on_error=unlisted):
    try:
      is_dir = entry.is_dir()  # (follows a link)
    except OSError:
      is_dir = False
    if is_dir:
      if (entry.is_symlink() and not ignored(entry)
          and not errors.within(os.path.realpath(entry.path), top)):
        report.add("outside_source")
    elif entry.name.endswith(".py"):
      files.append(Candidate(rel=pathlib.Path(os.path.relpath(entry.path, top)).as_posix(),
                             path=entry.path))
  return sorted(files, key=lambda c: c.rel)


def _plain_repository(folder: pathlib.Path, owner: str, report: Report) -> RepoSource:
  top = os.path.realpath(folder)
  name = _safe_name(folder.resolve().name)  # (`import .` named it "unnamed": helper-45's review)
  files = tuple(_walk_python_files(top, report))
  return RepoSource(owner=owner, name=name, init_hash=_sha1(f"{owner}/{name}"), top=top,
                    files=files, metadata=added_metadata,
                    commit_time=COMMIT_TIME, where=str(folder))


# Why a dist-info file is not read (_read_dist_info), for the message that skips its distribution.
_UNREAD = {
    "outside_source": "a link out of the source",
    "unreadable": "missing, unreadable or not a regular file",
    "too_large": f"over {MAX_FILE_BYTES:,} bytes",
}


def _read_dist_info(path: pathlib.Path, top: str) -> Tuple[Optional[str], bytes]:
  """(None, content) of a dist-info file (METADATA, RECORD, direct_url.json), else (the reason
  it is not read, b""): read as the *.py files are, only a regular file inside `top` of at most
  MAX_FILE_BYTES, since a FIFO would block the import and a link to /dev/zero never ends."""
  real = os.path.realpath(path)
  if not errors.within(real, top):
    return "outside_source", b""
  reason, _, data = flcc.read_regular_file(real, MAX_FILE_BYTES)
  return reason, data


def _is_editable(dist_info: pathlib.Path, top: str) -> bool:
  """Whether direct_url.json says "editable"; one that cannot be read is as if missing."""
  reason, data = _read_dist_info(dist_info / "direct_url.json", top)
  try:
    direct_url = json.loads(data) if reason is None else None
  except (ValueError, RecursionError):  # RecursionError: nested past the limit
    return False
  dir_info = direct_url.get("dir_info") if isinstance(direct_url, dict) else None
  return isinstance(dir_info, dict) and bool(dir_info.get("editable"))


def _distribution(dist_info: pathlib.Path, top: str,
                  report: Report) -> Tuple[Optional[RepoSource], set]:
  """The repository of one *.dist-info folder and the resolved paths its RECORD lists."""
  contents = {}
  for file_name in ("METADATA", "RECORD"):
    reason, contents[file_name] = _read_dist_info(dist_info / file_name, top)
    if reason is not None:
      report.skip_repository("not_a_repository", dist_info, "no readable METADATA and RECORD "
                             f"({file_name}: {_UNREAD[reason]})")
      return None, set()
  try:
    record = contents["RECORD"].decode("utf-8")
  except UnicodeDecodeError:
    report.skip_repository("not_a_repository", dist_info, "no readable METADATA and RECORD "
                           "(RECORD: not UTF-8)")
    return None, set()
  # Parsed as text: a header of bytes that are not ASCII would be an email Header object.
  meta = email.parser.HeaderParser().parsestr(contents["METADATA"].decode("utf-8", "replace"))
  stem = dist_info.name.removesuffix(".dist-info")
  name = meta.get("Name") or stem.split("-")[0]
  version = meta.get("Version") or stem.partition("-")[2]
  listed, files = set(), []
  for row in csv.reader(io.StringIO(record)):
    if not row or not row[0]:
      continue
    path = os.path.normpath(os.path.join(top, row[0]))
    listed.add(path)
    if not row[0].endswith(".py"):
      continue
    if not errors.within(path, top):  # e.g. ../../../bin/tool: installed outside site-packages
      report.add("outside_source")
      continue
    files.append(Candidate(rel=pathlib.Path(os.path.relpath(path, top)).as_posix(), path=path))
  if _is_editable(dist_info, top):
    report.skip_repository("editable_install", dist_info)
    return None, listed
  repo = _safe_name(re.sub(r"[-_.]+", "-", name).lower())  # PEP 503 normalised
  files = tuple(sorted(set(files), key=lambda c: c.rel))
  return RepoSource(owner=SITE_PACKAGES_OWNER, name=repo, init_hash=_sha1(f"{name}=={version}"),
                    top=top, files=files, metadata=added_metadata,
                    commit_time=COMMIT_TIME, where=str(dist_info)), listed


def _site_packages(src: pathlib.Path, report: Report) -> List[RepoSource]:
  top = os.path.realpath(src)
  repos, listed = [], set()
  for dist_info in sorted(src.glob("*.dist-info")):
    repo, paths = _distribution(dist_info, top, report)
    listed |= paths
    if repo is not None:
      repos.append(repo)
  # Code no RECORD claims (a bare module, an egg-info install) has no distribution to name it.
  for candidate in _walk_python_files(top, report):
    if os.path.normpath(candidate.path) not in listed:
      report.add("not_in_a_record", _size(candidate.path))
  return repos


def _is_git_checkout(folder: pathlib.Path) -> bool:
  # (os.path.exists: Path.exists raised PermissionError, a traceback, in a folder that cannot be
  # searched, which is read as a plain one, its files counted unreadable: helper-48's audit; a
  # .git link that leads nowhere is no checkout either, as before)
  return os.path.exists(folder / ".git")


# Files at a plain folder's top that make it a project (with any *.py file there).
_PROJECT_FILES = ("pyproject.toml", "setup.cfg")


# What a SRC may be, as the messages name them.
_SRC_KINDS = "a git checkout, a project folder, a folder of repositories or a site-packages folder"


def _is_one_project(src: pathlib.Path) -> bool:
  """Whether a plain folder is one project: Python code or a project file of its own at its
  top, and no git checkout among its sub-folders (then a stray script beside repositories)."""
  own = checkouts = False
  for entry in os.scandir(src):
    if entry.name.startswith("."):
      continue
    if entry.is_file(follow_symlinks=False):
      own = own or entry.name.endswith(".py") or entry.name in _PROJECT_FILES
    elif entry.is_dir(follow_symlinks=False):
      checkouts = checkouts or _is_git_checkout(pathlib.Path(entry.path))
  return own and not checkouts


def discover(src: pathlib.Path, report: Report) -> List[RepoSource]:
  """The repositories of one SRC argument (see the module doc)."""
  # Named as a checkout without origin is, should it be read as a plain folder.
  plain_owner = _safe_name(src.resolve().parent.name)
  if _is_git_checkout(src):
    repo = _git_repository(src, plain_owner, report)
    return [repo] if repo else []
  if any(src.glob("*.dist-info")):
    return _site_packages(src, report)
  if _is_one_project(src):
    repo = _plain_repository(src, plain_owner, report)
    # Said only where it could have been meant otherwise, a file of it in a sub-folder: a project
    # folder without, as README's `import ~/src/project-a` gives, got it too (helper-58's audit).
    if any("/" in candidate.rel for candidate in repo.files):
      report.note(src, "read as one repository (it holds Python files of its own); to import "
                  "its sub-folders as repositories, give them or a folder that holds only them")
    return [repo]
  repos = []
  owner = _safe_name(src.resolve().name)
  for entry in sorted(os.scandir(src), key=lambda e: e.name):
    path = pathlib.Path(entry.path)
    if entry.is_symlink() or not entry.is_dir() or entry.name.startswith("."):
      report.skip_repository("not_a_repository", path, "not a folder in a folder of repositories")
    elif _is_git_checkout(path):
      repo = _git_repository(path, owner, report)
      repos.extend([repo] if repo else [])
    else:
      repos.append(_plain_repository(path, owner, report))
  return repos


# --------------------------------------------------------------------------------------------------
# Reading and importing.


def _size(path: str) -> int:
  try:
    return os.lstat(path).st_size
  except OSError:
    return 0


class RealPaths:
  """os.path.realpath of the files of one repository below its `top` (itself resolved), each
  folder resolved once. realpath looks up every part of a path with an lstat of the path so far,
  so a file N folders deep cost ~N^2 lookups: a stranger's chain of 2,000 folders with a file in
  each took 117 s to import (helper-27's measure). Here a file costs the lookup of its own name
  and of the folders not met before, each a link resolved by realpath as before."""

  def __init__(self, top: str):
    self._folders = {"": top}  # a folder's path relative to top -> its real path

  def of(self, rel: str) -> str:
    """The real path of `top`/`rel` (a relative path without "." or ".." parts)."""
    folder, name = os.path.split(rel)
    missing = []  # the folders above `rel` not resolved yet, nearest first
    while folder not in self._folders:
      if os.path.isabs(folder):  # (examine's callers give none: "/" is its own dirname)
        raise ValueError(f"not a relative path: {rel!r}")
      missing.append(folder)
      folder = os.path.dirname(folder)
    real = self._folders[folder]
    for folder in reversed(missing):
      real = self._folders[folder] = _resolved(real, os.path.basename(folder))
    return _resolved(real, name)


def _resolved(real_folder: str, name: str) -> str:
  """The real path of the entry `name` of the folder whose real path is `real_folder`."""
  path = os.path.join(real_folder, name)
  return os.path.realpath(path) if name in ("", ".", "..") or os.path.islink(path) else path


def examine(candidate: Candidate, top: str, real_paths: RealPaths) -> Tuple[str, int, bytes]:
  """(outcome, bytes read, normalised content): "kept" or the reason the file is dropped;
  `real_paths`: the RealPaths of `top`, shared by a repository's files."""
  try:
    candidate.rel.encode("utf-8")
  except UnicodeEncodeError:
    return "not_utf8", 0, b""
  real = real_paths.of(candidate.rel)
  if not errors.within(real, top):
    return "outside_source", 0, b""
  reason, num_bytes, data = flcc.read_regular_file(real, MAX_FILE_BYTES, within=top)
  if reason is not None:
    return reason, num_bytes, b""
  if b"\0" in data:
    return "binary", num_bytes, b""
  try:
    text = data.decode("utf-8")
  except UnicodeDecodeError:
    return "not_utf8", num_bytes, b""
  try:
    text = strip_comments(text)
  except (tokenize.TokenError, SyntaxError):
    return "untokenizable", num_bytes, b""
  if not text.strip():
    return "empty", num_bytes, b""
  return "kept", num_bytes, text.encode("utf-8")


class _Progress:
  """A throttled progress line on stderr, for sources that take more than a few seconds."""

  def __init__(self, total_repos: int):
    self._total = total_repos
    self._start = self._last = time.monotonic()

  def update(self, index: int, report: Report):
    now = time.monotonic()
    if now - self._last < _PROGRESS_SECONDS:
      return
    self._last = now
    files = sum(report.files.values())
    mb = report.bytes_read() / 1e6
    elapsed = now - self._start
    print(f"import: repository {index}/{self._total}, {files} files, {mb:.1f} MB read, "
          f"{files / elapsed:.0f} files/s, {mb / elapsed:.1f} MB/s", file=sys.stderr)


def _write_all(repos: List[RepoSource], v3: pathlib.Path, report: Report) -> None:
  seen = set()
  progress = _Progress(len(repos))
  for index, repo in enumerate(repos, 1):
    key = (repo.repo_id, repo.init_hash)
    if key in seen:
      report.skip_repository("duplicate_repository", repo.where,
                             f"{repo.repo_id} at {repo.init_hash} is imported from another source")
      continue
    kept, kept_bytes, real_paths = [], 0, RealPaths(repo.top)
    for candidate in repo.files:
      outcome, num_bytes, data = examine(candidate, repo.top, real_paths)
      report.add(outcome, num_bytes)
      if outcome == "kept":
        kept.append((candidate.rel, data))
        kept_bytes += num_bytes
      progress.update(index, report)
    if not kept:
      report.skip_repository("no_python_files", repo.where)
      continue
    try:
      metadata = repo.metadata([rel for rel, _ in kept])
    except _GIT_FAILED as e:  # git log: e.g. an object a partial clone lacks, or a FIFO for one
      report.drop_kept("git_failed", len(kept), kept_bytes)
      report.skip_repository("git_failed", repo.where, _git_error(e))
      continue
    seen.add(key)
    report.written_bytes += write_init_hash(v3, repo.repo_id, repo.init_hash, kept, metadata,
                                            repo.commit_time)
    report.repositories += 1


def _check_output(out: pathlib.Path, sources: Sequence[pathlib.Path], force: bool) -> None:
  """Refuses an --out whose writing or replacement would lose anything but an earlier root."""
  for src in sources:
    if stranger_paths.same_or_inside(out, src):
      raise CorpusError(f"--out {out} is inside the source {src}; write the root elsewhere")
    # --force would remove the source with the old root.
    if stranger_paths.same_or_inside(src, out):
      raise CorpusError(f"SRC {src} is inside --out {out}, which the import replaces; write the "
                        "root to a folder of its own")
  # An earlier root is v3/ and nothing else, as an import writes it: never what was put beside.
  processes.check_replaceable(
      out, lambda folder: all(p.name == "v3" and p.is_dir() for p in folder.iterdir()),
      "an FLCC root (a folder of v3/ alone)", force, CorpusError)


def _check_report(report: pathlib.Path, out: pathlib.Path, sources: Sequence[pathlib.Path],
                  force: bool) -> None:
  """Refuses a --report that would replace something without --force, that goes inside a source
  (as --out does: --force is for earlier outputs, never a source file), or that cannot be
  written: checked before the import, which would otherwise fail after writing the root."""
  for src in sources:
    if (stranger_paths.same_or_inside(report, src)
        or errors.within(os.path.realpath(report), os.path.realpath(src))):
      raise CorpusError(f"--report {report} is inside the source {src}; write it elsewhere")
  if report.is_dir():
    raise CorpusError(f"--report {report} is a folder; give a file name")
  if report.exists() or report.is_symlink():
    if report.is_symlink() or not report.is_file():  # a FIFO, a device, a link: never replaced
      raise CorpusError(f"--report {report} exists and is not a plain file; choose another "
                        "--report")
    if not force:
      raise CorpusError(f"--report {report} exists; pass --force to replace it")
  if (stranger_paths.same_or_inside(report, out)
      or errors.within(os.path.realpath(report), os.path.realpath(out))):
    raise CorpusError(f"--report {report} is inside --out {out}; write it beside the root")
  folder = report.parent  # the report's folder, or the nearest one above that exists
  while not (folder.exists() or folder.is_symlink()) and folder != folder.parent:
    folder = folder.parent
  if not folder.is_dir():
    raise CorpusError(f"--report {report}: {folder} is not a folder; give another --report")
  if not os.access(folder, os.W_OK | os.X_OK):  # no permission, or a read-only file system
    raise CorpusError(f"--report {report}: {folder} cannot be written in; give another --report")


def import_sources(sources: Sequence[pathlib.Path], out: pathlib.Path,
                   force: bool = False) -> Report:
  """Imports every SRC into the FLCC root `out` (atomically) and returns what was kept/dropped."""
  if not sources:
    raise CorpusError(f"give at least one SRC: {_SRC_KINDS}")
  for src in sources:
    if not src.is_dir():
      raise CorpusError(f"SRC {src} is not a folder; give {_SRC_KINDS}")
    try:
      os.scandir(src).close()
    except OSError as e:  # (a traceback from deep inside the reading: helper-48's audit)
      raise CorpusError(f"SRC {src} cannot be read ({e.strerror}); give a folder you can "
                        "read") from None
  _check_output(out, sources, force)
  report = Report()
  repos = []
  for src in sources:
    repos.extend(discover(src, report))
  if not any(repo.files for repo in repos):
    # An empty root would train and evaluate on nothing: checkouts that could not be read, *.py
    # files beside git checkouts that hold none (a folder of repositories), or no Python code.
    given = ", ".join(map(str, sources))
    unread = {reason: count for reason, count in report.skipped_repositories.items()
              if reason in ("no_commits", "git_failed")}
    if unread:  # checkouts that hold code: what to do about them is on the lines above
      raise CorpusError(f"no repository imported from {given}: skipped "
                        f"{', '.join(f'{reason} {count}' for reason, count in sorted(unread.items()))}"
                        " (the lines above say why)")
    if any((src / "v3").is_dir() for src in sources):
      raise CorpusError(f"{given}: an FLCC root already (it holds v3/): give it to `code-t5 "
                        "prepare`, `train` or `eval` as --root")
    if report.files["not_in_a_record"]:
      raise CorpusError(f"no repository found in {given}: its *.py files are in no "
                        "distribution's *.dist-info/RECORD (not_in_a_record); give the "
                        "site-packages of a venv, or the project folders themselves")
    if any(_walk_python_files(os.path.realpath(src), Report()) for src in sources):
      raise CorpusError(f"no repository found in {given}: *.py files beside git checkouts are "
                        "read as a folder of repositories; move the files into a folder of their "
                        "own (SRC/NAME/...), or give a git checkout or site-packages")
    raise CorpusError(f"SRC {given} {'holds' if len(sources) == 1 else 'hold'} no Python files "
                      f"(*.py): give {_SRC_KINDS} of Python code")
  # The layout's order, not the sources' order, decides which duplicate wins and every name.
  repos.sort(key=lambda r: (r.repo_id, r.init_hash, r.where))
  with errors.writing(f"the FLCC root {out}", out.parent, "give another --out"):
    out.parent.mkdir(parents=True, exist_ok=True)
    # The temporaries of killed imports (of any root here) would stay forever: those whose owner
    # is gone go; the name of ours says whose it is (processes.temporary_name + mkdtemp's suffix).
    processes.remove_stale_temporaries(out.parent, lambda line: print(line, file=sys.stderr))
    tmp = pathlib.Path(tempfile.mkdtemp(prefix=processes.temporary_name(f".{out.name}") + "-",
                                        dir=out.parent))
    try:
      (tmp / "v3" / pathlib.Path(*flcc.PYTHON_DIR)).mkdir(parents=True)
      (tmp / "v3" / "repositories").mkdir()
      _write_all(repos, tmp / "v3", report)
      if not report.files["kept"]:  # every file found was dropped (the summary says why)
        raise CorpusError(
            f"no file of {', '.join(map(str, sources))} could be imported: dropped "
            f"{', '.join(f'{reason} {n}' for reason, n in sorted(report.files.items()) if n)}"
            " (`code-t5 import --help` says what each reason means); nothing was written")
      os.chmod(tmp, 0o755)  # mkdtemp makes it private
      processes.move_into_place(tmp, out, replace=force)
    finally:
      shutil.rmtree(tmp, ignore_errors=True)
  return report


def summary(report: Report, out: pathlib.Path, seconds: float) -> str:
  result = report.to_dict()
  read_mb = report.bytes_read() / 1e6
  repositories, files = result["repositories"], result["files"]
  lines = [f"wrote {out}: {repositories} {'repository' if repositories == 1 else 'repositories'}, "
           f"{files} file{'' if files == 1 else 's'}, "
           f"{result['mb_kept']:.2f} MB ({read_mb:.1f} MB read in {seconds:.1f} s" +
           # (a rate of a run under a second is no figure: helper-58's audit)
           (f", {read_mb / seconds:.1f} MB/s)" if seconds >= 1 else ")")]
  if result["dropped"]:
    lines.append("dropped files: " + ", ".join(
        f"{reason} {v['files']} ({v['mb']:.2f} MB)" for reason, v in
        sorted(result["dropped"].items(), key=lambda item: -item[1]["files"])))
  if result["skipped_repositories"]:
    lines.append("skipped repositories: " + ", ".join(
        f"{reason} {n}" for reason, n in result["skipped_repositories"].items()))
  return "\n".join(lines)


def _cli(args) -> int:
  start = time.monotonic()
  if args.report:
    _check_report(args.report, args.out, args.sources, args.force)
  report = import_sources(args.sources, args.out, force=args.force)
  seconds = time.monotonic() - start
  print(summary(report, args.out, seconds), file=sys.stderr)
  if args.report:
    # Checked above, yet a disk can fill up: the root is written, and the line says so.
    with errors.writing(f"the report {args.report}", args.report.parent,
                        f"{args.out} is written; give another --report"):
      value = dict(report.to_dict(), out=str(args.out.resolve()),
                   sources=[str(s.resolve()) for s in args.sources], seconds=round(seconds, 1))
      processes.write_file_beside(
          args.report, lambda f: f.write(json.dumps(value, indent=1, sort_keys=True) + "\n"),
          replace=args.force, make_parents=True)
  return 0


def register_cli(subparsers) -> None:
  # The module docstring's whole design would scroll the options off the screen.
  parser = subparsers.add_parser(
      "import", help="turn git checkouts, project folders, folders of repositories or a "
      "site-packages folder into an FLCC root (comments stripped as FLCC's normalized variant)",
      description="Write an FLCC root from git checkouts (the *.py files git tracks), project "
      "folders, folders of repositories (one per sub-folder) and site-packages folders (one per "
      "distribution), "
      "comments stripped as FLCC's normalized variant. A bad file is dropped and counted by reason "
      "(outside_source, unreadable, too_deep, too_large, not_utf8, binary, untokenizable, empty, "
      "not_in_a_record; a repository: git_failed, no_commits, ...), never stops the import; --out "
      "is written beside itself and renamed into place (an earlier root replaced only with "
      "--force). More: docs/data.md.")
  parser.add_argument("sources", nargs="+", type=pathlib.Path, metavar="SRC",
                      help="git checkout, project folder, folder of repositories, or "
                      "site-packages folder")
  parser.add_argument("--out", type=pathlib.Path, required=True,
                      help="the root to write (the folder that will hold v3/)")
  parser.add_argument("--force", action="store_true",
                      help="replace --out if it is an FLCC root, and --report if it exists")
  parser.add_argument("--report", type=pathlib.Path,
                      help="also write the counts (kept, dropped by reason, seconds) as JSON here")
  parser.set_defaults(func=_cli)
