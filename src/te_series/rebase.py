"""`te-series rebase --onto COMMIT`: move the series to another upstream commit.

The commit must be upstream's (on a branch or tag of --te-src, else a remote-tracking branch
or tag of fork/), never the series' own. Everything that could stop it is checked before
anything moves (export's guards, base.toml's commit line, ignored files in the way, the
upstream prerequisites on COMMIT by apply's one rule); then `git rebase --onto <new top>
<old top> series` (the notes carry the patch names) and one write of the patches and
base.toml. A conflict names the patch and files; `--continue` runs git's own with the
messages kept, `--abort` puts fork/ back (README: Moving to a new upstream commit).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shlex
import shutil
import tempfile
from pathlib import Path

from .util import rel, SeriesError, write_atomic
from .git import (
    cannot_write,
    KEEP_MESSAGES,
    commits,
    conflicted,
    git,
    git_path,
    git_run,
    git_said,
    in_progress,
    is_ancestor,
    log1,
    names_in,
    note_names,
    object_id,
    patch_ids,
    pick_not_finished,
    rebase_file,
    rebase_stop,
    refused_pick,
    set_note,
    unfinished_pick,
)
from .series import base_text_with_commit, load_series
from .base import apply_prerequisites, prerequisite_top
from .worktree import drop_args, not_a_work_tree, put_aside, read_state, WorkTree, write_state
from .export import check_tree, plan, refuse_unnoted, report, write


def resolve(fork, onto: str, te_src, base: str) -> str:
    """The commit id of onto: in --te-src when given (then fetched into fork/), else in fork/.

    Refuse one of the series' own commits, and a commit that is on no upstream ref.
    """
    where = te_src or fork
    if te_src and not (Path(te_src) / ".git").exists() and not (Path(te_src) / "HEAD").exists():
        raise SeriesError(f"--te-src {te_src} is not a git checkout of TE")
    sha = object_id(where, f"{onto}^{{commit}}")
    if not sha:
        hint = "" if te_src else "; name a TE checkout that has it with --te-src"
        raise SeriesError(f"{onto} is not a commit in {where}{hint}")
    if te_src:
        git("fetch", "-q", str(te_src), sha, cwd=fork)
    refuse_own(fork, sha, onto, base)
    refs = ["refs/heads", "refs/remotes", "refs/tags"] if te_src else ["refs/remotes", "refs/tags"]
    found = git(
        "for-each-ref", "--contains", sha, "--count=1", "--format=%(refname)", *refs, cwd=where
    ).strip()
    if not found:
        where_said = (
            f"branch or tag of {te_src}" if te_src else "remote-tracking branch or tag of fork/"
        )
        raise SeriesError(
            f"{onto} ({sha[:12]}) is on no {where_said}, so it is not an upstream commit. Name "
            "an upstream commit (e.g. origin/main), with --te-src PATH for a TE checkout that "
            "has it."
        )
    return sha


def refuse_own(fork, onto: str, onto_name: str, base: str) -> None:
    """Refuse a new base that is one of the series' own commits, or built on one."""
    series = commits(fork, f"{base}..HEAD")
    inside = set(git("rev-list", onto, "--not", base, cwd=fork).split()) & set(series)
    if inside:
        first = onto if onto in inside else min(inside, key=series.index)
        subject = log1(fork, "%s", first)
        what = "is" if onto in inside else "is built on"
        raise SeriesError(
            f"{onto_name} ({onto[:12]}) {what} a commit of the series itself ({first[:12]} "
            f"{subject!r}), not upstream's; a rebase onto it would drop the series' commits. "
            "--onto takes an upstream commit (e.g. origin/main --te-src PATH)."
        )


