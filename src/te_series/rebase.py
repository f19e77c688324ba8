"""`te-series rebase --onto COMMIT`: move the series to another upstream commit.

fork/ must hold the whole series and be exportable. The commit is looked up in fork/,
else in --te-src (and fetched). `git rebase --onto COMMIT <base> series` moves the series'
commits (git carries the patch-name notes along); then base.toml's `[upstream] commit`
line is pointed at COMMIT (nothing else in the file changes) and the series is exported.
Only base..HEAD is ever exported, so upstream commits never become patches.

A conflict names the patch and files: resolve it in fork/, then
`git -C fork rebase --continue` and `te-series rebase --continue` (or `--abort`).
"""

from __future__ import annotations

import dataclasses

from .core import (
    SeriesError,
    git,
    git_run,
    in_progress,
    is_ancestor,
    load_series,
    no_interrupt,
    note_names,
    read_state,
    rel,
    set_base_commit,
    write_state,
)
from .export import check_tree, plan, report, write


def resolve(fork, onto: str, te_src) -> str:
    """The commit id of onto: in --te-src when given (then fetched into fork/), else in fork/."""
    where = te_src or fork
    sha = git_run("rev-parse", "-q", "--verify", f"{onto}^{{commit}}", cwd=where).stdout.strip()
    if not sha:
        hint = "" if te_src else "; name a TE checkout that has it with --te-src"
        raise SeriesError(f"{onto} is not a commit in {where}{hint}")
    if te_src:
        git("fetch", "-q", str(te_src), sha, cwd=fork)
    return sha


def finish(root, fork, series, drops) -> int:
    state = read_state(fork)
    onto = state.rebase_onto
    if in_progress(fork) == "a git rebase":
        proc = git_run("rebase", "--continue", cwd=fork, env={"GIT_EDITOR": "true"})
        if proc.returncode != 0:
            raise SeriesError(conflict(fork, proc))
    if not is_ancestor(fork, onto, "HEAD"):
        state.rebase_onto = None
        write_state(fork, state)
        raise SeriesError(
            f"fork/ is not on {onto[:12]}: the rebase was aborted. fork/ stays on "
            f"{state.base[:12]}; nothing changed."
        )
    moved = dataclasses.replace(state, base=onto, rebase_onto=None)
    try:
        p = plan(fork, root, series, drops, state=check_tree(fork, root, moved), base_commit=onto)
    except SeriesError as e:
        raise SeriesError(
            f"{e}\n(After a rebase: te-series rebase --continue [--drop NAME].)"
        ) from None
    with no_interrupt():
        write(root, p)
        set_base_commit(series, onto)
    report(root, p, dry=False)
    print(f"rebased onto {onto}; {rel(series.base_file, root)} [upstream] commit updated")
    print("Check that [pypi] release still matches the new base: te-series check")
    return 0


def conflict(fork, proc) -> str:
    files = git_run("diff", "--name-only", "--diff-filter=U", cwd=fork).stdout.split()
    stopped = git_run("rev-parse", "-q", "--verify", "REBASE_HEAD", cwd=fork).stdout.strip()
    names = note_names(fork, stopped) if stopped else []
    subject = git_run("log", "-1", "--format=%s", "REBASE_HEAD", cwd=fork).stdout.strip()
    said = [l for l in (proc.stdout + proc.stderr).splitlines() if not l.startswith("hint:")]
    return (
        f"patch {', '.join(names) or '(a new commit)'} ({subject!r}) conflicts in "
        f"{', '.join(files) or '(see git)'}\n"
        + "".join(f"  {l}\n" for l in said[-20:])
        + "Resolve it in fork/, git -C fork add the files, then git -C fork rebase --continue "
        "and te-series rebase --continue. Or give up: te-series rebase --abort."
    )


def run(args) -> int:
    root = args.root
    fork = root / "fork"
    series = load_series(root)
    drops = args.drop or []
    if args.abort:
        state = read_state(fork)
        if in_progress(fork) == "a git rebase":
            git("rebase", "--abort", cwd=fork)
        if state and state.rebase_onto:
            state.rebase_onto = None
            write_state(fork, state)
        print(f"rebase aborted; fork/ is on {state.base[:12] if state else '?'} as before")
        return 0
    if args.continue_:
        state = read_state(fork)
        if state is None or not state.rebase_onto:
            raise SeriesError("no te-series rebase to continue; start one with --onto COMMIT")
        return finish(root, fork, series, drops)
    if not args.onto:
        raise SeriesError("say where to: te-series rebase --onto COMMIT [--te-src PATH]")
    state = check_tree(fork, root)
    plan(fork, root, series, drops, state=state)  # all of export's guards, before moving
    onto = resolve(fork, args.onto, args.te_src)
    if onto == state.base:
        raise SeriesError(f"fork/ is already on {onto[:12]}")
    state.rebase_onto = onto
    write_state(fork, state)
    proc = git_run("rebase", "--onto", onto, state.base, "series", cwd=fork)
    if proc.returncode != 0:
        raise SeriesError(conflict(fork, proc))
    return finish(root, fork, series, drops)
