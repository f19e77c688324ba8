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
import shutil
import signal
import subprocess
import sys
import tempfile
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
PYPI_PREFIX = "transformer_engine/"
PATCH_GLOB = "*.patch"
BACKUP_DIR = ".te-series-backup"


class SeriesError(Exception):
    """An error the user can act on. The message says what failed and how to recover."""


class PatchFailed(SeriesError):
    """`git am` stopped on a patch; the work tree is left at that patch for the user.

    The message names the patch, file and hunk and quotes git; the caller adds where the
    tree is and how to go on.
    """


def project_root() -> Path:
    """Root of the te-series checkout: $TE_SERIES_ROOT, else the folder holding patches/."""
    env = os.environ.get("TE_SERIES_ROOT")
    if env:
        root = Path(env).resolve()
        if not (root / "patches" / "series").is_file():
            raise SeriesError(f"TE_SERIES_ROOT={env} has no patches/series")
        return root
    here = Path.cwd().resolve()
    for d in (here, *here.parents):
        if (d / "patches" / "series").is_file():
            return d
    raise SeriesError("no patches/series found here or above; run inside the te-series checkout")


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


@contextlib.contextmanager
def no_interrupt():
    """Hold Ctrl-C until the block is done, so that a group of writes is all or nothing."""
    caught = []
    old = signal.signal(signal.SIGINT, lambda *_: caught.append(1))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)
    if caught:
        raise KeyboardInterrupt


def write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.te-series-tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


# --------------------------------------------------------------------------- git


def git(
    *args: str,
    cwd: Path | str,
    check: bool = True,
    env: dict | None = None,
    input: str | None = None,
) -> str:
    """Run git and return stdout. Raise SeriesError carrying git's own message on failure.

    A user's `commit.gpgsign=true` must not break the commits the tool makes (am, rebase).
    """
    proc = git_run(*args, cwd=cwd, env=env, input=input)
    if check and proc.returncode != 0:
        raise SeriesError(
            f"git {' '.join(args)} failed in {cwd}:\n{proc.stderr.strip() or proc.stdout.strip()}"
        )
    return proc.stdout


def git_run(
    *args: str, cwd: Path | str, env: dict | None = None, input: str | None = None
) -> subprocess.CompletedProcess:
    """Run git, return the finished process (check returncode yourself)."""
    return subprocess.run(
        ["git", "-c", "commit.gpgsign=false", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **BOT, **(env or {})},
        input=input,
        check=False,
    )


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
    if (rebase_apply / "applying").exists():
        return "a git am"
    if rebase_apply.exists() or git_path(repo, "rebase-merge").exists():
        return "a git rebase"
    for head, what in (
        ("CHERRY_PICK_HEAD", "a git cherry-pick"),
        ("REVERT_HEAD", "a git revert"),
        ("MERGE_HEAD", "a git merge"),
    ):
        if git_path(repo, head).exists():
            return what
    return None


def is_ancestor(repo: Path, a: str, b: str) -> bool:
    return git_run("merge-base", "--is-ancestor", a, b, cwd=repo).returncode == 0


# One definition of the format-patch arguments (export, port, pr, rebase). With them and
# without the user's global git config, a re-export of unchanged commits is byte-identical.
FORMAT_PATCH_ARGS = (
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
)


