"""The work trees (fork/, fork.new/, fork-port/R/): their recorded state, what status says
of them, how a stop or a Ctrl-C is resumed, the one apply loop, and rebuilds kept whole.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from .util import (
    BACKUP_DIR,
    no_interrupt,
    PatchFailed,
    progress,
    read_text,
    rel,
    SERIES_BRANCH,
    SeriesError,
    write_atomic,
)
from .git import (
    blob_id,
    cannot_write,
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
    pick_not_finished,
    set_note,
    unfinished_pick,
)
from .series import read_patch, Series
from .base import apply_prerequisites, Base, prerequisite_top


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
    # Blob id of each patch file the tree was made from (as each was applied), updated by
    # every export: export refuses to overwrite a patch file that changed since.
    recorded: dict[str, str] | None = None
    skipped: list[str] = dataclasses.field(default_factory=list)  # apply --continue --skip
    rebase_from: str | None = None  # HEAD before an unfinished te-series rebase
    # The upstream commit (or release) below the prerequisites; `base` is their top, where
    # the series starts. None: no prerequisites were looked at (a tree of an earlier tool).
    upstream: str | None = None
    # base.toml's prerequisites as this tree was made: PR number -> its commit here, or ""
    # where the upstream commit already contains it.
    prerequisites: dict[str, str] | None = None
    rebase_prerequisites: dict[str, str] | None = None  # an unfinished rebase: carried ones

    @property
    def complete(self) -> bool:
        return self.applied == len(self.patches)


# What each type of a State field may hold in state.json: the record is checked against the
# dataclass itself (its fields, their types, the ones without a default are required).
_OF_TYPE = {
    "str": lambda v: isinstance(v, str) and bool(v),
    "int": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
    "list[str]": lambda v: isinstance(v, list) and all(isinstance(n, str) for n in v),
    "str | None": lambda v: v is None or isinstance(v, str),
    "dict[str, str] | None": lambda v: v is None
    or (isinstance(v, dict) and all(isinstance(x, str) for x in (*v, *v.values()))),
}


def state_file(repo: Path) -> Path:
    return git_path(repo, "te-series") / "state.json"


def read_state(repo: Path) -> State | None:
    """The recorded state of a work tree; None when it has none; an error when unreadable."""
    if not (repo / ".git").exists():
        return None
    path = state_file(repo)
    if not path.is_file():
        return None
    problem = None
    try:
        raw = json.loads(read_text(path))
    except (json.JSONDecodeError, SeriesError) as e:
        raw, problem = None, f"it is not JSON ({e})"
    if problem is None and not isinstance(raw, dict):
        problem = "it is not a JSON object"
    if problem is None:
        fields = {f.name: f for f in dataclasses.fields(State)}
        unknown = sorted(set(raw) - set(fields))
        missing = [k for k, f in fields.items() if k not in raw and f.default is f.default_factory]
        wrong = [k for k, v in raw.items() if k in fields and not _OF_TYPE[fields[k].type](v)
                 or k == "kind" and v not in ("git", "pypi", "port")]  # fmt: skip
        if unknown:
            problem = f"unknown key(s) {', '.join(unknown)} (written by a newer te-series?)"
        elif missing:
            problem = f"missing key(s) {', '.join(missing)}"
        elif wrong:
            problem = f"bad value(s) for {', '.join(wrong)}"
        elif raw["applied"] > len(raw["patches"]):
            problem = "it says more patches are applied than it lists"
    if problem:
        raise SeriesError(
            f"the te-series record of {repo} ({path}) cannot be read: {problem}. Without it "
            "te-series cannot tell what the tree holds. Rebuild the tree (te-series apply "
            "--force --te-src PATH, or port --edit --force --release R for a port tree): the "
            "old tree is kept whole in .te-series-backup/."
        )
    return State(**raw)


def write_state(repo: Path, state: State) -> None:
    path = state_file(repo)
    path.parent.mkdir(exist_ok=True)
    write_atomic(path, json.dumps(dataclasses.asdict(state), indent=1).encode())


def drop_args(names: list[str]) -> str:
    """`--drop NAME` for each name, quoted for a shell (a name may hold spaces)."""
    return " ".join(f"--drop {shlex.quote(n)}" for n in names)


def count_patches(done: int, total: int) -> str:
    """'patches 1-3 of 8', or 'none of the 8 patches'."""
    return f"patches 1-{done} of {total}" if done else f"none of the {total} patch(es)"


@dataclasses.dataclass(frozen=True)
class WorkTree:
    """A work tree of the project: fork/, or a port's fork-port/<release>/, with the rebuild
    of it that waits in <tree>.new/ until it is complete. The one place that knows their
    paths and the commands that go with them."""

    root: Path
    release: str | None = None  # a port tree's release; None: fork/

    @classmethod
    def at(cls, path: Path) -> WorkTree:
        """The work tree of one of its paths (fork/, fork.new/, fork-port/R/, .../R.new/)."""
        path = Path(path)
        if path.parent.name == "fork-port":
            return cls(path.parent.parent, path.name.removesuffix(".new"))
        return cls(path.parent)

    @staticmethod
    def existing(root: Path) -> list[Path]:
        """fork/, fork.new/ and the port trees (and theirs), those that exist."""
        found = [root / "fork", root / "fork.new"]
        if (root / "fork-port").is_dir():
            found += sorted((root / "fork-port").iterdir())
        return [t for t in found if (t / ".git").exists() or t.is_symlink() or t.is_file()]

    @property
    def path(self) -> Path:
        return (
            self.root / "fork" if self.release is None else self.root / "fork-port" / self.release
        )

    @property
    def new(self) -> Path:
        return self.path.with_name(self.path.name + ".new")

    @property
    def current(self) -> Path:
        """The tree --continue goes on with: the unfinished rebuild when there is one."""
        return self.new if self.new.exists() else self.path

    def verbs(self, state: State | None = None) -> dict[str, str]:
        """The commands that go with this work tree."""
        if self.release is not None:
            r = self.release
            return {
                "export": f"te-series export --port {r}",
                "continue": f"te-series apply --continue --port {r}",
                "make": f"te-series port --edit --release {r}",
                "rebuild": f"te-series port --edit --force --release {r}",
            }
        base = " --te-src PATH" if state is None or state.kind == "git" else ""
        return {
            "export": "te-series export",
            "continue": "te-series apply --continue",
            "make": f"te-series apply{base}",
            "rebuild": f"te-series apply --force{base}",
        }

    def build(self, build, *, force: bool) -> list[str]:
        """Build the tree in <tree>.new and swap it in only once complete.

        `build(path)` makes the tree. If a patch stops it, the partial tree becomes the tree
        when there was none, and stays in <tree>.new otherwise, so a failed rebuild never
        takes the old tree away; the error says where it stopped and how to go on. Returns
        what was backed up.
        """
        tree, new, root = self.path, self.new, self.root
        stamp = backup_stamp(root)
        verbs = self.verbs()
        held = self.release is not None and port_folder_held(root, verbs["make"])
        if held:
            raise held
        if new.exists() and not force:
            raise SeriesError(
                f"{rel(new, root)}/ holds an unfinished apply:\n{describe_tree(new, root)}\n"
                "Or start over with --force (it keeps that tree whole in a backup)."
            )
        if tree.exists() and not force:
            if not (tree / ".git").exists():
                raise not_a_work_tree(tree, root)
            raise SeriesError(
                f"{rel(tree, root)}/ exists. Export its work first ({verbs['export']}), then "
                f"rerun with --force to rebuild it (the old tree is kept whole in {BACKUP_DIR}/)."
            )
        for old in (new, tree):  # before anything moves: all or nothing
            refuse_unmovable(old, root)
        if new.exists():
            for line in backup_tree(new, root, stamp):
                print(f"kept: {line}")
        try:
            build(new)
        except (PatchFailed, KeyboardInterrupt) as err:
            if new.exists() and read_state(new) is None:  # stopped before any patch
                shutil.rmtree(new, ignore_errors=True)
            elif new.exists() and not tree.exists():
                new.rename(tree)
            if isinstance(err, PatchFailed):
                raise SeriesError(stopped_message(self.current, root, err)) from None
            raise
        except BaseException:
            shutil.rmtree(new, ignore_errors=True)
            raise
        return swap_in(new, tree, root, stamp)

    def finish(self, path: Path) -> list[str]:
        """After --continue completed path: swap it in if it is the rebuild (keeping the old
        tree whole); return what was kept."""
        return swap_in(path, self.path, self.root) if path == self.new else []


def port_folder_held(root: Path, then: str) -> SeriesError | None:
    """fork-port, the folder of the port trees, held by a file or a link to nothing (v11 #9)."""
    held = root / "fork-port"
    if held.is_dir() or not (held.exists() or held.is_symlink()):
        return None
    return SeriesError(
        "fork-port is a file, not the folder of the port trees: move it away (mv fork-port "
        f"fork-port.old), then {then}."
    )


def not_a_work_tree(tree: Path, root: Path) -> SeriesError:
    """A work tree's path that holds something else: a file, a folder without .git, a link to
    nothing or a loop. Out of the way is out of fork-port/ too: status lists what is in it
    (fork-port/R.old was named next, forever; issue 30)."""
    name, wt = rel(tree, root), WorkTree.at(tree)
    then = wt.verbs()["continue" if tree == wt.path and wt.new.is_dir() else "make"]
    return SeriesError(
        f"{name} is no work tree (a file, a link to nothing, or a folder without {name}/.git), "
        f"so it holds no series: move it out of the way (mv {name} "
        f"{name.replace('/', '-')}.old), then {then}."
    )


def refuse_unmovable(old: Path, root: Path) -> None:
    """Refuse to move a tree into the backup whose git data is not (all) in its own .git
    folder: the move would not keep it, or would break a linked worktree (v9 #6). The one
    check of every move (WorkTree.build, and backup_tree for apply --continue's swap)."""
    verbs = WorkTree.at(old).verbs()
    if old.is_symlink() and not (old / ".git").exists():  # to nothing, or a loop (v11 #6, #9)
        raise not_a_work_tree(old, root)
    if (old / ".git").is_file():
        # A linked worktree or a separate git dir: its commits live elsewhere, so
        # moving the tree into the backup would not keep them.
        raise SeriesError(
            f"{rel(old, root)}/.git is a file ({(old / '.git').read_text().strip()}): "
            f"{rel(old, root)}/ keeps its commits elsewhere, so a move into {BACKUP_DIR}/ "
            f"would not keep them. Export its work first ({verbs['export']}), then remove "
            f"{rel(old, root)}/ yourself (e.g. git worktree remove) and run this again."
        )
    if old.exists() and old.lstat().st_dev != root.stat().st_dev:  # a link moves as a link
        raise SeriesError(  # a disk mounted there, or a port tree under a fork-port link
            f"{rel(old, root)}/ is on another file system than {BACKUP_DIR}/, so te-series "
            f"cannot keep it whole there: it moves a tree only by a rename, never a copy (a copy "
            f"can stop halfway; v16 #7). Export its work first ({verbs['export']}), then move "
            f"it off yourself (mv {rel(old, root)} PLACE, a folder of its file system; umount "
            f"it if a disk is mounted there) and run this again."
        )
    linked = list(worktrees_of(old)) if (old / ".git").is_dir() else []
    if linked:
        # Their git data is in old/.git: moving old into the backup would break them.
        raise SeriesError(
            f"{rel(old, root)}/ has linked worktree(s), which keep their git data in "
            f"{rel(old, root)}/.git, so moving it into {BACKUP_DIR}/ would break them: "
            f"{', '.join(rel(p, root) for p in linked)}. Keep their work first (commit "
            f"it; export what is the series'), then remove each (git -C {rel(old, root)} "
            f"worktree remove {os.path.relpath(linked[0], old)}) and run this again."
        )


def stopped_message(tree: Path, root: Path, err: PatchFailed) -> str:
    """The failure of a patch, plus where the tree is and how to go on (the one stop message
    of apply, --continue, port --edit and build)."""
    state = read_state(tree)
    name = rel(tree, root)
    wt = WorkTree.at(tree)
    verbs = wt.verbs(state)
    kind = getattr(err, "kind", "conflict")
    text = str(err)
    if kind == "io":  # not the patch's doing (v11 #5): the record says it is still to apply
        return text + (
            f"{name}/ holds {count_patches(state.applied, len(state.patches))}. Its diff applies "
            f"to {name}/, so this is not the patch: git could not do its work there. Fix that: "
            f"{cannot_write(tree, root)}; then `{verbs['continue']}` applies "
            f"{state.patches[state.applied]} again."
        )
    text += f"{name}/ holds {count_patches(state.applied, len(state.patches))}" + (
        f"; apply stopped at {state.failed}.\n"
        if kind in ("already", "empty")
        else f" and git am is stopped on {state.failed}.\n"
    )
    if tree == wt.new:
        old = rel(wt.path, root)
        text += f"Your old {old}/ is untouched; the new tree waits in {name}/.\n"
    skip = (
        f"`{verbs['continue']} --skip` (export then needs {drop_args([state.failed])}, "
        "which removes the patch file)"
    )
    if kind == "empty":
        text += (
            f"A patch needs a diff. Take it out of the series: remove its line from "
            f"{state.patches_dir}/series, commit that, and rebuild ({verbs['rebuild']}); or "
            f"give the patch file its diff; or skip it: {skip}.\n"
        )
    elif kind == "already":
        text += (
            f"Its change is in {name}/ already (upstream, or an earlier patch has it), so it "
            f"would be no commit of its own. Take it out of the series: remove its line from "
            f"{state.patches_dir}/series, commit that, and rebuild ({verbs['rebuild']}); "
            f"or skip it: {skip}.\n"
        )
    elif kind == "converted":
        folder, file = state.patches_dir, shlex.quote(f"{state.patches_dir}/{state.failed}")
        committed = git_run("cat-file", "blob", f"HEAD:{folder}/{state.failed}", cwd=root,
                            text=False).stdout.split(b"\n", 1)[0].endswith(b"\r")  # fmt: skip
        text += (
            f"{folder}/{state.failed} has CRLF line ends from its first line on, and git am "
            "cannot apply it so. "
        ) + (
            f"It was committed so (an editor wrote them): take one CR off each line "
            f"and commit that: sed -i 's/\\r$//' {file} && git commit -q -m 'LF line ends' "
            f"{file}; then rebuild ({verbs['rebuild']}).\n"
            if committed
            else f"A checkout converted it (core.autocrlf=true?). The patch files are bytes: "
            f"{folder}/.gitattributes (* -text) keeps them as committed. Write them again as "
            f"committed (this drops uncommitted edits in {folder}/: commit or stash those "
            f"first): git rm -r -q --cached {folder} && git checkout HEAD -- {folder}; then "
            f"rebuild ({verbs['rebuild']}).\n"
        )
    elif kind == "unapplied":
        text += (
            f"Nothing of {state.failed} was applied (no conflict markers: git found no base "
            f"to merge it on). Go on: make the change by hand in {name}/ and commit it (git "
            f"-C {name} commit), then `{verbs['continue']}`; or fix the patch file, commit "
            f"it, and rebuild ({verbs['rebuild']}); or skip it: {skip}.\n"
        )
    else:
        text += (
            f"Go on: fix the conflicts in {name}/ and `git -C {name} add` them (or "
            f"`git -C {name} am --abort` and commit a fixed version of the change yourself), "
            f"then `{verbs['continue']}`.\n"
            f"Or skip the patch: {skip}.\n"
        )
    return text + "Until the series is complete, `te-series export` refuses to write patches/."


def unfinished_port(tree: Path, root: Path, state: State | None) -> str | None:
    """Why a port tree cannot be resumed, or None: its build stopped (a Ctrl-C) before the
    port patches, so it holds the series on the pinned release, not a port; only building
    it again makes one (tool-review-v7 #2)."""
    if WorkTree.at(tree).release is None or state is None or state.kind == "port":
        return None
    return (
        f"{rel(tree, root)}/ was interrupted while porting, before its port patches: it holds "
        f"the series on its own base release {state.release}, not the port. Make the port "
        f"again: {WorkTree.at(tree).verbs(state)['rebuild']} (the trees there are kept whole in "
        f"{BACKUP_DIR}/)."
    )


def settle(tree: Path, state: State) -> State:
    """The record brought up to the tree: a patch whose commit te-series' git am made and
    noted counts as applied, though a Ctrl-C came before the record said so (the note is
    the last git step of a patch, the record the next write). Status and --continue read
    the tree through this, so neither takes an applied patch for one still to apply."""
    if state.complete or state.rebase_onto or not is_ancestor(tree, state.base, "HEAD"):
        return state
    noted = names_in(tree, f"{state.base}..HEAD")
    applied = state.applied
    while applied < len(state.patches) and state.patches[applied] in noted:
        applied += 1
    if applied == state.applied:
        return state
    return dataclasses.replace(state, applied=applied, failed=None)


def locked(tree: Path, root: Path, verbs: dict) -> str | None:
    """The stop (and status line) of an apply whose git was killed mid-write (v20 #2): its
    index.lock, named with its rm (cannot_write, rebase's words), then --continue."""
    if git_path(tree, "index.lock").exists():
        return (f"git could not go on in {rel(tree, root)}/: {cannot_write(tree, root)}; then "
                f"{verbs['continue']}")  # fmt: skip
    return None


def no_record(tree: Path, root: Path) -> str:
    """A work tree without te-series' apply record, and the way on from it: status, apply
    --continue and export say the same (v22 R10)."""
    wt, name = WorkTree.at(tree), rel(tree, root)
    rebuild = wt.verbs()["rebuild"]
    if tree == wt.new:  # an apply --force killed before its first record, or not ours at all
        return (
            f"{name}/: not made by te-series apply, or its apply was stopped before it kept a "
            f"record, so there is nothing in it to continue. Give it up: move it out of the way "
            f"(e.g. mv {name} {name}.old), or start the rebuild again: {rebuild} (it keeps "
            f"{name}/ whole in a backup)."
        )
    return (
        f"{name}/ has no te-series apply record, so te-series cannot tell whether it holds the "
        f"whole series. Rebuild it: {rebuild} (the old tree is kept whole in a backup)."
    )


def list_changed(tree: Path, root: Path, state: State) -> str | None:
    """Why an unfinished apply cannot go on (--continue refuses, status says so, v23 #12): the
    series lists other patches than when it started."""
    series, verbs = series_of(state, root), WorkTree.at(tree).verbs(state)
    now = series.names()
    if now == state.patches:
        return None
    differ = sorted(set(now) ^ set(state.patches))
    return (
        f"{series.label} changed since this apply started: it now lists {len(now)} "
        f"patch(es), the apply in {rel(tree, root)}/ is of {len(state.patches)} "
        + (f"({', '.join(differ[:6])} differ)" if differ else "(in another order)")
        + f". Continuing would apply the old list. Start over from the new one: "
        f"{verbs['rebuild']} (the tree is kept whole in a backup)."
    )


def describe_tree(tree: Path, root: Path) -> str:
    """Where a work tree stands and how to go on, from its recorded state."""
    name = rel(tree, root) + "/"
    if not (tree / ".git").exists():
        return f"{name}: {not_a_work_tree(tree, root)}"
    try:
        state = read_state(tree)
        state = state and settle(tree, state)
    except SeriesError as e:
        return f"{name}: {e}"
    if state is None:
        return no_record(tree, root)
    why = unfinished_port(tree, root, state)
    if why:
        return why
    verbs = WorkTree.at(tree).verbs(state)
    # Skipped patches are no commits; after a rebase, only patches with a commit on the new
    # base count.
    done = [n for n in state.patches[: state.applied] if n not in state.skipped]
    busy = in_progress(tree)
    listed, lost, missing, changed, broken, unlisted = state.patches, [], [], [], None, []
    series = series_of(state, root)
    if state.complete and not state.rebase_onto and not busy and is_ancestor(tree, state.base,
                                                                              "HEAD"):  # fmt: skip
        # A finished tree: the series file and the tree's commits, as export reads them, not
        # the record of the last apply or export, which the user may have undone since.
        try:
            listed = series.names()
        except SeriesError as e:
            broken = str(e)
        else:
            noted = [note_names(tree, r) for r in commits(tree, f"{state.base}..HEAD")]
            held = patch_owners(noted, listed)  # as export reads them: a squash holds one
            done = [n for n in listed if n in held]
            missing = [n for n in listed if n not in held and n not in state.skipped]
            unlisted = [n for ns in noted for n in ns if n in state.patches and n not in listed]
            if state.recorded is not None:  # none: export asks for a rebuild
                changed = [n for n in done if changed_since_made(state, series.dir / n)]
    stopped = bool(state.rebase_onto and busy)  # git notes the picks once it has finished
    if state.rebase_onto and not busy and is_ancestor(tree, state.rebase_onto, "HEAD"):
        held = names_in(tree, f"{state.rebase_onto}..HEAD")
        lost = [n for n in done if n not in held]
        done = [n for n in done if n in held]
    head = f"{name}: {len(done)} of {len(listed)} patch(es) of {state.patches_dir}/ applied"
    if stopped:  # not the record's count, "complete" (v28 #4)
        head = f"{name}: {len(listed)} patch(es) of {state.patches_dir}/ being rebased"
    if state.skipped:
        head += f", {len(state.skipped)} skipped"
    if lost:
        head += f", {len(lost)} dropped by the rebase ({', '.join(lost)})"
    if state.complete and not lost and not missing and not unlisted and not stopped:
        head += " (complete"
        if state.skipped:
            head += f"; skipped {', '.join(state.skipped)}: export needs --drop for each"
        head += ")"
    elif done and not state.complete:
        head += f", last {done[-1]}"
    lines = [head]
    if broken:
        lines.append(f"  {broken}")
    if missing or unlisted:
        lines.append(
            f"  {name} has no commit for {', '.join(missing)}, which {state.patches_dir}/series "
            "lists: te-series export --dry-run says how to go on"
            if missing else f"  {name} holds {', '.join(unlisted)}, which {state.patches_dir}/"
            "series no longer lists: te-series export --dry-run says how to go on"
        )  # fmt: skip
    if changed:
        lines.append(
            f"  {', '.join(f'{state.patches_dir}/{n}' for n in changed)} changed since {name} was "
            "made from it: te-series export --dry-run says whether export would undo that"
        )
    off = not busy and off_the_series_branch(tree, root)
    if off:
        lines.append(f"  export refuses: {off}")
    # during a rebase, the new base's (v37 #3), while fork/ is on it (git's abort: v39 #3)
    moving = bool(state.rebase_onto) and state.rebase_prerequisites is not None
    moving = moving and is_ancestor(tree, state.rebase_onto, "HEAD")
    for pr, rev in ((state.rebase_prerequisites if moving else state.prerequisites) or {}).items():
        if rev:
            subject = log1(tree, "%s", rev)
            lines.append(
                f"  upstream prerequisite #{pr}: applied as {rev[:12]} {subject!r}, below the "
                + ("series on the new base" if moving else "series")
                + " (upstream's change: never exported)"
            )
        else:
            new = "new " * moving
            lines.append(f"  upstream prerequisite #{pr}: already in the {new}base (no commit)")
    if not state.complete:
        stop = "stopped on" if state.failed else "next is"
        rest = ", ".join(state.patches[state.applied :])
        lines.append(f"  {stop} {state.patches[state.applied]}; not applied yet: {rest}")
    if busy:
        lines.append(f"  {busy} is in progress in {name}")
    if state.rebase_onto and busy == "a git rebase":
        lines.append(
            f"  a te-series rebase onto {state.rebase_onto[:12]} is not finished: "
            + (pick_not_finished(tree, rev) if (rev := unfinished_pick(tree)) else f"resolve, git "
               f"-C {name} add the files, then te-series rebase --continue (or --abort)")
        )  # fmt: skip
    elif state.rebase_onto:
        lines.append(
            f"  a te-series rebase onto {state.rebase_onto[:12]} is not finished: "
            "te-series rebase --continue (or --abort)"
        )
    elif not busy and not is_ancestor(tree, state.base, "HEAD"):
        lines.append(
            f"  HEAD does not descend from the series' base {state.base[:12]} (a prerequisite "
            "or base commit was rewritten?): te-series export refuses and says how to go on"
        )
    elif not state.complete:
        try:
            how = list_changed(tree, root, state)
        except SeriesError as e:
            how = str(e)
        how = how or locked(tree, root, verbs) or "go on: " + verbs["continue"]
        how = how.rstrip(".")
        lines.append(f"  {how}; te-series export refuses until the series is complete")
    elif busy:
        lines.append("  finish or abort it before te-series export")
    elif tree.name.endswith(".new"):
        lines.append(f"  complete: {verbs['continue']} swaps it in")
    return "\n".join(lines)


# Folders of the project that te-series keeps (the series, work trees, backups): no --out
# may write into them.
OWN_DIRS = ("patches", "fork", "fork.new", "fork-port", BACKUP_DIR)


def refuse_out(root: Path, out: Path, example: str, *, folder: bool) -> None:
    """The checks every --out gets before any work: a folder (or a file) as the verb writes,
    and not inside the series, a work tree or a backup."""
    out = Path(out)
    if folder and out.is_symlink() and not out.exists():  # a disk not mounted? (v28 #6)
        raise SeriesError(
            f"--out {rel(out, root)} is a link to nothing ({os.readlink(out)}): make or mount "
            f"the folder it names, or remove the link (rm {shlex.quote(str(out))}), then run "
            "again"
        )
    if folder and out.exists() and not out.is_dir():
        raise SeriesError(f"--out {rel(out, root)} is a file; name a folder")
    if not folder and out.is_dir():
        raise SeriesError(f"--out {out} is a folder; name a file")
    if not folder and not out.parent.is_dir():
        raise SeriesError(f"--out {out}: folder {out.parent} does not exist")
    d = kept_dir_of(root, out, OWN_DIRS)
    if d:
        raise SeriesError(
            f"--out {rel(out, root)} is inside {d}/, which te-series keeps (the series, "
            f"the work trees and their backups); writing there could overwrite them. "
            f"Name a path outside them (e.g. {example})."
        )
    if not folder and not out.exists():  # a folder that holds no new file (/proc, read-only)
        try:  # found before the work, not after it (v31 #2)
            os.close(os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL))
        except OSError as e:
            raise SeriesError(f"--out {out}: no file can be written there ({e.strerror})") from e
        out.unlink()


