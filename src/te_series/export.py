"""`te-series export`: write base..HEAD of fork/ back to patches/ and update series.

Export is stable: zero commit hash, no signature, no numbering in subjects, full blob
ids, the user's git config left out. A re-export with no edits is byte-identical, and
untouched patches stay byte-identical when others change.

Export never loses the series. It refuses a fork/ that does not hold the whole series
(apply stopped or was interrupted, a patch's commit is gone) and names the patch files it
would drop; a drop must be asked for (`--drop NAME`). It refuses uncommitted or untracked
work in fork/, commits that are not the series' own (merges, upstream commits), and
overwriting patch files with uncommitted edits in the te-series checkout. `--dry-run`
says what would change. The series file keeps its comments, blank lines and `# pr:`
groups: a patch keeps its line, a new commit goes after the one before it.
"""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

from .core import (
    SERIES_BRANCH,
    Series,
    SeriesError,
    State,
    commits,
    format_patch,
    git,
    git_path,
    git_run,
    in_progress,
    is_ancestor,
    load_series,
    no_interrupt,
    note_names,
    read_state,
    rel,
    set_note,
    untracked,
    write_atomic,
    write_state,
)


def check_tree(tree: Path, root: Path, state: State | None = None) -> State:
    """Refuse a work tree that cannot be exported as it is; return its recorded state.

    `state` stands in for the recorded one (a rebase that is being finished).
    """
    name = rel(tree, root)
    if not (tree / ".git").exists():
        raise SeriesError(f"{name}/ does not exist. Run te-series apply first.")
    busy = in_progress(tree)
    if busy:
        raise SeriesError(
            f"{name}/ has {busy} in progress. Finish it (e.g. git -C {name} rebase --continue, "
            f"or te-series apply --continue for a stopped apply) or abort it, then export again."
        )
    state = state or read_state(tree)
    if state is None:
        raise SeriesError(
            f"{name}/ has no te-series apply record, so export cannot tell whether it holds the "
            "whole series. Rebuild it: te-series apply --force (its work is kept in a backup)."
        )
    branch = git("rev-parse", "--abbrev-ref", "HEAD", cwd=tree).strip()
    if branch != SERIES_BRANCH:
        raise SeriesError(
            f"{name}/ is on {branch!r}, not on {SERIES_BRANCH!r}. Check out {SERIES_BRANCH} "
            f"(git -C {name} checkout {SERIES_BRANCH}) and export again."
        )
    if state.kind == "pypi":
        raise SeriesError(
            f"{name}/ was built from a PyPI base, which lacks tests/ and docs/, so exporting it "
            "would drop those hunks. Rebuild it from a git base: te-series apply --te-src PATH"
        )
    if not state.complete:
        rest = state.patches[state.applied :]
        port = f" --port {state.release}" if state.kind == "port" else ""
        raise SeriesError(
            f"{name}/ holds only {state.applied} of the {len(state.patches)} patches: apply "
            f"stopped{' on ' + state.failed if state.failed else ' (interrupted)'}. An export "
            f"now would drop {', '.join(rest)}.\nApply the rest first: fix the stopped patch, "
            f"then te-series apply --continue{port}."
        )
    if state.rebase_onto:
        raise SeriesError(
            f"a te-series rebase onto {state.rebase_onto[:12]} is not finished in {name}/: "
            "te-series rebase --continue (or --abort)."
        )
    dirty = git("status", "--porcelain", "--untracked-files=no", "--ignore-submodules", cwd=tree)
    if dirty.strip():
        raise SeriesError(
            f"{name}/ has uncommitted edits; commit them (git -C {name} commit) or stash them, "
            f"then export again:\n{dirty.rstrip()}"
        )
    loose = untracked(tree)
    if loose:
        exclude = rel(git_path(tree, "info/exclude"), root)
        raise SeriesError(
            f"{name}/ has untracked files, which export would not write (they are in no "
            f"commit): {', '.join(loose)}.\nCommit them (git -C {name} add ... && git -C {name} "
            f"commit), delete them, or list them in {exclude}; then export again."
        )
    return state


