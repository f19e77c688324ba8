"""apply, apply --continue/--skip and --force: fork/ is built aside in fork.new/ and swapped in
only when complete, the old tree kept whole; a stop names the patch, file and hunk, and its
advice gets the user on (README: what the tool guarantees).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest

from te_series import git
from te_series import worktree
from te_series.worktree import read_state
from series_helpers import (
    add_copy_of_patch_2,
    commit,
    CONFLICTING,
    GOOD_CHANGE,
    GOOD_MSG,
    interrupted_apply,
    make_series,
    move_upstream,
    msg,
    note,
    patch_bytes,
    rename_patch_2,
    ROOT_DIR,
    save,
    sh,
    SPACED,
    stop_and_resolve,
    te,
)


def test_failed_apply_names_patch_file_hunk_and_git_message(three, project, upstream, capsys):
    move_upstream(project, upstream, CONFLICTING)
    shutil.rmtree(project / "fork")
    rc, out = te("apply", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2
    name = three.names()[1]
    assert f"patch {name} does not apply" in out
    assert "file transformer_engine/pytorch/fuser.py, hunk at line 3 @@ -3,4 +3,4 @@" in out
    assert "Patch failed at" in out  # git's own words, not only CONFLICT lines
    assert "fork/ holds patches 1-1 of 3" in out
    assert "te-series apply --continue" in out
    state = read_state(project / "fork")
    assert (state.applied, state.failed) == (1, name)


def test_failed_apply_then_advice_then_export_refuses_and_names_drops(
    three, project, upstream, capsys
):
    before = patch_bytes(three)
    names = three.names()
    move_upstream(project, upstream, CONFLICTING)
    shutil.rmtree(project / "fork")
    assert te("apply", "--te-src", str(upstream))[0] == 2
    fork = project / "fork"
    # While git am is stopped, export says so.
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "git am in progress" in out
    # The v1 advice: abort, fix the change by hand, commit, export.
    sh("git", "am", "--abort", cwd=fork)
    commit(fork, GOOD_CHANGE, GOOD_MSG)
    rc, out = te("export", capsys=capsys)
    assert rc == 2
    assert "holds only 1 of the 3 patches" in out
    assert f"would drop {names[1]}, {names[2]}" in out
    assert patch_bytes(three) == before
    assert three.names() == names


def test_resume_after_fixed_patch_then_export_rewrites_only_it(three, project, upstream, capsys):
    before = patch_bytes(three)
    names = three.names()
    fork = stop_and_resolve(project, upstream)
    rc, out = te("apply", "--continue", capsys=capsys)
    assert rc == 0, out
    assert read_state(fork).complete
    assert te("export")[0] == 0
    after = patch_bytes(three)
    assert after[names[0]] == before[names[0]]
    assert after[names[2]] == before[names[2]]
    assert b"list(set(values))" in after[names[1]]
    assert three.names() == names


# A git first in PATH whose first `am --continue` fails as on a full disk.
AM_FULL = """#!/bin/sh
case " $* " in *" am --continue "*) if [ ! -e "{marker}" ]; then touch "{marker}"
  echo "fatal: unable to write loose object file: No space left on device" >&2; exit 128; fi;;
