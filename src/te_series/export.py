"""`te-series export`: write base..HEAD of fork/ back to patches/ and rewrite series.

Export is stable: zero commit hash, no signature, no numbering in subjects, full blob
ids. A re-export with no edits is byte-identical.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from .core import SERIES_BRANCH, Series, SeriesError, git, progress

FORMAT_PATCH_ARGS = (
    "format-patch",
    "--zero-commit",
    "--no-signature",
    "--full-index",
    "--no-numbered",
    "--no-renames",
    "--subject-prefix=PATCH",
    "--no-cover-letter",
    "--quiet",
)


def check_fork(fork: Path) -> str:
    """Refuse an unusable fork/; return its base commit."""
    if not (fork / ".git").exists():
        raise SeriesError("fork/ does not exist. Run `te-series apply` first.")
    branch = git("rev-parse", "--abbrev-ref", "HEAD", cwd=fork).strip()
    if branch != SERIES_BRANCH:
        raise SeriesError(
            f"fork/ is on {branch!r}, not on {SERIES_BRANCH!r}. "
            f"Check out {SERIES_BRANCH} (git -C fork checkout {SERIES_BRANCH}) and export again."
        )
    if (fork / ".git" / "rebase-apply").exists() or (fork / ".git" / "rebase-merge").exists():
        raise SeriesError("fork/ has a git am or rebase in progress. Finish or abort it first.")
    dirty = git("status", "--porcelain", "--untracked-files=no", cwd=fork).strip()
    if dirty:
        raise SeriesError(
            "fork/ has uncommitted edits; commit them (git -C fork commit) or stash them, "
            f"then export again:\n{dirty}"
        )
    kind = git("config", "te-series.kind", cwd=fork, check=False).strip()
    if kind != "git":
        raise SeriesError(
            "fork/ was built from a PyPI base, which lacks tests/ and docs/, so exporting it "
            "would drop those hunks. Rebuild it from a git base: te-series apply --te-src PATH"
        )
    return git("config", "te-series.base", cwd=fork).strip()


def export(fork: Path, series: Series) -> list[str]:
    """Export fork's commits over its base into series.dir; return the patch names."""
    base = check_fork(fork)
    with tempfile.TemporaryDirectory() as tmp:
        git(*FORMAT_PATCH_ARGS, "-o", tmp, f"{base}..HEAD", cwd=fork)
        new = sorted(Path(tmp).glob("*.patch"))
        for old in series.dir.glob("[0-9][0-9][0-9][0-9]-*.patch"):
            old.unlink()
        names = []
        for p in new:
            (series.dir / p.name).write_bytes(p.read_bytes())
            names.append(p.name)
    header = [l for l in series.series_file.read_text().splitlines() if l.startswith("#")]
    series.series_file.write_text("\n".join(header + names) + "\n")
    return names


def run(args) -> int:
    series = Series(args.root / "patches")
    names = export(args.root / "fork", series)
    progress(f"exported {len(names)} patch(es) to patches/")
    for n in names:
        print(n)
    return 0
