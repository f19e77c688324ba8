"""`te-series apply`: make fork/ from a base (a TE checkout, `--te-src`, or the pinned
release's wheel) and `git am -3` the series onto it, in fork.new/, swapped in once complete
(the old tree kept whole in .te-series-backup/); `--continue` goes on after a stop (README:
Verbs, The edit loop).
"""

from __future__ import annotations

from pathlib import Path

from .util import PatchFailed, rel, SERIES_BRANCH, SeriesError
from .git import (
    blob_id,
    BOT,
    commits,
    conflicted,
    git,
    git_run,
    in_progress,
    log1,
    note_names,
    refuse_full_disk,
    set_note,
)
from .series import load_series, read_patch
from .base import include_for
from .worktree import (
    abort_am,
    apply_patches,
    describe_tree,
    drop_args,
    list_changed,
    locked,
    make_tree,
    no_record,
    not_a_work_tree,
    read_state,
    report_absent,
    series_of,
    settle,
    stopped_message,
    unfinished_port,
    WorkTree,
    write_state,
)


def resume(root: Path, tree: Path, *, skip: bool) -> None:
    """Take the patch git am stopped on as resolved (or skip it) and apply the rest."""
    state = read_state(tree)
    name_ = rel(tree, root)
    if state is None:
        raise SeriesError(no_record(tree, root))
    why = unfinished_port(tree, root, state)
    if why:
        raise SeriesError(why)
    if settle(tree, state) != state:  # a Ctrl-C after a patch's note, before its record
        state = settle(tree, state)
        write_state(tree, state)
    verbs = WorkTree.at(tree).verbs(state)
    if state.complete:
        if tree == WorkTree.at(tree).new:
            return  # complete but not swapped in (Ctrl-C, a crash): the caller swaps it
        if state.rebase_onto:  # apply's --continue is not the rebase's (v38 #7)
            raise SeriesError(
                f"a te-series rebase of {name_}/ is stopped, not an apply: te-series rebase "
                "--continue (or --abort)"
            )
        raise SeriesError(f"{name_}/ already holds the whole series; nothing to continue")
    series = series_of(state, root)
    changed = list_changed(tree, root, state)
    if changed:
        raise SeriesError(changed)
    name = state.patches[state.applied]
    patch = series.dir / name
    include = include_for(state.kind)
    busy = in_progress(tree)
    if busy and busy != "a git am":
        raise SeriesError(f"{busy} is in progress in {name_}/; finish or abort it first")
    if locked(tree, root, verbs):
        raise SeriesError(locked(tree, root, verbs))
    # The stopped patch's file changed since apply took it (tool-review-v7 #5b): git am's
    # stop is of the old file. Once that am is aborted, the file as it is now is applied.
    recorded = (state.recorded or {}).get(name)
    refiled = state.failed == name and recorded is not None and patch.is_file()
    refiled = refiled and blob_id(patch.read_bytes()) != recorded
    if refiled and busy and not skip:
        raise SeriesError(
            f"{rel(patch, root)} changed since apply stopped on it: the git am stopped in "
            f"{name_}/ is of the file as it was, so --continue would go on with the old "
            f"version. To apply the file as it is now: git -C {name_} am --abort (this drops "
            f"what that git am left in {name_}/), then {verbs['continue']}. Or rebuild "
            f"({verbs['rebuild']})."
        )
    if skip:
        if busy:
            abort_am(tree)
        print(f"skipped {name}; export will refuse until you say {drop_args([name])}")
        state.skipped.append(name)
        state.applied += 1
        state.failed = None
        write_state(tree, state)
    elif busy and state.failed:
        fresh = _unnoted(tree, state)
        staged = git_run("diff", "--cached", "--quiet", "HEAD", cwd=tree).returncode
        if fresh and staged == 0:
            # The fix was committed while git am was stopped (git commit, not
            # git am --continue): end the am, keeping that commit, and take it.
            git_run("am", "--quit", cwd=tree)
            _take(tree, state, name, fresh, patch)
        else:
            proc = git_run("am", "--continue", cwd=tree, env={"GIT_EDITOR": "true"})
            if proc.returncode != 0:
                marked = conflicted(tree)
                refuse_full_disk("am", proc.stderr, tree)  # not the change's doing (v33 #5)
                raise SeriesError(
                    f"git am --continue in {name_}/ failed:\n"
                    f"{(proc.stdout + proc.stderr).strip()}\n"
                    + (
                        f"Resolve the conflicts in {', '.join(marked)}"
                        if marked
                        else f"No file of {name_}/ has conflict markers: make the change by hand"
                    )
                    + f" and `git -C {name_} add` the files, then run "
                    f"{verbs['continue']} again (or `git -C {name_} am --abort`, commit a "
                    f"fixed version of the change yourself, and {verbs['continue']})."
                )
            _take(tree, state, name, ["HEAD"], patch)
    else:
        if busy:  # interrupted inside git am, or it failed not for the patch: run it again
            abort_am(tree, patch, name_)
        fresh = _unnoted(tree, state)
        if state.failed and not fresh and refiled:
            print(f"{name} changed since apply stopped on it: applying it as it is now")
        elif state.failed:
            if not fresh:
                raise SeriesError(
                    f"{name} is still not in {name_}/ (and no git am is stopped there): commit "
                    f"a fixed version of the change, then run {verbs['continue']} (or --skip "
                    "it)."
                )
            _take(tree, state, name, fresh, patch)
        elif fresh and _made_by_am(tree, fresh[0], patch):
            # Interrupted after git am committed the patch, before its note was written.
            _take(tree, state, name, fresh, patch)
        elif fresh:
            # Interrupted, then commits of the user's own: they stay, as new commits, and
            # the patch is applied after them.
            print(
                f"kept {len(fresh)} commit(s) of yours as new commit(s) before {name}, "
                "which git am applies now: " + ", ".join(log1(tree, "%h %s", r) for r in fresh)
            )
    apply_patches(tree, series, state, include)