esac
exec "{git}" "$@"
"""


def test_a_full_disk_at_am_continue_says_so(three, project, upstream, capsys, monkeypatch,
                                            tmp_path):  # fmt: skip
    """v33 #5: the fix made by hand and staged, then a full disk at git am --continue: the
    stop said "No file has conflict markers: make the change by hand". It says the disk."""
    stop_and_resolve(project, upstream)
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "git").write_text(AM_FULL.format(marker=tmp_path / "full", git=shutil.which("git")))
    (shim / "git").chmod(0o755)
    with monkeypatch.context() as m:
        m.setenv("PATH", f"{shim}:{os.environ['PATH']}")
        rc, out = te("apply", "--continue", capsys=capsys)
    assert rc == 2 and "the disk is full: git am could not write" in out, out
    assert "make the change by hand" not in out
    rc, out = te("apply", "--continue", capsys=capsys)
    assert rc == 0, out


def stop_then_commit_the_fix(project, upstream):
    """Apply stops on patch 2 (upstream conflicts); the user aborts git am and commits the
    fixed change by hand. Returns fork/."""
    move_upstream(project, upstream, CONFLICTING)
    shutil.rmtree(project / "fork")
    assert te("apply", "--te-src", str(upstream))[0] == 2
    fork = project / "fork"
    sh("git", "am", "--abort", cwd=fork)
    commit(fork, GOOD_CHANGE, GOOD_MSG)
    return fork


def test_resume_after_user_commits_the_fixed_change(three, project, upstream):
    names = three.names()
    fork = stop_then_commit_the_fix(project, upstream)
    assert te("apply", "--continue")[0] == 0
    assert te("export")[0] == 0
    assert three.names() == names


def test_force_keeps_the_old_fork_whole(three, project, upstream, capsys):
    """D3: commits, a stash, a tag-only commit, ignored and untracked files, a nested repo."""
    fork = project / "fork"
    wip = commit(fork, {"tests/wip.py": "WIP = 1\n"}, msg("Work in progress"))
    (fork / "tests/test_fuser.py").write_text("stashed = 1\n")
    sh("git", "stash", "-q", cwd=fork)
    tree = sh("git", "rev-parse", "HEAD^{tree}", cwd=fork).strip()
    tagged = sh("git", "commit-tree", "-p", "HEAD", "-m", "tag-only work", tree, cwd=fork).strip()
    sh("git", "tag", "keep", tagged, cwd=fork)
    (fork / ".git" / "info" / "exclude").write_text("*.log\n")
    (fork / "build.log").write_text("ignored\n")
    (fork / "notes.txt").write_text("my notes\n")
    sh("git", "init", "-q", str(fork / "scratch"), cwd=fork)
    (fork / "scratch" / "x.txt").write_text("nested\n")
    (fork / "tests/test_fuser.py").write_text("edited = 1\n")
    rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)
    assert rc == 0, out
    (backup,) = (project / ".te-series-backup").iterdir()
    kept = backup / "fork"
    assert f"fork/ moved whole to .te-series-backup/{backup.name}/fork/" in out
    assert f"git -C fork fetch ../.te-series-backup/{backup.name}/fork" in out
    assert (kept / "notes.txt").read_text() == "my notes\n"
    assert (kept / "build.log").read_text() == "ignored\n"
    assert (kept / "scratch" / "x.txt").read_text() == "nested\n"
    assert (kept / "tests/test_fuser.py").read_text() == "edited = 1\n"
    sh("git", "fetch", "-q", str(kept), "refs/*:refs/backup/*", cwd=fork)
    assert sh("git", "log", "-1", "--format=%s", wip, cwd=fork).strip().endswith("in progress")
    assert sh("git", "show", "refs/backup/stash:tests/test_fuser.py", cwd=fork) == "stashed = 1\n"
    assert sh("git", "log", "-1", "--format=%s", "refs/backup/tags/keep", cwd=fork).strip() == (
        "tag-only work"
    )
    assert read_state(fork).complete


def test_failed_force_apply_leaves_old_fork(three, project, upstream, capsys):
    fork = project / "fork"
    wip = commit(fork, {"tests/wip.py": "WIP = 1\n"}, msg("Work in progress"))
    move_upstream(project, upstream, CONFLICTING)
    rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2
    assert "Your old fork/ is untouched; the new tree waits in fork.new/" in out
    assert sh("git", "rev-parse", "HEAD", cwd=fork).strip() == wip
    assert read_state(project / "fork.new").applied == 1


def test_apply_refuses_existing_fork(three, project, upstream, capsys):
    rc, out = te("apply", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "fork/ exists" in out


def test_skip_then_export_needs_drop(three, project, upstream, capsys):
    names = three.names()
    move_upstream(project, upstream, CONFLICTING)
    shutil.rmtree(project / "fork")
    assert te("apply", "--te-src", str(upstream))[0] == 2
    assert te("apply", "--continue", "--skip")[0] == 0
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and f"would drop {names[1]}" in out
    assert te("export", "--drop", names[1])[0] == 0
    assert len(three.names()) == 2


def test_force_over_a_stopped_rebuild_keeps_it_whole(three, project, upstream, capsys):
    move_upstream(project, upstream, CONFLICTING)
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 2
    assert (project / "fork.new").exists()  # stopped on patch 2, conflict markers in it
    rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2  # stops again on the same patch
    assert "fork.new/ moved whole to .te-series-backup/" in out
    (backup,) = (project / ".te-series-backup").iterdir()
    kept = backup / "fork.new"
    assert read_state(kept).failed == three.names()[1]
    assert "<<<<<<<" in (kept / "transformer_engine/pytorch/fuser.py").read_text()


def test_a_patch_file_holding_two_mails_stops_apply_naming_the_line(three, project, upstream,
                                                                   capsys):  # fmt: skip
    """tool-review-v6 #23: git am would make two commits of it."""
    first, second = three.paths()[1:]
    first.write_bytes(first.read_bytes() + second.read_bytes())
    three.series_file.write_text(three.series_file.read_text().replace(second.name + "\n", ""))
    second.unlink()
    save(project, "two mails in one file")
    rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and f"{first.name} is 2 mails to git am" in out and "From 0000" in out, out


