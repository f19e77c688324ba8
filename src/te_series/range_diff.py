"""`te-series range-diff REV [REV2]`: compare the series with an earlier version of it.

REV (and REV2, default: the working tree's patches/) are git revisions of this te-series
checkout, e.g. HEAD~3 or a tag. Both versions of patches/ are applied, each to its own
base commit with its own upstream prerequisites, in one throw-away clone of --te-src (or, with the same [pypi] release, on
the PyPI base), and `git range-diff` compares the two commit ranges, as b4's
`prep --compare-to` does. On the PyPI base only transformer_engine/ hunks apply: the
output then starts with a line that lists the files left out.
"""

from __future__ import annotations

import io
import sys
import tarfile
import tempfile
from pathlib import Path

from .util import PatchFailed, rel, SeriesError
from .git import git, git_run, object_id
from .series import base_preimages, load_series, read_patch, Series
from .base import apply_prerequisites, Base
from .worktree import apply_patches, refuse_out, State, write_state


def checkout_patches(root: Path, rev: str, dest: Path) -> Series:
    """patches/ as it was at rev, unpacked into dest/patches."""
    sha = object_id(root, f"{rev}^{{commit}}")
    if not sha:
        raise SeriesError(f"{rev} is not a revision of this te-series checkout (git rev-parse)")
    if not object_id(root, f"{sha}:patches/series"):
        raise SeriesError(f"{rev} has no patches/series; compare with a revision that has one")
    proc = git_run("archive", "--format=tar", sha, "patches", cwd=root, text=False)
    if proc.returncode:
        raise SeriesError(f"git archive {sha} patches failed: {proc.stderr.decode().strip()}")
    with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as tar:
        try:
            tar.extractall(dest, filter="data")
        except tarfile.FilterError as e:  # an absolute or escaping link, a device file
            raise SeriesError(
                f"at {rev}: {e} (git ls-tree {sha[:12]} patches/ shows it). range-diff reads "
                "only the series' files; take that entry out of patches/ (git rm it, commit) "
                "or compare with a revision without it."
            ) from None
    return Series(dest / "patches", dest, at=rev)


def apply_version(
    repo: Path, series: Series, label: str, base: str, include: str | None, rev: str
) -> str:
    """Apply a version of the series, with its own upstream prerequisites, on base in repo
    (branch label); return its range (above the prerequisites). Errors say which revision
    they are about (rev: a revision of this checkout, or the working tree)."""
    try:
        git("checkout", "-q", "-B", label, base, cwd=repo)
        apply_prerequisites(repo, series)
        base = object_id(repo, "HEAD")
        state = State("git", base, "patches", series.names())
        write_state(repo, state)
        apply_patches(repo, series, state, include)
    except PatchFailed as err:
        raise SeriesError(
            f"at {rev}: the {label} version does not apply: {err}{written_without(series)}"
        ) from None
    except SeriesError as err:
        raise SeriesError(f"at {rev}: {err}") from None
    return f"{base}..{label}"


def written_without(series: Series) -> str:
    """Why a version may not apply: its patches start from a prerequisite's pre-image, so
    they were written on the base without it, which this revision's base.toml lists."""
    first = base_preimages([read_patch(p) for p in series.paths()])
    said = [
        f"its patches start from {path} at blob {first[path]}, the pre-image of upstream "
        f"prerequisite #{p.pr}, which this revision's base.toml lists: they were written on "
        f"the base without #{p.pr}"
        for p in series.prerequisites
        for path, (pre, _) in p.files.items()
        if first.get(path) and pre.startswith(first[path])
    ]
    if not said:
        return ""
    return (
        "(" + "; ".join(said) + ". No base gives this revision's patches and base.toml "
        "together; compare with a revision whose base.toml and patches go together.)\n"
    )


def check_out(root: Path, out: Path | None) -> None:
    """Refuse an --out that exists, or lies in the series, a work tree or a backup; before
    any work. range-diff only ever writes a new file."""
    if out is None:
        return
    refuse_out(root, out, "series.range-diff", folder=False)
    if git_run("ls-files", "--error-unmatch", str(out), cwd=root).returncode == 0:
        raise SeriesError(
            f"--out {rel(out, root)} is a file tracked in this checkout; the range-diff would "
            "overwrite it. Name another file (e.g. series.range-diff)."
        )
    if out.exists() or out.is_symlink():
        raise SeriesError(
            f"--out {rel(out, root)} exists; range-diff never overwrites a file. Delete it "
            "first (if it is an old range-diff) or name a new file."
        )


def run(args) -> int:
    root = args.root
    check_out(root, args.out)
    header = ""
    with tempfile.TemporaryDirectory(prefix="te-series-range-diff-") as tmp:
        tmp = Path(tmp)
        old = checkout_patches(root, args.rev, tmp / "old")
        new = checkout_patches(root, args.rev2, tmp / "new") if args.rev2 else load_series(root)
        repo = tmp / "repo"
        base = Base(new, args.te_src, args.wheel)
        if args.te_src:
            base.init(repo)
            bases = []
            for s in (old, new):
                full = object_id(repo, f"{s.base_commit}^{{commit}}")
                if not full:
                    raise SeriesError(f"base {s.base_commit} is not in {args.te_src}")
                bases.append(full)
        else:
            if old.release != new.release:
                raise SeriesError(
                    f"the versions pin different PyPI releases ({old.release}, {new.release}); "
                    "compare them on a git base: --te-src PATH"
                )
            absent = base.absent(old, new)
            if absent:
                header = (
                    f"# range-diff on the PyPI base ({new.release}): transformer_engine/ only. "
                    f"Left out, not in this base: {', '.join(sorted(absent))}. "
                    "Use --te-src PATH for the whole series.\n"
                )
                print(header.rstrip(), file=sys.stderr)
            bases = [base.init(repo)] * 2
        a = apply_version(repo, old, "old", bases[0], base.include, args.rev)
        b = apply_version(repo, new, "new", bases[1], base.include, args.rev2 or "patches/")
        color = "--no-color" if args.out or not sys.stdout.isatty() else "--color"
        if old.names() and new.names():
            out = git("range-diff", color, a, b, cwd=repo)
        else:  # git range-diff needs two non-empty ranges
            out = git("log", "--format=%h %s", a, cwd=repo) + "  (old)\n"
            out += git("log", "--format=%h %s", b, cwd=repo) + "  (new)\n"
        out = header + out
    if args.out:
        with args.out.open("x") as f:  # "x": never over a file made since the check
            f.write(out)
        print(f"range-diff {args.rev}..{args.rev2 or 'patches/'} written to {args.out}")
    else:
        sys.stdout.write(out)
    return 0