def kept_dir_of(root: Path, path: Path, dirs: tuple[str, ...]) -> str | None:
    """The one of `dirs` (folders of the project) that `path` lies inside, links followed."""
    real = Path(os.path.realpath(path))  # loops too (v11 #9)
    return next((d for d in dirs if real.is_relative_to(os.path.realpath(root / d))), None)


def backup_stamp(root: Path) -> str:
    """A fresh folder name under .te-series-backup/: the time, made unique."""
    if (root / BACKUP_DIR).exists() and not (root / BACKUP_DIR).is_dir():
        raise SeriesError(
            f"{BACKUP_DIR} is a file, not the folder where te-series keeps the trees it "
            f"replaces: move it away (mv {BACKUP_DIR} {BACKUP_DIR}.old), then run the command "
            "again."
        )
    held = root / BACKUP_DIR  # a link to nothing, or to another disk: a move is a copy (v12 #10)
    if held.is_symlink() and not held.exists() or held.is_dir() and held.stat().st_dev != root.stat().st_dev:  # fmt: skip
        raise SeriesError(
            f"{BACKUP_DIR} is a link to nothing or a folder on another file system: te-series "
            "moves whole trees into it, which must be a rename (instant; a copy can stop "
            f"halfway on a full disk). Remove the link (rm {BACKUP_DIR}; te-series makes the "
            "folder) or point it at a folder on the project's file system, then run again."
        )
    inside = kept_dir_of(root, held, OWN_DIRS[:-1])  # a move into fork/ copies it (v17 F7)
    if inside:
        raise SeriesError(
            f"{BACKUP_DIR} leads into {inside}/ ({os.path.realpath(held)}): te-series would move "
            f"the work trees it replaces into {inside}/, which it keeps itself. Remove the link "
            f"(rm {BACKUP_DIR}; te-series makes the folder) or point it at a folder outside "
            "patches/ and the work trees, then run again."
        )
    stamp = time.strftime("%Y%m%d-%H%M%S")
    n = 1
    while (root / BACKUP_DIR / stamp).exists():
        n += 1
        stamp = f"{time.strftime('%Y%m%d-%H%M%S')}-{n}"
    return stamp