def test_continue_after_the_stopped_patch_file_was_fixed(three, project, upstream, capsys):
    """tool-review-v7 #5b: apply stopped on a damaged patch file, the file was fixed in
    patches/, and --continue said "resolve the conflicts" (there are none) and would have
    gone on with the old file. Its advice (abort that am, continue) applies the new file."""
    name = three.names()[1]
    path = three.dir / name
    good = path.read_bytes()
    path.write_bytes(good.replace(b' """Return values as a tuple."""', b" damaged context"))
    save(project, "damage")
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 2
    new = project / "fork.new"
    path.write_bytes(good)  # fixed, not committed yet
    rc, out = te("apply", "--continue", capsys=capsys)
    assert rc == 2 and f"patches/{name} changed since apply stopped on it" in out, out
    assert "Resolve the conflicts" not in out
    sh("git", "am", "--abort", cwd=new)  # the advice
    rc, out = te("apply", "--continue", capsys=capsys)
    assert rc == 0 and "(complete)" in out, out
    assert not new.exists()
    assert sh("git", "rev-list", "--count", "HEAD", cwd=project / "fork").strip() == "4"


def test_continue_swaps_in_a_complete_rebuild(three, project, upstream, capsys, monkeypatch):
    def interrupted(*a, **k):
        raise KeyboardInterrupt

    real = worktree.swap_in
    monkeypatch.setattr(worktree, "swap_in", interrupted)
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 130
    monkeypatch.setattr(worktree, "swap_in", real)
    assert read_state(project / "fork.new").complete
    rc, out = te("apply", "--continue", capsys=capsys)
    assert rc == 0, out
    assert not (project / "fork.new").exists() and "moved whole" in out
    assert read_state(project / "fork").complete


def test_status_names_a_skipped_patch(three, project, upstream, capsys):
    move_upstream(project, upstream, CONFLICTING)
    shutil.rmtree(project / "fork")
    assert te("apply", "--te-src", str(upstream))[0] == 2
    assert te("apply", "--continue", "--skip")[0] == 0
    rc, out = te("status", capsys=capsys)
    assert rc == 0 and f"(complete; skipped {three.names()[1]}: export needs --drop" in out


def test_continue_refuses_a_series_changed_since_apply(three, project, upstream, capsys):
    move_upstream(project, upstream, CONFLICTING)
    shutil.rmtree(project / "fork")
    assert te("apply", "--te-src", str(upstream))[0] == 2
    three.series_file.write_text(three.series_file.read_text().splitlines()[1] + "\n")
    rc, out = te("apply", "--continue", capsys=capsys)
    assert rc == 2 and "patches/series changed since this apply started" in out
    assert read_state(project / "fork").applied == 1


def test_continue_keeps_a_file_of_mine_where_the_patch_it_runs_again_writes(
    three, project, upstream, capsys
):
    """A stop that is not the patch's doing (a draft of mine where the next patch adds its
    file): --continue, as the stop says, keeps my file in a stash, never deletes it (v15 #1)"""
    names = three.names()
    fork = stop_then_commit_the_fix(project, upstream)
    (fork / "tests/test_more.py").write_text("my draft\n")
    rc, out = te("apply", "--continue", capsys=capsys)
    assert rc == 2 and "te-series apply --continue" in out, out
    rc, out = te("apply", "--continue", capsys=capsys)
    assert rc == 0 and "git -C fork stash pop" in out, out
    assert read_state(fork).complete
    kept = sh("git", "show", "stash@{0}^3:tests/test_more.py", cwd=fork)  # its untracked files
    assert kept == "my draft\n"
    assert te("export")[0] == 0
    assert three.names() == names