def own_commits(tree: Path, root: Path, state: State) -> list[str]:
    """The series' commits, base..HEAD; refuse history export would get wrong."""
    name = rel(tree, root)
    base = state.base
    if not is_ancestor(tree, base, "HEAD"):
        raise SeriesError(
            f"{name}/ HEAD does not descend from the series' base {base[:12]}, so base..HEAD "
            "is not the series. To move the series to another upstream commit use "
            "te-series rebase --onto COMMIT."
        )
    merges = git("rev-list", "--merges", f"{base}..HEAD", cwd=tree).split()
    if merges:
        raise SeriesError(
            f"{name}/ has merge commit(s) after the base ({', '.join(m[:12] for m in merges)}); "
            "format-patch would leave them out. Rebase them away (git rebase), then export."
        )
    revs = commits(tree, f"{base}..HEAD")
    upstream = set(revs) - set(
        git("rev-list", f"{base}..HEAD", "--not", "--remotes=origin", cwd=tree).split()
    )
    if upstream:
        subjects = [
            git("log", "-1", "--format=%h %s", r, cwd=tree).strip() for r in revs if r in upstream
        ]
        raise SeriesError(
            f"{name}/ has {len(upstream)} upstream commit(s) between the series' base "
            f"{base[:12]} and HEAD (e.g. {subjects[0]}): it was rebased by hand. Export would "
            f"write them as patches. Undo that rebase (git -C {name} reset --hard ORIG_HEAD, "
            f"or find the old HEAD in git -C {name} reflog), then move the series with "
            "te-series rebase --onto COMMIT."
        )
    return revs


@dataclasses.dataclass
class Plan:
    """What an export would write."""

    tree: Path
    series: Series
    state: State
    revs: list[str]
    names: list[str]  # new patch names, one per commit
    data: dict[str, bytes]
    series_text: str
    changed: list[str]
    added: list[str]
    removed: list[str]
    unchanged: list[str]

    @property
    def series_changed(self) -> bool:
        f = self.series.series_file
        return f.read_text() != self.series_text if f.exists() else bool(self.series_text)


def plan(
    tree: Path,
    root: Path,
    series: Series,
    drops: list[str],
    state: State | None = None,
    base_commit: str | None = None,
) -> Plan:
    """Check everything and compute the export; write nothing."""
    state = state or check_tree(tree, root)
    if state.kind == "git":
        base_commit = base_commit or series.base_commit
        want = git_run("rev-parse", "-q", "--verify", f"{base_commit}^{{commit}}", cwd=tree)
        if want.stdout.strip() != state.base:
            raise SeriesError(
                f"{rel(tree, root)}/ was applied on {state.base[:12]}, but "
                f"{rel(series.base_file, root)} says {base_commit[:12]}. Rebuild fork/ "
                "(te-series apply --force, which keeps its work in a backup), or move it with "
                "te-series rebase --onto COMMIT."
            )
    revs = own_commits(tree, root, state)
    entries = series.entries()
    listed = series.names()
    # Which listed patch each commit stands for, from the notes apply wrote.
    slot = {e.name: i for i, e in enumerate(entries) if e.name}
    owner: list[str | None] = []
    taken: set[str] = set()
    held: set[str] = set()
    for r in revs:
        noted = note_names(tree, r)
        held.update(noted)
        mine = sorted((n for n in noted if n in slot and n not in taken), key=slot.get)
        owner.append(mine[0] if mine else None)
        taken.update(mine[:1])
    bad = [d for d in drops if d not in listed]
    if bad:
        raise SeriesError(f"--drop {', '.join(bad)}: not in {series.label}")
    kept = [d for d in drops if d in held]
    if kept:
        raise SeriesError(
            f"--drop {', '.join(kept)}: {rel(tree, root)}/ still holds it; remove its commit "
            "first (git rebase -i), or leave out --drop"
        )
    lost = [n for n in listed if n not in held and n not in drops]
    if lost:
        raise SeriesError(
            f"an export now would drop {', '.join(lost)} from {rel(series.dir, root)}/: "
            f"{rel(tree, root)}/ holds no commit for it. If that is what you want (the patch "
            f"was dropped, or its change now lives in other commits), say so: te-series "
            f"export --drop {' --drop '.join(lost)}. Otherwise rebuild fork/ with the whole "
            "series (te-series apply --force keeps this fork's work in a backup)."
        )
    with tempfile.TemporaryDirectory() as tmp:
        files = format_patch(tree, f"{state.base}..HEAD", Path(tmp))
        data = {p.name: p.read_bytes() for p in files}
    names = list(data)
    text = merge_series(entries, slot, owner, names)
    changed, added, unchanged = [], [], []
    for n, blob in data.items():
        old = series.dir / n
        if not old.exists():
            added.append(n)
        elif old.read_bytes() != blob:
            changed.append(n)
        else:
            unchanged.append(n)
    removed = [n for n in listed if n not in data]
    p = Plan(tree, series, state, revs, names, data, text, changed, added, removed, unchanged)
    refuse_dirty(root, p)
    return p