def carry_prerequisites(fork, series, onto: str) -> dict[str, str]:
    """Bring `onto` up to base.toml's prerequisites by apply's one rule (apply_prerequisites),
    in a scratch work tree of fork/'s repository (index only, no checkout): fork/'s HEAD and
    files never move, so a kill meanwhile leaves fork/ on its series (a detached HEAD on
    upstream's commit was taken for the series' own, v16 #1). Returns PR number -> the new
    commit, the very one a fresh apply makes on onto, or "" where onto contains it. A
    prerequisite stays in base.toml either way: the PyPI base and the port targets that lack
    it still need it. Stops, with fork/ as it was, where onto has one of its files in a
    version the rule cannot place."""
    scratch = Path(tempfile.mkdtemp(prefix="carry-", dir=git_path(fork, "te-series")))
    try:
        git("worktree", "add", "-q", "--detach", "--no-checkout", str(scratch), onto, cwd=fork)
        git("read-tree", "HEAD", cwd=scratch)
        return apply_prerequisites(scratch, series, f"the --onto commit {onto[:12]}")  # v38 #5
    finally:
        git_run("worktree", "remove", "--force", str(scratch), cwd=fork)
        shutil.rmtree(scratch, ignore_errors=True)
        git_run("worktree", "prune", cwd=fork)


@contextlib.contextmanager
def export_refusal(again: str = "te-series rebase --continue"):
    """One of export's refusals inside a rebase: its way on is this rebase's --continue (or,
    before it starts, the rebase again: v24 #4), not export (v14 #3)."""
    try:
        yield
    except SeriesError as e:
        said = str(e).replace("export again", again)
        if "--continue" in again:
            said += "\n(After a rebase: te-series rebase --continue [--drop NAME], or --abort.)"
        raise SeriesError(said) from None


def finish(root, fork, series, drops) -> int:
    state = read_state(fork)
    onto = state.rebase_onto
    carried = state.rebase_prerequisites or {}
    top = prerequisite_top(onto, carried)
    proc = None
    if in_progress(fork) == "a git rebase":
        pick_again(fork)
        proc = git_run("rebase", "--continue", cwd=fork, env={"GIT_EDITOR": "true"})
    elif object_id(fork, "HEAD") == state.rebase_from:  # not begun yet, or git could not begin
        # it (a killed git's index.lock: its stop's --continue begins it, v22 R6)
        proc = git_run("rebase", "--onto", top, state.base, cwd=fork)  # HEAD: the series branch
    if proc and proc.returncode != 0:
        raise SeriesError(conflict(fork, proc))
    if not is_ancestor(fork, top, "HEAD"):
        state.rebase_onto = state.rebase_from = state.rebase_prerequisites = None
        write_state(fork, state)
        raise SeriesError(
            f"fork/ is not on {onto[:12]}: the rebase was aborted. fork/ stays on "
            f"{state.base[:12]}; nothing changed."
        )
    kept = rebased_from(fork, state, top)
    forget_skipped(fork, kept)
    listed = series.names()
    refuse_lost_commits(fork, state, kept, [d for d in drops if d not in listed])
    drops = [d for d in drops if d in listed]
    held = names_in(fork, f"{top}..HEAD")
    gone = [n for n in listed if n not in held and n not in drops]
    if gone:
        revs = commits(fork, f"{top}..HEAD")
        with export_refusal():  # a commit that lost its note is no dropped patch (v15 #4)
            refuse_unnoted(fork, root, series, gone, revs, {r: note_names(fork, r) for r in revs})
        merged = [n for n in gone if change_in_tree(fork, state, n, gone)]
        skipped = [n for n in gone if n not in merged]
        said = []
        if merged:
            said.append(
                f"git rebase dropped the commit(s) of {', '.join(merged)}: onto {onto[:12]} "
                "they became empty, because fork/ has their changes already (upstream merged "
                f"them?). If so, finish with: te-series rebase --continue {drop_args(merged)}."
            )
        if skipped:
            said.append(
                f"git rebase dropped the commit(s) of {', '.join(skipped)}, and fork/ does not "
                "have their changes: they were skipped (git rebase --skip) or resolved to "
                "nothing, so --drop would lose them. Give up and rebase again, resolving each "
                "conflict: te-series rebase --abort (fork/ goes back where it was). Only if "
                f"you mean to drop them: te-series rebase --continue {drop_args(skipped)}."
            )
        if not merged:
            said.append("To give up: te-series rebase --abort (fork/ goes back where it was).")
        raise SeriesError("\n".join(said))
    toml = base_text_with_commit(series, onto)
    moved = dataclasses.replace(
        state, base=top, upstream=onto, prerequisites=carried, rebase_onto=None,
        rebase_from=None, rebase_prerequisites=None,
    )  # fmt: skip
    again = f"te-series rebase --continue {drop_args(drops)}".rstrip()  # the same --drop (v33 #6)
    with export_refusal(again):  # a write the disk stops too (v33 #7)
        p = plan(fork, root, series, drops, state=check_tree(fork, root, moved), base_commit=onto)
        write(root, p, extra={series.base_file: toml.encode()})
    report(root, p, dry=False)
    print(f"rebased onto {onto}; {rel(series.base_file, root)} [upstream] commit updated")
    for pr, rev in carried.items():
        if rev:
            print(
                f"upstream prerequisite #{pr}: still needed, applied on {onto[:12]} as {rev[:12]}"
            )
        else:
            print(
                f"upstream prerequisite #{pr}: {onto[:12]} contains it (no commit below the "
                f"series); its table stays in {rel(series.base_file, root)}, for the bases that "
                f"lack it ([pypi] release, [port] targets {', '.join(series.port_targets)}). "
                "Take the table out only once none of them does."
            )
    print("Check that [pypi] release still matches the new base: te-series check")
    return 0