def off_the_series_branch(tree: Path, root: Path) -> str | None:
    """Where HEAD is, when not on the series branch, and how to get back to it with every
    commit of HEAD's: export's refusal, and a line of status (v15 #5)."""
    name = rel(tree, root)
    branch = git_run("symbolic-ref", "-q", "HEAD", cwd=tree).stdout.strip()
    branch = branch[len("refs/heads/") :] if branch.startswith("refs/heads/") else branch
    if branch == SERIES_BRANCH:
        return None
    ref = f"refs/heads/{SERIES_BRANCH}"
    have = object_id(tree, ref)
    mine = []  # HEAD's commits that a checkout of series would leave (upstream's aside)
    if have:
        mine = git("rev-list", "--reverse", "HEAD", "--not", ref, "--remotes", cwd=tree).split()
    named = ", ".join(f"{c[:12]} {log1(tree, '%s', c)!r}" for c in mine)
    lacks = f"HEAD has commit(s) that {SERIES_BRANCH!r} lacks ({named})"
    if not have:
        how = f"put the branch back (git -C {name} checkout -b {SERIES_BRANCH})"
    elif not mine:
        how = f"check it out (git -C {name} checkout {SERIES_BRANCH})"
    elif is_ancestor(tree, ref, "HEAD"):
        how = f"{lacks}; put them on it (git -C {name} checkout -B {SERIES_BRANCH} HEAD)"
    else:  # diverged: HEAD's commits go on series, or rewrite some of its (v22 R2)
        redone = {n for c in mine for n in note_names(tree, c)}
        theirs = git("rev-list", "--reverse", ref, "--not", "HEAD", "--remotes", cwd=tree).split()
        redid = {c for c in theirs if redone.issuperset(note_names(tree, c) or ["unnoted"])}
        keep = [c for c in theirs if c not in redid]
        if not redid:
            how = (
                f"{lacks}; check it out and take them along (git -C {name} checkout "
                f"{SERIES_BRANCH} && git -C {name} cherry-pick {' '.join(c[:12] for c in mine)})"
            )
        else:  # picking a rewrite onto its original stops on an empty or conflicting pick
            picks = " ".join(c[:12] for c in keep)
            picks = f" && git -C {name} cherry-pick {picks}" if keep else ""
            how = (  # then series' own commits on top
                f"{lacks}, rewrites of its patches; make HEAD the branch (git -C {name} "
                f"checkout -B {SERIES_BRANCH} HEAD{picks})"
            )
    held = [rel(p, root) for p, b in worktrees_of(tree).items() if b == SERIES_BRANCH]
    if held:
        how = (
            f"{SERIES_BRANCH!r} is checked out in the worktree {held[0]}: free it there first "
            f"(git -C {held[0]} checkout --detach; its files and commits stay), then {how}"
        )
    where = f"on branch {branch!r}" if branch else "on no branch (a detached HEAD)"
    return f"{name}/ is {where}, not on {SERIES_BRANCH!r}, the branch te-series exports: {how}"