def _unnoted(tree: Path, state) -> list[str]:
    """Commits after the last one that came from a patch: the user's fix of the stopped one."""
    revs = commits(tree, f"{state.base}..HEAD")
    while revs and not note_names(tree, revs[-1]):
        revs.pop()
    return commits(tree, f"{revs[-1] if revs else state.base}..HEAD")


def _made_by_am(tree: Path, rev: str, patch: Path) -> bool:
    """Whether rev is the commit te-series' git am made from patch (committer and subject)."""
    committer, subject = git("log", "-1", "--format=%ce%x00%s", rev, cwd=tree).split("\0")
    return committer == BOT["GIT_COMMITTER_EMAIL"] and subject.strip() == read_patch(patch).subject


def _take(tree: Path, state, name: str, fresh: list[str], patch: Path) -> None:
    """Record the first of the user's new commits as the stopped patch."""
    subject = log1(tree, "%h %s", fresh[0])
    want = read_patch(patch).subject
    if subject.split(" ", 1)[-1] != want:
        print(
            f"note: took commit {subject!r} as the fixed version of {name}, whose subject is "
            f"{want!r}; export writes it under that commit's subject. If it is not the fix, "
            f"rebuild the tree instead ({WorkTree.at(tree).verbs(state)['rebuild']})."
        )
    set_note(tree, fresh[0], name)
    state.applied += 1
    state.failed = None
    write_state(tree, state)


def run(args) -> int:
    root = args.root
    if args.continue_ or args.skip:
        wt = WorkTree(root, args.port)
        tree = wt.current
        if tree.is_symlink() and not tree.exists():  # a link to nothing (v11 #6)
            raise not_a_work_tree(tree, root)
        if not tree.exists():
            raise SeriesError(f"{rel(tree, root)}/ does not exist; nothing to continue (make it: "
                              f"{wt.verbs()['make']})")  # fmt: skip
        try:
            resume(root, tree, skip=args.skip)
        except PatchFailed as err:
            raise SeriesError(stopped_message(tree, root, err)) from None
        for line in wt.finish(tree):
            print(f"kept: {line}")
        print(describe_tree(wt.current, root))
        return 0
    if args.port:
        raise SeriesError(
            "--port goes with --continue; make a port tree with te-series port --edit"
        )
    series = load_series(root)
    series.names()  # refuse a broken listing before touching anything
    fork = WorkTree(root).path
    absent = {}

    def build(dest: Path) -> None:
        absent.update(make_tree(series, dest, te_src=args.te_src, wheel=args.wheel))

    for line in WorkTree(root).build(build, force=args.force):
        print(f"kept: {line}")
    report_absent(absent)
    kind = "git" if args.te_src else "pypi"
    print(f"fork/: {kind} base with {len(series.names())} patch(es) applied on {SERIES_BRANCH}")
    for pr, rev in (read_state(fork).prerequisites or {}).items():
        said = f"commit {rev[:12]} below the series" if rev else "already in the base"
        print(f"upstream prerequisite #{pr}: {said} (upstream's change, never exported)")
    return 0