def pick_again(fork: Path) -> None:
    """Put a pick git died in (a full disk, a killed git) back on the rebase's todo, as git
    itself does with a pick it failed and survived, what git half wrote of it put aside first
    (apply's put_aside): --continue retries it as apply's retries its patch (v16 #2). One the
    user picked by hand instead is taken as the patch (unfinished_pick)."""
    rev = unfinished_pick(fork, take=True)
    if not rev:
        return
    if git_path(fork, "index.lock").exists():  # git can do nothing there: its stop again
        raise SeriesError(pick_not_finished(fork, rev))
    onto = rev == rebase_file(fork, "onto").strip()  # it died checking out the new base (v19 F4)
    revs = ["HEAD", rev] if onto else ["--no-commit-id", "-r", rev]
    files = git("diff" if onto else "diff-tree", "--name-only", "--no-renames", "-z", *revs,
                cwd=fork).split("\0")  # fmt: skip
    refused = refused_pick(fork) == rev  # and what is staged: git's continue commits it
    files += git("diff", "--cached", "--name-only", "-z", cwd=fork).split("\0") if refused else []
    put_aside(fork, [f for f in files if f], ", ".join(note_names(fork, rev)) or rev[:12], "fork")
    if onto:  # the rebase's first step, as git does it; the picks are all still to do
        git("checkout", "-q", "--detach", rev, cwd=fork)
        return
    todo = git_path(fork, "rebase-merge") / "git-rebase-todo"
    if refused:  # git put it back on the todo; its stop goes (refused_pick)
        (git_path(fork, "rebase-merge") / "stopped-sha").unlink(missing_ok=True)
    else:
        write_atomic(todo, f"pick {rev}\n".encode() + todo.read_bytes())


