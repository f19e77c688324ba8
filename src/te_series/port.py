"""`te-series port`: carry the series to a newer PyPI release by 3-way merge.

The series' pre-image blobs exist only on its own base, so the merge needs that base:

1. commit A: the pinned release's transformer_engine/ with the upstream prerequisites
   (its files match the base commit's with them); apply the series on it with `git am -3`
   (branch `series`);
2. commit B: the target release's transformer_engine/, on top of A, then the upstream
   prerequisites applied to it by the same rule as every base (a release that lacks one,
   e.g. 2.19.0 without #3410, gets its files from the release that has it);
3. `git rebase --onto B A series`: git's 3-way merge of each patch onto the target;
4. port patches, `patches/port/<release>/series` and its patch files (against the
   release's transformer_engine/ files), `git am -3` on top: changes a merge cannot
   express.

A merge conflict stops the port and names the patch and the conflicting files; the
temporary repository is discarded. Port patches cannot resolve a merge conflict (they
apply after the merge): the series' patch must change so that it merges. `--out DIR`
writes the ported series (port patches included) as patches for the target release's
files. `--edit` leaves the port as a git repository in fork-port/<release>/ (branch
`series`) for editing the port patches; `te-series export --port <release>` writes them
back.
"""

from __future__ import annotations

import shlex
import shutil
import tempfile
from pathlib import Path

from .util import PatchFailed, progress, rel, SeriesError
from .git import conflicted, format_patch, git, git_run, object_id, rebase_stop
from .git import refuse_full_disk
from .series import load_series, Series
from .base import apply_prerequisites, extract_package, prerequisite_top, release_wheel
from .worktree import (
    apply_patches,
    make_tree,
    new_state,
    read_state,
    refuse_out,
    WorkTree,
    write_state,
)


def port_tree(series: Series, release: str, dest: Path, *, port_patches: bool = True) -> Path:
    """Make dest a git repo whose HEAD is the series ported onto `release`.

    The state records the top of the ported series as the base of the port patches, and
    the target release's own commit with its prerequisites as `target` (what `--out`
    writes starts above it: prerequisites are never exported). Returns dest.
    """
    target_wheel = release_wheel(release, series)  # an unknown release fails here, first
    names = series.names()
    try:
        make_tree(series, dest)  # the series on its own release, with the prerequisites
    except PatchFailed as err:  # no port to resume: the series itself does not apply
        raise SeriesError(
            f"porting to {release}: the series does not apply on its own base release "
            f"{series.release}: {err}Fix the series first (te-series check names what fails); "
            "nothing of the port was kept."
        ) from None
    base = read_state(dest).base

    progress(f"importing transformer_engine {release} as the port target")
    git("checkout", "-q", "-b", "target", base, cwd=dest)
    shutil.rmtree(dest / "transformer_engine")
    extract_package(target_wheel, dest)
    git("add", "-A", cwd=dest)
    git("commit", "-q", "--allow-empty", "-m", f"transformer_engine {release} from PyPI", cwd=dest)
    own = object_id(dest, "HEAD")
    carried = apply_prerequisites(dest, series)
    target = prerequisite_top(own, carried)

    progress(f"3-way merge of {len(names)} patch(es) onto {release}")
    proc = git_run("rebase", "--onto", target, base, "series", cwd=dest)
    if proc.returncode != 0:
        files, (_, subject) = conflicted(dest), rebase_stop(dest)
        shown = git_run("diff", cwd=dest).stdout.strip().splitlines()
        git_run("rebase", "--abort", cwd=dest)
        if not files:  # no conflict: git could not do its work (a full disk: v33 #3)
            said = (proc.stderr.strip() or proc.stdout.strip())[-1500:]
            refuse_full_disk("rebase", said)
            raise SeriesError(
                f"porting to {release}: git rebase failed, not at a conflict, so not the "
                f"series' doing:\n{said}\nFix what git says (a full disk, a file it may not "
                "write), then run the same te-series command again. Nothing was installed."
            )
        raise SeriesError(
            f"porting to {release}: the 3-way merge of patch {subject!r} conflicts in "
            f"{', '.join(files) or '(no file; see git output)'}\n"
            f"{proc.stdout.strip()[-1500:]}\n"
            + ("".join(f"  {l}\n" for l in shown[:60]) + ("  ...\n" if len(shown) > 60 else ""))
            + f"Nothing was installed. A port patch cannot resolve this: port patches apply "
            f"after the merge, so the merge itself must succeed first (port --edit stops the "
            f"same way). Change that patch of the series so that it merges onto {release} "
            "(te-series apply --te-src PATH, edit in fork/, te-series export), or take "
            f"{release} out of base.toml's [port] targets until the series is rebased onto it."
        )
    top = object_id(dest, "HEAD")
    ps = series.port_series(release)
    port_names = ps.names()
    state = new_state(
        "port", top, ps, port_names, release=release, target=target, upstream=own,
        prerequisites=carried,
    )  # fmt: skip
    write_state(dest, state)
    if port_patches and port_names:
        progress(f"{len(port_names)} port patch(es) for {release}")
        apply_patches(dest, ps, state)
    return dest