def worktrees_of(tree: Path) -> dict[Path, str]:
    """The other worktrees of tree's repository (`git worktree add`, its main one where tree
    is a linked one): path -> the branch checked out there ("" for none); not the tool's own
    in .git/te-series/ (a killed carry_prerequisites leaves one), which move with it (v21 #2)."""
    found, own = {}, (tree / ".git" / "te-series").resolve()
    for block in git_run("worktree", "list", "--porcelain", cwd=tree).stdout.split("\n\n"):
        said = dict(line.partition(" ")[::2] for line in block.splitlines())
        path = Path(said.get("worktree", tree))
        scratch = path.resolve().is_relative_to(own)
        if path.resolve() != tree.resolve() and not scratch and "prunable" not in said:
            found[path] = said.get("branch", "").removeprefix("refs/heads/")
    return found


KEPT = "refs/te-series-kept"


def keep_heads(tree: Path) -> None:
    """Refs for what `refs/*` misses of a tree about to be backed up: its HEAD (a detached
    HEAD's commits are on no branch) and each stash entry (all but the newest live only in
    the stash's reflog). Best effort: what git cannot read there is left out."""
    run = lambda *a, **k: git_run(f"--git-dir={tree / '.git'}", *a, cwd=tree, **k)  # noqa: E731
    heads = run("rev-parse", "-q", "--verify", "HEAD").stdout.split()
    stashes = run("rev-list", "--walk-reflogs", "refs/stash", "--").stdout.split()
    refs = [("HEAD", h) for h in heads] + [(f"stash/{n}", s) for n, s in enumerate(stashes)]
    if refs:
        run("update-ref", "--stdin", input="".join(f"update {KEPT}/{r} {i}\n" for r, i in refs))


