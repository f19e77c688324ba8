"""Shared pieces: project paths, the series file, base.toml, git, work trees and patch headers.

Everything that edits patches is delegated to git (``am -3``, ``format-patch``,
``rebase``, ``range-diff``, ``interpret-trailers``). This module only reads the headers
git writes and keeps the bookkeeping that lets the tool refuse to lose work.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import tomllib
import zipfile
from pathlib import Path

SERIES_BRANCH = "series"
# Each commit that came from a patch file carries that file's name in this notes ref.
# git copies notes when it rewrites commits (rebase, amend), so the name follows a
# patch through the user's edits; squashed commits carry both names.
NOTES_REF = "refs/notes/te-series"
# Identity used for the synthetic base commit of a PyPI base and as `git am`'s committer.
BOT = {
    "GIT_AUTHOR_NAME": "te-series",
    "GIT_AUTHOR_EMAIL": "te-series@invalid",
    "GIT_COMMITTER_NAME": "te-series",
    "GIT_COMMITTER_EMAIL": "te-series@invalid",
    # Stable dates so a rebuilt base has the same commit id.
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
}
# Author and committer of an upstream prerequisite's commit in fork/: upstream's change, not
# the series' (nor the placeholder's), never signed off by te-series; stable dates so that
# the same base gives the same commit id (range-diff, a rebuilt fork/, a rebase).
UPSTREAM = {
    "GIT_AUTHOR_NAME": "TransformerEngine upstream",
    "GIT_AUTHOR_EMAIL": "upstream@te-series.invalid",
    "GIT_COMMITTER_NAME": "TransformerEngine upstream",
    "GIT_COMMITTER_EMAIL": "upstream@te-series.invalid",
    "GIT_AUTHOR_DATE": BOT["GIT_AUTHOR_DATE"],
    "GIT_COMMITTER_DATE": BOT["GIT_COMMITTER_DATE"],
}
PYPI_PREFIX = "transformer_engine/"
PATCH_GLOB = "*.patch"
BACKUP_DIR = ".te-series-backup"


class SeriesError(Exception):
    """An error the user can act on. The message says what failed and how to recover."""


class PatchFailed(SeriesError):
    """`git am` stopped on a patch; the work tree is left at that patch for the user.

    The message names the patch, file and hunk and quotes git; the caller adds where the
    tree is and how to go on. `kind` says what happened: "conflict" (conflict markers in
    the tree), "unapplied" (nothing of the patch was applied), "converted" (the patch file's
    lines end in CRLF: a checkout converted it), "already" (git am made no
    commit: the change is already in the tree) or "empty" (the patch has no diff).
    """

    def __init__(self, text: str, kind: str = "conflict"):
        super().__init__(text)
        self.kind = kind


def project_root() -> Path:
    """Root of the te-series checkout: $TE_SERIES_ROOT, else the folder holding patches/.

    When $TE_SERIES_ROOT names one checkout and the current directory is inside another,
    say which one is used: a variable left over from another shell must not go unnoticed.
    """
    here = Path.cwd().resolve()
    found = next((d for d in (here, *here.parents) if (d / "patches" / "series").is_file()), None)
    env = os.environ.get("TE_SERIES_ROOT")
    if env:
        root = Path(env).resolve()
        if not (root / "patches" / "series").is_file():
            raise SeriesError(
                f"TE_SERIES_ROOT={env} has no patches/series; unset it (unset TE_SERIES_ROOT) "
                "or point it at a te-series checkout"
            )
        if found is not None and found != root:
            print(
                f"te-series: warning: working on {root} (the te-series script you ran, or "
                f"TE_SERIES_ROOT), not on the checkout you are in ({found}); to work on that "
                "one, run its own ./te-series",
                file=sys.stderr,
            )
        return root
    if found is None:
        raise SeriesError(
            "no patches/series found here or above; run inside the te-series checkout"
        )
    return found


def te_import_error(python: Path | str) -> str | None:
    """Why `python` cannot import torch and TE's PyTorch ops (its last stderr line), or None."""
    proc = subprocess.run(
        [str(python), "-c", "import torch, transformer_engine.pytorch.ops"],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode == 0:
        return None
    return (proc.stderr.strip().splitlines() or ["(no message)"])[-1]


def cache_dir() -> Path:
    """Cache for downloaded and built wheels, outside the repository."""
    d = Path(os.environ.get("TE_SERIES_CACHE", Path.home() / ".cache" / "te-series"))
    d.mkdir(parents=True, exist_ok=True)
    return d


def progress(msg: str) -> None:
    """One line of progress on stderr, with a wall-clock stamp."""
    print(f"[te-series {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def rel(path: Path, root: Path) -> str:
    """path relative to root when it is inside, for messages."""
    try:
        return str(Path(path).resolve().relative_to(root.resolve())) or "."
    except ValueError:
        return str(path)


# While a group of writes runs, Ctrl-C is held (no_interrupt) and git runs in its own
# session, so a terminal's Ctrl-C (SIGINT to the whole foreground process group) cannot
# kill git halfway through a write either.
_HOLD = {"depth": 0}


@contextlib.contextmanager
def no_interrupt():
    """Hold Ctrl-C until the block is done, so that a group of writes is all or nothing.

    Nested blocks belong to the outermost one: only it raises the held KeyboardInterrupt.
    """
    if _HOLD["depth"]:
        _HOLD["depth"] += 1
        try:
            yield
        finally:
            _HOLD["depth"] -= 1
        return
    if threading.current_thread() is not threading.main_thread():
        yield  # signals reach the main thread only
        return
    caught = []
    old = signal.signal(signal.SIGINT, lambda *_: caught.append(1))
    _HOLD["depth"] = 1
    try:
        yield
    finally:
        _HOLD["depth"] = 0
        signal.signal(signal.SIGINT, old)
    # A SIGINT that was ignored before (nohup, `cmd &` in a script) stays ignored.
    if caught and old is not signal.SIG_IGN:
        raise KeyboardInterrupt


def read_text(path: Path, root: Path | None = None) -> str:
    """A project text file as UTF-8; an error naming the file, line and byte when it is not."""
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8").removeprefix("\ufeff")  # an editor's byte-order mark
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        label = rel(path, root) if root else str(path)
        raise SeriesError(
            f"{label} is not UTF-8 text: line {line}, column {col} has the byte "
            f"0x{data[e.start]:02X}. Fix that line in an editor, or restore the file "
            f"(git checkout -- {label})."
        ) from None


def write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.te-series-tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


# --------------------------------------------------------------------------- git


# Settings every git the tool runs gets, whatever the user's config (global, system or the
# work tree's own) says: nothing of the user's may change what am, format-patch, rebase,
# notes and log make or print. Signing, hooks (core.hooksPath, .git/hooks), git attributes
# outside the tree (core.attributesFile; the system's are off through GIT_ATTR_NOSYSTEM),
# message encodings, whitespace fixing (apply.whitespace=fix rewrites patch content),
# line-ending conversion (core.autocrlf rewrites a file te-series commits), notes rewriting
# (the patch names ride on notes through the tool's rebase). Each is tested
# (tests/test_git_isolation.py). A tree's own .gitattributes still count (they are part of
# TE); .git/info/attributes is refused where it would change a patch
# (refuse_info_attributes).
PINNED = {
    "commit.gpgsign": "false",
    "core.hooksPath": os.devnull,
    "core.attributesFile": os.devnull,
    "i18n.commitEncoding": "UTF-8",
    "i18n.logOutputEncoding": "UTF-8",
    "apply.whitespace": "nowarn",
    "core.autocrlf": "false",
    "notes.rewrite.rebase": "true",
}
GIT_OVERRIDES = tuple(a for k, v in PINNED.items() for a in ("-c", f"{k}={v}"))
_LOCAL_ENV: list[str] = []


# git's variables that override the notes settings the tool pins: the patch names ride on
# notes, and a rebase must carry them (tool-review-v7 #3)
_NOTES_ENV = ("GIT_NOTES_REF", "GIT_NOTES_DISPLAY_REF", "GIT_NOTES_REWRITE_REF",
              "GIT_NOTES_REWRITE_MODE")  # fmt: skip


def git_env(extra: dict | None = None) -> dict:
    """The environment of every git the tool runs: the caller's, less the variables that
    point git at another repository, index or object store (GIT_DIR, GIT_WORK_TREE,
    GIT_INDEX_FILE, GIT_OBJECT_DIRECTORY, ...: what `git rev-parse --local-env-vars` lists,
    as a hook or `git -c` leaves them), plus the tool's identity and `extra`."""
    if not _LOCAL_ENV:
        proc = subprocess.run(
            ["git", "rev-parse", "--local-env-vars"], capture_output=True, text=True,
            check=False, cwd=os.path.abspath(os.sep),
        )  # fmt: skip
        _LOCAL_ENV.extend(proc.stdout.split() or ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"])
    env = {k: v for k, v in os.environ.items() if k not in _LOCAL_ENV and k not in _NOTES_ENV}
    return {**env, **BOT, "GIT_ATTR_NOSYSTEM": "1", **(extra or {})}


def git(
    *args: str,
    cwd: Path | str,
    check: bool = True,
    env: dict | None = None,
    input: str | None = None,
) -> str:
    """Run git and return stdout. Raise SeriesError carrying git's own message on failure."""
    proc = git_run(*args, cwd=cwd, env=env, input=input)
    if check and proc.returncode != 0:
        raise SeriesError(
            f"git {' '.join(args)} failed in {cwd}:\n{proc.stderr.strip() or proc.stdout.strip()}"
        )
    return proc.stdout


def git_run(
    *args: str,
    cwd: Path | str,
    env: dict | None = None,
    input: str | bytes | None = None,
    text: bool | None = None,
) -> subprocess.CompletedProcess:
    """Run git, return the finished process (check returncode yourself): the one door.

    Every git step runs whole: git runs in a session of its own (a terminal's Ctrl-C does
    not reach it) and a Ctrl-C meanwhile is held until it has finished, then raised. So the
    tool is only ever interrupted between two git steps, never inside one (a half-written
    am, index or checkout). A git killed by SIGINT all the same (kill -INT of git itself) is
    reported as the interruption it is.
    """
    with no_interrupt():
        proc = subprocess.run(
            ["git", *GIT_OVERRIDES, *args],
            cwd=cwd,
            capture_output=True,
            text=not isinstance(input, bytes) if text is None else text,
            env=git_env(env),
            input=input,
            check=False,
            start_new_session=True,
        )
    if proc.returncode == -signal.SIGINT:
        raise KeyboardInterrupt
    if proc.returncode < 0:
        raise SeriesError(
            f"git {' '.join(args)} in {cwd} was killed by signal {-proc.returncode}; "
            "run te-series status to see where things stand"
        )
    return proc


def blob_id(data: bytes) -> str:
    """Git blob id of some bytes (what `git hash-object` prints)."""
    import hashlib

    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def git_path(repo: Path, name: str) -> Path:
    """Where git keeps `name` for this repository (`git rev-parse --git-path`)."""
    return repo / git("rev-parse", "--git-path", name, cwd=repo).strip()


def in_progress(repo: Path) -> str | None:
    """Name a git operation left unfinished in repo (am, rebase, cherry-pick, merge)."""
    rebase_apply = git_path(repo, "rebase-apply")
    if rebase_apply.exists() and not (rebase_apply / "rebasing").exists():
        return "a git am"  # "applying" marks it, but a half-made am dir is an am too
    if rebase_apply.exists() or git_path(repo, "rebase-merge").exists():
        return "a git rebase"
    for head, what in (
        ("CHERRY_PICK_HEAD", "a git cherry-pick"),
        ("REVERT_HEAD", "a git revert"),
        ("MERGE_HEAD", "a git merge"),
        ("BISECT_LOG", "a git bisect"),
    ):
        if git_path(repo, head).exists():
            return what
    return None


def is_ancestor(repo: Path, a: str, b: str) -> bool:
    return git_run("merge-base", "--is-ancestor", a, b, cwd=repo).returncode == 0


# One definition of the format-patch arguments (export, port, pr, rebase). Every option
# that a git config key could change is given here (or as a -c override), so neither the
# user's global config nor the work tree's own .git/config changes the patches; with them a
# re-export of unchanged commits is byte-identical.
FORMAT_PATCH_ARGS = (
    "-c",
    "diff.suppressBlankEmpty=false",
    "-c",
    "core.quotePath=true",
    "-c",
    "color.ui=never",
    "format-patch",
    "--zero-commit",
    "--no-signature",
    "--full-index",
    "--no-numbered",
    "--no-renames",
    "--subject-prefix=PATCH",
    "--no-cover-letter",
    "--no-notes",
    "--no-thread",
    "--no-base",
    "--no-attach",
    "--encode-email-headers",
    "--filename-max-length=64",
    "--src-prefix=a/",
    "--dst-prefix=b/",
    "--suffix=.patch",  # format.suffix
    "--no-add-header",  # format.headers
    "--no-to",  # format.to
    "--no-cc",  # format.cc
    "--no-from",  # format.from
    "--no-signoff",  # format.signOff
    "--no-force-in-body-from",  # format.forceInBodyFrom
    "-U3",  # diff.context
    "--inter-hunk-context=0",  # diff.interHunkContext
    "--diff-algorithm=myers",  # diff.algorithm
    "-O/dev/null",  # diff.orderFile
    "--no-relative",  # diff.relative
    "--indent-heuristic",  # diff.indentHeuristic
    "--submodule=short",  # diff.submodule
)


def format_patch(repo: Path, revs: str, out: Path) -> list[Path]:
    """`git format-patch` revs into out; the files in order."""
    env = {
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_COUNT": "0",
        "GIT_CONFIG_PARAMETERS": "",
    }
    refuse_info_attributes(repo, revs)
    listed = git(*FORMAT_PATCH_ARGS, "-o", str(out), revs, cwd=repo, env=env)
    files = [
        Path(line) if Path(line).is_absolute() else repo / line
        for line in listed.splitlines()
        if line
    ]
    odd = [f.name for f in files if not f.name.endswith(".patch")]
    if odd:
        raise SeriesError(
            f"git format-patch in {repo} wrote {', '.join(odd[:3])}, not *.patch files; check "
            f"the format.* settings of git -C {repo} config --list. Nothing was written."
        )
    return files


def refuse_info_attributes(repo: Path, revs: str) -> None:
    """Refuse .git/info/attributes that set `diff` (-diff, binary, diff=DRIVER) on a file of
    revs: format-patch would write it as a binary patch or with other hunk headers.

    The file is read on its own (as core.attributesFile of an empty repository), so the
    tree's own .gitattributes, which are TE's, do not count.
    """
    info = git_path(repo, "info/attributes")
    if not info.is_file():
        return
    names = git("log", "--format=", "--name-only", "--no-renames", "-z", revs, cwd=repo)
    files = list(dict.fromkeys(n for n in names.split("\0") if n.strip()))
    if not files:
        return
    with tempfile.TemporaryDirectory(prefix="te-series-attr-") as tmp:
        git("init", "-q", cwd=tmp)
        out = git(
            "-c", f"core.attributesFile={info}", "check-attr", "--stdin", "-z", "diff",
            cwd=tmp, input="\0".join(files),
        ).split("\0")  # fmt: skip
    found = [
        f"{path}: diff {value}" for path, _, value in zip(out[0::3], out[1::3], out[2::3])
        if value != "unspecified"
    ]  # fmt: skip
    if found:
        where = rel(info, repo)
        raise SeriesError(
            f"{repo.name}/{where} sets the diff attribute (-diff, binary or diff=DRIVER) on "
            f"file(s) of the series: {'; '.join(found[:5])}. format-patch would write them as "
            f"binary patches or with other hunk headers. Remove those lines from "
            f"{repo.name}/{where} (or the file), then run again; nothing was written."
        )


def trailers(message: str, cwd: Path) -> list[tuple[str, str]]:
    """The trailers of a commit message, as git reads them (`interpret-trailers --parse`)."""
    out = git("interpret-trailers", "--parse", cwd=cwd, input=message)
    pairs = []
    for line in out.splitlines():
        key, _, value = line.partition(":")
        pairs.append((key.strip(), value.strip()))
    return pairs


IDENTITY_RE = re.compile(r"^([^<>]+?)\s*<([^<>\s]+@[^<>\s]+)>$")


# --------------------------------------------------------------------------- series


@dataclasses.dataclass
class Entry:
    """One line of a series file."""

    lineno: int
    text: str
    name: str | None = None  # a patch line
    pr: str | None = None  # a `# pr: <slug>` line


PR_RE = re.compile(r"^#\s*pr:\s*(.*?)\s*$")
PR_LOOSE_RE = re.compile(r"^#\s*pr\s*:", re.I)
SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
BASE_KEYS = {
    ("upstream", "commit"): ("the upstream commit the series applies to", "text"),
    ("pypi", "release"): ("the PyPI release whose files match the base commit", "text"),
    ("pypi", "torch"): ("the torch version of the CPU build", "text"),
    ("pypi", "core"): ("the name of TE's core wheel on PyPI", "text"),
    ("port", "targets"): ("the newer releases the series is ported to", "list"),
    ("series", "placeholder_identity"): (
        "the identity the stored patches are signed with",
        "identity",
    ),
}
BASE_EXAMPLES = {
    "text": '"..." (a string)',
    "list": '["2.20.2", ...] (a list of strings)',
    "identity": '"Name <email>"',
}


BLOB_RE = re.compile(r"^[0-9a-f]{40}$")
RELEASE_RE = re.compile(r"^[0-9][0-9A-Za-z.+!-]*$")  # a PEP 440 version: no glob, no path
PREREQ_EXAMPLE = """[[prerequisite]]
pr = 3410
subject = "Reduce Grouped MLP Fuser CPU Overhead (#3410)"
release = "2.20.2"
[prerequisite.files]
"transformer_engine/pytorch/ops/fuser.py" = { pre = "<40 hex>", post = "<40 hex>" }"""


@dataclasses.dataclass(frozen=True)
class Prerequisite:
    """An upstream change that main has and the base commit lacks (base.toml [[prerequisite]]).

    It is built at apply time from the release that contains it: each file whose blob is
    `pre` gets the release's file, whose blob is `post`. Upstream's work, never exported.
    """

    pr: int
    subject: str  # upstream's title, "... (#PR)": the subject of its commit in fork/
    release: str  # the PyPI release whose transformer_engine wheel holds the files
    files: dict[str, tuple[str, str]]  # path: (pre, post) blob ids

    @property
    def message(self) -> str:
        """The commit message: upstream's subject, and a body saying whose change it is."""
        body = (
            f"Upstream's change (TransformerEngine PR #{self.pr}): its part in "
            f"{', '.join(self.files)}, as released in {self.release}. Upstream main has it; "
            f"the base commit predates it. te-series made this commit from the files of the "
            f"{self.release} transformer_engine wheel (checked by blob id). It is upstream's "
            "work, not part of the series: te-series never exports it as a patch, and it "
            "carries no sign-off."
        )
        return f"{self.subject}\n\n{textwrap.fill(body, 72, break_on_hyphens=False)}\n"


class Series:
    """A series file and its patch files: patches/, or patches/port/<release>/.

    The series file is the one definition of which files are the series: names() in
    apply order. base.toml (always the main one) says where it applies.
    """

    def __init__(
        self,
        dir: Path,
        root: Path | None = None,
        base_file: Path | None = None,
        optional: bool = False,
    ):
        self.dir = Path(dir)
        self.optional = optional  # a missing series file is an empty series (ports)
        self.root = Path(root) if root else self.dir.parent
        self.base_file = Path(base_file) if base_file else self.dir / "base.toml"

    @property
    def series_file(self) -> Path:
        return self.dir / "series"

    @property
    def label(self) -> str:
        return rel(self.series_file, self.root)

    def entries(self) -> list[Entry]:
        if not self.series_file.is_file():
            if self.optional:
                return []
            raise SeriesError(f"{self.label} not found; restore it (git checkout -- {self.label})")
        out = []
        for i, text in enumerate(read_text(self.series_file, self.root).splitlines(), 1):
            s = text.strip()
            m = PR_RE.match(s)
            if m:
                out.append(Entry(i, text, pr=m.group(1)))
            elif s and not s.startswith("#"):
                out.append(Entry(i, text, name=s))
            else:
                out.append(Entry(i, text))
        return out

    def listing_problems(self) -> list[str]:
        """Lines naming a missing patch file, or a patch listed twice."""
        problems, seen = [], {}
        for e in self.entries():
            if e.name is None:
                continue
            if not e.name.endswith(".patch"):
                problems.append(
                    f"{self.label} line {e.lineno} names {e.name}, which is not a patch file "
                    "(*.patch); remove the line, or make it a comment (# ...)"
                )
            elif "/" in e.name or not (self.dir / e.name).is_file():
                problems.append(
                    f"{self.label} line {e.lineno} names {e.name}, which does not exist in "
                    f"{rel(self.dir, self.root)}/; restore the file or remove the line"
                )
            if e.name in seen:
                problems.append(
                    f"{self.label} lists {e.name} twice (lines {seen[e.name]} and {e.lineno}); "
                    "remove one line"
                )
            seen.setdefault(e.name, e.lineno)
        return problems

    def names(self) -> list[str]:
        """Patch file names in apply order; refuse a series with missing or repeated files."""
        problems = self.listing_problems()
        if problems:
            raise SeriesError("\n".join(problems))
        return [e.name for e in self.entries() if e.name]

    def paths(self) -> list[Path]:
        return [self.dir / n for n in self.names()]

    def stray(self) -> list[str]:
        """Patch files in the folder that the series file does not list."""
        listed = {e.name for e in self.entries() if e.name}
        return sorted(p.name for p in self.dir.glob(PATCH_GLOB) if p.name not in listed)

    def groups(self) -> tuple[list[tuple[str, list[str]]], list[str]]:
        """`# pr: <slug>` groups in order, and problems with them (none when ungrouped)."""
        groups: list[tuple[str, list[str]]] = []
        problems, before = [], []
        for e in self.entries():
            if e.pr is None and e.name is None and PR_LOOSE_RE.match(e.text.strip()):
                problems.append(
                    f"{self.label} line {e.lineno}: {e.text.strip()!r} is a comment, not a PR "
                    "marker; write it in lower case, '# pr: <slug>', to start a PR"
                )
            if e.pr is not None:
                if not SLUG_RE.match(e.pr):
                    problems.append(
                        f"{self.label} line {e.lineno}: {e.pr!r} is not a PR slug "
                        "(lower-case letters, digits, '.', '_', '-')"
                    )
                if any(slug == e.pr for slug, _ in groups):
                    problems.append(f"{self.label} line {e.lineno}: PR {e.pr!r} appears twice")
                groups.append((e.pr, []))
            elif e.name:
                (groups[-1][1] if groups else before).append(e.name)
        if groups and before:
            problems.append(f"{', '.join(before)} stand(s) before the first '# pr:' line")
        for slug, names in groups:
            if not names:
                problems.append(f"PR {slug!r} has no patches")
        return groups, problems

    # ----------------------------------------------------------------- base.toml

    def base(self) -> dict:
        label = rel(self.base_file, self.root)
        try:
            text = read_text(self.base_file, self.root)
        except FileNotFoundError:
            raise SeriesError(
                f"{label} not found: it names the upstream commit and PyPI release the series "
                f"applies to. Restore it (git checkout -- {label})."
            ) from None
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise SeriesError(
                f"{label} is not valid TOML ({e}). Fix it, or restore it "
                f"(git checkout -- {label})."
            ) from None

    def base_value(self, table: str, key: str):
        """A value of base.toml, checked against the type it must have."""
        label = rel(self.base_file, self.root)
        what, kind = BASE_KEYS[(table, key)]
        value = self.base().get(table, {})
        value = value.get(key) if isinstance(value, dict) else None
        if value is None or value == "" or value == []:
            raise SeriesError(
                f"{label} lacks `{key}` in [{table}] ({what}). Add it, or restore the file "
                "from git."
            )
        ok = {
            "text": isinstance(value, str) and value.strip() == value and "\n" not in value,
            "list": isinstance(value, list)
            and all(isinstance(v, str) and v.strip() for v in value),
            "identity": isinstance(value, str) and bool(IDENTITY_RE.match(value.strip())),
        }[kind]
        if not ok:
            raise SeriesError(
                f"{label} [{table}] {key} = {value!r} is not {BASE_EXAMPLES[kind]} ({what}). "
                f"Write it as {key} = {BASE_EXAMPLES[kind].split(' (')[0]}, or restore the file "
                "from git."
            )
        return value

    @property
    def base_commit(self) -> str:
        return self.base_value("upstream", "commit")

    @property
    def release(self) -> str:
        return self.base_value("pypi", "release")

    @property
    def port_targets(self) -> list[str]:
        return list(self.base_value("port", "targets"))

    @property
    def prerequisites(self) -> list[Prerequisite]:
        """base.toml's [[prerequisite]] tables, checked; [] when there are none."""
        label = rel(self.base_file, self.root)
        raw = self.base().get("prerequisite", [])

        def bad(where: str, what: str):
            raise SeriesError(
                f"{label} {where} {what}. A prerequisite is written\n{PREREQ_EXAMPLE}\n"
                "Fix it, or restore the file from git."
            )

        if not isinstance(raw, list) or not all(isinstance(t, dict) for t in raw):
            bad("`prerequisite`", "is not a list of [[prerequisite]] tables")
        out: list[Prerequisite] = []
        for i, t in enumerate(raw, 1):
            where = f"[[prerequisite]] number {i}"
            unknown = sorted(set(t) - {"pr", "subject", "release", "files"})
            if unknown:
                bad(where, f"has unknown key(s) {', '.join(unknown)}")
            pr = t.get("pr")
            if not isinstance(pr, int) or isinstance(pr, bool) or pr <= 0:
                bad(f"{where}: pr = {pr!r}", "is not an upstream PR number (pr = 3410)")
            where = f"[[prerequisite]] pr = {pr}:"
            if pr in [p.pr for p in out]:
                bad(where, "is listed twice; remove one table")
            for key in ("subject", "release"):
                v = t.get(key)
                if not isinstance(v, str) or not v.strip() or v.strip() != v or "\n" in v:
                    bad(f"{where} {key} = {v!r}", 'is not "..." (a one-line string)')
                if "\0" in v:
                    bad(f"{where} {key} = {v!r}", "holds a NUL character")
            if not RELEASE_RE.match(t["release"]):
                bad(f"{where} release = {t['release']!r}", 'is not a release number ("2.20.2")')
            files = t.get("files")
            if not isinstance(files, dict) or not files:
                bad(f"{where} files", "is missing or empty ([prerequisite.files])")
            pins = {}
            for path, ids in files.items():
                key = f'{where} files."{path}"'
                parts = path.split("/")
                if not path.startswith(PYPI_PREFIX) or "" in parts or {".", ".."} & set(parts):
                    bad(
                        key,
                        f"is not a file under {PYPI_PREFIX} (it comes from the release's wheel)",
                    )
                if not isinstance(ids, dict) or sorted(ids) != ["post", "pre"]:
                    bad(key, 'is not { pre = "<blob id>", post = "<blob id>" }')
                for k in ("pre", "post"):
                    if not isinstance(ids[k], str) or not BLOB_RE.match(ids[k]):
                        bad(f"{key}.{k} = {ids[k]!r}", "is not a full blob id (40 hex digits)")
                if ids["pre"] == ids["post"]:
                    bad(key, "has pre = post (no change)")
                other = next((q.pr for q in out if path in q.files), None)
                if other is not None:
                    bad(key, f"is a file of prerequisite #{other} too; one table per file")
                pins[path] = (ids["pre"], ids["post"])
            out.append(Prerequisite(pr, t["subject"], t["release"], pins))
        return out

    def port_series(self, release: str) -> Series:
        """The port patches for a release (patches/port/<release>/), maybe empty."""
        return Series(self.dir / "port" / release, self.root, self.base_file, optional=True)


def load_series(root: Path | None = None) -> Series:
    root = root or project_root()
    return Series(root / "patches", root)


HEADER_RE = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")


def base_text_with_commit(series: Series, commit: str) -> str:
    """base.toml's text with its [upstream] commit line pointed at `commit`, one line edited;
    nothing else changes.

    Refuses (before anything is written) a file it cannot edit that way.
    """
    label = rel(series.base_file, series.root)
    old = read_text(series.base_file, series.root)
    lines = old.splitlines(keepends=True)
    table, done, found = None, False, ""
    for i, line in enumerate(lines):
        m = HEADER_RE.match(line)
        if m:
            table = m.group(2)
            continue
        m = re.match(
            r"""^(\s*commit\s*=\s*)("[0-9A-Za-z._/-]*"|'[0-9A-Za-z._/-]*')(.*)$""", line, re.S
        )
        if table == "upstream" and re.match(r"^\s*commit\s*=", line) and not done:
            found = line.strip()
            if m:
                quote = m.group(2)[0]
                lines[i] = f"{m.group(1)}{quote}{commit}{quote}{m.group(3)}"
                done = True
    if not done:
        raise SeriesError(
            f"cannot point {label}'s [upstream] commit at {commit[:12]}: its line "
            f"({found or 'none found'}) is not `commit = \"<id>\"` in the [upstream] table. "
            f"Write it that way, commit {label}, and run again; nothing was changed."
        )
    text = "".join(lines)
    want = tomllib.loads(old)
    want["upstream"]["commit"] = commit
    try:
        ok = tomllib.loads(text) == want
    except tomllib.TOMLDecodeError:
        ok = False
    if not ok:
        raise SeriesError(
            f"cannot point {label}'s [upstream] commit at {commit[:12]} by editing its line "
            f'({found}) alone. Write it as `commit = "<id>"` in the [upstream] table, '
            f"commit {label}, and run again; nothing was changed."
        )
    return text


# --------------------------------------------------------------------------- wheels


def cached_wheel(req: str, pattern: str, hint: str = "") -> Path:
    """A wheel from the package index, downloaded once into the cache (one definition)."""
    dist = cache_dir() / "dist"
    dist.mkdir(exist_ok=True)
    found = sorted(dist.glob(pattern))
    if found:
        return found[0]
    progress(f"downloading {req}")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(dist), req],
        capture_output=True,
        text=True,
        check=False,
    )
    found = sorted(dist.glob(pattern))
    if proc.returncode != 0 or not found:
        raise SeriesError(f"could not download {req}:\n{proc.stderr.strip()[-1500:]}\n{hint}")
    return found[0]


def release_wheel(release: str, series: Series | None = None) -> Path:
    """The pure-Python `transformer_engine` wheel of a release."""
    hint = ""
    if series is not None:
        known = [f"{series.release} (base)"] + [f"{t} (port target)" for t in series.port_targets]
        known += [f"{p.release} (prerequisite #{p.pr})" for p in series.prerequisites]
        hint = f"Releases in {rel(series.base_file, series.root)}: {', '.join(known)}."
    return cached_wheel(
        f"transformer-engine=={release}",
        f"transformer_engine-{release}-py3-none-any.whl",
        hint,
    )


def extract_package(wheel: Path, dest: Path) -> None:
    """Unpack a wheel's transformer_engine/ into dest; refuse what is not such a wheel."""
    if not wheel.is_file():
        raise SeriesError(f"wheel {wheel} does not exist")
    try:
        with zipfile.ZipFile(wheel) as zf:
            members = [
                n for n in zf.namelist() if n.startswith(PYPI_PREFIX) and not n.endswith("/")
            ]
            if not members:
                raise SeriesError(
                    f"{wheel} has no {PYPI_PREFIX} package: pass the pure-Python "
                    "transformer_engine wheel (transformer_engine-<release>-py3-none-any.whl)"
                )
            for name in members:
                zf.extract(name, dest)
    except zipfile.BadZipFile:
        raise SeriesError(f"{wheel} is not a wheel (not a zip file)") from None


# --------------------------------------------------------------------------- patch headers


@dataclasses.dataclass
class FileChange:
    """One `diff --git` section of a patch: its path and pre/post blob ids."""

    path: str
    old_blob: str | None  # None for a new file
    new_blob: str | None  # None for a deleted file
    hunks: list[str]  # the "@@ ... @@" header lines, for error messages


@dataclasses.dataclass
class PatchInfo:
    """One `git format-patch` file, as `git am` reads it (through `git mailinfo`)."""

    path: Path
    subject: str
    body: str
    files: list[FileChange]
    author: str = ""  # "Name <email>"

    @property
    def message(self) -> str:
        return f"{self.subject}\n\n{self.body}\n" if self.body else f"{self.subject}\n"


_INDEX_RE = re.compile(r"^index ([0-9a-f]+)\.\.([0-9a-f]+)")
_ZERO = re.compile(r"^0+$")
_C_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def _unquote(s: str) -> tuple[str, str]:
    """A C-quoted path as git writes it ("a/caf\\303\\251.py"), and the text after it."""
    out, i = bytearray(), 1
    while i < len(s):
        c = s[i]
        if c == '"':
            return out.decode("utf-8", "surrogateescape"), s[i + 1 :]
        if c == "\\" and i + 1 < len(s):
            d = s[i + 1]
            if d in "01234567":
                out.append(int(s[i + 1 : i + 4], 8) & 0xFF)
                i += 4
                continue
            out.append(_C_ESCAPES.get(d, ord(d)))
            i += 2
            continue
        out += c.encode("utf-8", "surrogateescape")
        i += 1
    return out.decode("utf-8", "surrogateescape"), ""


def _diff_path(rest: str) -> str:
    """The file of a `diff --git <a> <b>` header (quoted names and spaces allowed)."""
    if rest.startswith('"'):
        after = _unquote(rest)[1].lstrip(" ")
        b = _unquote(after)[0] if after.startswith('"') else after
    else:
        half = (len(rest) - 1) // 2
        if len(rest) % 2 and rest[half] == " " and rest[2:half] == rest[half + 3 :]:
            b = rest[half + 1 :]  # "a/P b/P": the same path, maybe with spaces in it
        else:
            b = "b/" + rest.rpartition(" b/")[2]
    return b[2:] if b.startswith("b/") else b


def parse_diff(text: str) -> list[FileChange]:
    """Per-file paths, blob ids and hunk headers of a patch's diff part."""
    files: list[FileChange] = []
    for line in text.splitlines():
        if line.startswith("diff --git "):
            files.append(FileChange(_diff_path(line[len("diff --git ") :]), None, None, []))
            continue
        if not files:
            continue
        if line.startswith("rename to "):
            rest = line[len("rename to ") :]
            files[-1].path = _unquote(rest)[0] if rest.startswith('"') else rest
            continue
        m = _INDEX_RE.match(line)
        if m and files[-1].old_blob is None and files[-1].new_blob is None and not files[-1].hunks:
            old, new = m.groups()
            files[-1].old_blob = None if _ZERO.match(old) else old
            files[-1].new_blob = None if _ZERO.match(new) else new
        elif line.startswith("@@ "):
            files[-1].hunks.append(line.split(" @@")[0] + " @@")
    return files


class SplitMail(SeriesError):
    """A patch file that `git mailsplit` reads as more than one mail: git am would make a
    commit of each. `line` is the file's line that starts the second mail."""

    def __init__(self, text: str, line: str):
        super().__init__(text)
        self.line = line


def mailinfo(data: bytes, where: Path, label: str) -> tuple[dict[str, str], str, str]:
    """A patch read as `git am -3 --keep-cr --keep-non-patch` reads it: `git mailsplit`, then
    `git mailinfo` of its one mail.

    Returns the headers (Author, Email, Subject), the message body and the patch text
    (decoded as UTF-8; undecodable bytes kept as surrogates, never an error). A file that
    mailsplit cuts into several mails is refused (SplitMail), naming the line that starts
    the second one.
    """
    with tempfile.TemporaryDirectory(prefix="te-series-mailinfo-") as tmp:
        mbox, mails = Path(tmp) / "mbox", Path(tmp) / "mails"
        mbox.write_bytes(data)
        mails.mkdir()
        split = git_run("mailsplit", "--keep-cr", f"-o{mails}", "--", str(mbox), cwd=where)
        parts = sorted(mails.iterdir())
        if split.returncode != 0 or not parts:
            said = split.stderr.strip() or "no mail in it"
            raise SeriesError(f"git mailsplit cannot read {label}: {said}")
        if len(parts) > 1:
            # Each mail keeps its "From " line: the second one's is the line after the first
            # mail's.
            at = parts[0].read_bytes().count(b"\n") + 1
            line = data.split(b"\n")[at - 1].decode("utf-8", "replace").rstrip("\r")
            raise SplitMail(
                f"{label} is {len(parts)} mails to git am: its line {at}, {line!r}, looks like "
                'the first line of a mail ("From <word> <date>"), so git am would make '
                f"{len(parts)} commits of it and cut the message there. Indent that line of the "
                "commit message (or write it another way) in fork/ and export again.",
                line,
            )
        msg, patch = Path(tmp) / "msg", Path(tmp) / "patch"
        args = ["mailinfo", "-b", "--no-scissors", "--encoding=UTF-8", str(msg), str(patch)]
        proc = git_run(*args, cwd=where, input=parts[0].read_bytes())
        if proc.returncode != 0:
            said = proc.stderr.decode("utf-8", "replace").strip()
            raise SeriesError(f"git mailinfo cannot read {label}: {said}")
        headers = {}
        for line in proc.stdout.decode("utf-8", "replace").splitlines():
            key, sep, value = line.partition(": ")
            if sep:
                headers[key] = value
        body = msg.read_bytes().decode("utf-8", "replace").strip()
        diff = patch.read_bytes().decode("utf-8", "surrogateescape")
    return headers, body, diff


def read_patch(path: Path) -> PatchInfo:
    """Subject, body and author (as `git am` reads them) and per-file blob ids of a patch."""
    path = Path(path)
    headers, body, diff = mailinfo(path.read_bytes(), path.parent, path.name)
    author = f"{headers.get('Author', '')} <{headers.get('Email', '')}>"
    return PatchInfo(path, headers.get("Subject", ""), body, parse_diff(diff), author)


def base_preimages(patches: list[PatchInfo]) -> dict[str, str | None]:
    """For each file the series touches, the blob id it must have in the base.

    Only a file's first touch in the series speaks about the base; later patches see the
    post-image of earlier ones.
    """
    out: dict[str, str | None] = {}
    for p in patches:
        for f in p.files:
            out.setdefault(f.path, f.old_blob)
    return out


def final_postimages(patches: list[PatchInfo]) -> dict[str, str | None]:
    """For each file the series touches, the blob id it has after the whole series."""
    out: dict[str, str | None] = {}
    for p in patches:
        for f in p.files:
            out[f.path] = f.new_blob
    return out


# --------------------------------------------------------------------------- work trees


@dataclasses.dataclass
class State:
    """What `apply` did in a work tree, kept at `git rev-parse --git-path te-series`."""

    kind: str  # "git", "pypi" or "port"
    base: str  # the commit the series applies on
    patches_dir: str  # relative to the project root: patches or patches/port/<release>
    patches: list[str]  # the series as applied, in order
    applied: int = 0  # how many of them are in the tree
    failed: str | None = None  # the patch `git am` stopped on
    release: str | None = None
    rebase_onto: str | None = None  # a `te-series rebase` not finished yet
    target: str | None = None  # a port: the target release's own commit
    # Blob id of each patch file the tree was made from (as each was applied), updated by
    # every export: export refuses to overwrite a patch file that changed since.
    recorded: dict[str, str] | None = None
    skipped: list[str] = dataclasses.field(default_factory=list)  # apply --continue --skip
    rebase_from: str | None = None  # HEAD before an unfinished te-series rebase
    # The upstream commit (or release) below the prerequisites; `base` is their top, where
    # the series starts. None: no prerequisites were looked at (a tree of an earlier tool).
    upstream: str | None = None
    # base.toml's prerequisites as this tree was made: PR number -> its commit here, or ""
    # where the upstream commit already contains it.
    prerequisites: dict[str, str] | None = None
    rebase_prerequisites: dict[str, str] | None = None  # an unfinished rebase: carried ones

    @property
    def complete(self) -> bool:
        return self.applied == len(self.patches)


STATE_TYPES = {
    "kind": lambda v: v in ("git", "pypi", "port"),
    "base": lambda v: isinstance(v, str) and bool(v),
    "patches_dir": lambda v: isinstance(v, str) and bool(v),
    "patches": lambda v: isinstance(v, list) and all(isinstance(n, str) for n in v),
    "applied": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
    "failed": lambda v: v is None or isinstance(v, str),
    "release": lambda v: v is None or isinstance(v, str),
    "rebase_onto": lambda v: v is None or isinstance(v, str),
    "target": lambda v: v is None or isinstance(v, str),
    "recorded": lambda v: v is None
    or (isinstance(v, dict) and all(isinstance(x, str) for x in (*v, *v.values()))),
    "skipped": lambda v: isinstance(v, list) and all(isinstance(n, str) for n in v),
    "rebase_from": lambda v: v is None or isinstance(v, str),
    "upstream": lambda v: v is None or isinstance(v, str),
    "prerequisites": lambda v: v is None
    or (isinstance(v, dict) and all(isinstance(x, str) for x in (*v, *v.values()))),
    "rebase_prerequisites": lambda v: v is None
    or (isinstance(v, dict) and all(isinstance(x, str) for x in (*v, *v.values()))),
}


def state_file(repo: Path) -> Path:
    return git_path(repo, "te-series") / "state.json"


def read_state(repo: Path) -> State | None:
    """The recorded state of a work tree; None when it has none; an error when unreadable."""
    if not (repo / ".git").exists():
        return None
    path = state_file(repo)
    if not path.is_file():
        return None
    problem = None
    try:
        raw = json.loads(read_text(path))
    except (json.JSONDecodeError, SeriesError) as e:
        raw, problem = None, f"it is not JSON ({e})"
    if problem is None and not isinstance(raw, dict):
        problem = "it is not a JSON object"
    if problem is None:
        unknown = sorted(set(raw) - set(STATE_TYPES))
        required = [f.name for f in dataclasses.fields(State)][:4]
        missing = [k for k in required if k not in raw]
        wrong = [k for k, v in raw.items() if k in STATE_TYPES and not STATE_TYPES[k](v)]
        if unknown:
            problem = f"unknown key(s) {', '.join(unknown)} (written by a newer te-series?)"
        elif missing:
            problem = f"missing key(s) {', '.join(missing)}"
        elif wrong:
            problem = f"bad value(s) for {', '.join(wrong)}"
        elif raw["applied"] > len(raw["patches"]):
            problem = "it says more patches are applied than it lists"
    if problem:
        raise SeriesError(
            f"the te-series record of {repo} ({path}) cannot be read: {problem}. Without it "
            "te-series cannot tell what the tree holds. Rebuild the tree (te-series apply "
            "--force --te-src PATH, or port --edit --force --release R for a port tree): the "
            "old tree is kept whole in .te-series-backup/."
        )
    return State(**raw)


def write_state(repo: Path, state: State) -> None:
    path = state_file(repo)
    path.parent.mkdir(exist_ok=True)
    write_atomic(path, json.dumps(dataclasses.asdict(state), indent=1).encode())


def init_repo_config(repo: Path) -> None:
    """Let git carry the patch-name notes through rebases and amends."""
    git("config", "notes.rewriteRef", NOTES_REF, cwd=repo)


def note_names(repo: Path, rev: str) -> list[str]:
    """The patch file names noted on a commit (several after a squash)."""
    out = git_run("notes", f"--ref={NOTES_REF}", "show", rev, cwd=repo)
    if out.returncode != 0:
        return []
    # One name a line: a name may hold spaces.
    return [line.strip() for line in out.stdout.splitlines() if line.strip()]


def set_note(repo: Path, rev: str, name: str) -> None:
    """Note patch file name(s) on a commit (several names: one a line)."""
    git("notes", f"--ref={NOTES_REF}", "add", "-f", "-m", name, rev, cwd=repo)


def drop_args(names: list[str]) -> str:
    """`--drop NAME` for each name, quoted for a shell (a name may hold spaces)."""
    return " ".join(f"--drop {shlex.quote(n)}" for n in names)


def commits(repo: Path, revs: str) -> list[str]:
    """Commit ids of revs, oldest first."""
    return git("rev-list", "--reverse", revs, cwd=repo).split()


def count_patches(done: int, total: int) -> str:
    """'patches 1-3 of 8', or 'none of the 8 patches'."""
    return f"patches 1-{done} of {total}" if done else f"none of the {total} patch(es)"


def tree_verbs(tree: Path, state: State | None = None) -> dict[str, str]:
    """The commands that go with a work tree: fork/ or a port's fork-port/<R>/."""
    port = tree.parent.name == "fork-port"
    release = tree.name[: -len(".new")] if tree.name.endswith(".new") else tree.name
    if state is not None and state.kind == "port" and state.release:
        release = state.release
    if port:
        return {
            "export": f"te-series export --port {release}",
            "continue": f"te-series apply --continue --port {release}",
            "make": f"te-series port --edit --release {release}",
            "rebuild": f"te-series port --edit --force --release {release}",
        }
    base = " --te-src PATH" if state is None or state.kind == "git" else ""
    return {
        "export": "te-series export",
        "continue": "te-series apply --continue",
        "make": f"te-series apply{base}",
        "rebuild": f"te-series apply --force{base}",
    }


def unfinished_port(tree: Path, root: Path, state: State | None) -> str | None:
    """Why a port tree cannot be resumed, or None: its build stopped (a Ctrl-C) before the
    port patches, so it holds the series on the pinned release, not a port; only building
    it again makes one (tool-review-v7 #2)."""
    if tree.parent.name != "fork-port" or state is None or state.kind == "port":
        return None
    return (
        f"{rel(tree, root)}/ was interrupted while porting, before its port patches: it holds "
        f"the series on its own base release {state.release}, not the port. Make the port "
        f"again: {tree_verbs(tree, state)['rebuild']} (the trees there are kept whole in "
        f"{BACKUP_DIR}/)."
    )


def settle(tree: Path, state: State) -> State:
    """The record brought up to the tree: a patch whose commit te-series' git am made and
    noted counts as applied, though a Ctrl-C came before the record said so (the note is
    the last git step of a patch, the record the next write). Status and --continue read
    the tree through this, so neither takes an applied patch for one still to apply."""
    if state.complete or state.rebase_onto or not is_ancestor(tree, state.base, "HEAD"):
        return state
    noted = {n for r in commits(tree, f"{state.base}..HEAD") for n in note_names(tree, r)}
    applied = state.applied
    while applied < len(state.patches) and state.patches[applied] in noted:
        applied += 1
    if applied == state.applied:
        return state
    return dataclasses.replace(state, applied=applied, failed=None)


def describe_tree(tree: Path, root: Path) -> str:
    """Where a work tree stands and how to go on, from its recorded state."""
    name = rel(tree, root) + "/"
    try:
        state = read_state(tree)
        state = state and settle(tree, state)
    except SeriesError as e:
        return f"{name}: {e}"
    if state is None:
        return f"{name}: not made by te-series apply (no recorded state)"
    why = unfinished_port(tree, root, state)
    if why:
        return why
    verbs = tree_verbs(tree, state)
    # Skipped patches are no commits; after a rebase, only patches with a commit on the new
    # base count.
    done = [n for n in state.patches[: state.applied] if n not in state.skipped]
    busy = in_progress(tree)
    lost = []
    if state.rebase_onto and not busy and is_ancestor(tree, state.rebase_onto, "HEAD"):
        held = {n for r in commits(tree, f"{state.rebase_onto}..HEAD") for n in note_names(tree, r)}
        lost = [n for n in done if n not in held]
        done = [n for n in done if n in held]
    head = f"{name}: {len(done)} of {len(state.patches)} patch(es) of {state.patches_dir}/ applied"
    if state.skipped:
        head += f", {len(state.skipped)} skipped"
    if lost:
        head += f", {len(lost)} dropped by the rebase ({', '.join(lost)})"
    if state.complete and not lost:
        head += " (complete"
        if state.skipped:
            head += f"; skipped {', '.join(state.skipped)}: export needs --drop for each"
        head += ")"
    elif done and not state.complete:
        head += f", last {done[-1]}"
    lines = [head]
    for pr, rev in (state.prerequisites or {}).items():
        if rev:
            subject = git_run("log", "-1", "--format=%s", rev, cwd=tree).stdout.strip()
            lines.append(
                f"  upstream prerequisite #{pr}: applied as {rev[:12]} {subject!r}, below the "
                "series (upstream's change: never exported)"
            )
        else:
            lines.append(f"  upstream prerequisite #{pr}: already in the base (no commit)")
    if not state.complete:
        stop = "stopped on" if state.failed else "next is"
        rest = ", ".join(state.patches[state.applied :])
        lines.append(f"  {stop} {state.patches[state.applied]}; not applied yet: {rest}")
    if busy:
        lines.append(f"  {busy} is in progress in {name}")
    if state.rebase_onto and busy == "a git rebase":
        lines.append(
            f"  a te-series rebase onto {state.rebase_onto[:12]} is not finished: resolve, "
            f"git -C {name} rebase --continue, then te-series rebase --continue (or --abort)"
        )
    elif state.rebase_onto:
        lines.append(
            f"  a te-series rebase onto {state.rebase_onto[:12]} is not finished: "
            "te-series rebase --continue (or --abort)"
        )
    elif not busy and not is_ancestor(tree, state.base, "HEAD"):
        lines.append(
            f"  HEAD does not descend from the series' base {state.base[:12]} (a prerequisite "
            "or base commit was rewritten?): te-series export refuses and says how to go on"
        )
    elif not state.complete:
        lines.append(
            f"  go on: {verbs['continue']}; te-series export refuses until the series is complete"
        )
    elif busy:
        lines.append("  finish or abort it before te-series export")
    elif tree.name.endswith(".new"):
        lines.append(f"  complete: {verbs['continue']} swaps it in")
    return "\n".join(lines)


def work_trees(root: Path) -> list[Path]:
    """fork/, fork.new/ and the port trees (and theirs), those that exist."""
    found = [root / "fork", root / "fork.new"]
    if (root / "fork-port").is_dir():
        found += sorted((root / "fork-port").iterdir())
    return [t for t in found if (t / ".git").exists()]


def untracked(repo: Path) -> list[str]:
    out = git("ls-files", "--others", "--exclude-standard", "-z", cwd=repo)
    return [p for p in out.split("\0") if p]


# Folders of the project that te-series keeps (the series, work trees, backups): no --out
# may write into them.
OWN_DIRS = ("patches", "fork", "fork.new", "fork-port", BACKUP_DIR)


def refuse_own_dir(root: Path, out: Path, example: str) -> None:
    """Refuse an --out path inside the series, a work tree or a backup."""
    for d in OWN_DIRS:
        if Path(out).resolve().is_relative_to((root / d).resolve()):
            raise SeriesError(
                f"--out {rel(out, root)} is inside {d}/, which te-series keeps (the series, "
                f"the work trees and their backups); writing there could overwrite them. "
                f"Name a path outside them (e.g. {example})."
            )


def backup_stamp(root: Path) -> str:
    """A fresh folder name under .te-series-backup/: the time, made unique."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    n = 1
    while (root / BACKUP_DIR / stamp).exists():
        n += 1
        stamp = f"{time.strftime('%Y%m%d-%H%M%S')}-{n}"
    return stamp


def backup_tree(tree: Path, root: Path, stamp: str) -> list[str]:
    """Move a work tree whole into .te-series-backup/<stamp>/ before it is replaced.

    A move keeps everything: all refs (branches, tags, notes, the stash and its reflog),
    uncommitted edits, untracked and ignored files, nested repositories, an unfinished
    am or rebase. On one file system it is a rename, so it is instant and cannot stop
    halfway. Returns what was kept and how to get it back.
    """
    dest = root / BACKUP_DIR / stamp
    dest.mkdir(parents=True, exist_ok=True)
    target = dest / tree.name
    shutil.move(str(tree), str(target))
    where = rel(target, root)
    return [
        f"{rel(tree, root)}/ moved whole to {where}/ (commits, branches, tags, stashes, notes, "
        f"uncommitted, untracked and ignored files); get its commits back with: git -C "
        f"{rel(tree, root)} fetch {os.path.relpath(target, tree)} 'refs/*:refs/backup/*' "
        f"(delete {where}/ once you no longer need it)"
    ]


def pending_rebuild(tree: Path) -> Path | None:
    """<tree>.new when an unfinished (or not yet swapped) rebuild of tree waits there."""
    new = tree.with_name(tree.name + ".new")
    return new if new.exists() else None


def build_aside(tree: Path, root: Path, build, *, force: bool) -> list[str]:
    """Build a work tree in <tree>.new and swap it in only once complete.

    `build(path)` makes the tree. If a patch stops it (PatchFailed), the partial tree
    becomes `tree` when there was none, and stays in <tree>.new otherwise, so a failed
    rebuild never takes the old tree away. Returns what was backed up.
    """
    new = tree.with_name(tree.name + ".new")
    stamp = backup_stamp(root)
    verbs = tree_verbs(tree)
    if new.exists():
        if not force:
            raise SeriesError(
                f"{rel(new, root)}/ holds an unfinished apply:\n{describe_tree(new, root)}\n"
                "Or start over with --force (it keeps that tree whole in a backup)."
            )
        for line in backup_tree(new, root, stamp):
            print(f"kept: {line}")
    if tree.exists() and not force:
        raise SeriesError(
            f"{rel(tree, root)}/ exists. Export its work first ({verbs['export']}), then rerun "
            f"with --force to rebuild it (the old tree is kept whole in {BACKUP_DIR}/)."
        )
    for old in (new, tree):
        if (old / ".git").is_file():
            # A linked worktree or a separate git dir: its commits live elsewhere, so
            # moving the tree into the backup would not keep them.
            raise SeriesError(
                f"{rel(old, root)}/.git is a file ({(old / '.git').read_text().strip()}): "
                f"{rel(old, root)}/ keeps its commits elsewhere, so --force cannot keep them "
                f"in {BACKUP_DIR}/. Export its work first ({verbs['export']}), then remove "
                f"{rel(old, root)}/ yourself (e.g. git worktree remove) and apply again."
            )
    try:
        build(new)
    except (PatchFailed, KeyboardInterrupt):
        if new.exists() and read_state(new) is None:  # stopped before any patch
            shutil.rmtree(new, ignore_errors=True)
        elif new.exists() and not tree.exists():
            new.rename(tree)
        raise
    except BaseException:
        shutil.rmtree(new, ignore_errors=True)
        raise
    return swap_in(new, tree, root, stamp)


def swap_in(new: Path, tree: Path, root: Path, stamp: str | None = None) -> list[str]:
    """Replace tree by the complete tree new, keeping the old tree whole; return what was kept."""
    kept = []
    with no_interrupt():
        if tree.exists():
            kept = backup_tree(tree, root, stamp or backup_stamp(root))
        new.rename(tree)
    return kept


# --------------------------------------------------------------------------- bases and am


def init_git_base(dest: Path, te_src: Path, commit: str) -> str:
    """Clone te_src into dest and check out `commit` on the series branch; return its id."""
    progress(f"cloning {te_src} into {dest.name}/")
    if not (te_src / ".git").exists() and not (te_src / "HEAD").exists():
        raise SeriesError(f"--te-src {te_src} is not a git checkout of TE")
    dest.parent.mkdir(parents=True, exist_ok=True)
    git("clone", "-q", "--no-checkout", str(te_src), str(dest), cwd=dest.parent)
    full = git_run("rev-parse", "-q", "--verify", f"{commit}^{{commit}}", cwd=dest).stdout.strip()
    if not full:
        raise SeriesError(
            f"base commit {commit} is not in {te_src}. Fetch upstream main there "
            "(git fetch origin main) and run again."
        )
    git("checkout", "-q", "-B", SERIES_BRANCH, full, cwd=dest)
    init_repo_config(dest)
    return full


def init_pypi_base(dest: Path, wheel: Path, release: str) -> str:
    """Unpack the wheel's transformer_engine/ into a new repo and commit it as the base."""
    progress(f"unpacking {wheel.name} into {dest.name}/ as the base commit")
    dest.mkdir(parents=True)
    git("init", "-q", "-b", SERIES_BRANCH, cwd=dest)
    extract_package(wheel, dest)
    git("add", "-A", cwd=dest)
    git("commit", "-q", "-m", f"transformer_engine {release} from PyPI", cwd=dest)
    init_repo_config(dest)
    return git("rev-parse", "HEAD", cwd=dest).strip()


def prerequisite_needs(repo: Path, rev: str, p: Prerequisite) -> list[str]:
    """The files of prerequisite p that rev lacks (their blob is `pre`); [] when rev contains
    it. The one rule for every base (git, wheel, ports, rebase's new commit):

    - a file at `pre` lacks it, a file at `post` has it;
    - a file at another blob has it when rev's history shows p: the file was at `post` in
      it, or a commit is titled p's subject (upstream's squash merge), as on an upstream
      main that moved the file on since it merged p;
    - anything else stops, naming the file and the three blob ids.
    """
    need = []
    for path, (pre, post) in p.files.items():
        have = git_run("rev-parse", "-q", "--verify", f"{rev}:{path}", cwd=repo).stdout.strip()
        if have == post:
            continue
        if have == pre:
            need.append(path)
            continue
        kind = git_run("cat-file", "-t", have, cwd=repo).stdout.strip() if have else ""
        if kind and kind != "blob":
            raise SeriesError(
                f"upstream prerequisite #{p.pr}: {path} is a {kind} in {repo.name}/ at "
                f"{rev[:12]}, not a file; its [prerequisite.files] entry in base.toml must name "
                "a file (fix the path)."
            )
        if _history_has(repo, rev, p, path):
            continue
        raise SeriesError(
            f"upstream prerequisite #{p.pr} ({p.subject!r}): {repo.name}/ at {rev[:12]} has "
            f"{path} at blob {have or '(no such file)'}, neither its pre-image {pre} (a base "
            f"without #{p.pr}, which te-series brings up to it from release {p.release}) nor "
            f"its post-image {post}; and its history holds neither that post-image nor a "
            f"commit titled {p.subject!r}, so nothing shows that it contains #{p.pr}: it "
            f"changed {path} some other way. Use a base with that file at one of the two ids "
            "(base.toml's [upstream] commit or [pypi] release), or an upstream commit that has "
            f"#{p.pr} merged (te-series rebase --onto COMMIT). If upstream merged #{p.pr} "
            "under another title, write that title as the table's subject in base.toml."
        )
    return need


def _history_has(repo: Path, rev: str, p: Prerequisite, path: str) -> bool:
    """Whether rev's history holds p: path at p's post-image blob, or a commit titled p's
    subject."""
    post = p.files[path][1]
    found = git_run("log", "-1", "--format=%H", f"--find-object={post}", rev, "--", path, cwd=repo)
    if found.returncode == 0 and found.stdout.strip():
        return True
    titled = git_run(
        "log", "--format=%s", "--fixed-strings", f"--grep={p.subject}", rev, cwd=repo
    ).stdout.splitlines()
    return p.subject in titled


def release_file(series: Series, p: Prerequisite, path: str) -> bytes:
    """A prerequisite's file from its release's transformer_engine wheel, checked: post."""
    wheel = release_wheel(p.release, series)
    try:
        with zipfile.ZipFile(wheel) as zf:
            data = zf.read(path)
    except (KeyError, zipfile.BadZipFile):
        data = None
    post = p.files[path][1]
    if data is None or blob_id(data) != post:
        said = "lacks it" if data is None else f"has blob {blob_id(data)}"
        raise SeriesError(
            f"upstream prerequisite #{p.pr}: {path} of release {p.release} ({wheel}) {said}, "
            f"not the post-image {post} that base.toml's [[prerequisite]] pins. Most likely "
            f"the table's `release` is not a release that has #{p.pr} as pinned: set it to "
            "one whose file is the post-image (or fix the blob ids). Only if the wheel is a "
            "damaged download, delete it (it is fetched again). Then run again."
        )
    return data


def apply_prerequisites(repo: Path, series: Series) -> dict[str, str]:
    """Bring base.toml's upstream prerequisites into repo's checked-out HEAD (every base:
    git, PyPI, ports, range-diff's and check's clones). Returns PR number -> commit.

    A prerequisite whose files the tree has already (post-image) makes no commit ("").
    Otherwise its files that have the pre-image get the release's file, in one commit with
    its upstream subject, upstream's identity and no sign-off: upstream's change, which the
    series starts above.
    """
    done: dict[str, str] = {}
    for p in series.prerequisites:
        need = prerequisite_needs(repo, "HEAD", p)
        if not need:
            done[str(p.pr)] = ""
            continue
        progress(f"upstream prerequisite #{p.pr}: {', '.join(need)} from release {p.release}")
        for path in need:
            post = p.files[path][1]
            known = git_run("cat-file", "blob", post, cwd=repo, text=False)
            data = known.stdout if known.returncode == 0 else release_file(series, p, path)
            (repo / path).write_bytes(data)
        git("add", "--", *need, cwd=repo)
        git("commit", "-q", "--no-verify", "--cleanup=verbatim", "-m", p.message, cwd=repo,
            env=UPSTREAM)  # fmt: skip
        done[str(p.pr)] = git("rev-parse", "HEAD", cwd=repo).strip()
        committed = {path: git("rev-parse", f"HEAD:{path}", cwd=repo).strip() for path in need}
        changed = [path for path in need if committed[path] != p.files[path][1]]
        if changed:
            raise SeriesError(
                f"upstream prerequisite #{p.pr}: {', '.join(changed)} did not get the "
                f"post-image blob when committed in {repo.name}/ (a git attribute of the "
                f"tree, e.g. ident or a filter, changed it: blob {committed[changed[0]]}). "
                "Nothing of the series was applied."
            )
    return done


def prerequisite_top(upstream: str, prerequisites: dict[str, str] | None) -> str:
    """Where the series starts: the last prerequisite commit, or the upstream commit."""
    return next((c for c in reversed(list((prerequisites or {}).values())) if c), upstream)


def check_pypi_blobs(dest: Path, series: Series) -> dict[str, list[str]]:
    """Compare every touched file's base pre-image with the release; list absent files.

    Returns {path: [patch names]} for files the base does not have (tests/, docs/).
    """
    patches = [read_patch(p) for p in series.paths()]
    absent: dict[str, list[str]] = {}
    for p in patches:
        for f in p.files:
            if not f.path.startswith(PYPI_PREFIX):
                absent.setdefault(f.path, []).append(p.path.name)
    mismatches = []
    for path, old in base_preimages(patches).items():
        if not path.startswith(PYPI_PREFIX):
            continue
        have = git_run("rev-parse", "-q", "--verify", f"HEAD:{path}", cwd=dest).stdout.strip()
        if old is None:
            if have:
                mismatches.append(f"{path}: the series creates it, but the release has {have}")
            continue
        if not have:
            mismatches.append(f"{path}: the series expects blob {old}, the release lacks it")
        elif not have.startswith(old):
            mismatches.append(f"{path}: the series expects blob {old}, the release has {have}")
    if mismatches:
        raise SeriesError(
            "the release does not match the series' base:\n  "
            + "\n  ".join(mismatches)
            + "\nUse a git base (--te-src) or `te-series port` for a different release."
        )
    return absent


def am(repo: Path, patch: Path, include: str | None = None) -> subprocess.CompletedProcess:
    """`git am -3` one patch (authorship from the patch, committer te-series).

    `--no-scissors`: a user's mailinfo.scissors must not cut messages. `--keep-cr`: a
    patch's carriage returns are content (TE has CRLF files), which am strips by default.
    """
    args = ["am", "-3", "--keep-non-patch", "--no-scissors", "--keep-cr", "--empty=keep"]
    if include:
        args.append(f"--include={include}")
    return git_run(*args, str(patch), cwd=repo)


def abort_am(repo: Path) -> None:
    git_run("am", "--abort", cwd=repo)


def failure_detail(repo: Path, patch: Path, include: str | None, proc) -> str:
    """What failed: the file and hunk (from `git apply --check` against HEAD) and git's words."""
    hunks = {f.path: f.hunks for f in read_patch(patch).files}
    with tempfile.TemporaryDirectory() as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        git("read-tree", "HEAD", cwd=repo, env=env)
        args = ["apply", "--cached", "--check", "-v"] + (
            [f"--include={include}"] if include else []
        )
        check = git_run(*args, str(patch), cwd=repo, env=env)
    found = []
    for m in re.finditer(r"^error: patch failed: (.+):(\d+)$", check.stderr, re.M):
        path, line = m.group(1), m.group(2)
        header = next((h for h in hunks.get(path, []) if h.startswith(f"@@ -{line},")), "")
        found.append(f"file {path}, hunk at line {line} {header}".rstrip())
    for m in re.finditer(
        r"^error: (.+): (does not exist in index|already exists in index)$", check.stderr, re.M
    ):
        found.append(f"file {m.group(1)}: {m.group(2).replace('index', 'the tree')}")
    if found:
        where = "; ".join(found)
    elif check.returncode != 0:
        said = " ".join(l for l in check.stderr.splitlines() if l.strip())
        where = f"git apply --check says: {said[-500:] or '(nothing)'}"
    else:
        where = "its diff applies on its own, so git am -3 failed for another reason (below)"
    said = [
        re.sub(r"^Patch failed at \d+ ", f"Patch failed at {patch.name}: ", l)
        for l in (proc.stdout + proc.stderr).splitlines()
        if l.strip() and not l.startswith("hint:")
    ]
    conflicted = git_run("diff", "--name-only", "--diff-filter=U", cwd=repo).stdout.splitlines()
    text = f"patch {patch.name} does not apply: {where}\ngit am -3 says:\n"
    text += "".join(f"  {l}\n" for l in said[-30:])
    if conflicted:
        text += f"conflict markers in: {', '.join(conflicted)}\n"
    return text


def record_file(state: State, path: Path) -> None:
    """Note the blob id of a file of the series folder as this tree was made from it."""
    if state.recorded is None:
        state.recorded = {}
    state.recorded[path.name] = blob_id(path.read_bytes()) if path.is_file() else ""


def apply_patches(repo: Path, series: Series, state: State, include: str | None = None) -> None:
    """`git am -3` the patches not applied yet, noting each commit's patch name.

    The state is written after every patch, so an interrupted or failed apply says how
    far it got. On a failure the am is left in progress (conflict markers and all) and
    PatchFailed is raised.
    """
    total = len(state.patches)
    while state.applied < total:
        name = state.patches[state.applied]
        progress(f"[{state.applied + 1}/{total}] git am -3 {name}")
        record_file(state, series.dir / name)
        if not read_patch(series.dir / name).files:
            state.failed = name
            write_state(repo, state)
            raise PatchFailed(f"patch {name} has no diff (an empty patch)\n", "empty")
        before = git("rev-parse", "HEAD", cwd=repo).strip()
        proc = am(repo, series.dir / name, include)
        if proc.returncode != 0:
            state.failed = name
            write_state(repo, state)
            text = failure_detail(repo, series.dir / name, include, proc)
            conflicted = git_run("diff", "--name-only", "--diff-filter=U", cwd=repo).stdout
            kind = "conflict" if conflicted.strip() else "unapplied"
            if (series.dir / name).read_bytes().split(b"\n", 1)[0].endswith(b"\r"):
                kind = "converted"  # a checkout gave the patch file CRLF line ends
            raise PatchFailed(text, kind)
        if git("rev-parse", "HEAD", cwd=repo).strip() == before:
            # "No changes -- Patch already applied": git am exits 0 without a commit. Noting
            # HEAD would give the previous patch's commit this patch's name.
            state.failed = name
            write_state(repo, state)
            raise PatchFailed(
                f"patch {name} made no commit: its change is already in the tree "
                f"(git am says: {' '.join(proc.stdout.split())[-300:] or 'nothing'})\n",
                "already",
            )
        set_note(repo, "HEAD", name)
        state.applied += 1
        state.failed = None
        write_state(repo, state)


def new_state(kind: str, base: str, series: Series, names: list[str], **kw) -> State:
    """A fresh state for a tree about to get `names` of `series` applied on `base`."""
    return State(kind, base, rel(series.dir, series.root), names, recorded={}, **kw)


def make_tree(
    series: Series,
    dest: Path,
    *,
    te_src: Path | None = None,
    wheel: Path | None = None,
) -> dict[str, list[str]]:
    """Create dest from a base and apply the series. Returns the files not in this base.

    A git base (te_src) is a TE checkout with the base commit; otherwise the pinned
    release's wheel is the base and only transformer_engine/ hunks apply. Either way the
    upstream prerequisites come first; the series starts at their top.
    """
    names = series.names()
    if te_src is not None:
        upstream = init_git_base(dest, te_src, series.base_commit)
        kind, include, kw = "git", None, {}
    else:
        release = series.release
        upstream = init_pypi_base(dest, wheel or release_wheel(release, series), release)
        kind, include, kw = "pypi", PYPI_PREFIX + "*", {"release": release}
    prereqs = apply_prerequisites(dest, series)
    base = prerequisite_top(upstream, prereqs)
    state = new_state(kind, base, series, names, upstream=upstream, prerequisites=prereqs, **kw)
    write_state(dest, state)
    absent = check_pypi_blobs(dest, series) if te_src is None else {}
    apply_patches(dest, series, state, include=include)
    return absent


def report_absent(absent: dict[str, list[str]]) -> None:
    for path, names in sorted(absent.items()):
        print(f"not in this base: {path} (hunks of {', '.join(names)})")