def check_out(root: Path, out: Path, releases: list[str]) -> None:
    """Refuse an --out in the series, a work tree or a backup, or one whose <release>/
    folders hold files already: port --out writes only into new or empty folders."""
    refuse_out(root, out, "port-out", folder=True)
    links = [shlex.quote(str(out / r)) for r in releases if (out / r).is_symlink()]
    if links:  # tool-review-v9 #7: it led port into patches/ (or, dangling, to a raw error)
        raise SeriesError(
            f"--out: {', '.join(links)} is a symbolic link; port writes only into folders of "
            f"its own. Remove it (rm {' '.join(links)}) or name another --out folder."
        )
    files = [str(out / r) for r in releases if (out / r).exists() and not (out / r).is_dir()]
    if files:  # a raw "Not a directory" (v32 #3)
        moves = " && ".join(f"mv {shlex.quote(f)} {shlex.quote(f + '.old')}" for f in files)
        raise SeriesError(
            f"--out: {', '.join(files)} is a file; port writes the release's patches into a "
            f"folder of that name. Move it away ({moves}) or name another --out folder."
        )
    full = [out / r for r in releases if (out / r).exists() and any((out / r).iterdir())]
    if full:
        raise SeriesError(
            f"--out: {', '.join(rel(d, root) + '/' for d in full)} holds files already; port "
            "never overwrites them. Delete that folder first (if it is an old port) or name "
            "another --out folder."
        )


def targets(series: Series, release: str | None) -> list[str]:
    return [release] if release else series.port_targets


def run(args) -> int:
    root = args.root
    series = load_series(root)
    series.names()
    if args.edit and args.out:  # --out was not used (v28 #5)
        raise SeriesError("--edit leaves the port in fork-port/<release>/ and writes nothing "
                          "under --out: leave out one of them")  # fmt: skip
    if args.edit:
        releases = targets(series, args.release)
        if len(releases) != 1:
            raise SeriesError(f"--edit needs one release: --release one of {', '.join(releases)}")
        (release,) = releases
        wt = WorkTree(root, release)
        tree = wt.path
        for line in wt.build(lambda d: port_tree(series, release, d), force=args.force):
            print(f"kept: {line}")
        state = read_state(tree)
        print(
            f"{rel(tree, root)}/: {release} port on branch series, {len(state.patches)} port "
            f"patch(es) after {state.base[:12]}; commit there, then te-series export --port "
            f"{release}"
        )
        return 0
    releases = targets(series, args.release)
    if args.out:
        check_out(root, Path(args.out), releases)
    for release in releases:
        with tempfile.TemporaryDirectory(prefix="te-series-port-") as tmp:
            try:
                tree = port_tree(series, release, Path(tmp) / "tree")
            except PatchFailed as err:
                raise SeriesError(
                    f"porting to {release}: {err}Edit the port patches with te-series port "
                    f"--release {release} --edit."
                ) from None
            state = read_state(tree)
            if args.out:
                out = Path(args.out) / release
                out.mkdir(parents=True, exist_ok=True)
                files = format_patch(tree, f"{state.target}..HEAD", out)
                empty = [f for f in files if f.stat().st_size == 0]  # git am reads none (v38 #4)
                for f in empty:
                    f.unlink()
                print(f"ported patches for {release} in {out}" + (
                    f" (left out, as they change nothing there, only files its wheel lacks: "
                    f"{', '.join(f.name for f in empty)})" if empty else ""))  # fmt: skip
                pins = {str(p.pr): p for p in series.prerequisites}
                for pr, rev in (state.prerequisites or {}).items():
                    if rev:  # the release lacks it: the patches start from its post-image
                        p = pins[pr]
                        print(
                            f"  they start from upstream prerequisite #{pr} ({p.subject!r}), "
                            f"which {release} lacks: take {', '.join(p.files)} from release "
                            f"{p.release} first, or git am fails at the first patch"
                        )
        print(
            f"port to {release}: ok, {len(series.names())} patch(es) merged, "
            f"{len(state.patches)} port patch(es)"
        )
    return 0