def refuse_dirty(root: Path, p: Plan) -> None:
    """Refuse to overwrite or delete patch files whose edits are not committed."""
    d = p.series.dir
    touched = [d / n for n in p.changed + p.removed] + [d / n for n in p.added if (d / n).exists()]
    if p.series_changed:
        touched.append(p.series.series_file)
    if not touched:
        return
    probe = d if d.exists() else root
    inside = git_run("rev-parse", "--is-inside-work-tree", cwd=probe)
    if inside.stdout.strip() != "true":
        raise SeriesError(
            f"{rel(d, root)}/ is not in a git repository, so the patch files export would "
            "replace could not be got back. Commit patches/ to git first."
        )
    status = git(
        "status", "--porcelain", "--untracked-files=all", "--", *map(str, touched), cwd=probe
    )
    if status.strip():
        raise SeriesError(
            "export would overwrite or delete files with uncommitted edits:\n"
            + status.rstrip()
            + f"\nCommit them (git add {rel(d, root)} && git commit) or stash them "
            f"(git stash push -- {rel(d, root)}), then export again; `git diff` shows the edits."
        )


def merge_series(entries, slot: dict[str, int], owner: list[str | None], names: list[str]) -> str:
    """The series file with each commit's new name on its patch's line.

    Comments, blank lines and `# pr:` markers stay where they are. A patch keeps its line
    (under its new name if its subject changed); commits that stand for no listed patch, or
    that moved, go right after the commit before them; lines of patches no commit holds go.
    """
    keyed = [(i, slot[o]) for i, o in enumerate(owner) if o is not None]
    # Longest run of commits whose lines are already in order: those stay put.
    best: list[list[int]] = []
    for k, (_, s) in enumerate(keyed):
        prev = [best[j] for j in range(k) if keyed[j][1] < s]
        best.append(max(prev, key=len, default=[]) + [k])
    stay = {keyed[k][0] for k in max(best, key=len, default=[])}
    at_line = {slot[owner[i]]: i for i in stay}
    items: list[tuple[str, object]] = []
    for idx, e in enumerate(entries):
        if e.name is None:
            items.append(("line", e.text))
        elif idx in at_line:
            items.append(("commit", at_line[idx]))
    for i in range(len(names)):
        if i in stay:
            continue
        if i == 0:
            pos = next((k for k, it in enumerate(items) if it[0] == "commit"), len(items))
        else:
            pos = items.index(("commit", i - 1)) + 1
        items.insert(pos, ("commit", i))
    return "".join((names[v] if k == "commit" else v) + "\n" for k, v in items)


def write(root: Path, p: Plan) -> None:
    """Write the plan: new and changed files, series, then removals; record the new names."""
    with no_interrupt():
        if p.changed or p.added or p.series_changed:
            p.series.dir.mkdir(parents=True, exist_ok=True)
        for n in p.changed + p.added:
            write_atomic(p.series.dir / n, p.data[n])
        if p.series_changed:
            write_atomic(p.series.series_file, p.series_text.encode())
        for n in p.removed:
            (p.series.dir / n).unlink(missing_ok=True)
        for rev, n in zip(p.revs, p.names):
            set_note(p.tree, rev, n)
        p.state.patches = list(p.names)
        p.state.applied = len(p.names)
        p.state.failed = None
        write_state(p.tree, p.state)


def report(root: Path, p: Plan, dry: bool) -> None:
    would = "would " if dry else ""
    print(
        f"export{' --dry-run' if dry else ''}: {len(p.names)} patch(es) from "
        f"{rel(p.tree, root)}/ into {rel(p.series.dir, root)}/"
        + (" (nothing written)" if dry else "")
    )
    for n in p.unchanged:
        print(f"  unchanged {n}")
    for verb, names in (("change", p.changed), ("add", p.added), ("remove", p.removed)):
        for n in names:
            print(f"  {would}{verb} {n}")
    if p.series_changed:
        print(f"  {would}rewrite {p.series.label}")


def target(root: Path, port: str | None) -> tuple[Path, Series]:
    series = load_series(root)
    if port is None:
        return root / "fork", series
    return root / "fork-port" / port, series.port_series(port)


def export(tree: Path, series: Series, drops: list[str] = (), root: Path | None = None) -> Plan:
    """Export tree into series (for callers and tests): plan, then write."""
    root = root or series.root
    p = plan(tree, root, series, list(drops))
    write(root, p)
    return p


def run(args) -> int:
    tree, series = target(args.root, args.port)
    p = plan(tree, args.root, series, args.drop or [])
    if not args.dry_run:
        write(args.root, p)
    report(args.root, p, args.dry_run)
    return 0