def refuse_lost_commits(fork, state, kept: dict[str, str], dropped: list[str]) -> None:
    """Refuse to finish where git rebase left out a commit not yet exported (no patch name:
    skipped at a conflict, or resolved to nothing) whose change fork/ does not have. Such a
    commit is on no branch after the rebase, only in the reflog. `--drop COMMIT` (its id, as
    named here) says that losing it is meant. `kept`: rebased_from's."""
    if not state.rebase_from:
        return
    top = prerequisite_top(state.rebase_onto, state.rebase_prerequisites or {})
    lost = [
        (rev, subject)
        for rev, subject in subjects(fork, f"{state.base}..{state.rebase_from}")
        if not note_names(fork, rev)
        and rev not in kept.values()
        and not reverts(fork, rev, at=top)
        and not reverts(fork, rev)
    ]
    lost = [(r, s) for r, s in lost if not any(r.startswith(d) for d in dropped if len(d) >= 7)]
    if lost:
        named = "; ".join(f"{rev[:12]} {subject!r}" for rev, subject in lost)
        picks = " ".join(rev[:12] for rev, _ in lost)
        raise SeriesError(
            f"git rebase left out commit(s) not yet exported, and fork/ does not have their "
            f"changes: {named} (skipped at a conflict, or resolved to nothing). They are on no "
            "branch now. To keep them: git -C fork cherry-pick "
            f"{picks}, resolve as git says, then te-series rebase --continue. To lose them on "
            "purpose: te-series rebase --continue "
            + " ".join(f"--drop {rev[:12]}" for rev, _ in lost)
            + ". Or give up: te-series rebase --abort (fork/ goes back where it was)."
        )


def reverts(fork, rev: str, at: str | None = None) -> bool:
    """Whether commit `at` (fork/'s HEAD if None) has rev's change already (rev: a commit, or
    "A B" for the diff between two): its diff reverse-applies there. Upstream's commit is the
    one to ask where later patches changed the same lines since (tool-review-v8 #4)."""
    diff = git("diff-tree", "-p", "--binary", "--no-renames", *rev.split(), cwd=fork)
    if not diff.strip():
        return False
    with tempfile.TemporaryDirectory() as tmp:
        env = None
        if at is not None:
            env = {"GIT_INDEX_FILE": os.path.join(tmp, "index")}
            git("read-tree", at, cwd=fork, env=env)
        proc = git_run("apply", "--check", "--cached", "-R", cwd=fork, input=diff, env=env)
    return proc.returncode == 0


def forget_skipped(fork, kept: dict[str, str]) -> None:
    """Take back the patch names `git rebase --skip` handed on: git copies a skipped commit's
    note onto the next commit, which then looks like a squash of both. A rebased commit
    keeps the names its own commit (rebased_from) had before the rebase."""
    for new, old in kept.items():
        names, own = note_names(fork, new), note_names(fork, old)
        if own and set(own) < set(names):
            set_note(fork, new, "\n".join(own))


def rebased_from(fork, state, top: str) -> dict[str, str]:
    """Which commit from before the rebase each commit of top..HEAD is, one to one: the same
    change (git patch-id), else the same author, date and message (which git rebase keeps
    where a conflict changed the diff), else the same subject (a reword at a stop). So a
    commit left out is never taken for kept because another has its subject (v13 #1)."""
    if not state.rebase_from:
        return {}

    def keys(revs: str) -> list[tuple[str, list]]:
        ids = patch_ids(fork, revs)
        log = git_run("log", "-z", "--date=raw", "--format=%H%n%an <%ae> %ad%n%B", revs,
                      cwd=fork, text=False).stdout  # fmt: skip
        recs = [r.split("\n", 2) for r in log.decode("utf-8", "surrogateescape").split("\0") if r]
        return [(r, [ids.get(r), f"{who}\n{m}", m.split("\n")[0]]) for r, who, m in recs]

    old, new, found = keys(f"{state.base}..{state.rebase_from}"), keys(f"{top}..HEAD"), {}
    for tier in range(3):
        for rev, key in (n for n in new if n[0] not in found):
            taken = found.values()
            match = [o for o, k in old if k[tier] and k[tier] == key[tier] and o not in taken]
            if match:
                found[rev] = match[0]
    return found


def subjects(fork, revs: str) -> list[tuple[str, str]]:
    out = git("log", "--format=%H %s", revs, cwd=fork)
    return [line.partition(" ")[::2] for line in out.splitlines()]


