"""`te-series apply`: build fork/ from a base and apply the series as commits with `git am -3`.

Two bases:

* git (``--te-src PATH``): a TE checkout that holds the pinned base commit.
* pypi (default): the pinned release's ``transformer_engine`` wheel unpacked into a fresh
  git repository. The wheel has no tests/ or docs/, so hunks for those are reported as
  not in this base. Every touched file's pre-image blob id must equal the release file's.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from .core import (
    SERIES_BRANCH,
    Series,
    SeriesError,
    base_preimages,
    cache_dir,
    git,
    progress,
    read_patch,
)

PYPI_PREFIX = "transformer_engine/"


def release_wheel(release: str) -> Path:
    """The pure-Python `transformer_engine` wheel of a release, downloaded once into the cache."""
    dist = cache_dir() / "dist"
    dist.mkdir(exist_ok=True)
    found = sorted(dist.glob(f"transformer_engine-{release}-py3-none-any.whl"))
    if found:
        return found[0]
    progress(f"downloading transformer-engine=={release} (pure-Python wheel)")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(dist)]
        + [f"transformer-engine=={release}"],
        capture_output=True,
        text=True,
        check=False,
    )
    found = sorted(dist.glob(f"transformer_engine-{release}-py3-none-any.whl"))
    if proc.returncode != 0 or not found:
        raise SeriesError(
            f"could not download transformer-engine=={release}:\n{proc.stderr.strip()}\n"
            "Check the package index, or pass --wheel PATH to a downloaded wheel."
        )
    return found[0]


def init_git_base(dest: Path, te_src: Path, commit: str) -> None:
    """Clone te_src into dest and check out `commit` on the series branch."""
    progress(f"cloning {te_src} into {dest}")
    git("clone", "-q", "--no-checkout", str(te_src), str(dest), cwd=dest.parent)
    if not git("cat-file", "-t", f"{commit}^{{commit}}", cwd=dest, check=False).strip():
        raise SeriesError(
            f"base commit {commit} is not in {te_src}. Fetch upstream main there "
            "(git fetch origin main) and run apply again."
        )
    git("checkout", "-q", "-B", SERIES_BRANCH, commit, cwd=dest)
    git("config", "te-series.kind", "git", cwd=dest)
    git("config", "te-series.base", commit, cwd=dest)


def init_pypi_base(dest: Path, wheel: Path, release: str) -> None:
    """Unpack the wheel's transformer_engine/ into a new repo and commit it as the base."""
    progress(f"unpacking {wheel.name} into {dest} as the base commit")
    dest.mkdir(parents=True)
    git("init", "-q", "-b", SERIES_BRANCH, cwd=dest)
    with zipfile.ZipFile(wheel) as zf:
        for name in zf.namelist():
            if name.startswith(PYPI_PREFIX) and not name.endswith("/"):
                zf.extract(name, dest)
    git("add", "-A", cwd=dest)
    git("commit", "-q", "-m", f"transformer_engine {release} from PyPI", cwd=dest)
    base = git("rev-parse", "HEAD", cwd=dest).strip()
    git("config", "te-series.kind", "pypi", cwd=dest)
    git("config", "te-series.base", base, cwd=dest)
    git("config", "te-series.release", release, cwd=dest)


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
        have = git("rev-parse", "-q", "--verify", f"HEAD:{path}", cwd=dest, check=False).strip()
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


def am_series(dest: Path, series: Series, include: str | None = None) -> None:
    """`git am -3` each patch; on failure abort, name the patch, file and hunk, and stop."""
    names = series.names()
    for i, path in enumerate(series.paths(), 1):
        progress(f"[{i}/{len(names)}] git am -3 {path.name}")
        args = ["am", "-3", "--keep-non-patch", "--empty=keep"]
        if include:
            args.append(f"--include={include}")
        proc = subprocess.run(
            ["git", *args, str(path)],
            cwd=dest,
            capture_output=True,
            text=True,
            check=False,
            env=_am_env(),
        )
        if proc.returncode == 0:
            continue
        conflicts = [
            l for l in (proc.stdout + proc.stderr).splitlines() if l.startswith("CONFLICT")
        ]
        where = _locate_failure(dest, path, include)
        subprocess.run(["git", "am", "--abort"], cwd=dest, capture_output=True, check=False)
        done = ", ".join(names[: i - 1]) or "none"
        raise SeriesError(
            f"patch {path.name} does not apply: {where}\n"
            + "".join(f"git: {l}\n" for l in conflicts)
            + f"fork/ is clean at the last good patch (applied: {done}).\n"
            "Recover: refresh the patch against that state (edit in fork/, commit, then "
            "`te-series export`), or fix the base."
        )


def _am_env() -> dict:
    import os

    from .core import BOT

    env = {**os.environ, **BOT}
    # Keep authorship from the patch; only the committer is the bot.
    for k in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE"):
        env.pop(k)
    return env


def _locate_failure(dest: Path, patch: Path, include: str | None) -> str:
    """Name the file and hunk that fail, from `git apply --check -v` on the pre-patch tree."""
    subprocess.run(["git", "am", "--abort"], cwd=dest, capture_output=True, check=False)
    args = ["git", "apply", "--check", "-v"]
    if include:
        args.append(f"--include={include}")
    proc = subprocess.run(
        [*args, str(patch)], cwd=dest, capture_output=True, text=True, check=False
    )
    hunks = {f.path: f.hunks for f in read_patch(patch).files}
    found = []
    for m in re.finditer(r"^error: patch failed: (\S+):(\d+)$", proc.stderr, re.M):
        path, line = m.group(1), m.group(2)
        header = next((h for h in hunks.get(path, []) if h.startswith(f"@@ -{line},")), "")
        found.append(f"file {path}, hunk at line {line} {header}".rstrip())
    if not found:
        return "git am -3 failed although the patch applies on its own (see git's message)"
    return "; ".join(found)


def make_fork(
    series: Series,
    dest: Path,
    *,
    te_src: Path | None = None,
    wheel: Path | None = None,
) -> dict[str, list[str]]:
    """Create dest from a base and apply the series. Returns the files not in this base."""
    if te_src is not None:
        init_git_base(dest, te_src, series.base_commit)
        am_series(dest, series)
        return {}
    release = series.release
    init_pypi_base(dest, wheel or release_wheel(release), release)
    absent = check_pypi_blobs(dest, series)
    am_series(dest, series, include=PYPI_PREFIX + "*")
    return absent


def report_absent(absent: dict[str, list[str]]) -> None:
    for path, names in sorted(absent.items()):
        print(f"not in this base: {path} (hunks of {', '.join(names)})")


def run(args) -> int:
    series = Series(args.root / "patches")
    dest = args.root / "fork"
    if dest.exists():
        if not args.force:
            raise SeriesError(
                "fork/ exists. Export its work first (`te-series export`), then rerun with "
                "--force to rebuild it from the base."
            )
        shutil.rmtree(dest)
    try:
        absent = make_fork(series, dest, te_src=args.te_src, wheel=args.wheel)
    except SeriesError:
        if dest.exists() and not git("rev-parse", "-q", "--verify", "HEAD", cwd=dest, check=False):
            shutil.rmtree(dest)
        raise
    report_absent(absent)
    n = len(series.names())
    kind = "git" if args.te_src else "pypi"
    print(f"fork/: {kind} base with {n} patch(es) applied on branch {SERIES_BRANCH}")
    return 0