def backup_tree(tree: Path, root: Path, stamp: str) -> list[str]:
    """Move a work tree whole into .te-series-backup/<stamp>/ before it is replaced.

    A move keeps everything: all refs (branches, tags, notes, the stash and its reflog),
    uncommitted edits, untracked and ignored files, nested repositories, an unfinished
    am or rebase; its HEAD and every stash entry get refs first (keep_heads), so that the
    one fetch command brings them back too. On one file system it is a rename, so it is
    instant and cannot stop halfway. Returns what was kept and how to get it back.
    """
    refuse_unmovable(tree, root)
    dest = root / BACKUP_DIR / stamp
    dest.mkdir(parents=True, exist_ok=True)
    target = dest / tree.name
    if (tree / ".git").exists():
        keep_heads(tree)
    if tree.is_symlink():  # a relative link would point elsewhere from the backup (v16 #7)
        target.symlink_to(tree.resolve())
        tree.unlink()
    else:
        tree.rename(target)  # a rename: never shutil.move's copy and delete (v16 #7)
    return [
        f"{rel(tree, root)}/ moved whole to {rel(target, root)}/ (commits, branches, tags, "
        f"stashes, notes, uncommitted, untracked and ignored files); "
        + fetch_back(target, root, WorkTree.at(tree).path)  # fork.new/'s go into fork/
    ]