def change_in_tree(fork, state, name: str, gone: list[str]) -> bool:
    """Whether fork/'s HEAD has the change of name's commit from before the rebase (its
    diff, or that of the run of dropped commits it stands in, reverse-applies), as when
    upstream merged it (squashed with the others of its PR: v12 #5); not when it was skipped."""
    if not state.rebase_from:
        return False
    old = commits(fork, f"{state.base}..{state.rebase_from}")
    run = [bool(set(note_names(fork, r)) & set(gone)) for r in old]
    k = next((i for i, r in enumerate(old) if name in note_names(fork, r)), None)
    if k is None:
        return False
    lo, hi = k, k
    while lo and run[lo - 1]:
        lo -= 1
    while hi + 1 < len(old) and run[hi + 1]:
        hi += 1
    top = prerequisite_top(state.rebase_onto, state.rebase_prerequisites or {})
    return any(
        reverts(fork, rev, at) for rev in (old[k], f"{old[lo]}^ {old[hi]}") for at in (top, None)
    )


def conflict(fork, proc) -> str:
    files, (stopped, subject) = conflicted(fork), rebase_stop(fork)
    names = note_names(fork, stopped) if stopped else []
    said = git_said(proc)
    if not files and (rev := unfinished_pick(fork)):
        return f"git rebase in fork/ stopped; git says:\n{said}{pick_not_finished(fork, rev)}"
    if not files:  # git could not go on, but no file has conflict markers
        at = f" at patch {', '.join(names) or '(a new commit)'} ({subject!r})" if stopped else ""
        unstaged = git("diff", "--name-only", "-z", cwd=fork).split("\0")[:-1]
        first = (  # git says "git add" of each; an edit that is not the resolution goes in too
            f"fork/ has changes not staged: {', '.join(unstaged)}. git -C fork add those that "
            "resolve the patch; put the rest aside (git -C fork stash push -- FILE)"
            if unstaged else cannot_write(fork, fork.parent)
        )  # fmt: skip
        return (
            f"git rebase in fork/ could not go on{at}, and no file has conflict markers; git "
            "says:\n"
            + said
            + f"Fix that first: {first}; then te-series rebase --continue, or give "
            "up: te-series rebase --abort."
        )
    return (
        f"patch {', '.join(names) or '(a new commit)'} ({subject!r}) conflicts in "
        f"{', '.join(files) or '(see git)'}\n"
        + said
        + "Resolve it in fork/, git -C fork add the files, then te-series rebase --continue (it "
        "keeps the messages' '#' lines, which git's own continue drops). Or give up: te-series "
        "rebase --abort."
    )


def abort(fork) -> int:
    state = read_state(fork)
    busy = in_progress(fork) == "a git rebase"
    if state is None or not state.rebase_onto:
        if busy:
            raise SeriesError(
                "fork/ has a git rebase in progress that te-series did not start, so no "
                f"te-series rebase to abort. Finish it: git -C fork {KEEP_MESSAGES} rebase "
                "--continue (git -C fork rebase --abort would give it up, and drop what it did, "
                "commits made at its stops too; v16 #5)"
            )
        raise SeriesError("no te-series rebase is in progress; nothing to abort")
    head = object_id(fork, "HEAD")
    onto = state.rebase_onto
    kept, in_the_way = "", []
    if busy and state.rebase_from:  # untracked files where the series has files: git's
        moved = git("diff", "--name-only", "-z", "--no-renames", state.rebase_from, "HEAD",
                    cwd=fork).split("\0")[:-1]  # fmt: skip
        in_the_way = moved and git("ls-files", "--others", "--exclude-standard", "-z", "--",
                                   *moved, cwd=fork).split("\0")[:-1]  # abort refuses (v23 #5)
    edits = edits_commit(fork, head, in_the_way) if busy else ""  # git's abort resets them
    if edits or (state.rebase_from and head != state.rebase_from
                 and commits(fork, f"{onto}..{head}")):  # fmt: skip
        # The rebased commits, any the user made on top since, and the edits at the stop
        # (one commit on top): keep them on a branch.
        branch = f"te-series/aborted-rebase-{head[:12]}"
        git("branch", "-f", branch, edits or head, cwd=fork)
        kept = (
            f"\nThe rebased commits (and any you made on top of them"
            + (", and as its last commit the files fork/ had at the stop: conflicts, your edits"
               + (f", and {', '.join(in_the_way)}, untracked, which the series' files replace"
                  if in_the_way else "") if edits else "")
            + f") are kept on branch {branch}: git -C fork log -p {branch}; cherry-pick what "
            f"you need, then delete it (git -C fork branch -D {branch})."
        )
    if busy:
        for f in in_the_way:  # in the branch's last commit now
            (fork / f).unlink()
        git("rebase", "--abort", cwd=fork)
    if state.rebase_from and object_id(fork, "HEAD") != state.rebase_from:
        # The rebase itself had finished (the export step refused): move series back. The
        # index is refreshed first: a file touched since (same content) is no edit.
        git_run("update-index", "-q", "--refresh", cwd=fork)
        moved = git("diff", "--name-only", "-z", "--no-renames", state.rebase_from, "HEAD",
                    cwd=fork).split("\0")  # fmt: skip
        put_aside(fork, [f for f in moved if f], "the rebase", "fork",
                  "(onto the series as it was)")  # reset --keep refuses them (v17 F4)
        git("reset", "-q", "--keep", state.rebase_from, cwd=fork)
    state.rebase_onto = state.rebase_from = state.rebase_prerequisites = None
    write_state(fork, state)
    at = object_id(fork, "HEAD")[:12]  # the series' tip, not its base (v25 F4)
    print(f"rebase aborted; fork/ is back on the series as it was, at {at}{kept}")
    print(half_written(fork.parent, onto) or "", end="")
    return 0