def format_patch(repo: Path, revs: str, out: Path) -> list[Path]:
    """`git format-patch` revs into out; the files in order."""
    env = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    listed = git(*FORMAT_PATCH_ARGS, "-o", str(out), revs, cwd=repo, env=env)
    return [Path(line) if Path(line).is_absolute() else repo / line for line in listed.split()]


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
SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
BASE_KEYS = {
    ("upstream", "commit"): "the upstream commit the series applies to",
    ("pypi", "release"): "the PyPI release whose files match the base commit",
    ("pypi", "torch"): "the torch version of the CPU build",
    ("pypi", "core"): "the name of TE's core wheel on PyPI",
    ("port", "targets"): "the newer releases the series is ported to",
    ("series", "placeholder_identity"): "the identity the stored patches are signed with",
}


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
        for i, text in enumerate(self.series_file.read_text().splitlines(), 1):
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
            if "/" in e.name or not (self.dir / e.name).is_file():
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
            text = self.base_file.read_text()
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
        value = self.base().get(table, {})
        value = value.get(key) if isinstance(value, dict) else None
        if value is None or value == "" or value == []:
            raise SeriesError(
                f"{rel(self.base_file, self.root)} lacks `{key}` in [{table}] "
                f"({BASE_KEYS[(table, key)]}). Add it, or restore the file from git."
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

    def port_series(self, release: str) -> Series:
        """The port patches for a release (patches/port/<release>/), maybe empty."""
        return Series(self.dir / "port" / release, self.root, self.base_file, optional=True)


def load_series(root: Path | None = None) -> Series:
    root = root or project_root()
    return Series(root / "patches", root)


def set_base_commit(series: Series, commit: str) -> None:
    """Point base.toml's [upstream] commit at `commit`, editing that one line only."""
    lines = series.base_file.read_text().splitlines(keepends=True)
    table, done = None, False
    for i, line in enumerate(lines):
        m = re.match(r"^\s*\[([^\]]+)\]\s*$", line)
        if m:
            table = m.group(1).strip()
        elif table == "upstream" and re.match(r"^\s*commit\s*=", line) and not done:
            lines[i] = re.sub(r'"[^"]*"', f'"{commit}"', line, count=1)
            done = True
    text = "".join(lines)
    if not done or tomllib.loads(text)["upstream"]["commit"] != commit:
        raise SeriesError(f"could not set [upstream] commit in {series.base_file}")
    write_atomic(series.base_file, text.encode())


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
    """Headers of one `git format-patch` file."""

    path: Path
    subject: str
    body: str
    files: list[FileChange]

    @property
    def message(self) -> str:
        return f"{self.subject}\n\n{self.body}\n"


_DIFF_RE = re.compile(r"^diff --git a/(\S+) b/(\S+)$")
_INDEX_RE = re.compile(r"^index ([0-9a-f]+)\.\.([0-9a-f]+)")
_ZERO = re.compile(r"^0+$")


def read_patch(path: Path) -> PatchInfo:
    """Read subject, body and per-file blob ids from a format-patch file."""
    text = path.read_text()
    head, _, diff = text.partition("\n---\n")
    subject_lines: list[str] = []
    body_lines: list[str] = []
    in_subject = in_body = False
    for line in head.splitlines():
        if in_body:
            body_lines.append(line)
        elif line.startswith("Subject: "):
            subject_lines.append(line[len("Subject: ") :])
            in_subject = True
        elif in_subject and line.startswith(" "):
            subject_lines.append(line)
        elif in_subject and line == "":
            in_subject, in_body = False, True
        else:
            in_subject = False
    files: list[FileChange] = []
    for line in diff.splitlines():
        m = _DIFF_RE.match(line)
        if m:
            files.append(FileChange(m.group(2), None, None, []))
            continue
        if not files:
            continue
        m = _INDEX_RE.match(line)
        if m and files[-1].old_blob is None and files[-1].new_blob is None and not files[-1].hunks:
            old, new = m.groups()
            files[-1].old_blob = None if _ZERO.match(old) else old
            files[-1].new_blob = None if _ZERO.match(new) else new
        elif line.startswith("@@ "):
            files[-1].hunks.append(line.split(" @@")[0] + " @@")
    subject = re.sub(r"^\[PATCH[^\]]*\]\s*", "", "".join(subject_lines).strip())
    return PatchInfo(path, subject, "\n".join(body_lines).strip(), files)


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

    @property
    def complete(self) -> bool:
        return self.applied == len(self.patches)


def state_file(repo: Path) -> Path:
    return git_path(repo, "te-series") / "state.json"


def read_state(repo: Path) -> State | None:
    if not (repo / ".git").exists():
        return None
    path = state_file(repo)
    if not path.is_file():
        return None
    return State(**json.loads(path.read_text()))


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
    return out.stdout.split() if out.returncode == 0 else []


def set_note(repo: Path, rev: str, name: str) -> None:
    git("notes", f"--ref={NOTES_REF}", "add", "-f", "-m", name, rev, cwd=repo)


def commits(repo: Path, revs: str) -> list[str]:
    """Commit ids of revs, oldest first."""
    return git("rev-list", "--reverse", revs, cwd=repo).split()


def describe_tree(tree: Path, root: Path) -> str:
    """Where a work tree stands and how to go on, from its recorded state."""
    name = rel(tree, root) + "/"
    state = read_state(tree)
    if state is None:
        return f"{name}: not made by te-series apply (no recorded state)"
    done = state.patches[: state.applied]
    busy = in_progress(tree)
    head = f"{name}: {len(done)} of {len(state.patches)} patch(es) of {state.patches_dir}/ applied"
    lines = [head + (" (complete)" if state.complete else f", last {done[-1]}" if done else "")]
    if not state.complete:
        stop = "stopped on" if state.failed else "next is"
        rest = ", ".join(state.patches[state.applied :])
        lines.append(f"  {stop} {state.patches[state.applied]}; not applied yet: {rest}")
    if busy:
        lines.append(f"  {busy} is in progress in {name}")
    if state.rebase_onto:
        lines.append(
            f"  a te-series rebase onto {state.rebase_onto[:12]} is not finished: resolve, "
            f"git -C {name} rebase --continue, then te-series rebase --continue (or --abort)"
        )
    elif not state.complete:
        port = f" --port {state.release}" if state.kind == "port" else ""
        lines.append(
            f"  go on: te-series apply --continue{port}; te-series export refuses until the "
            "series is complete"
        )
    elif busy:
        lines.append("  finish or abort it before te-series export")
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


def backup_stamp(root: Path) -> str:
    """A fresh folder name under .te-series-backup/: the time, made unique."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    n = 1
    while (root / BACKUP_DIR / stamp).exists():
        n += 1
        stamp = f"{time.strftime('%Y%m%d-%H%M%S')}-{n}"
    return stamp


def backup_tree(tree: Path, root: Path, stamp: str) -> list[str]:
    """Keep a work tree's unexported work before it is replaced; return what was kept.

    Commits (all branches, the te-series notes and uncommitted edits to tracked files) go
    to a git bundle; untracked files are copied. Ignored files (build outputs) are not
    kept. Where git cannot say what the tree holds, the whole folder is moved instead.
    """
    dest = root / BACKUP_DIR / stamp
    dest.mkdir(parents=True, exist_ok=True)
    name = tree.name
    where = rel(dest, root)
    state = read_state(tree)
    stash = git_run("stash", "create", cwd=tree) if (tree / ".git").exists() else None
    if stash is None or stash.returncode != 0:
        shutil.move(str(tree), str(dest / name))
        return [f"{rel(tree, root)}/ moved whole to {where}/{name}/"]
    if stash.stdout.strip():
        git("update-ref", "refs/te-series-backup/worktree", stash.stdout.strip(), cwd=tree)
    refs = ["--branches", "HEAD"]
    refs += [
        r
        for r in (NOTES_REF, "refs/te-series-backup/worktree")
        if git_run("rev-parse", "-q", "--verify", r, cwd=tree).returncode == 0
    ]
    exclude = ["--not", "--remotes"] + ([state.base] if state else [])
    kept = []
    if int(git("rev-list", "--count", *refs, *exclude, cwd=tree).strip() or 0):
        bundle = dest / f"{name}.bundle"
        git("bundle", "create", "-q", str(bundle), *refs, *exclude, cwd=tree)
        kept.append(
            f"commits of {rel(tree, root)}/ (branches, notes"
            + (", uncommitted edits as refs/te-series-backup/worktree" if stash.stdout else "")
            + f") in {where}/{name}.bundle; get them back with: git -C {rel(tree, root)} fetch "
            f"{os.path.relpath(bundle, tree)} 'refs/*:refs/backup/*'"
        )
    files = untracked(tree)
    for f in files:
        target = dest / f"{name}.untracked" / f
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(tree / f, target, follow_symlinks=False)
    if files:
        kept.append(
            f"{len(files)} untracked file(s) of {rel(tree, root)}/ copied to "
            f"{where}/{name}.untracked/: {', '.join(files[:10])}"
            + (" ..." if len(files) > 10 else "")
        )
    return kept


def build_aside(tree: Path, root: Path, build, *, force: bool) -> list[str]:
    """Build a work tree in <tree>.new and swap it in only once complete.

    `build(path)` makes the tree. If a patch stops it (PatchFailed), the partial tree
    becomes `tree` when there was none, and stays in <tree>.new otherwise, so a failed
    rebuild never takes the old tree away. Returns what was backed up.
    """
    new = tree.with_name(tree.name + ".new")
    stamp = backup_stamp(root)
    if new.exists():
        if not force:
            raise SeriesError(
                f"{rel(new, root)}/ holds an unfinished apply:\n{describe_tree(new, root)}\n"
                "Or start over with --force (it keeps that tree's work in a backup)."
            )
        for line in backup_tree(new, root, stamp):
            print(f"kept: {line}")
        shutil.rmtree(new, ignore_errors=True)
    if tree.exists() and not force:
        raise SeriesError(
            f"{rel(tree, root)}/ exists. Export its work first (te-series export), then rerun "
            "with --force to rebuild it (its unexported commits and untracked files are kept "
            f"in {BACKUP_DIR}/)."
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
    """Replace tree by the complete tree new, keeping the old tree's work; return what was kept."""
    kept = []
    with no_interrupt():
        if tree.exists():
            kept = backup_tree(tree, root, stamp or backup_stamp(root))
            shutil.rmtree(tree, ignore_errors=True)
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
    """`git am -3` one patch (authorship from the patch, committer te-series)."""
    args = ["am", "-3", "--keep-non-patch", "--empty=keep"]
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
    for m in re.finditer(r"^error: patch failed: (\S+):(\d+)$", check.stderr, re.M):
        path, line = m.group(1), m.group(2)
        header = next((h for h in hunks.get(path, []) if h.startswith(f"@@ -{line},")), "")
        found.append(f"file {path}, hunk at line {line} {header}".rstrip())
    for m in re.finditer(
        r"^error: (\S+): (does not exist in index|already exists in index)$", check.stderr, re.M
    ):
        found.append(f"file {m.group(1)}: {m.group(2).replace('index', 'the tree')}")
    where = "; ".join(found) or "the patch applies on its own; see git's message"
    said = [
        l
        for l in (proc.stdout + proc.stderr).splitlines()
        if l.strip() and not l.startswith("hint:")
    ]
    conflicted = git_run("diff", "--name-only", "--diff-filter=U", cwd=repo).stdout.split()
    text = f"patch {patch.name} does not apply: {where}\ngit am -3 says:\n"
    text += "".join(f"  {l}\n" for l in said[-30:])
    if conflicted:
        text += f"conflict markers in: {', '.join(conflicted)}\n"
    return text


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
        proc = am(repo, series.dir / name, include)
        if proc.returncode != 0:
            state.failed = name
            write_state(repo, state)
            raise PatchFailed(failure_detail(repo, series.dir / name, include, proc))
        set_note(repo, "HEAD", name)
        state.applied += 1
        state.failed = None
        write_state(repo, state)


def make_tree(
    series: Series,
    dest: Path,
    *,
    te_src: Path | None = None,
    wheel: Path | None = None,
) -> dict[str, list[str]]:
    """Create dest from a base and apply the series. Returns the files not in this base.

    A git base (te_src) is a TE checkout with the base commit; otherwise the pinned
    release's wheel is the base and only transformer_engine/ hunks apply.
    """
    names = series.names()
    patches_dir = rel(series.dir, series.root)
    if te_src is not None:
        base = init_git_base(dest, te_src, series.base_commit)
        state = State("git", base, patches_dir, names)
        write_state(dest, state)
        apply_patches(dest, series, state)
        return {}
    release = series.release
    base = init_pypi_base(dest, wheel or release_wheel(release, series), release)
    state = State("pypi", base, patches_dir, names, release=release)
    write_state(dest, state)
    absent = check_pypi_blobs(dest, series)
    apply_patches(dest, series, state, include=PYPI_PREFIX + "*")
    return absent


def report_absent(absent: dict[str, list[str]]) -> None:
    for path, names in sorted(absent.items()):
        print(f"not in this base: {path} (hunks of {', '.join(names)})")