def fetch_back(kept: Path, root: Path, into: Path) -> str:
    """How to get the commits of a tree kept in the backup back into tree `into`."""
    stamp = kept.parent.name
    back = f"refs/backup/{stamp}/{kept.name}"
    return (
        f"get its commits back with: git -C {rel(into, root)} fetch "
        f"{os.path.relpath(kept, into)} 'refs/*:{back}/*' (its HEAD and each stash come as "
        f"{back}/te-series-kept/HEAD and .../stash/N; delete {rel(kept, root)}/ once you no "
        "longer need it)"
    )


def swap_in(new: Path, tree: Path, root: Path, stamp: str | None = None) -> list[str]:
    """Replace tree by the complete tree new, keeping the old tree whole; return what was kept."""
    kept = []
    with no_interrupt():
        if tree.exists() or tree.is_symlink():  # a link to nothing is refused there (v11 #6)
            kept = backup_tree(tree, root, stamp or backup_stamp(root))
        new.rename(tree)
    return kept


def am(repo: Path, patch: Path, include: str | None = None) -> subprocess.CompletedProcess:
    """`git am -3` one patch (authorship from the patch, committer te-series).

    `--no-scissors`: a user's mailinfo.scissors must not cut messages. `--keep-cr`: a
    patch's carriage returns are content (TE has CRLF files), which am strips by default.
    """
    args = ["am", "-3", "--keep-non-patch", "--no-scissors", "--keep-cr", "--empty=keep"]
    if include:
        args.append(f"--include={include}")
    return git_run(*args, str(patch), cwd=repo)