def half_written(root: Path, onto: str) -> str:
    """What a rebase stopped in its last step (killed while it wrote patches/ and base.toml:
    its temporary files, or a base.toml on `onto` not committed: one committed so is a pull's,
    v21 #3) left in patches/, and how to put patches/ back as committed; "" where it wrote
    nothing (v20 #13)."""
    tmps = sorted(rel(t, root) for t in (root / "patches").rglob(".*.te-series-tmp"))
    diff = git_run("diff", "--name-only", "-z", "--relative", "HEAD", "--", "patches/series",
                   ":(glob)patches/*.patch", "patches/base.toml", cwd=root)  # what rebase writes
    files = [f for f in diff.stdout.split("\0") if f]
    toml = root / "patches/base.toml"
    on = "patches/base.toml" in files and toml.is_file() and onto in toml.read_text()
    if not tmps and not on:
        return ""
    undo = " && ".join(
        [f"git checkout HEAD -- {' '.join(map(shlex.quote, files))}"] * bool(files)
        + [f"rm {' '.join(map(shlex.quote, tmps))}"] * bool(tmps)
    )  # fmt: skip
    return (
        f"The rebase was stopped while it wrote patches/ (killed?), so patches/ holds part of "
        f"it, made for {onto[:12]}: {', '.join(files + tmps)}. fork/ is back on the base that "
        f"patches/ was committed for; put patches/ back as committed: {undo}\n"
    )


def edits_commit(fork: Path, head: str, untracked=()) -> str:
    """A commit on head of fork/'s tracked files as they are (conflicts, resolutions, files
    added at the stop) and of the untracked files named, built in an index of its own; ""
    when they are head's."""
    env = {"GIT_INDEX_FILE": str(git_path(fork, "te-series") / "abort.index")}
    try:
        git("read-tree", head, cwd=fork, env=env)
        git("add", "-u", cwd=fork, env=env)
        added = git("diff", "--cached", "--name-only", "--diff-filter=A", "-z", head, cwd=fork)
        if new := [f for f in added.split("\0") if f and (fork / f).exists()] + list(untracked):
            git("add", "-f", "--", *new, cwd=fork, env=env)
        tree = git("write-tree", cwd=fork, env=env).strip()
    finally:
        Path(env["GIT_INDEX_FILE"]).unlink(missing_ok=True)
    if tree == object_id(fork, f"{head}^{{tree}}"):
        return ""
    return git("commit-tree", tree, "-p", head, "-m", "Files fork/ had when its rebase was aborted",
               cwd=fork).strip()  # fmt: skip


