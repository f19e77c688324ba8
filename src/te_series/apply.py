"""`te-series apply`: build fork/ from a base and apply the series as commits with `git am -3`.

Two bases:

* git (``--te-src PATH``): a TE checkout that holds the pinned base commit.
* pypi (default): the pinned release's ``transformer_engine`` wheel unpacked into a fresh
  git repository. The wheel has no tests/ or docs/, so hunks for those are reported as
  not in this base. Every touched file's pre-image blob id must equal the release file's.

The new fork is built in fork.new/ and swapped in once complete; `--force` keeps the old
fork's unexported commits and untracked files in .te-series-backup/. When a patch does
not apply, `git am` is left stopped on it; fix it and run `te-series apply --continue`.
"""

from __future__ import annotations

from pathlib import Path

from .core import (
    PYPI_PREFIX,
    SERIES_BRANCH,
    PatchFailed,
    Series,
    SeriesError,
    abort_am,
    apply_patches,
    build_aside,
    commits,
    describe_tree,
    git_run,
    in_progress,
    load_series,
    make_tree,
    note_names,
    read_state,
    rel,
    report_absent,
    set_note,
    swap_in,
    write_state,
)


def work_tree(root: Path, port: str | None) -> Path:
    """fork/ or a port's edit tree; its unfinished rebuild (<tree>.new) when there is one."""
    tree = root / "fork" if port is None else root / "fork-port" / port
    new = tree.with_name(tree.name + ".new")
    return new if new.exists() else tree


def stopped_message(tree: Path, root: Path, err: PatchFailed, swapped_old: bool) -> str:
    """The failure plus where the tree is and how to go on."""
    state = read_state(tree)
    name = rel(tree, root)
    done = state.patches[: state.applied]
    text = str(err)
    text += (
        f"{name}/ holds patches 1-{len(done)} of {len(state.patches)}"
        f" and git am is stopped on {state.failed}.\n"
    )
    if swapped_old:
        old = rel(tree.with_name(tree.name[: -len(".new")]), root)
        text += f"Your old {old}/ is untouched; the new tree waits in {name}/.\n"
    port = f" --port {state.release}" if state.kind == "port" else ""
    text += (
        f"Go on: fix the conflicts in {name}/ and `git -C {name} add` them (or "
        f"`git -C {name} am --abort` and commit a fixed version of the change yourself), "
        f"then `te-series apply --continue{port}`.\n"
        f"Or skip the patch: `te-series apply --continue --skip{port}` (export then needs "
        f"--drop {state.failed}).\n"
        "Until the series is complete, `te-series export` refuses to write patches/."
    )
    return text


def resume(root: Path, tree: Path, *, skip: bool) -> None:
    """Take the patch git am stopped on as resolved (or skip it) and apply the rest."""
    state = read_state(tree)
    if state is None:
        raise SeriesError(
            f"{rel(tree, root)}/ was not made by te-series apply; nothing to continue"
        )
    if state.complete:
        raise SeriesError(f"{rel(tree, root)}/ already holds the whole series; nothing to continue")
    series = Series(root / state.patches_dir, root, root / "patches" / "base.toml", optional=True)
    name = state.patches[state.applied]
    include = PYPI_PREFIX + "*" if state.kind == "pypi" else None
    busy = in_progress(tree)
    if busy and busy != "a git am":
        raise SeriesError(f"{busy} is in progress in {rel(tree, root)}/; finish or abort it first")
    if skip:
        if busy:
            abort_am(tree)
        print(f"skipped {name}; export will refuse until you say --drop {name}")
        state.applied += 1
        state.failed = None
        write_state(tree, state)
    elif busy and state.failed:
        proc = git_run("am", "--continue", cwd=tree, env={"GIT_EDITOR": "true"})
        if proc.returncode != 0:
            raise SeriesError(
                f"git am --continue in {rel(tree, root)}/ failed:\n"
                f"{(proc.stdout + proc.stderr).strip()}\n"
                f"Resolve the conflicts and `git -C {rel(tree, root)} add` the files, then run "
                "te-series apply --continue again."
            )
        _take(tree, state, name, ["HEAD"])
    else:
        if busy:  # interrupted inside git am: start that patch again
            abort_am(tree)
        fresh = _unnoted(tree, state)
        if fresh:
            _take(tree, state, name, fresh)
        elif state.failed:
            raise SeriesError(
                f"{name} is still not in {rel(tree, root)}/: resolve the stopped git am, or "
                "commit a fixed version of the change, then run te-series apply --continue "
                "(or --skip it)."
            )
    apply_patches(tree, series, state, include)


def _unnoted(tree: Path, state) -> list[str]:
    """Commits after the last one that came from a patch: the user's fix of the stopped one."""
    revs = commits(tree, f"{state.base}..HEAD")
    while revs and not note_names(tree, revs[-1]):
        revs.pop()
    return commits(tree, f"{revs[-1] if revs else state.base}..HEAD")


def _take(tree: Path, state, name: str, fresh: list[str]) -> None:
    """Record the first of the user's new commits as the stopped patch."""
    set_note(tree, fresh[0], name)
    state.applied += 1
    state.failed = None
    write_state(tree, state)


def finish_swap(tree: Path, root: Path) -> list[str]:
    """After --continue completed <tree>.new, swap it in (keeping the old tree's work)."""
    if not tree.name.endswith(".new"):
        return []
    return swap_in(tree, tree.with_name(tree.name[: -len(".new")]), root)


def run(args) -> int:
    root = args.root
    if args.continue_ or args.skip:
        tree = work_tree(root, args.port)
        if not tree.exists():
            raise SeriesError(f"{rel(tree, root)}/ does not exist; nothing to continue")
        try:
            resume(root, tree, skip=args.skip)
        except PatchFailed as err:
            raise SeriesError(stopped_message(tree, root, err, tree.name.endswith(".new")))
        kept = finish_swap(tree, root)
        for line in kept:
            print(f"kept: {line}")
        print(describe_tree(work_tree(root, args.port), root))
        return 0
    if args.port:
        raise SeriesError(
            "--port goes with --continue; make a port tree with te-series port --edit"
        )
    series = load_series(root)
    series.names()  # refuse a broken listing before touching anything
    fork = root / "fork"
    absent = {}

    def build(dest: Path) -> None:
        absent.update(make_tree(series, dest, te_src=args.te_src, wheel=args.wheel))

    try:
        kept = build_aside(fork, root, build, force=args.force)
    except PatchFailed as err:
        new = fork.with_name("fork.new")
        tree = new if new.exists() else fork
        raise SeriesError(stopped_message(tree, root, err, tree == new)) from None
    for line in kept:
        print(f"kept: {line}")
    report_absent(absent)
    kind = "git" if args.te_src else "pypi"
    print(f"fork/: {kind} base with {len(series.names())} patch(es) applied on {SERIES_BRANCH}")
    return 0