def test_continue_after_committing_the_fix_with_git_commit(three, project, upstream, capsys):
    names = three.names()
    fork = stop_and_resolve(project, upstream)
    sh("git", "commit", "-q", "-m", GOOD_MSG, cwd=fork)  # not git am --continue
    rc, out = te("apply", "--continue", capsys=capsys)
    assert rc == 0, out
    assert read_state(fork).complete and git.in_progress(fork) is None
    assert te("export")[0] == 0
    assert three.names() == names


def test_failure_names_git_apply_errors_and_the_patch(project, upstream, capsys):
    series = make_series(project, upstream, [(GOOD_CHANGE, GOOD_MSG)])
    (name,) = series.names()
    path = series.dir / name
    path.write_text(path.read_text().replace("@@ -3,4 +3,4 @@", "@@ -3,9 +3,9 @@"))
    save(project)
    shutil.rmtree(project / "fork")
    rc, out = te("apply", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2
    assert "git apply --check says:" in out and "applies on its own" not in out
    assert f"Patch failed at {name}" in out
    assert "fork/ holds none of the 1 patch(es)" in out


def test_apply_without_force_leaves_an_unfinished_rebuild_alone(three, project, upstream, capsys):
    move_upstream(project, upstream, CONFLICTING)
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 2
    rc, out = te("apply", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "fork.new/ holds an unfinished apply" in out
    assert read_state(project / "fork.new").failed == three.names()[1]
    assert not (project / ".te-series-backup").exists()


def test_continue_without_a_fix_says_the_patch_is_still_missing(three, project, upstream, capsys):
    name = three.names()[1]
    move_upstream(project, upstream, CONFLICTING)
    shutil.rmtree(project / "fork")
    assert te("apply", "--te-src", str(upstream))[0] == 2
    fork = project / "fork"
    sh("git", "am", "--abort", cwd=fork)
    rc, out = te("apply", "--continue", capsys=capsys)
    assert rc == 2 and f"{name} is still not in fork/" in out
    assert read_state(fork).applied == 1


def test_apply_stops_on_a_patch_that_makes_no_commit(three, project, upstream, capsys):
    names = three.names()
    extra = add_copy_of_patch_2(three)
    rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2
    assert f"patch {extra} made no commit: its change is already in the tree" in out
    assert "remove its line from patches/series" in out and "--continue --skip" in out
    assert "fix the conflicts" not in out
    new = project / "fork.new"
    state = read_state(new)
    assert (state.applied, state.failed) == (3, extra)
    # The previous patch's commit keeps its own name.
    assert note(new, "HEAD") == names[2]
    rc, out = te("apply", "--continue", "--skip", capsys=capsys)
    assert rc == 0, out
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and f"--drop {extra}" in out
    assert (three.dir / extra).exists() and three.names() == [*names, extra]


def test_patch_that_applies_nowhere_does_not_speak_of_conflicts(three, project, upstream, capsys):
    names = three.names()
    path = three.dir / names[1]
    path.write_text(
        path.read_text().replace(' """Return values as a tuple."""', ' """Hand edit."""')
    )
    save(project, "hand edit")
    shutil.rmtree(project / "fork")
    rc, out = te("apply", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2
    assert f"Nothing of {names[1]} was applied (no conflict markers" in out
    assert "fix the conflicts" not in out
    assert "te-series apply --force --te-src PATH" in out


def test_suggested_drop_commands_are_quoted(three, project, upstream, capsys):
    rename_patch_2(three, project)
    move_upstream(project, upstream, CONFLICTING)
    rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "export then needs --drop '0002 route é.patch'" in out
    rc, out = te("apply", "--continue", "--skip", capsys=capsys)
    assert rc == 0 and "say --drop '0002 route é.patch'" in out
    rc, out = te("export", capsys=capsys)
    assert rc == 2
    command = out.split("say so: ")[1].split(". Otherwise")[0]
    assert command == "te-series export --drop '0002 route é.patch'"
    rc, out = te(*shlex.split(command)[1:], capsys=capsys)
    assert rc == 0, out
    assert SPACED not in three.names()


def test_status_does_not_count_skipped_patches_as_applied(three, project, upstream, capsys):
    names = three.names()
    move_upstream(project, upstream, {**CONFLICTING, "tests/test_more.py": "X = 1\n"})
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 2
    assert te("apply", "--continue", "--skip")[0] == 2  # patch 3 stops too
    rc, out = te("status", capsys=capsys)
    assert f"fork.new/: 1 of 3 patch(es) of patches/ applied, 1 skipped, last {names[0]}" in out
    assert te("apply", "--continue", "--skip")[0] == 0
    rc, out = te("status", capsys=capsys)
    assert "fork/: 1 of 3 patch(es) of patches/ applied, 2 skipped (complete; skipped" in out


def test_apply_says_a_patch_has_no_diff(three, project, upstream, capsys):
    first = three.names()[0]
    text = (three.dir / first).read_text()
    empty = "0004-PyTorch-Nothing.patch"
    (three.dir / empty).write_text(
        text.split("\n---\n")[0].replace("Raise VALUE", "Nothing") + "\n---\n2.39.5\n\n"
    )
    three.series_file.write_text(three.series_file.read_text() + empty + "\n")
    save(project, "empty patch")
    rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2
    assert f"patch {empty} has no diff (an empty patch)" in out
    assert "remove its line from patches/series" in out and "--continue --skip" in out
    assert "no conflict markers" not in out


def test_force_refuses_a_fork_whose_git_dir_lives_elsewhere(three, project, upstream, capsys):
    fork = project / "fork"
    (fork / ".git").rename(project / ".sepgit")
    (fork / ".git").write_text("gitdir: ../.sepgit\n")
    rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "fork/.git is a file" in out and "git worktree remove" in out
    assert (fork / ".git").is_file() and (project / ".sepgit").is_dir()
    assert not (project / ".te-series-backup").exists()


def test_continue_refuses_while_a_rebase_is_in_progress(
    three, project, upstream, capsys, monkeypatch
):
    fork = interrupted_apply(project, upstream, monkeypatch)
    env = {"GIT_SEQUENCE_EDITOR": "sed -i 1s/^pick/edit/"}
    sh("git", "rebase", "-q", "-i", "HEAD~1", cwd=fork, env=env)
    rc, out = te("apply", "--continue", capsys=capsys)
    assert rc == 2 and "a git rebase is in progress in fork/; finish or abort it first" in out
    assert git.in_progress(fork) == "a git rebase"
    assert read_state(fork).applied == 1


@pytest.mark.parametrize(
    "kind, advice",
    [
        ("unapplied", "by hand"),
        ("unapplied", "fix the patch file"),
        ("already", "remove its line"),
        ("empty", "remove its line"),
    ],
)
def test_each_advice_of_a_stop_gets_apply_past_it(three, project, upstream, capsys, kind, advice):
    """Issue 17 item 5: the stop message's advice, followed as written, gets apply done."""
    names = three.names()
    patch = three.dir / names[1]
    good = patch.read_text()
    if kind == "unapplied":  # nothing of it applies (a hand edit of its context)
        patch.write_text(good.replace(' """Return values as a tuple."""', ' """Hand edit."""'))
        save(project, "hand edit")
        stopped = names[1]
    elif kind == "already":
        stopped = add_copy_of_patch_2(three)
    else:
        stopped = "0004-PyTorch-Nothing.patch"
        (three.dir / stopped).write_text(good.split("\n---\n")[0] + "\n---\n2.39.5\n\n")
        three.series_file.write_text(three.series_file.read_text() + stopped + "\n")
        save(project, "empty patch")
    shutil.rmtree(project / "fork")
    rc, out = te("apply", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and stopped in out, out
    assert advice in out, out
    fork = project / "fork"
    if advice == "by hand":  # "make the change by hand in fork/ and commit it, then continue"
        for path, text in GOOD_CHANGE.items():
            (fork / path).write_text(text)
        sh("git", "add", "-A", cwd=fork)
        sh("git", "commit", "-q", "-m", GOOD_MSG, cwd=fork)
        rc, out = te("apply", "--continue", capsys=capsys)
    else:  # fix the patch file (or take it out of series), commit that, and rebuild
        if advice == "fix the patch file":
            patch.write_text(good)
        else:
            three.series_file.write_text(three.series_file.read_text().replace(stopped + "\n", ""))
        save(project, "fixed")
        rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)
    assert rc == 0, out
    state = read_state(fork)
    assert state.complete and not (project / "fork.new").exists()
    assert te("export", "--dry-run")[0] == 0


def test_the_advice_for_a_patch_file_read_as_two_mails_gets_apply_done(
    three, project, upstream, capsys
):
    """tool-review-v8 #5: a "From <sha> <date>" line in a patch file's message: the advice
    names the file (fork/ does not hold that line), and following it gets apply done."""
    path = three.paths()[1]
    line = "From 1234567890abcdef1234567890abcdef12345678 Mon Sep 17 00:00:00 2001"
    text = path.read_text()
    text = text.replace(
        "Lists are what callers index.\n", f"Lists are what callers index.\n\n{line}\n"
    )
    path.write_text(text)
    save(project, "a colleague's edit")
    rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and f"Indent that line in {path.name}" in out and "commit the file" in out, out
    path.write_text(text.replace(f"\n{line}\n", f"\n  {line}\n"))
    save(project, "indented, as the advice says")
    rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)
    assert rc == 0, out


HOLD = """import sys, time
from pathlib import Path
from te_series.util import one_at_a_time
with one_at_a_time(Path(sys.argv[1]), "apply"):
    print("holding", flush=True)
    time.sleep(120)
"""


def test_a_second_writing_verb_refuses_while_one_runs(three, project, upstream, capsys):
    """tool-review-v11 #8: two apply --force at once undid each other's fork.new/ and ended in
    raw git and OS errors. A verb that writes holds the project's lock: a second one refuses,
    saying why, and goes through once the first has ended (as the message says: wait, then
    run it again). Verbs that only read (status) run meanwhile."""
    env = {**os.environ, "PYTHONPATH": str(ROOT_DIR / "src")}
    first = subprocess.Popen([sys.executable, "-c", HOLD, str(project)], env=env,
                             stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert first.stdout.readline() == "holding\n"
        before = sorted(p.name for p in project.iterdir())
        rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)
        assert rc == 2 and "another te-series command is running in" in out, out
        advice = re.search(r"wait until it has ended, then run (te-series apply) again", out)
        assert advice and sorted(p.name for p in project.iterdir()) == before, out
        rc, out = te("status", capsys=capsys)  # and says that the trees may be half made
        assert rc == 0 and "another te-series command is running in this project" in out, out
    finally:
        first.kill()
        first.wait()
    rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)
    assert rc == 0, out
    assert "another te-series" not in te("status", capsys=capsys)[1]


def test_status_of_a_detached_head_says_what_export_refuses(three, project, upstream, capsys):
    """v15 #5: fork/ on a detached HEAD without the last patch, with a commit of mine on it:
    status says export's refusal, and its advice takes my commit along; export then writes it"""
    fork = project / "fork"
    sh("git", "checkout", "-q", "--detach", "HEAD~1", cwd=fork)
    commit(fork, {"transformer_engine/pytorch/mine.py": "MINE = 1\n"}, msg("Add mine"))
    capsys.readouterr()
    rc, said = te("status", capsys=capsys)
    assert rc == 0 and "export refuses: fork/ is on no branch (a detached HEAD)" in said, said
    (step,) = re.findall(r"take them along \((git -C fork checkout series && .*)\)", said)
    sh("bash", "-c", step, cwd=project)
    assert te("export")[0] == 0
    assert len(three.names()) == 4


def test_status_names_a_patch_file_edited_since_apply(three, project, upstream, capsys):
    """review v19 F7: a patch file edited by hand after apply. status said "(complete)" and
    nothing more while export refused for that file; it names the file, and the way on it
    gives (export --dry-run's) gets past it."""
    name = three.names()[1]
    path = three.dir / name
    path.write_text(path.read_text().replace("\n\n", "\n\nA line added by hand.\n\n", 1))
    capsys.readouterr()
    rc, said = te("status", capsys=capsys)
    line = f"  patches/{name} changed since fork/ was made from it: te-series export --dry-run"
    assert rc == 0 and line + " says whether export would undo that" in said, said
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert f"patches/{name} changed since fork/ was made from it" in out, out
    save(project, "my edit")  # its advice: keep the edit, rebuild fork/ from it
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 0
    rc, said = te("status", capsys=capsys)
    assert "changed since" not in said and "3 of 3 patch(es) of patches/ applied (complete)" in said
    assert te("export", "--dry-run")[0] == 0


def test_status_counts_the_series_and_fork_not_an_export_undone_since(three, project, capsys):
    """An export of a new commit, undone in fork/ (reset --hard HEAD~1) and in patches/ (the
    new file deleted, the series file restored with git): status counted the record of that
    export (4 of 4) while patches/ and fork/ hold 3, as export --dry-run says."""
    fork = project / "fork"
    commit(fork, {"transformer_engine/pytorch/mine.py": "MINE = 1\n"}, msg("Add mine"))
    assert te("export")[0] == 0 and len(three.names()) == 4
    added = three.names()[3]
    sh("git", "reset", "-q", "--hard", "HEAD~1", cwd=fork)
    (three.dir / added).unlink()
    sh("git", "checkout", "--", "patches/series", cwd=project)
    capsys.readouterr()
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 0 and out.count("unchanged") == 3 and added not in out, out
    rc, said = te("status", capsys=capsys)
    assert rc == 0 and "fork/: 3 of 3 patch(es) of patches/ applied (complete)" in said, said


def test_status_names_a_listed_patch_without_a_commit_in_fork(three, project, capsys):
    """fork/'s last commit dropped after apply: status counted the record (3 of 3, complete);
    it says 2 of 3 and names the patch, and export --dry-run's advice (--drop) gets past it."""
    last = three.names()[2]
    sh("git", "reset", "-q", "--hard", "HEAD~1", cwd=project / "fork")
    capsys.readouterr()
    rc, said = te("status", capsys=capsys)
    assert rc == 0 and "fork/: 2 of 3 patch(es) of patches/ applied\n" in said, said
    line = f"  fork/ has no commit for {last}, which patches/series lists: te-series export"
    assert line + " --dry-run says how to go on" in said
    rc, out = te("export", "--dry-run", capsys=capsys)
    command = out.split("say so: ")[1].split(". Otherwise")[0]
    assert command == f"te-series export --drop {last}", out
    assert te(*shlex.split(command)[1:])[0] == 0
    rc, said = te("status", capsys=capsys)
    assert "fork/: 2 of 2 patch(es) of patches/ applied (complete)" in said, said


@pytest.mark.parametrize("how", ["squash", "unlist"])
def test_status_is_not_complete_where_export_refuses_and_its_way_on_gets_past(
    three, project, upstream, capsys, how
):
    """tool-review-v21 #8: patch 3's commit squashed into patch 2's, or patch 2's line taken
    out of the series file (committed): status said "(complete)", export refused. Status
    reads the commits as export does (a squash holds one patch) and names a patch fork/
    holds that the series no longer lists; export --dry-run's advice gets past it."""
    names, fork = three.names(), project / "fork"
    if how == "squash":
        env = {"GIT_SEQUENCE_EDITOR": "sed -i 2s/^pick/squash/", "GIT_EDITOR": "true"}
        sh("git", "rebase", "-q", "-i", "HEAD~2", cwd=fork, env=env)
        line = f"fork/ has no commit for {names[2]}, which patches/series lists"
    else:
        three.series_file.write_text(three.series_file.read_text().replace(names[1] + "\n", ""))
        save(project, "patch 2 out")
        line = f"fork/ holds {names[1]}, which patches/series no longer lists"
    capsys.readouterr()
    rc, said = te("status", capsys=capsys)
    assert rc == 0 and "(complete" not in said, said
    assert f"  {line}: te-series export --dry-run says how to go on" in said, said
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 2, out
    if how == "squash":
        (command,) = re.findall(r"say so: (te-series export --drop \S+)\. Otherwise", out)
    else:
        (command,) = re.findall(r"Either rebuild fork/ from the files as they are now \((te-series "
                                r"apply --force --te-src PATH);", out)  # fmt: skip
    assert te(*shlex.split(command.replace("PATH", str(upstream)))[1:])[0] == 0
    rc, said = te("status", capsys=capsys)
    assert "fork/: 2 of 2 patch(es) of patches/ applied (complete)" in said, said
    assert te("export", "--dry-run")[0] == 0


def test_status_of_a_series_file_naming_a_missing_patch_says_so(three, project, capsys):
    """A listed patch file deleted: status still describes fork/ (from its record) and says
    what is wrong with the series file, as export and check do, rather than stopping."""
    gone = three.names()[2]
    (three.dir / gone).unlink()
    capsys.readouterr()
    rc, said = te("status", capsys=capsys)
    assert rc == 0 and "fork/: 3 of 3 patch(es) of patches/ applied" in said, said
    said = said.split(f"\n  patches/series line 4 names {gone}, which does not exist in ")[1]
    (advice,) = re.findall(r"^patches/; restore the file \((git checkout -- \S+)\)", said)
    sh(*advice.split(), cwd=project)
    assert "patches/series line" not in te("status", capsys=capsys)[1]