def refuse_ignored_in_the_way(fork: Path, onto: str) -> None:
    """Refuse a move that would check out upstream's file over an ignored file of fork/ (git
    takes ignored files for expendable and overwrites them without a word; tool-review-v10
    #1). Export refuses untracked files, but lets info/exclude hide them."""
    added = git("diff", "--name-only", "-z", "--no-renames", "--diff-filter=A", "HEAD", onto,
                cwd=fork).split("\0")  # fmt: skip
    ignored = git("ls-files", "--others", "--ignored", "--exclude-standard", "-z", cwd=fork)
    hit = sorted(set(added) & set(ignored.split("\0")) - {""})
    if hit:
        raise SeriesError(
            f"fork/ has ignored file(s) where {onto[:12]} has files of its own: "
            f"{', '.join(hit[:10])}. The rebase would check upstream's over them, and git "
            "overwrites ignored files without a word. Move them out of fork/ (e.g. mv "
            f"{shlex.quote('fork/' + hit[0])} {shlex.quote(Path(hit[0]).name + '.mine')}), then "
            "rebase again; nothing was changed."
        )


def run(args) -> int:
    root = args.root
    fork = WorkTree(root).path
    series = load_series(root)
    drops = args.drop or []
    if (fork.exists() or fork.is_symlink()) and not (fork / ".git").exists():
        raise not_a_work_tree(fork, root)  # a file, a link to nothing or a loop (v15 #7)
    if (args.abort or args.continue_) and not fork.exists():  # v25 F3: a generic OS error
        raise SeriesError("fork/ does not exist, so no te-series rebase is in progress there")
    if args.abort:
        return abort(fork)
    if args.continue_:
        state = read_state(fork)
        if state is None or not state.rebase_onto:
            raise SeriesError("no te-series rebase to continue; start one with --onto COMMIT")
        return finish(root, fork, series, drops)
    if not args.onto:
        raise SeriesError("say where to: te-series rebase --onto COMMIT [--te-src PATH]")
    with export_refusal("run the rebase again (a commit of them is a patch of the series)"):
        state = check_tree(fork, root)
    onto = resolve(fork, args.onto, args.te_src, state.base)
    upstream = state.upstream or state.base
    # base.toml may have moved since fork/ was made (a pull): then the rebase may go there,
    # and nowhere else (it would undo that move).
    if object_id(fork, f"{series.base_commit}^{{commit}}") not in (upstream, onto):
        raise SeriesError(
            f"{rel(series.base_file, root)} says {series.base_commit[:12]}, and fork/ is on "
            f"{upstream[:12]}: base.toml moved since fork/ was made (a pull?). Rebase fork/ "
            f"there first: te-series rebase --onto {series.base_commit[:12]} --te-src PATH."
        )
    # All of export's guards, on fork/ as it is, before moving.
    p = plan(fork, root, series, drops, state=state, base_commit=upstream)
    taken = [o for o, names in zip(p.owner, p.noted) if o and o not in names]
    if taken:  # its notes name the old file: the rebase would take the patch for lost (v29 #2)
        raise SeriesError(
            f"fork/ stands for {', '.join(taken)} (renamed since fork/ was made, as a pull "
            "brought it) by commits noted with the old name: export first (te-series export), "
            "then rebase again; nothing was changed."
        )
    if onto == upstream:  # base.toml names it too (above); e.g. Ctrl-C cut a rebase's writes
        print(f"fork/ and {rel(series.base_file, root)} are on {onto[:12]} already")
        return 0
    refuse_ignored_in_the_way(fork, onto)
    base_text_with_commit(series, onto)  # a line it cannot edit stops here, not halfway
    carried = carry_prerequisites(fork, series, onto)  # a file it cannot place stops here
    state.rebase_onto = onto
    state.rebase_prerequisites = carried
    state.rebase_from = object_id(fork, "HEAD")
    write_state(fork, state)
    return finish(root, fork, series, drops)