def abort_am(repo: Path, patch: Path | None = None, shown: str = "fork") -> None:
    """End a stopped git am. With the patch it runs again: what its files hold that HEAD does
    not goes into a stash first (put_aside)."""
    git_run("am", "--abort", cwd=repo)
    if patch:
        put_aside(repo, [f.path for f in read_patch(patch).files], patch.name, shown)


def put_aside(repo: Path, paths: list[str], what: str, shown: str,
              when: str = "once the patch is in") -> None:  # fmt: skip
    """Stash what paths hold that HEAD does not, never away, before a step that failed not for
    the patch runs again (apply's am, rebase's pick): a git that failed while writing (a full
    disk) leaves them changed, unrecorded (v12 #7), and they may be the user's own edits (v15
    #1); or before rebase --abort moves them back (v17 F4)."""
    status = paths and git_run("status", "--porcelain", "-z", "--untracked-files=all", "--",
                               *paths, cwd=repo).stdout  # fmt: skip
    changed = [entry[3:] for entry in (status or "").split("\0") if entry[3:]]
    if changed:
        message = f"te-series: {shown}/'s changes to the files of {what}"
        git("stash", "push", "-q", "--include-untracked", "-m", message, "--", *changed, cwd=repo)
        print(
            f"{shown}/ had changes to files of {what} that HEAD does not have (yours, or "
            f"a failed git's): {', '.join(changed)}. They are kept in git -C {shown} stash "
            f"list (stash@{{0}}); git -C {shown} stash pop brings them back {when}, where "
            f"those files are as they were; where a patch now has one, take yours by name "
            f"(git -C {shown} show 'stash@{{0}}^3:PATH' for a file git did not track, git -C "
            f"{shown} show 'stash@{{0}}:PATH' for a changed one) into a file of another name."
        )  # v26 #2: a pop fails where the patch now owns the path


def failure_detail(repo: Path, patch: Path, include: str | None, proc) -> tuple[str, bool]:
    """What failed: the file and hunk (from `git apply --check` against HEAD) and git's words;
    and whether the diff applies to HEAD all the same (then the patch is not the cause)."""
    hunks = {f.path: f.hunks for f in read_patch(patch).files}
    with tempfile.TemporaryDirectory() as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        git("read-tree", "HEAD", cwd=repo, env=env)
        args = ["apply", "--cached", "--check", "-v"] + (
            [f"--include={include}"] if include else []
        )
        check = git_run(*args, str(patch), cwd=repo, env=env)
    found = []
    for m in re.finditer(r"^error: patch failed: (.+):(\d+)$", check.stderr, re.M):
        path, line = m.group(1), m.group(2)
        header = next((h for h in hunks.get(path, []) if h.startswith(f"@@ -{line},")), "")
        found.append(f"file {path}, hunk at line {line} {header}".rstrip())
    for m in re.finditer(
        r"^error: (.+): (does not exist in index|already exists in index)$", check.stderr, re.M
    ):
        found.append(f"file {m.group(1)}: {m.group(2).replace('index', 'the tree')}")
    if found:
        where = "; ".join(found)
    elif check.returncode != 0:
        said = " ".join(l for l in check.stderr.splitlines() if l.strip())
        where = f"git apply --check says: {said[-500:] or '(nothing)'}"
    named = lambda l: re.sub(
        r"^Patch failed at \d+ ", f"Patch failed at {patch.name}: ", l
    )  # noqa: E731
    text = (f"patch {patch.name} does not apply: {where}" if found or check.returncode else
            f"git am -3 of {patch.name} failed, though its diff applies")  # fmt: skip
    text += "\ngit am -3 says:\n" + git_said(proc, 30, named)
    marked = conflicted(repo)
    return text + (f"conflict markers in: {', '.join(marked)}\n" if marked else ""), not (
        found or check.returncode
    )


def file_id(path: Path) -> str:
    """A file's blob id; "" for none."""
    return blob_id(path.read_bytes()) if path.is_file() else ""


def record_file(state: State, path: Path) -> None:
    """Note the blob id of a file of the series folder as this tree was made from it."""
    if state.recorded is None:
        state.recorded = {}
    state.recorded[path.name] = file_id(path)


