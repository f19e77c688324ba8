"""Shared pieces: project paths, the series file, base.toml, git, and patch headers.

Everything that edits patches is delegated to git (``am -3``, ``format-patch``,
``apply --check``). This module only reads the headers git writes.
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
import time
import tomllib
from pathlib import Path

SERIES_BRANCH = "series"
# Identity used for the synthetic base commit of a PyPI base and for `git am`.
BOT = {
    "GIT_AUTHOR_NAME": "te-series",
    "GIT_AUTHOR_EMAIL": "te-series@invalid",
    "GIT_COMMITTER_NAME": "te-series",
    "GIT_COMMITTER_EMAIL": "te-series@invalid",
    # Stable dates so a rebuilt base has the same commit id.
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
}


class SeriesError(Exception):
    """An error the user can act on. The message says what failed and how to recover."""


def project_root() -> Path:
    """Root of the te-series checkout: $TE_SERIES_ROOT, else the folder holding patches/."""
    env = os.environ.get("TE_SERIES_ROOT")
    if env:
        return Path(env).resolve()
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


# --------------------------------------------------------------------------- git


def git(*args: str, cwd: Path | str, check: bool = True, env: dict | None = None) -> str:
    """Run git and return stdout. Raise SeriesError carrying git's own message on failure."""
    full_env = {**os.environ, **BOT, **(env or {})}
    proc = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, env=full_env, check=False
    )
    if check and proc.returncode != 0:
        raise SeriesError(
            f"git {' '.join(args)} failed in {cwd}:\n{proc.stderr.strip() or proc.stdout.strip()}"
        )
    return proc.stdout


def blob_id(data: bytes) -> str:
    """Git blob id of some bytes (what `git hash-object` prints)."""
    import hashlib

    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


# --------------------------------------------------------------------------- series


@dataclasses.dataclass
class Series:
    """patches/: the ordered patch files and the base they apply to."""

    dir: Path

    @property
    def series_file(self) -> Path:
        return self.dir / "series"

    def names(self) -> list[str]:
        """Patch file names in apply order."""
        out = []
        for line in self.series_file.read_text().splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                out.append(line)
        return out

    def paths(self) -> list[Path]:
        return [self.dir / n for n in self.names()]

    def base(self) -> dict:
        return tomllib.loads((self.dir / "base.toml").read_text())

    @property
    def base_commit(self) -> str:
        return self.base()["upstream"]["commit"]

    @property
    def release(self) -> str:
        return self.base()["pypi"]["release"]


def load_series(root: Path | None = None) -> Series:
    root = root or project_root()
    return Series(root / "patches")


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