def patch_owners(noted: list[list[str]], listed: list[str]) -> list[str | None]:
    """Which listed patch each commit stands for, from the patch-name notes apply and export
    wrote (each commit's, in order): a squashed commit carries several names and stands for
    the first listed one only. Export's reading, and status' (v21 #8)."""
    owner: list[str | None] = []
    for names in noted:
        mine = sorted((n for n in names if n in listed and n not in owner), key=listed.index)
        owner.append(mine[0] if mine else None)
    return owner


def changed_since_made(state: State, path: Path) -> bool:
    """Whether a file of the series folder differs from the version this tree was made from
    (or last exported), as record_file noted it: an edit, a git pull, a colleague's commit."""
    return file_id(path) != (state.recorded or {}).get(path.name, "")


def series_of(state: State, root: Path) -> Series:
    """The series folder a tree was made from: patches/, or a port's patches/port/R/."""
    return Series(root / state.patches_dir, root, root / "patches" / "base.toml", optional=True)


def apply_one(repo: Path, patch: Path, include: str | None = None, stopped=lambda *_: 0) -> None:
    """`git am -3` one patch onto repo's HEAD: the one apply step (apply, check, pr). A patch
    that does not make its commit raises PatchFailed, whose kind says why; `stopped()` runs
    first (the record says where apply stopped before anything else is asked of git). A
    failed am is left in progress (conflict markers and all)."""
    name = patch.name
    if not read_patch(patch).files:
        stopped()
        raise PatchFailed(f"patch {name} has no diff (an empty patch)\n", "empty")
    before = object_id(repo, "HEAD")
    proc = am(repo, patch, include)
    if proc.returncode != 0:
        stopped()
        kind = "conflict" if conflicted(repo) else "unapplied"
        text, applies = failure_detail(repo, patch, include, proc)
        if patch.read_bytes().split(b"\n", 1)[0].endswith(b"\r"):
            kind = "converted"  # the patch file has CRLF line ends
        elif applies and kind == "unapplied":  # not the patch (a full disk, a lock: v11 #5)
            kind = "io"
            stopped(False)  # still to apply: --continue runs it again
        raise PatchFailed(text, kind)
    if object_id(repo, "HEAD") == before:
        # "No changes -- Patch already applied": git am exits 0 without a commit. Noting
        # HEAD would give the previous patch's commit this patch's name.
        stopped()
        raise PatchFailed(
            f"patch {name} made no commit: its change is already in the tree (the base or an "
            f"earlier patch has it; git am says: {' '.join(proc.stdout.split())[-300:] or 'nothing'})\n",
            "already",
        )


def build_prs(tree: Path, series: Series, top: str, include: str | None = None, each=lambda: 0):
    """Branch pr/<slug> of each `# pr:` group, in series order: its base's branch (main: `top`)
    and the PR's patches on it by `git am -3`, `each()` after each commit. The one way check
    tries a PR on its base and pr makes the branch it posts, in a tree that has applied the
    whole series first: am's 3-way merge finds there the pre-images a patch was made against
    (v17 F2). Yields (slug, on, patches, the PatchFailed that stopped it, or None)."""
    built = {"main": top}
    for slug, own, on in series.groups()[0]:
        failed = None if on in built else PatchFailed(f"its base, PR {on}, was not built\n")
        git("checkout", "-q", "-f", "--detach", built.get(on, top), cwd=tree)
        for patch in [] if failed else own:
            progress(f"pr/{slug} on {on}: {patch}")
            try:
                apply_one(tree, series.dir / patch, include)
            except PatchFailed as err:
                failed = err
                abort_am(tree)
                break
            each()
        if failed is None:
            git("branch", "-f", f"pr/{slug}", "HEAD", cwd=tree)
            built[slug] = f"pr/{slug}"
        yield slug, on, own, failed


def apply_patches(repo: Path, series: Series, state: State, include: str | None = None) -> None:
    """`git am -3` the patches not applied yet, noting each commit's patch name.

    The state is written after every patch, so an interrupted or failed apply says how
    far it got. On a failure the am is left in progress and PatchFailed is raised.
    """
    total = len(state.patches)
    while state.applied < total:
        name = state.patches[state.applied]
        progress(f"[{state.applied + 1}/{total}] git am -3 {name}")
        record_file(state, series.dir / name)
        write_state(repo, state)  # before its commit: a kill after the note keeps it (v25 F2)

        def stopped(failed: bool = True) -> None:
            state.failed = name if failed else None
            write_state(repo, state)

        apply_one(repo, series.dir / name, include, stopped)
        set_note(repo, "HEAD", name)
        state.applied += 1
        state.failed = None
        write_state(repo, state)


def new_state(kind: str, base: str, series: Series, names: list[str], **kw) -> State:
    """A fresh state for a tree about to get `names` of `series` applied on `base`."""
    state = State(kind, base, rel(series.dir, series.root), names, recorded={}, **kw)
    record_file(state, series.series_file)  # the list it is made from (v37 #2)
    return state


def make_tree(
    series: Series,
    dest: Path,
    *,
    te_src: Path | None = None,
    wheel: Path | None = None,
) -> dict[str, list[str]]:
    """Create dest from a base and apply the series. Returns the files not in this base.

    A git base (te_src) is a TE checkout with the base commit; otherwise the pinned
    release's wheel is the base and only transformer_engine/ hunks apply. Either way the
    upstream prerequisites come first; the series starts at their top.
    """
    base = Base(series, te_src, wheel)
    upstream = base.init(dest)
    prereqs = apply_prerequisites(dest, series)
    top = prerequisite_top(upstream, prereqs)
    state = new_state(base.kind, top, series, series.names(), release=base.release,
                      upstream=upstream, prerequisites=prereqs)  # fmt: skip
    write_state(dest, state)
    absent = base.check(dest)
    apply_patches(dest, series, state, include=base.include)
    return absent


def report_absent(absent: dict[str, list[str]]) -> None:
    for path, names in sorted(absent.items()):
        print(f"not in this base: {path} (hunks of {', '.join(names)})")
